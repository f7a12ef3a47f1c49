// BullMQ against a real redis-server (Debian's package). Missing redis-server fails the suite.
import { randomUUID } from "node:crypto";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { bullMqJobId, createBullMqQueue, redisOptionsFromUrl } from "../../src/queue/bullmq.js";
import type { JobQueue, QueueWorker } from "../../src/queue/port.js";
import { type RedisServer, startRedis } from "../support/redis.js";
import { gate, makeJob, overlaps, type Span, waitFor } from "./helpers.js";

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

const opened: JobQueue[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((q) => q.close()));
});

/** One "machine": its own queue instance and connections, on a queue name unique to the test. */
function machine(queueName: string, extra: { attempts?: number; backoffMs?: number } = {}): JobQueue {
  const q = createBullMqQueue({
    connection: { url: redis.url },
    queueName,
    prefix: "test",
    lockTtlMs: 2_000,
    lockRetryDelayMs: 50,
    ...extra,
  });
  opened.push(q);
  return q;
}

describe("BullMQ queue", () => {
  it("runs a job once though it is enqueued twice with the same id", async () => {
    const name = `dedupe-${randomUUID()}`;
    const a = machine(name);
    const b = machine(name);
    const runs: string[] = [];
    a.work(async (job) => {
      runs.push(job.id);
    });
    const id = randomUUID();
    expect(await a.enqueue(makeJob(id))).toEqual({ accepted: true });
    const again = await b.enqueue(makeJob(id));
    expect(again).toEqual({ accepted: false, reason: `duplicate job id ${id}` });
    await waitFor("the job to run", () => runs.length === 1);
    // Still a duplicate after it finished.
    expect((await b.enqueue(makeJob(id))).accepted).toBe(false);
    const other = randomUUID();
    expect(await b.enqueue(makeJob(other))).toEqual({ accepted: true });
    await waitFor("the other job to run", () => runs.length === 2);
    expect(runs).toEqual([id, other]);
  });

  it("shares jobs between two workers on two queue instances", async () => {
    const name = `share-${randomUUID()}`;
    const a = machine(name);
    const b = machine(name);
    const byWorker = { a: [] as string[], b: [] as string[] };
    const hold = gate();
    const handler = (who: "a" | "b") => async (job: { id: string }) => {
      byWorker[who].push(job.id);
      await hold.promise;
    };
    a.work(handler("a"), { concurrency: 2 });
    b.work(handler("b"), { concurrency: 2 });
    for (let i = 0; i < 4; i++) await a.enqueue(makeJob(`share-${i}`));
    // Each worker holds at most 2 jobs at once, so all 4 running means both work.
    await waitFor("4 jobs running on both workers", () => byWorker.a.length + byWorker.b.length === 4);
    expect(byWorker.a.length).toBe(2);
    expect(byWorker.b.length).toBe(2);
    hold.open();
    for (let i = 4; i < 10; i++) await b.enqueue(makeJob(`share-${i}`));
    await waitFor("10 jobs", () => byWorker.a.length + byWorker.b.length === 10);
    expect([...byWorker.a, ...byWorker.b].sort()).toEqual(
      Array.from({ length: 10 }, (_, i) => `share-${i}`).sort(),
    );
  });

  it("never overlaps two jobs with the same lock key; different keys run together", async () => {
    const name = `lock-${randomUUID()}`;
    const a = machine(name);
    const b = machine(name);
    const spans: Span[] = [];
    const running = new Set<string>();
    let sameKeyOverlap = false;
    const attemptsSeen: number[] = [];
    const handler = async (job: { id: string; lockKey: string }, context: { attempt: number }) => {
      attemptsSeen.push(context.attempt);
      if ([...running].some((key) => key === job.lockKey)) sameKeyOverlap = true;
      running.add(job.lockKey);
      const start = Date.now();
      await new Promise((resolve) => setTimeout(resolve, 150));
      running.delete(job.lockKey);
      spans.push({ id: job.id, key: job.lockKey, start, end: Date.now() });
    };
    a.work(handler, { concurrency: 3 });
    b.work(handler, { concurrency: 3 });
    for (let i = 0; i < 3; i++) await a.enqueue(makeJob(`same-${i}`, "acme/widgets#1"));
    for (let i = 0; i < 3; i++) await b.enqueue(makeJob(`other-${i}`, `acme/widgets#${100 + i}`));
    await waitFor("6 jobs", () => spans.length === 6, 10_000);
    const same = spans.filter((s) => s.key === "acme/widgets#1");
    const other = spans.filter((s) => s.key !== "acme/widgets#1");
    expect(same).toHaveLength(3);
    // Each job ran once, on its first attempt: waiting for a busy key spends no attempt.
    expect(new Set(spans.map((s) => s.id)).size).toBe(6);
    expect(attemptsSeen).toEqual([1, 1, 1, 1, 1, 1]);
    expect(sameKeyOverlap).toBe(false);
    for (const x of same) for (const y of same) if (x !== y) expect(overlaps(x, y)).toBe(false);
    // Different keys ran at the same time as each other.
    const concurrent = other.some((x) => other.some((y) => x !== y && overlaps(x, y)));
    expect(concurrent).toBe(true);
  });

  it("retries a failing handler with backoff and counts attempts", async () => {
    const name = `retry-${randomUUID()}`;
    const errors: { final: boolean | undefined }[] = [];
    const q = createBullMqQueue({
      connection: { url: redis.url },
      queueName: name,
      prefix: "test",
      attempts: 3,
      backoffMs: 30,
      onError: (_error, details) => {
        if (details.job !== undefined) errors.push({ final: details.final });
      },
    });
    opened.push(q);
    const attempts: { id: string; attempt: number; at: number }[] = [];
    q.work(async (job, { attempt }) => {
      attempts.push({ id: job.id, attempt, at: Date.now() });
      if (job.id === "flaky" && attempt < 2) throw new Error("transient");
      if (job.id === "broken") throw new Error("always");
    });
    await q.enqueue(makeJob("flaky"));
    await q.enqueue(makeJob("broken"));
    await waitFor(
      "broken to use its 3 attempts",
      () => attempts.filter((a) => a.id === "broken").length === 3,
    );
    await waitFor("flaky to succeed", () => attempts.filter((a) => a.id === "flaky").length === 2);
    expect(attempts.filter((a) => a.id === "flaky").map((a) => a.attempt)).toEqual([1, 2]);
    const broken = attempts.filter((a) => a.id === "broken");
    expect(broken.map((a) => a.attempt)).toEqual([1, 2, 3]);
    expect(broken[1]!.at - broken[0]!.at).toBeGreaterThanOrEqual(25);
    await waitFor("the final failure to be reported", () => errors.some((e) => e.final === true));
    expect(errors.filter((e) => e.final === true)).toHaveLength(1);
  });

  it("close() of a worker aborts the running job's signal and waits for it", async () => {
    const name = `close-${randomUUID()}`;
    const q = machine(name);
    let started = false;
    let settled = false;
    let reason: unknown;
    const worker: QueueWorker = q.work(async (_job, { signal }) => {
      started = true;
      await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
      reason = signal.reason;
      await new Promise((resolve) => setTimeout(resolve, 20));
      settled = true;
    });
    await q.enqueue(makeJob(randomUUID()));
    await waitFor("the job to start", () => started);
    await worker.close();
    expect(settled).toBe(true);
    expect(String(reason)).toContain("worker closing");
  });

  it("delays, without failing, a job whose key another machine holds, until the lock is freed", async () => {
    const name = `held-${randomUUID()}`;
    const q = machine(name);
    const client = new Redis(redis.url);
    const inspect = new Queue(name, {
      connection: { host: "127.0.0.1", port: Number(new URL(redis.url).port) },
      prefix: "test",
    });
    try {
      const lockName = `test:${name}:warden::run-lock:acme/widgets#9`;
      expect(await client.set(lockName, "someone-else", "PX", 10_000, "NX")).toBe("OK");
      const runs: number[] = [];
      q.work(async (_job, { attempt }) => {
        runs.push(attempt);
      });
      const id = randomUUID();
      await q.enqueue(makeJob(id, "acme/widgets#9"));
      // Tried, found busy, delayed (retried every 50–75 ms while held).
      await waitFor("the job to be delayed", async () => (await inspect.getJobState(id)) === "delayed");
      await waitFor("a second try to be delayed", async () => {
        const job = await inspect.getJob(id);
        return (job?.attemptsStarted ?? 0) >= 2 && (await job?.getState()) === "delayed";
      });
      expect(runs).toEqual([]);
      await client.del(lockName);
      await waitFor("the job to run once the lock is free", () => runs.length === 1);
      expect(runs).toEqual([1]);
      await waitFor("the job to complete", async () => (await inspect.getJobState(id)) === "completed");
    } finally {
      await inspect.close();
      client.disconnect();
    }
  });

  it("aborts the run when its lock is lost", async () => {
    const name = `lost-${randomUUID()}`;
    const q = machine(name);
    const client = new Redis(redis.url);
    const inspect = new Queue(name, {
      connection: { host: "127.0.0.1", port: Number(new URL(redis.url).port) },
      prefix: "test",
    });
    try {
      let started = false;
      let reason: unknown;
      q.work(async (_job, { signal }) => {
        started = true;
        await new Promise<void>((resolve) =>
          signal.addEventListener("abort", () => resolve(), { once: true }),
        );
        reason = signal.reason;
      });
      const id = randomUUID();
      await q.enqueue(makeJob(id, "acme/widgets#10"));
      await waitFor("the job to start", () => started);
      // Another holder took the key (e.g. after the TTL expired during a long pause).
      await client.set(`test:${name}:warden::run-lock:acme/widgets#10`, "intruder", "PX", 10_000);
      await waitFor("the refresh to notice", () => reason !== undefined);
      expect(String(reason)).toContain("run lock acme/widgets#10 lost");
      // The intruder's lock is not released by the aborted run.
      await waitFor(
        "the aborted run to complete",
        async () => (await inspect.getJobState(id)) === "completed",
      );
      expect(await client.get(`test:${name}:warden::run-lock:acme/widgets#10`)).toBe("intruder");
    } finally {
      await inspect.close();
      client.disconnect();
    }
  });

  it("maps ids BullMQ refuses and parses Redis URLs", () => {
    expect(bullMqJobId("72d3162e-cc78-11e3-81ab-4c9367dc0958")).toBe("72d3162e-cc78-11e3-81ab-4c9367dc0958");
    expect(bullMqJobId("42")).toBe("%i42");
    expect(bullMqJobId("a:b")).toBe("a%3Ab");
    expect(bullMqJobId("a%3Ab")).toBe("a%253Ab");
    expect(redisOptionsFromUrl("rediss://u:p%40ss@example.test:6380/2")).toMatchObject({
      host: "example.test",
      port: 6380,
      username: "u",
      password: "p@ss",
      db: 2,
    });
    expect(() => redisOptionsFromUrl("http://x")).toThrow(/scheme/);
  });
});
