// The default queue: one process, no setup. Jobs live in memory (a restart loses the waiting ones),
// FIFO, deduplicated by job id, one active run per lock key, retried with exponential backoff.

import type { EnqueueResult, JobHandler, JobQueue, QueueWorker, RunJob } from "./port.js";

export interface InProcessQueueOptions {
  /** Runs of one job, the first included (default 2). */
  readonly attempts?: number;
  /** Delay before the second attempt; doubled for each further one (default 1 000 ms). */
  readonly backoffMs?: number;
  /** How many recent job ids are remembered for dedupe after they finished (default 10 000). */
  readonly dedupeWindow?: number;
  /** Called when a job failed its last attempt (or failed while no retry could be scheduled). */
  readonly onFailed?: (job: RunJob, error: unknown, attempt: number) => void;
}

interface Entry {
  readonly job: RunJob;
  /** Attempts already made. */
  attempts: number;
}

interface WorkerState {
  readonly handler: JobHandler;
  readonly concurrency: number;
  readonly running: Map<Entry, { readonly controller: AbortController; readonly done: Promise<void> }>;
  closed: boolean;
}

function positiveInteger(value: number | undefined, fallback: number, name: string): number {
  const result = value ?? fallback;
  if (!Number.isInteger(result) || result < 1) {
    throw new RangeError(`${name} must be a positive integer, got ${String(value)}`);
  }
  return result;
}

export function createInProcessQueue(options: InProcessQueueOptions = {}): JobQueue {
  const maxAttempts = positiveInteger(options.attempts, 2, "attempts");
  const backoffMs = options.backoffMs ?? 1_000;
  if (!(backoffMs >= 0)) throw new RangeError(`backoffMs must be >= 0, got ${String(options.backoffMs)}`);
  const dedupeWindow = positiveInteger(options.dedupeWindow, 10_000, "dedupeWindow");

  /** Waiting entries in arrival order (a retry goes back to the front). */
  const pending: Entry[] = [];
  /** Ids seen recently, oldest first (a Set keeps insertion order). */
  const seen = new Set<string>();
  /** Ids not yet finished: never forgotten while live, whatever the window. */
  const live = new Set<string>();
  /** Lock key → the entry that holds it (running, or waiting for its retry). */
  const keyHolders = new Map<string, Entry>();
  const retryTimers = new Set<NodeJS.Timeout>();
  const workers = new Set<WorkerState>();
  let closed = false;

  function remember(id: string): void {
    seen.add(id);
    live.add(id);
    while (seen.size > dedupeWindow) {
      const oldest = seen.values().next();
      if (oldest.done === true) break;
      seen.delete(oldest.value);
    }
  }

  function finish(entry: Entry): void {
    live.delete(entry.job.id);
    if (keyHolders.get(entry.job.lockKey) === entry) keyHolders.delete(entry.job.lockKey);
  }

  function takeFor(): Entry | undefined {
    for (let i = 0; i < pending.length; i++) {
      const entry = pending[i];
      if (entry === undefined) continue;
      const holder = keyHolders.get(entry.job.lockKey);
      if (holder === undefined || holder === entry) {
        pending.splice(i, 1);
        keyHolders.set(entry.job.lockKey, entry);
        return entry;
      }
    }
    return undefined;
  }

  function dispatch(): void {
    if (closed) return;
    for (const worker of workers) {
      while (!worker.closed && worker.running.size < worker.concurrency) {
        const entry = takeFor();
        if (entry === undefined) return;
        start(worker, entry);
      }
    }
  }

  function start(worker: WorkerState, entry: Entry): void {
    const controller = new AbortController();
    entry.attempts += 1;
    const attempt = entry.attempts;
    const done = (async () => {
      let failure: { readonly error: unknown } | undefined;
      try {
        await worker.handler(entry.job, { attempt, signal: controller.signal });
      } catch (error) {
        failure = { error };
      }
      worker.running.delete(entry);
      if (failure === undefined) {
        finish(entry);
      } else if (attempt < maxAttempts && !closed) {
        // The entry keeps its lock key while it waits, so a later run for the same key cannot
        // overtake it.
        const timer = setTimeout(
          () => {
            retryTimers.delete(timer);
            pending.unshift(entry);
            dispatch();
          },
          backoffMs * 2 ** (attempt - 1),
        );
        retryTimers.add(timer);
      } else {
        finish(entry);
        options.onFailed?.(entry.job, failure.error, attempt);
      }
      dispatch();
    })();
    worker.running.set(entry, { controller, done });
  }

  async function closeWorker(worker: WorkerState): Promise<void> {
    worker.closed = true;
    workers.delete(worker);
    const running = [...worker.running.values()];
    for (const { controller } of running) controller.abort(new Error("worker closing"));
    await Promise.all(running.map(({ done }) => done));
  }

  return {
    async enqueue(job: RunJob): Promise<EnqueueResult> {
      if (closed) return { accepted: false, reason: "queue closed" };
      if (seen.has(job.id) || live.has(job.id)) {
        return { accepted: false, reason: `duplicate job id ${job.id}` };
      }
      remember(job.id);
      pending.push({ job, attempts: 0 });
      dispatch();
      return { accepted: true };
    },

    work(handler: JobHandler, workOptions?: { readonly concurrency?: number }): QueueWorker {
      if (closed) throw new Error("queue closed");
      const worker: WorkerState = {
        handler,
        concurrency: positiveInteger(workOptions?.concurrency, 1, "concurrency"),
        running: new Map(),
        closed: false,
      };
      workers.add(worker);
      // Start on the next tick, so the caller holds the worker before its first job runs.
      queueMicrotask(dispatch);
      let closing: Promise<void> | undefined;
      return {
        close(): Promise<void> {
          closing ??= closeWorker(worker);
          return closing;
        },
      };
    },

    async close(): Promise<void> {
      closed = true;
      for (const timer of retryTimers) clearTimeout(timer);
      retryTimers.clear();
      await Promise.all([...workers].map(closeWorker));
      pending.length = 0;
    },
  };
}
