// Which policy rule is enforced where, for one agent, and the audit of the final diff that sits
// under every agent (most agents write to disk themselves, so the diff is the last word).
import {
  type DecideContext,
  decide,
  effectiveRules,
  type Policy,
  protectedEntryFor,
  type Rule,
  type TriggerFacts,
} from "../policy/index.js";
import type {
  AgentSetup,
  CoveredKind,
  EnforcementLayer,
  EnforcementReport,
  KindCoverage,
  ResolvedAgent,
  RuleEnforcement,
} from "./types.js";
import { COVERED_KINDS } from "./types.js";

const DIFF_KINDS = new Set(["edit", "delete", "move"]);

function subjectsOf(rule: Rule): string[] {
  const m = rule.matcher;
  if ("globs" in m) return [...m.globs];
  if (m.kind === "execute") return m.patterns.map((p) => p.source);
  if (m.kind === "fetch") return [...m.domains, ...(m.search ? ["search"] : [])];
  if (m.kind === "other") return [...m.tools];
  if (m.kind === "switch_mode") return [...m.modes];
  return [];
}

function coverageFor(agent: ResolvedAgent, kind: string): KindCoverage | undefined {
  if (agent.type === "command") return undefined;
  return (COVERED_KINDS as readonly string[]).includes(kind)
    ? agent.coverage[kind as CoveredKind]
    : undefined;
}

function layersFor(agent: ResolvedAgent, rule: Rule): { layers: EnforcementLayer[]; bypass: string | null } {
  const kind = rule.matcher.kind;
  const layers: EnforcementLayer[] = [];
  const coverage = coverageFor(agent, kind);
  const restrictiveRule = rule.effect !== "allow";
  if (coverage) {
    if (coverage.compiled === "all" || (coverage.compiled === "deny" && restrictiveRule))
      layers.push("agent-settings");
    if (coverage.asks !== "never") layers.push("per-request");
  } else {
    layers.push("per-request");
  }
  layers.push("client-methods");
  if (DIFF_KINDS.has(kind)) layers.push("final-diff");
  let bypass: string | null = null;
  if (!restrictiveRule) return { layers, bypass };
  if (agent.type === "command") {
    bypass = `an unknown agent may ${kind} without asking; only its fs/terminal requests${DIFF_KINDS.has(kind) ? " and the final diff" : ""} are checked`;
  } else if (coverage?.removed) {
    bypass = null;
  } else if (coverage && coverage.asks !== "always" && !layers.includes("agent-settings")) {
    bypass = `${agent.title} may ${kind} without asking: ${coverage.note}`;
  } else if (coverage && coverage.asks === "partly") {
    bypass = `partly: ${coverage.note}`;
  }
  if (bypass && DIFF_KINDS.has(kind)) bypass += " (the final-diff audit still rejects the change)";
  return { layers, bypass };
}

export function enforcementReport(
  agent: ResolvedAgent,
  policy: Policy,
  facts: TriggerFacts,
  setup: Pick<AgentSetup, "agentSettings"> | undefined,
): EnforcementReport {
  const rules = effectiveRules(policy, facts);
  const all: Rule[] = [];
  for (const sets of rules.byKind.values()) all.push(...sets.deny, ...sets.ask, ...sets.allow);
  const entries: RuleEnforcement[] = all.map((rule) => {
    const { layers, bypass } = layersFor(agent, rule);
    return {
      ruleId: rule.id,
      effect: rule.effect,
      kind: rule.matcher.kind,
      subjects: subjectsOf(rule),
      enforcedBy: layers,
      bypass,
    };
  });
  for (const entry of policy.protected) {
    const compiled = agent.type === "preset" && agent.coverage.edit.compiled !== "none";
    entries.push({
      ruleId: entry.id,
      effect: "protected",
      kind: "protected",
      subjects: [entry.glob],
      enforcedBy: [
        ...(compiled ? (["agent-settings"] as const) : []),
        "per-request",
        "client-methods",
        "final-diff",
      ],
      bypass: null,
    });
  }
  const gaps: string[] = [];
  if (agent.type === "command") {
    gaps.push(
      `${agent.title} is not a preset: acp-warden cannot make it ask or write the policy into its settings; the policy is enforced on what it asks, on its fs/terminal requests, and on the final diff`,
    );
  } else {
    for (const kind of COVERED_KINDS) {
      const c = agent.coverage[kind];
      if (c.asks !== "always" && !c.removed && c.compiled !== "all") gaps.push(`${kind}: ${c.note}`);
    }
  }
  return {
    agent: agent.id === "command" ? agent.title : agent.id,
    agentSettings: setup?.agentSettings ?? [],
    rules: entries,
    gaps,
  };
}

export interface DiffFinding {
  path: string;
  ruleId: string;
  reason: string;
  /** A protected path blocks publishing; an edit rule violation marks the run for review. */
  blocking: boolean;
}

/**
 * Checks every changed path (workspace-relative) against `protected` and the edit rules, after the
 * run. Catches what agents that write to disk themselves did without asking.
 */
export function auditDiff(
  changedPaths: readonly string[],
  policy: Policy,
  facts: TriggerFacts,
  context: DecideContext,
): DiffFinding[] {
  const findings: DiffFinding[] = [];
  for (const path of changedPaths) {
    const guarded = protectedEntryFor(policy, path);
    if (guarded) {
      findings.push({
        path,
        ruleId: guarded.id,
        reason: `${path} is protected (${guarded.glob}): changes here block publishing`,
        blocking: true,
      });
      continue;
    }
    const result = decide(policy, facts, { kind: "edit", paths: [path] }, context);
    if (result.decision !== "allow")
      findings.push({ path, ruleId: result.ruleId, reason: result.reason, blocking: true });
  }
  return findings;
}
