// Turns a GitHub event into a run request, or into a reason to do nothing. Pure: the caller reads
// the event payload and passes it in.
import { COMMENT_MARKER } from "../report/markdown.js";

export interface TriggerSettings {
  /** The command prefix in comments, e.g. `/agent`. */
  trigger: string;
  /** `issues` events start a run when this label is added (or present when the issue is opened). */
  label?: string;
  /** Prompt for `schedule` and `workflow_dispatch` runs. */
  prompt?: string;
}

interface TriggerBase {
  actor: string;
  /** Free text the person added after the command (e.g. "use the new parser"). */
  instructions: string;
  /** `--agent NAME` given in the command, if any. */
  agentOverride?: string;
  /** The verb after the trigger (`fix`, `review`, …); `fix` when none was given. */
  verb: string;
}

export type RunTrigger =
  | (TriggerBase & {
      kind: "issue_comment";
      issueNumber: number;
      isPullRequest: boolean;
      commentId: number;
    })
  | (TriggerBase & { kind: "issues"; issueNumber: number })
  | (TriggerBase & {
      kind: "pull_request_review_comment";
      pullNumber: number;
      commentId: number;
      path: string | null;
      line: number | null;
    })
  | (TriggerBase & { kind: "schedule" | "workflow_dispatch" });

export type TriggerResult = { run: RunTrigger } | { skip: string };

/** The issue or pull request number the run reports on, if there is one. */
export function threadNumber(t: RunTrigger): number | null {
  if (t.kind === "issue_comment" || t.kind === "issues") return t.issueNumber;
  if (t.kind === "pull_request_review_comment") return t.pullNumber;
  return null;
}

export interface ParsedCommand {
  verb: string;
  agent?: string;
  instructions: string;
}

/**
 * Reads `/agent fix --agent gemini use the new parser` → verb `fix`, agent `gemini`, the rest as
 * instructions. Returns null when the text does not start with the trigger as a whole word.
 */
export function parseCommand(body: string, trigger: string): ParsedCommand | null {
  const text = body.replace(/^\uFEFF/, "").trimStart();
  if (!text.startsWith(trigger)) return null;
  const after = text.slice(trigger.length);
  if (after.length > 0 && !/^\s/.test(after)) return null;
  const [firstLine = "", ...restLines] = after.trim().split("\n");
  const words = firstLine.trim().split(/\s+/).filter(Boolean);
  let verb = "fix";
  let agent: string | undefined;
  const kept: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    if (word === "--agent" && i + 1 < words.length) {
      agent = words[++i];
    } else if (word.startsWith("--agent=")) {
      agent = word.slice("--agent=".length);
    } else if (i === 0 && /^[a-z][a-z-]*$/.test(word) && KNOWN_VERBS.has(word)) {
      verb = word;
    } else {
      kept.push(word);
    }
  }
  const instructions = [kept.join(" "), ...restLines].join("\n").trim();
  return { verb, ...(agent ? { agent } : {}), instructions };
}

const KNOWN_VERBS = new Set(["fix", "implement", "review", "refactor", "test", "docs", "update"]);

interface Actor {
  login?: string;
  type?: string;
}

function isBot(user: Actor | undefined): boolean {
  return user?.type === "Bot" || (user?.login ?? "").endsWith("[bot]");
}

type Payload = Record<string, unknown>;

function obj(value: unknown): Payload {
  return value !== null && typeof value === "object" ? (value as Payload) : {};
}

function str(value: unknown): string {
  return typeof value === "string" ? value : "";
}

function num(value: unknown): number {
  return typeof value === "number" ? value : Number.NaN;
}

export function parseTrigger(eventName: string, payload: unknown, settings: TriggerSettings): TriggerResult {
  const event = obj(payload);
  const sender = obj(event.sender) as Actor;
  const actor = str(sender.login);
  switch (eventName) {
    case "issue_comment":
    case "pull_request_review_comment": {
      if (event.action !== "created") return { skip: `ignoring ${eventName}.${str(event.action)}` };
      const comment = obj(event.comment);
      const body = str(comment.body);
      if (body.includes(COMMENT_MARKER)) return { skip: "the comment was written by acp-warden" };
      if (isBot(obj(comment.user) as Actor) || isBot(sender))
        return { skip: "comments by bots never start a run" };
      const command = parseCommand(body, settings.trigger);
      if (!command) return { skip: `the comment does not start with ${settings.trigger}` };
      const base = {
        actor,
        instructions: command.instructions,
        verb: command.verb,
        ...(command.agent ? { agentOverride: command.agent } : {}),
      };
      if (eventName === "issue_comment") {
        const issue = obj(event.issue);
        return {
          run: {
            ...base,
            kind: "issue_comment",
            issueNumber: num(issue.number),
            isPullRequest: issue.pull_request !== undefined && issue.pull_request !== null,
            commentId: num(comment.id),
          },
        };
      }
      const pull = obj(event.pull_request);
      return {
        run: {
          ...base,
          kind: "pull_request_review_comment",
          pullNumber: num(pull.number),
          commentId: num(comment.id),
          path: str(comment.path) || null,
          line: typeof comment.line === "number" ? comment.line : null,
        },
      };
    }
    case "issues": {
      const label = settings.label;
      if (!label) return { skip: "no label is configured for issues events" };
      const issue = obj(event.issue);
      if (isBot(sender)) return { skip: "events caused by bots never start a run" };
      const labels = (Array.isArray(issue.labels) ? issue.labels : []).map((l) => str(obj(l).name));
      const started =
        (event.action === "labeled" && str(obj(event.label).name) === label) ||
        (event.action === "opened" && labels.includes(label));
      if (!started)
        return {
          skip: `the issue was not ${event.action === "opened" ? "opened with" : "given"} the label ${label}`,
        };
      return {
        run: { kind: "issues", issueNumber: num(issue.number), actor, instructions: "", verb: "fix" },
      };
    }
    case "schedule":
    case "workflow_dispatch": {
      const inputs = obj(event.inputs);
      const prompt = (eventName === "workflow_dispatch" ? str(inputs.prompt) : "") || settings.prompt || "";
      if (!prompt.trim()) return { skip: `a ${eventName} run needs the \`prompt\` input` };
      const agent = eventName === "workflow_dispatch" ? str(inputs.agent) : "";
      return {
        run: {
          kind: eventName,
          actor: actor || "schedule",
          instructions: prompt.trim(),
          verb: "fix",
          ...(agent ? { agentOverride: agent } : {}),
        },
      };
    }
    default:
      return { skip: `acp-warden does not run on ${eventName} events` };
  }
}
