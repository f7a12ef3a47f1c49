import type { RunJob } from "../../src/queue/port.js";

export function makeJob(id: string, lockKey = `acme/widgets#${id}`): RunJob {
  return {
    id,
    installationId: 1,
    owner: "acme",
    repo: "widgets",
    eventName: "issue_comment",
    payload: { comment: { body: "@warden fix it" } },
    lockKey,
    enqueuedAt: Date.now(),
  };
}

/** Polls `predicate` until it holds, or fails after `timeoutMs` with `what`. */
export async function waitFor(
  what: string,
  predicate: () => boolean | Promise<boolean>,
  timeoutMs = 5_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** A promise with its resolver, to hold a handler until the test lets it go. */
export function gate(): { readonly promise: Promise<void>; open(): void } {
  let open = () => {};
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

export interface Span {
  readonly id: string;
  readonly key: string;
  readonly start: number;
  readonly end: number;
}

/** True when two spans overlap in time. */
export function overlaps(a: Span, b: Span): boolean {
  return a.start < b.end && b.start < a.end;
}
