import { afterEach, describe, expect, it } from "vitest";
import { createInProcessQueue } from "../../src/queue/in-process.js";
import type { JobQueue, RunJob } from "../../src/queue/port.js";
import { gate, makeJob, waitFor } from "./helpers.js";

let queue: JobQueue | undefined;
afterEach(async () => {
  await queue?.close();
  queue = undefined;
});

describe("in-process queue", () => {
  it("runs a job id once, also when it is enqueued again after it finished", async () => {
    const q = createInProcessQueue();
    queue = q;
    const runs: string[] = [];
    q.work(async (job) => {
      runs.push(job.id);
    });
    expect(await q.enqueue(makeJob("d1"))).toEqual({ accepted: true });
    const second = await q.enqueue(makeJob("d1"));
    expect(second.accepted).toBe(false);
    await waitFor("d1 to run", () => runs.length === 1);
    const third = await q.enqueue(makeJob("d1"));
    expect(third).toEqual({ accepted: false, reason: "duplicate job id d1" });
    expect(await q.enqueue(makeJob("d2"))).toEqual({ accepted: true });
    await waitFor("d2 to run", () => runs.length === 2);
    expect(runs).toEqual(["d1", "d2"]);
  });

  it("forgets ids beyond the dedupe window, never while they are live", async () => {
    const q = createInProcessQueue({ dedupeWindow: 2 });
    queue = q;
    const hold = gate();
    const runs: string[] = [];
    q.work(async (job) => {
      runs.push(job.id);
      if (job.id === "a") await hold.promise;
    });
    await q.enqueue(makeJob("a"));
    await q.enqueue(makeJob("b"));
    await q.enqueue(makeJob("c"));
    // "a" left the window but is still running: still a duplicate.
    expect((await q.enqueue(makeJob("a"))).accepted).toBe(false);
    hold.open();
    await waitFor("a, b, c", () => runs.length === 3);
    expect((await q.enqueue(makeJob("a"))).accepted).toBe(true);
    await waitFor("a again", () => runs.length === 4);
    expect(runs).toEqual(["a", "b", "c", "a"]);
  });

  it("runs jobs in FIFO order with concurrency 1", async () => {
    const q = createInProcessQueue();
    queue = q;
    const runs: string[] = [];
    for (const id of ["j1", "j2", "j3", "j4"]) await q.enqueue(makeJob(id));
    q.work(async (job) => {
      runs.push(job.id);
    });
    await waitFor("4 runs", () => runs.length === 4);
    expect(runs).toEqual(["j1", "j2", "j3", "j4"]);
  });

  it("keeps at most `concurrency` jobs running", async () => {
    const q = createInProcessQueue();
    queue = q;
    const hold = gate();
    let active = 0;
    let peak = 0;
    let done = 0;
    q.work(
      async () => {
        active++;
        peak = Math.max(peak, active);
        await hold.promise;
        active--;
        done++;
      },
      { concurrency: 3 },
    );
    for (let i = 0; i < 8; i++) await q.enqueue(makeJob(`c${i}`));
    await waitFor("3 active", () => active === 3);
    expect(peak).toBe(3);
    hold.open();
    await waitFor("8 done", () => done === 8);
    expect(peak).toBe(3);
  });

  it("never runs two jobs with the same lock key at once; other keys go ahead", async () => {
    const q = createInProcessQueue();
    queue = q;
    const gates = new Map([
      ["k1", gate()],
      ["k2", gate()],
      ["o1", gate()],
    ]);
    const started: string[] = [];
    const finished: string[] = [];
    const events: string[] = [];
    q.work(
      async (job) => {
        started.push(job.id);
        events.push(`start ${job.id}`);
        await gates.get(job.id)?.promise;
        finished.push(job.id);
        events.push(`end ${job.id}`);
      },
      { concurrency: 4 },
    );
    await q.enqueue(makeJob("k1", "acme/widgets#1"));
    await q.enqueue(makeJob("k2", "acme/widgets#1"));
    await q.enqueue(makeJob("o1", "acme/widgets#2"));
    await waitFor("k1 and o1 to start", () => started.length === 2);
    expect(started).toEqual(["k1", "o1"]);
    gates.get("o1")?.open();
    await waitFor("o1 to finish", () => finished.includes("o1"));
    expect(started).toEqual(["k1", "o1"]);
    gates.get("k1")?.open();
    await waitFor("k2 to start after k1", () => started.includes("k2"));
    expect(events.indexOf("end k1")).toBeLessThan(events.indexOf("start k2"));
    gates.get("k2")?.open();
    await waitFor("k2 to finish", () => finished.includes("k2"));
    expect(finished).toEqual(["o1", "k1", "k2"]);
  });

  it("shares jobs between workers and holds a lock key across them", async () => {
    const q = createInProcessQueue();
    queue = q;
    const hold = gate();
    const byWorker = { a: [] as string[], b: [] as string[] };
    const handler = (who: "a" | "b") => async (job: RunJob) => {
      byWorker[who].push(job.id);
      await hold.promise;
    };
    q.work(handler("a"), { concurrency: 2 });
    q.work(handler("b"), { concurrency: 2 });
    await q.enqueue(makeJob("s1", "acme/widgets#1"));
    await q.enqueue(makeJob("s2", "acme/widgets#1"));
    await q.enqueue(makeJob("s3", "acme/widgets#3"));
    await q.enqueue(makeJob("s4", "acme/widgets#4"));
    await q.enqueue(makeJob("s5", "acme/widgets#5"));
    await waitFor("4 running", () => byWorker.a.length + byWorker.b.length === 4);
    // s2 waits for s1 although both workers have room.
    expect([...byWorker.a, ...byWorker.b].sort()).toEqual(["s1", "s3", "s4", "s5"]);
    expect(byWorker.a.length).toBe(2);
    expect(byWorker.b.length).toBe(2);
    hold.open();
    await waitFor("s2", () => [...byWorker.a, ...byWorker.b].includes("s2"));
  });

  it("retries a failing handler with backoff, counting attempts, up to `attempts`", async () => {
    const failures: { job: RunJob; error: unknown; attempt: number }[] = [];
    const q = createInProcessQueue({
      attempts: 3,
      backoffMs: 20,
      onFailed: (job, error, attempt) => failures.push({ job, error, attempt }),
    });
    queue = q;
    const attempts: { id: string; attempt: number; at: number }[] = [];
    q.work(async (job, { attempt }) => {
      attempts.push({ id: job.id, attempt, at: Date.now() });
      if (job.id === "flaky" && attempt < 2) throw new Error("transient");
      if (job.id === "broken") throw new Error("always");
    });
    await q.enqueue(makeJob("flaky"));
    await q.enqueue(makeJob("broken"));
    await waitFor("broken to fail for good", () => failures.length === 1);
    expect(attempts.filter((a) => a.id === "flaky").map((a) => a.attempt)).toEqual([1, 2]);
    const broken = attempts.filter((a) => a.id === "broken");
    expect(broken.map((a) => a.attempt)).toEqual([1, 2, 3]);
    // Exponential backoff: ≥ 20 ms then ≥ 40 ms (a timer never fires early by more than 1 ms).
    expect(broken[1]!.at - broken[0]!.at).toBeGreaterThanOrEqual(19);
    expect(broken[2]!.at - broken[1]!.at).toBeGreaterThanOrEqual(39);
    expect(failures[0]?.job.id).toBe("broken");
    expect(failures[0]?.attempt).toBe(3);
    expect(String(failures[0]?.error)).toContain("always");
  });

  it("close() aborts the running job's signal and waits for it", async () => {
    const q = createInProcessQueue();
    queue = q;
    let started = false;
    let settled = false;
    let runs = 0;
    let reason: unknown;
    const worker = q.work(async (_job, { signal }) => {
      started = true;
      runs++;
      await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
      reason = signal.reason;
      await new Promise((resolve) => setTimeout(resolve, 20));
      settled = true;
    });
    await q.enqueue(makeJob("long"));
    await waitFor("the job to start", () => started);
    await worker.close();
    expect(settled).toBe(true);
    expect(String(reason)).toContain("worker closing");
    // A closed worker takes no more jobs; a new worker does.
    await q.enqueue(makeJob("after"));
    await Promise.resolve();
    expect(runs).toBe(1);
    const seen: string[] = [];
    q.work(async (job) => {
      seen.push(job.id);
    });
    await waitFor("the next worker to take the job", () => seen.length === 1);
    expect(seen).toEqual(["after"]);
    expect(runs).toBe(1);
  });

  it("rejects bad options and enqueues after close", async () => {
    expect(() => createInProcessQueue({ attempts: 0 })).toThrow(RangeError);
    const q = createInProcessQueue();
    expect(() => q.work(async () => {}, { concurrency: 0 })).toThrow(RangeError);
    await q.close();
    expect(await q.enqueue(makeJob("x"))).toEqual({ accepted: false, reason: "queue closed" });
  });
});
