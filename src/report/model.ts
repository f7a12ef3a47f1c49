// What a run report says, as plain data. The pipeline fills it in as the run goes; the renderers
// turn it into the tracking comment, the pull request body and the job summary.
import type { DecisionRecord, SessionState } from "../acp/types.js";

export type RunPhase = "starting" | "running" | "publishing" | "done";

export type RunStatus =
  /** A pull request was opened or updated. */
  | "published"
  /** The agent changed nothing. */
  | "no_changes"
  /** Changes touch protected paths or break the edit rules: nothing was pushed. */
  | "blocked"
  /** A time, tool-call or cancel limit stopped the agent; its work so far is in a draft PR. */
  | "stopped"
  /** Something failed; `error` says what and `kept` what was preserved. */
  | "failed";

export interface ChangedFileSummary {
  path: string;
  status: string;
  additions: number;
  deletions: number;
  previousPath?: string;
}

export interface RunReport {
  repository: string;
  serverUrl: string;
  thread: { kind: "issue" | "pull request"; number: number } | null;
  trigger: { kind: string; actor: string; verb: string; instructions: string };
  agent: string;
  branch: string | null;
  baseBranch: string | null;
  runUrl: string | null;
  phase: RunPhase;
  startedAt: number;
  /** The time the report is rendered for (elapsed time is computed from it). */
  now: number;
  session: SessionState | null;
  /** Things the reader should know: agent settings we could not enforce, rules the agent can bypass. */
  notes: string[];
  diff: { files: ChangedFileSummary[]; patch: string } | null;
  /** Changes that break the policy (protected paths, edit rules): any of them blocks publishing. */
  protectedViolations: { path: string; rule: string; reason?: string }[];
  pullRequest: { number: number; url: string; draft: boolean; created: boolean } | null;
  status: RunStatus | null;
  error: { stage: string; message: string } | null;
  /** What was preserved despite a failure (branch pushed, transcript path…). */
  kept: string[];
  transcriptPath: string | null;
}

export function deniedDecisions(report: RunReport): DecisionRecord[] {
  return (report.session?.decisions ?? []).filter((d) => d.outcome === "deny");
}

export function allowedDecisions(report: RunReport): DecisionRecord[] {
  return (report.session?.decisions ?? []).filter((d) => d.outcome === "allow");
}
