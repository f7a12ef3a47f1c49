// The job queue between the webhook front door (which must answer GitHub within 10 s) and the
// workers that run agents. Implementations: in-process (one machine, no setup) and BullMQ on
// Redis (any number of workers on any number of machines).

/** One run to do: everything a worker needs, nothing secret (tokens are minted by the worker). */
export interface RunJob {
  /** The webhook delivery id: enqueuing the same delivery twice runs it once. */
  readonly id: string;
  readonly installationId: number;
  readonly owner: string;
  readonly repo: string;
  readonly eventName: string;
  /** The webhook payload, as received (already verified and authorized). */
  readonly payload: unknown;
  /** Runs with the same key never overlap, e.g. "owner/repo#12": one active run per issue. */
  readonly lockKey: string;
  readonly enqueuedAt: number;
}

export type EnqueueResult =
  | { readonly accepted: true }
  | { readonly accepted: false; readonly reason: string };

export interface JobHandlerContext {
  /** 1 for the first attempt. */
  readonly attempt: number;
  /** Aborted when the worker is shutting down: finish cleanly (the pipeline cancels the agent). */
  readonly signal: AbortSignal;
}

export type JobHandler = (job: RunJob, context: JobHandlerContext) => Promise<void>;

export interface QueueWorker {
  /** Stops taking jobs, aborts running ones' signals, waits for them to settle. */
  close(): Promise<void>;
}

export interface JobQueue {
  enqueue(job: RunJob): Promise<EnqueueResult>;
  /** Starts a worker that runs jobs with `handler`, at most `concurrency` at a time (default 1). */
  work(handler: JobHandler, options?: { readonly concurrency?: number }): QueueWorker;
  close(): Promise<void>;
}
