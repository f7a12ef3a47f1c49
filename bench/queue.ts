// Queue overhead: enqueue-to-start latency and jobs per second for no-op jobs.
//   node --import tsx bench/queue.ts [jobs]      (default 2 000; starts its own redis-server)
// BullMQ: two queue instances (two "machines"), each with a worker of concurrency 4, one lock key per
// job (so the per-key lock is taken and released every time but never contended).
// In-process: one worker of concurrency 4.
import { createBullMqQueue } from "../src/queue/bullmq.js";
import { createInProcessQueue } from "../src/queue/in-process.js";
import type { JobQueue, RunJob } from "../src/queue/port.js";
import { startRedis } from "../test/support/redis.js";

const total = Number(process.argv[2] ?? 2_000);

function job(run: string, i: number): RunJob {
  return {
    id: `${run}-${i}`,
    installationId: 1,
    owner: "acme",
    repo: "widgets",
    eventName: "issue_comment",
    payload: { comment: { body: "@warden noop" } },
    lockKey: `acme/widgets#${i}`,
    enqueuedAt: Date.now(),
  };
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

interface Figures {
  readonly enqueueMs: number;
  readonly totalMs: number;
  readonly latencies: readonly number[];
}

async function measure(
  label: string,
  queues: readonly JobQueue[],
  concurrency: number,
  enqueueParallelism: number,
): Promise<Figures> {
  const run = `${label}-${Date.now()}`;
  const latencies: number[] = [];
  let done = 0;
  let finished: () => void = () => {};
  const allDone = new Promise<void>((resolve) => {
    finished = resolve;
  });
  const workers = queues.map((q) =>
    q.work(
      async (j) => {
        latencies.push(Date.now() - j.enqueuedAt);
        done++;
        if (done === total) finished();
      },
      { concurrency },
    ),
  );
  const first = queues[0];
  if (first === undefined) throw new Error("no queue");
  const start = Date.now();
  for (let i = 0; i < total; i += enqueueParallelism) {
    const batch: Promise<unknown>[] = [];
    for (let k = i; k < Math.min(total, i + enqueueParallelism); k++) {
      const q = queues[k % queues.length] ?? first;
      batch.push(
        q.enqueue(job(run, k)).then((result) => {
          if (!result.accepted) throw new Error(`job ${k} refused: ${result.reason}`);
        }),
      );
    }
    await Promise.all(batch);
  }
  const enqueueMs = Date.now() - start;
  await allDone;
  const totalMs = Date.now() - start;
  await Promise.all(workers.map((w) => w.close()));
  return { enqueueMs, totalMs, latencies: [...latencies].sort((a, b) => a - b) };
}

function print(label: string, f: Figures): void {
  const l = f.latencies;
  console.log(
    `${label}: ${total} jobs in ${f.totalMs} ms = ${Math.round((total / f.totalMs) * 1000)} jobs/s ` +
      `(enqueue ${f.enqueueMs} ms = ${Math.round((total / Math.max(1, f.enqueueMs)) * 1000)} jobs/s); ` +
      `enqueue→start p50 ${percentile(l, 50)} ms, p95 ${percentile(l, 95)} ms, p99 ${percentile(l, 99)} ms, ` +
      `max ${l[l.length - 1]} ms`,
  );
}

async function main(): Promise<void> {
  const inProcess = createInProcessQueue();
  print("in-process (1 worker × 4)", await measure("mem", [inProcess], 4, 1));
  await inProcess.close();

  const redis = await startRedis();
  try {
    const options = { connection: { url: redis.url }, queueName: "bench", prefix: "bench" };
    // Warm-up: connections, script loading.
    {
      const q = createBullMqQueue({ ...options, queueName: "bench-warmup" });
      const w = q.work(async () => {});
      await q.enqueue(job("warmup", 0));
      await w.close();
      await q.close();
    }
    const machines = [createBullMqQueue(options), createBullMqQueue(options)];
    // Enqueue as a webhook server would under load: many deliveries in flight at once.
    print("bullmq (2 workers × 4), sequential enqueue", await measure("seq", machines, 4, 1));
    print("bullmq (2 workers × 4), 50 enqueues in flight", await measure("par", machines, 4, 50));
    await Promise.all(machines.map((q) => q.close()));
  } finally {
    await redis.stop();
  }
}

await main();
