// Public types of the agent presets: what each real agent needs to run headless, ask before it
// acts, and carry the policy in its own permission settings as a first layer under our answers.
import type { AgentLaunch, acp, ClientQuirks } from "../acp/index.js";
import type { EffectiveRules, PermissionRequest, Policy, ToolKind, TriggerFacts } from "../policy/index.js";

export const PRESET_IDS = ["claude", "gemini", "copilot", "codex", "opencode"] as const;
export type PresetId = (typeof PRESET_IDS)[number];

/** How a runner gets the agent's binary. */
export type Install =
  /** `npx -y --package=<pkg>@<version> -- <bin> …` (production default; pinned). */
  | { kind: "npx" }
  /** An already installed binary in this directory (e.g. interop/node_modules/.bin). */
  | { kind: "bin"; dir: string };

/** Where a policy rule (or a kind of action) is enforced for one agent. */
export type EnforcementLayer =
  /** Compiled into the agent's own permission settings: the agent refuses (or asks) by itself. */
  | "agent-settings"
  /** The agent asks us (`session/request_permission`) and the policy answers. */
  | "per-request"
  /** The agent goes through our `fs/*` or `terminal/*` methods, which the policy answers. */
  | "client-methods"
  /** The diff is audited after the run (protected paths, edit rules). */
  | "final-diff";

/** What one agent does with one kind of action once the preset has configured it. */
export interface KindCoverage {
  /** The agent asks before this kind (so the policy answers per request). */
  asks: "always" | "partly" | "never";
  /** Which policy rules of this kind are compiled into the agent's own settings. */
  compiled: "all" | "deny" | "none";
  /** The agent cannot do this kind at all under our settings (tool removed or refused). */
  removed?: boolean;
  note: string;
}

/** Static facts about one preset: the compatibility table is generated from these. */
export interface PresetInfo {
  id: PresetId;
  title: string;
  package: { name: string; version: string; bin: string };
  args: readonly string[];
  /** Variables taken from the parent environment, when set (API keys, base URLs, model). */
  envAllow: readonly string[];
  /** How the agent authenticates headless. */
  auth: string;
  /** How the model is chosen. */
  model: string;
  /** What makes the agent ask (mode, config, flags), as sent and checked at session start. */
  askSettings: string;
  /** What the preset writes into the agent's own permission settings. */
  compiledInto: string;
  coverage: Readonly<Record<CoveredKind, KindCoverage>>;
  quirkNotes: readonly string[];
}

export const COVERED_KINDS = ["read", "search", "edit", "execute", "fetch"] as const;
export type CoveredKind = (typeof COVERED_KINDS)[number];

/** One policy rule and where this agent enforces it. */
export interface RuleEnforcement {
  ruleId: string;
  effect: "allow" | "ask" | "deny" | "protected";
  kind: ToolKind | "protected";
  subjects: readonly string[];
  enforcedBy: readonly EnforcementLayer[];
  /** How the agent could still act against this rule; null when it cannot. */
  bypass: string | null;
}

export interface EnforcementReport {
  agent: string;
  /** Settings written for the agent (files in its throwaway HOME, flags, config), for the report. */
  agentSettings: readonly { where: string; entries: readonly string[] }[];
  rules: readonly RuleEnforcement[];
  /** Plain sentences on what the agent can do without asking; empty when it asks for everything. */
  gaps: readonly string[];
}

/** A file the preset writes before launch (inside the throwaway HOME). */
export interface PreparedFile {
  path: string;
  content: string;
}

export interface PrepareOptions {
  policy: Policy;
  facts: TriggerFacts;
  /** Absolute path of the checkout the agent works in. */
  workspace: string;
  /** A fresh, empty directory: the agent's HOME (its settings are written here). */
  homeDir: string;
  /** The parent environment; only allow-listed names are read from it. */
  env: Readonly<Record<string, string | undefined>>;
  /** Model id; otherwise the preset's default or the agent's own. */
  model?: string;
  /** Effective uid (Claude needs IS_SANDBOX=1 as root); defaults to the current process's. */
  uid?: number;
}

export interface PreparedAgent {
  launch: AgentLaunch;
  mode?: string;
  config?: Record<string, string>;
  quirks: ClientQuirks;
  authMethodId?: string;
  sessionMeta?: Record<string, unknown>;
  enforcement: EnforcementReport;
  warnings: string[];
  /** Files written into the throwaway HOME (already on disk when prepareAgent resolves). */
  files: readonly PreparedFile[];
}

export interface PermissionFacts {
  toolCall: acp.ToolCallUpdate;
  workspace: string;
}

/** The settings a preset computes for one run, before they are written. */
export interface AgentSetup {
  args: readonly string[];
  env: Record<string, string>;
  files: readonly PreparedFile[];
  mode?: string;
  config?: Record<string, string>;
  authMethodId?: string;
  sessionMeta?: Record<string, unknown>;
  agentSettings: { where: string; entries: readonly string[] }[];
  warnings: string[];
}

export interface SetupContext extends PrepareOptions {
  /** The effective rules for this run's trigger facts, grouped by kind. */
  rules: EffectiveRules;
}

export interface AgentPreset extends PresetInfo {
  type: "preset";
  install: Install;
  /** Agent-specific settings, files and env for one run (pure: the caller writes the files). */
  setup(context: SetupContext): AgentSetup;
  /** Facts of one permission request, as this agent sends them. */
  extract(facts: PermissionFacts): PermissionRequest;
  quirks: ClientQuirks;
}

/** Any other value of the `agent` setting: a command line launched as is. */
export interface CommandAgent {
  type: "command";
  id: "command";
  title: string;
  command: string;
  args: readonly string[];
}

export type ResolvedAgent = AgentPreset | CommandAgent;
