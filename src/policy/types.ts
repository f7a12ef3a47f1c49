// Public data types of the policy engine. Plain data only: a loaded policy can be logged,
// serialized into a report, or compared in a test.

/** ACP v1 tool kinds, as sent in `tool_call.kind`. */
export const TOOL_KINDS = [
  "read",
  "edit",
  "delete",
  "move",
  "search",
  "execute",
  "think",
  "fetch",
  "other",
  "switch_mode",
] as const;
export type ToolKind = (typeof TOOL_KINDS)[number];

/** Kinds whose facts are workspace paths. */
export const PATH_KINDS = ["read", "edit", "delete", "move", "search"] as const;
export type PathKind = (typeof PATH_KINDS)[number];

/** Kinds that change files: hardlinks and protected paths matter for them. */
export const WRITE_KINDS: ReadonlySet<ToolKind> = new Set<ToolKind>(["edit", "delete", "move"]);

export const DECISIONS = ["allow", "deny", "ask"] as const;
/** `ask` means "a human must answer"; a headless run with nobody to ask treats it as deny. */
export type Decision = (typeof DECISIONS)[number];

/** GitHub repository permission levels, weakest first. */
export const PERMISSION_LEVELS = ["none", "read", "triage", "write", "maintain", "admin"] as const;
export type PermissionLevel = (typeof PERMISSION_LEVELS)[number];

/** Events a run can start from (GitHub event names, plus `cli` for local runs). */
export const TRIGGER_EVENTS = [
  "issue_comment",
  "issues",
  "pull_request",
  "pull_request_target",
  "pull_request_review",
  "pull_request_review_comment",
  "schedule",
  "workflow_dispatch",
  "repository_dispatch",
  "push",
  "cli",
] as const;

export interface SourceLocation {
  file: string;
  line: number;
  column: number;
}

/** What triggered the run; profiles are selected from these. Absent facts match no condition. */
export interface TriggerFacts {
  event?: string;
  actorPermission?: PermissionLevel;
  fork?: boolean;
  labels?: readonly string[];
  branch?: string;
}

/**
 * A command pattern, parsed. Tokens are compared to argv tokens one by one:
 * a literal matches itself, alternatives match any of theirs, and `rest` (a final `*`)
 * accepts zero or more further tokens.
 */
export interface CommandPattern {
  source: string;
  tokens: readonly PatternToken[];
  rest: boolean;
}
export type PatternToken =
  | { type: "literal"; value: string }
  | { type: "alternatives"; values: readonly string[] };

export type RuleMatcher =
  | { kind: PathKind; globs: readonly string[] }
  | { kind: "execute"; patterns: readonly CommandPattern[] }
  | { kind: "fetch"; domains: readonly string[]; search: boolean }
  | { kind: "think" }
  | { kind: "other"; tools: readonly string[] }
  | { kind: "switch_mode"; modes: readonly string[] };

export interface Rule {
  /** `allow[0].edit`, `profiles.nightly.deny[1].execute`, or the rule's own `id`. */
  id: string;
  effect: Decision;
  matcher: RuleMatcher;
  reason?: string;
  location?: SourceLocation;
}

export interface ProfileCondition {
  events?: readonly string[];
  /** Minimum permission of the actor who triggered the run. */
  permission?: PermissionLevel;
  fork?: boolean;
  /** Any of these labels on the issue or pull request. */
  labels?: readonly string[];
  /** Globs over the branch name. */
  branches?: readonly string[];
}

export interface Limits {
  timeoutMinutes?: number;
  maxToolCalls?: number;
  maxTurns?: number;
}

export interface Profile {
  name: string;
  when: ProfileCondition;
  /** false: the base allow and ask rules do not apply (base deny rules always do). */
  inherit: boolean;
  default?: Decision;
  rules: readonly Rule[];
  limits: Limits;
  location?: SourceLocation;
}

export interface ProtectedPath {
  id: string;
  glob: string;
  location?: SourceLocation;
}

/** The facts one inline test feeds to `decide`. */
export interface PolicyTestCase {
  name: string;
  request: PermissionRequest;
  facts: TriggerFacts;
  expect: Decision;
  location?: SourceLocation;
}

export interface Policy {
  version: 1;
  /** Where the policy came from; `empty` when the file was missing or had no content (deny-all). */
  source: { file: string; empty: boolean };
  agent?: string;
  agents: { allowed?: readonly string[] };
  default: Decision;
  defaultLocation?: SourceLocation;
  rules: readonly Rule[];
  profiles: readonly Profile[];
  limits: Limits;
  protected: readonly ProtectedPath[];
  env: { pass: readonly string[] };
  tests: readonly PolicyTestCase[];
}

/** Where the extracted facts came from; lets `decide` refuse facts read from an untrusted source. */
export interface FactEvidence {
  /** The agent sent `rawInput` with this tool call. */
  rawInputPresent: boolean;
  /** Which part of the tool call the facts were read from. */
  source: "raw-input" | "title" | "locations" | "diff-content";
}

interface RequestBase {
  evidence?: FactEvidence;
}

/**
 * The facts an agent preset extracted from one ACP permission request.
 * Paths may be absolute or workspace-relative; `move` carries [from, to].
 */
export type PermissionRequest =
  | (RequestBase & { kind: "read" | "edit" | "delete"; paths: readonly string[] })
  | (RequestBase & { kind: "move"; paths: readonly string[] })
  | (RequestBase & { kind: "search"; paths?: readonly string[]; query?: string })
  | (RequestBase & { kind: "execute"; command: string; cwd?: string })
  | (RequestBase & { kind: "fetch"; url?: string; query?: string })
  | (RequestBase & { kind: "think" })
  | (RequestBase & { kind: "switch_mode"; mode?: string })
  | (RequestBase & { kind: "other"; tool?: string });

/** One subject the decision looked at: a simple command, a path, a host. */
export interface MatchDetail {
  kind: ToolKind;
  subject: string;
  decision: Decision;
  ruleId: string;
  /** The glob, command pattern or domain of the rule that matched, when a rule matched. */
  pattern?: string;
  reason: string;
  location?: SourceLocation;
  /** Set for commands fed by `xargs`: the final arguments are unknown. */
  unknownTail?: boolean;
  /** The argv an allow rule would have to name (execute). */
  argv?: readonly string[];
  /** The workspace-relative path(s) judged, as named and as resolved (path kinds). */
  paths?: readonly string[];
}

export interface DecisionResult {
  decision: Decision;
  ruleId: string;
  reason: string;
  matched: readonly MatchDetail[];
  /** Profiles that applied to this run, in file order. */
  profiles: readonly string[];
}
