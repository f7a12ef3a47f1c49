// The App's webhook decision, kept apart from Probot so it can be tested with plain values.
// GitHub gives a delivery 10 s: this only parses the trigger, authorizes the sender, reacts 👀 and
// enqueues a job. Workers (src/app/worker.ts) do the rest.
import type { GitHubPort, ReactionTarget, RepositoryRole } from "../github/port.js";
import { parseTrigger, type RunTrigger, type TriggerSettings, threadNumber } from "../pipeline/trigger.js";
import type { JobQueue, RunJob } from "../queue/port.js";
import { COMMENT_MARKER } from "../report/markdown.js";

/** A delivery whose signature has already been verified. */
export interface WebhookDelivery {
  /** `X-GitHub-Delivery`. */
  readonly id: string;
  /** `X-GitHub-Event`, e.g. "issue_comment". */
  readonly name: string;
  readonly payload: unknown;
}

export type WebhookDecision =
  | { readonly action: "ignored"; readonly reason: string }
  | { readonly action: "duplicate"; readonly deliveryId: string; readonly reason: string }
  | {
      readonly action: "refused";
      readonly actor: string;
      readonly role: RepositoryRole;
      readonly message: string;
    }
  | { readonly action: "enqueued"; readonly job: RunJob };

export interface WebhookHandlerOptions {
  readonly queue: JobQueue;
  /** A GitHub client acting as the App's installation (installation token). */
  readonly githubFor: (installationId: number) => Promise<GitHubPort>;
  readonly trigger: TriggerSettings;
  readonly now?: () => number;
  readonly log?: (line: string) => void;
  /** Delivery ids remembered to answer a repeated delivery without any work; default 10 000. */
  readonly rememberDeliveries?: number;
}

export type WebhookHandler = (delivery: WebhookDelivery) => Promise<WebhookDecision>;

const WRITE_ROLES: ReadonlySet<RepositoryRole> = new Set(["write", "maintain", "admin"]);

/** The events the App subscribes to (Probot's `event.action` names). */
export const APP_EVENTS = [
  "issue_comment.created",
  "issues.opened",
  "issues.labeled",
  "pull_request_review_comment.created",
] as const;

type Payload = Record<string, unknown>;

function obj(value: unknown): Payload {
  return value !== null && typeof value === "object" ? (value as Payload) : {};
}

/** Installation and repository a delivery is about; null when the payload lacks them. */
export function deliveryTarget(
  payload: unknown,
): { installationId: number; owner: string; repo: string } | null {
  const event = obj(payload);
  const installationId = obj(event.installation).id;
  const repository = obj(event.repository);
  const owner = obj(repository.owner).login;
  const repo = repository.name;
  if (typeof installationId !== "number" || !Number.isSafeInteger(installationId)) return null;
  if (typeof owner !== "string" || owner === "" || typeof repo !== "string" || repo === "") return null;
  return { installationId, owner, repo };
}

/** Runs with the same key never overlap: one per issue or pull request, else one per event kind. */
export function lockKeyFor(owner: string, repo: string, eventName: string, trigger: RunTrigger): string {
  const number = threadNumber(trigger);
  return number === null ? `${owner}/${repo}:${eventName}` : `${owner}/${repo}#${number}`;
}

function reactionTarget(trigger: RunTrigger): ReactionTarget | null {
  switch (trigger.kind) {
    case "issue_comment":
      return { kind: "issue-comment", commentId: trigger.commentId };
    case "pull_request_review_comment":
      return { kind: "review-comment", commentId: trigger.commentId };
    case "issues":
      return { kind: "issue", issueNumber: trigger.issueNumber };
    default:
      return null;
  }
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export function createWebhookHandler(options: WebhookHandlerOptions): WebhookHandler {
  const now = options.now ?? Date.now;
  const log = options.log ?? (() => {});
  const remember = Math.max(1, options.rememberDeliveries ?? 10_000);
  // Deliveries being handled or handled: a repeat is answered at once. A failed one is forgotten
  // so that GitHub's redelivery can succeed.
  const seen = new Map<string, true>();

  function markSeen(id: string): boolean {
    if (seen.has(id)) return false;
    seen.set(id, true);
    while (seen.size > remember) {
      const oldest = seen.keys().next();
      if (oldest.done) break;
      seen.delete(oldest.value);
    }
    return true;
  }

  return async (delivery) => {
    const parsed = parseTrigger(delivery.name, delivery.payload, options.trigger);
    if ("skip" in parsed) return { action: "ignored", reason: parsed.skip };
    const trigger = parsed.run;
    const target = deliveryTarget(delivery.payload);
    if (!target) return { action: "ignored", reason: "the delivery names no installation or repository" };
    const { installationId, owner, repo } = target;

    if (!markSeen(delivery.id))
      return { action: "duplicate", deliveryId: delivery.id, reason: "this delivery was already received" };

    try {
      const github = await options.githubFor(installationId);
      const role = await github.getCollaboratorPermission(owner, repo, trigger.actor);
      const number = threadNumber(trigger);
      if (!WRITE_ROLES.has(role)) {
        const message = `@${trigger.actor} needs write access to ${owner}/${repo} to start the agent (they have ${role}).`;
        log(`${delivery.id}: ${message}`);
        if (number !== null) {
          await github
            .createComment(
              owner,
              repo,
              number,
              `${COMMENT_MARKER}\n${message} A maintainer can run the command instead.`,
            )
            .catch((error: unknown) => log(`${delivery.id}: could not reply: ${errorMessage(error)}`));
        }
        return { action: "refused", actor: trigger.actor, role, message };
      }

      const reactTo = reactionTarget(trigger);
      if (reactTo) {
        await github
          .addReaction(owner, repo, reactTo, "eyes")
          .catch((error: unknown) =>
            log(`${delivery.id}: could not add the 👀 reaction: ${errorMessage(error)}`),
          );
      }

      const job: RunJob = {
        id: delivery.id,
        installationId,
        owner,
        repo,
        eventName: delivery.name,
        payload: delivery.payload,
        lockKey: lockKeyFor(owner, repo, delivery.name, trigger),
        enqueuedAt: now(),
      };
      const result = await options.queue.enqueue(job);
      if (!result.accepted) {
        log(`${delivery.id}: not enqueued: ${result.reason}`);
        return { action: "duplicate", deliveryId: delivery.id, reason: result.reason };
      }
      log(`${delivery.id}: enqueued ${job.lockKey} (${delivery.name} by @${trigger.actor})`);
      return { action: "enqueued", job };
    } catch (error) {
      seen.delete(delivery.id);
      throw error;
    }
  };
}
