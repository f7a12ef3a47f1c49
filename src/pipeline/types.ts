// The pipeline's inputs, dependencies and result. Every side effect comes in through `PipelineDeps`.
import type { ClientQuirks, DecideFn, SessionOptions, SessionResult } from "../acp/types.js";
import type { GitIdentity, GitWorkspace } from "../git/port.js";
import type { GitHubPort, RepositoryRef } from "../github/port.js";
import type { Policy, ShellAnalyzer, TriggerFacts } from "../policy/index.js";
import type { RunReport, RunStatus } from "../report/model.js";
import type { RunTrigger } from "./trigger.js";

export interface RunConfig {
  repository: RepositoryRef;
  /** e.g. https://github.com or a GitHub Enterprise server; links and the git remote derive from it. */
  serverUrl: string;
  runUrl: string | null;
  /** The checkout the agent works in. */
  workspace: string;
  /** The `agent` input: a preset name or a command line; empty to use the policy's `agent`. */
  agent: string;
  policyPath: string;
  branchPrefix: string;
  /** Branch to start from; empty for the repository's default branch. */
  baseBranch: string;
  timeoutMinutes: number | null;
  model: string | null;
  /** Open pull requests as drafts. */
  draft: boolean;
  /** Where the transcript (JSONL) goes. */
  transcriptDir: string;
  /** Remote URL (no credentials) to fetch from and push to. */
  remoteUrl: string;
  /** Credential for fetch and push only; never reaches the agent. */
  pushToken: string;
  gitIdentity: GitIdentity;
}

/** An agent made ready for one run: how to launch it and how its requests are decided. */
export interface PreparedAgent {
  /** Display name, e.g. "claude" or the command's first word. */
  name: string;
  /** A command line (not a preset) is named after what the agent reports itself to be. */
  kind: "preset" | "command";
  session: Pick<SessionOptions, "launch" | "mode" | "config" | "authMethodId" | "sessionMeta"> & {
    decide: DecideFn;
    quirks?: ClientQuirks;
  };
  /** Things the report should say (e.g. rules this agent can bypass). */
  notes: string[];
  /** Removes the throwaway home and anything else made for the run. */
  dispose(): Promise<void>;
}

export interface AgentRuntime {
  prepare(input: {
    agent: string;
    policy: Policy;
    facts: TriggerFacts;
    workspace: string;
    model: string | null;
    shell: ShellAnalyzer;
  }): Promise<PreparedAgent>;
}

export interface PipelineDeps {
  github: GitHubPort;
  git: GitWorkspace;
  agents: AgentRuntime;
  runSession: (options: SessionOptions) => Promise<SessionResult>;
  loadShell: () => Promise<ShellAnalyzer>;
  now: () => number;
  log: (line: string) => void;
  /** Minimum time between two edits of the tracking comment. */
  commentIntervalMs: number;
}

export interface RunOutcome {
  status: RunStatus | "skipped" | "unauthorized";
  /** Why nothing ran, for skipped and unauthorized runs. */
  message: string;
  report: RunReport | null;
  /** Non-zero only for real failures. */
  exitCode: number;
}

export type { RunTrigger };
