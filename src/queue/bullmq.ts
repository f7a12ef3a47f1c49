// The queue across machines: BullMQ 6.7 on Redis. Any number of workers on any number of machines
// share the jobs; one active run per lock key is enforced by a Redis lock of our own.
//
// Settings (all overridable below):
// - Dedupe: a `SET NX` marker per job id (kept `dedupeTtlMs`, default 7 days) tells the caller that a
//   delivery was already enqueued; the job id is also BullMQ's `jobId`, which BullMQ dedupes itself.
// - Retries: `attempts` (default 2) with exponential backoff from `backoffMs` (default 5 s); BullMQ
//   moves a failed job to its delayed set and back.
// - Stalled jobs (a worker died or its event loop froze): BullMQ's job lock lasts `jobLockMs`
//   (default 30 s) and is renewed every half of it; every `stalledIntervalMs` (default 30 s) a worker
//   moves jobs whose lock expired back to waiting, at most `maxStalledCount` times (default 1), then
//   fails them. The run lock of a dead worker expires after `lockTtlMs`, so the recovered job can run.
// - Keys of our own: "<prefix>:<queue>:warden::job-id:<id>" (dedupe marker) and
//   "<prefix>:<queue>:warden::run-lock:<lockKey>" (run lock).
// - Run lock: `SET <key> <token> NX PX lockTtlMs`, refreshed every third of the TTL while the job
//   runs (a compare-and-pexpire script), released by a compare-and-delete script. A job whose key is
//   held is moved to BullMQ's delayed set (`job.moveToDelayed` + `DelayedError`: no attempt is spent,
//   nothing fails) and tried again after `lockRetryDelayMs` plus jitter. If the refresh finds the
//   lock taken by someone else, the run's signal is aborted.

import { randomUUID } from "node:crypto";
import { type RedisOptions as BullMqRedisOptions, DelayedError, type Job, Queue, Worker } from "bullmq";
import { Redis, type RedisOptions } from "ioredis";
import type { EnqueueResult, JobHandler, JobQueue, QueueWorker, RunJob } from "./port.js";

export type BullMqConnection = { readonly url: string } | RedisOptions;

export interface BullMqQueueOptions {
  /** Where Redis is. Passed in: this module never reads the environment. */
  readonly connection: BullMqConnection;
  /** Default "acp-warden-runs". */
  readonly queueName?: string;
  /** Redis key prefix, default "acp-warden". */
  readonly prefix?: string;
  /** Runs of one job, the first included (default 2). */
  readonly attempts?: number;
  /** Delay before the second attempt, doubled for each further one (default 5 000 ms). */
  readonly backoffMs?: number;
  /** TTL of the per-key run lock; refreshed every third of it while the job runs (default 60 000 ms). */
  readonly lockTtlMs?: number;
  /** Delay before a job whose key is busy is tried again; up to 50 % jitter is added (default 2 000 ms). */
  readonly lockRetryDelayMs?: number;
  /** How long an enqueued job id is remembered for dedupe (default 7 days). */
  readonly dedupeTtlMs?: number;
  /** BullMQ's job lock duration (default 30 000 ms). */
  readonly jobLockMs?: number;
  /** BullMQ's stalled-job check interval (default 30 000 ms). */
  readonly stalledIntervalMs?: number;
  /** Times a stalled job is put back before it fails (default 1). */
  readonly maxStalledCount?: number;
  /** Called when an attempt fails (`final` when no retry follows), and for worker/queue errors. */
  readonly onError?: (error: unknown, details: { readonly job?: RunJob; readonly final?: boolean }) => void;
}

// KEYS[1] lock key, ARGV[1] token.
const releaseScript = `if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) else return 0 end`;
// KEYS[1] lock key, ARGV[1] token, ARGV[2] ttl ms.
const refreshScript = `if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("PEXPIRE", KEYS[1], ARGV[2]) else return 0 end`;

/** `redis://[user:password@]host[:port][/db]` or `rediss://…` → ioredis options. */
export function redisOptionsFromUrl(url: string): RedisOptions {
  const parsed = new URL(url);
  if (parsed.protocol !== "redis:" && parsed.protocol !== "rediss:") {
    throw new Error(`unsupported Redis URL scheme ${parsed.protocol} (expected redis: or rediss:)`);
  }
  const options: RedisOptions = {
    host: parsed.hostname.replace(/^\[(.*)\]$/, "$1") || "127.0.0.1",
    port: parsed.port === "" ? 6379 : Number(parsed.port),
  };
  if (parsed.username !== "") options.username = decodeURIComponent(parsed.username);
  if (parsed.password !== "") options.password = decodeURIComponent(parsed.password);
  const db = parsed.pathname.replace(/^\//, "");
  if (db !== "") {
    const index = Number(db);
    if (!Number.isInteger(index) || index < 0) throw new Error(`invalid Redis database "${db}" in URL`);
    options.db = index;
  }
  if (parsed.protocol === "rediss:") options.tls = { servername: options.host ?? parsed.hostname };
  return options;
}

function resolveConnection(connection: BullMqConnection): RedisOptions {
  if ("url" in connection && typeof connection.url === "string") return redisOptionsFromUrl(connection.url);
  return { ...(connection as RedisOptions) };
}

/**
 * BullMQ refuses ids that contain ":" or read as an integer. A delivery id (a GUID) is used as is;
 * anything else is escaped injectively ("%" → "%25", ":" → "%3A", an integer gets a "%i" prefix).
 */
export function bullMqJobId(id: string): string {
  const escaped = id.replaceAll("%", "%25").replaceAll(":", "%3A");
  return `${Number.parseInt(escaped, 10)}` === escaped ? `%i${escaped}` : escaped;
}

/** ioredis options as BullMQ types them (BullMQ's `retryStrategy` may not be null). */
function forBullMq(options: RedisOptions): BullMqRedisOptions {
  const { retryStrategy, ...rest } = options;
  return retryStrategy == null ? { ...rest } : { ...rest, retryStrategy };
}

function positiveInteger(value: number | undefined, fallback: number, name: string): number {
  const result = value ?? fallback;
  if (!Number.isInteger(result) || result < 1) {
    throw new RangeError(`${name} must be a positive integer, got ${String(value)}`);
  }
  return result;
}

function nonNegative(value: number | undefined, fallback: number, name: string): number {
  const result = value ?? fallback;
  if (!(Number.isFinite(result) && result >= 0))
    throw new RangeError(`${name} must be >= 0, got ${String(value)}`);
  return result;
}

export function createBullMqQueue(options: BullMqQueueOptions): JobQueue {
  const queueName = options.queueName ?? "acp-warden-runs";
  const prefix = options.prefix ?? "acp-warden";
  const attempts = positiveInteger(options.attempts, 2, "attempts");
  const backoffMs = nonNegative(options.backoffMs, 5_000, "backoffMs");
  const lockTtlMs = positiveInteger(options.lockTtlMs, 60_000, "lockTtlMs");
  const lockRetryDelayMs = nonNegative(options.lockRetryDelayMs, 2_000, "lockRetryDelayMs");
  const dedupeTtlMs = positiveInteger(options.dedupeTtlMs, 7 * 24 * 60 * 60 * 1000, "dedupeTtlMs");
  const redisOptions = resolveConnection(options.connection);
  const report = (error: unknown, details: { readonly job?: RunJob; readonly final?: boolean } = {}) =>
    options.onError?.(error, details);

  // One client for our own commands (dedupe markers, run locks). BullMQ makes its own connections
  // from the same options (and sets `maxRetriesPerRequest: null` on them).
  const commands = new Redis({ ...redisOptions, lazyConnect: true });
  commands.on("error", (error: unknown) => report(error));
  const queue = new Queue<RunJob>(queueName, {
    connection: forBullMq(redisOptions),
    prefix,
    defaultJobOptions: {
      attempts,
      backoff: { type: "exponential", delay: backoffMs },
      removeOnComplete: { age: 24 * 60 * 60, count: 10_000 },
      removeOnFail: { age: 7 * 24 * 60 * 60, count: 10_000 },
    },
  });
  queue.on("error", (error: unknown) => report(error));
  const workers = new Set<QueueWorker>();
  let closed = false;

  // Our keys sit beside BullMQ's: "<prefix>:<queue>:warden::…" — BullMQ's own keys there are a fixed
  // name or "<jobId>[:suffix]", and a job id is never empty, so "warden::" is never one of them.
  const keyOf = (kind: string, name: string) => `${prefix}:${queueName}:warden::${kind}:${name}`;

  function work(handler: JobHandler, workOptions?: { readonly concurrency?: number }): QueueWorker {
    if (closed) throw new Error("queue closed");
    const concurrency = positiveInteger(workOptions?.concurrency, 1, "concurrency");
    const running = new Set<AbortController>();
    let closing = false;

    const processor = async (job: Job<RunJob>, token?: string): Promise<void> => {
      const run = job.data;
      const lockName = keyOf("run-lock", run.lockKey);
      const lockToken = randomUUID();
      const acquired = closing ? null : await commands.set(lockName, lockToken, "PX", lockTtlMs, "NX");
      if (acquired !== "OK") {
        // Busy key (or shutting down before the run began): back to the delayed set, no attempt spent.
        if (token === undefined) throw new Error("BullMQ gave no job token: cannot delay the job");
        const delay = closing ? 0 : lockRetryDelayMs + Math.floor(Math.random() * (lockRetryDelayMs / 2));
        await job.moveToDelayed(Date.now() + delay, token);
        throw new DelayedError();
      }
      const controller = new AbortController();
      running.add(controller);
      if (closing) controller.abort(new Error("worker closing"));
      let lastRefresh = Date.now();
      const refresh = setInterval(
        () => {
          commands
            .eval(refreshScript, 1, lockName, lockToken, String(lockTtlMs))
            .then((result) => {
              if (result === 1) {
                lastRefresh = Date.now();
              } else {
                controller.abort(new Error(`run lock ${run.lockKey} lost`));
              }
            })
            .catch((error: unknown) => {
              report(error, { job: run });
              if (Date.now() - lastRefresh > lockTtlMs) {
                controller.abort(new Error(`run lock ${run.lockKey} could not be refreshed`));
              }
            });
        },
        Math.max(1, Math.floor(lockTtlMs / 3)),
      );
      try {
        await handler(run, { attempt: job.attemptsMade + 1, signal: controller.signal });
      } catch (error) {
        report(error, { job: run, final: job.attemptsMade + 1 >= (job.opts.attempts ?? 1) });
        throw error;
      } finally {
        clearInterval(refresh);
        running.delete(controller);
        await commands.eval(releaseScript, 1, lockName, lockToken).catch((error: unknown) => {
          // The TTL frees it anyway.
          report(error, { job: run });
        });
      }
    };

    const worker = new Worker<RunJob, void>(queueName, processor, {
      connection: forBullMq(redisOptions),
      prefix,
      concurrency,
      lockDuration: options.jobLockMs ?? 30_000,
      stalledInterval: options.stalledIntervalMs ?? 30_000,
      maxStalledCount: options.maxStalledCount ?? 1,
    });
    worker.on("error", (error: unknown) => report(error));

    let closePromise: Promise<void> | undefined;
    const handle: QueueWorker = {
      close(): Promise<void> {
        closePromise ??= (async () => {
          closing = true;
          // `close()` stops fetching right away, then waits for the running jobs: abort them first.
          const closed = worker.close();
          for (const controller of running) controller.abort(new Error("worker closing"));
          await closed;
          workers.delete(handle);
        })();
        return closePromise;
      },
    };
    workers.add(handle);
    return handle;
  }

  return {
    async enqueue(job: RunJob): Promise<EnqueueResult> {
      if (closed) return { accepted: false, reason: "queue closed" };
      const marker = keyOf("job-id", job.id);
      const fresh = await commands.set(marker, String(Date.now()), "PX", dedupeTtlMs, "NX");
      if (fresh !== "OK") return { accepted: false, reason: `duplicate job id ${job.id}` };
      try {
        await queue.add(job.eventName, job, { jobId: bullMqJobId(job.id) });
      } catch (error) {
        // Let a redelivery try again.
        await commands.del(marker).catch(() => undefined);
        throw error;
      }
      return { accepted: true };
    },

    work,

    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      await Promise.all([...workers].map((worker) => worker.close()));
      await queue.close();
      if (commands.status === "wait") commands.disconnect();
      else await commands.quit().catch(() => commands.disconnect());
    },
  };
}
