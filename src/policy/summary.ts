// A plain-text account of what a policy allows, for `policy check` and run reports.
import type { Limits, Policy, Profile, Rule, RuleMatcher } from "./types.js";

function subjects(matcher: RuleMatcher): string {
  switch (matcher.kind) {
    case "execute":
      return matcher.patterns.map((p) => p.source).join(", ");
    case "fetch":
      return [...matcher.domains, ...(matcher.search ? ["web search"] : [])].join(", ");
    case "think":
      return "yes";
    case "other":
      return matcher.tools.join(", ");
    case "switch_mode":
      return matcher.modes.join(", ");
    default:
      return matcher.globs.join(", ");
  }
}

function ruleLines(rules: readonly Rule[], indent: string): string[] {
  return rules.map(
    (rule) =>
      `${indent}${rule.effect.padEnd(5)} ${rule.matcher.kind.padEnd(11)} ${subjects(rule.matcher)}${rule.reason ? `  — ${rule.reason}` : ""}  [${rule.id}]`,
  );
}

function limitText(limits: Limits): string | undefined {
  const parts: string[] = [];
  if (limits.timeoutMinutes !== undefined) parts.push(`timeout ${limits.timeoutMinutes} min`);
  if (limits.maxToolCalls !== undefined) parts.push(`${limits.maxToolCalls} tool calls`);
  if (limits.maxTurns !== undefined) parts.push(`${limits.maxTurns} turns`);
  return parts.length > 0 ? parts.join(", ") : undefined;
}

function condition(profile: Profile): string {
  const { when } = profile;
  const parts: string[] = [];
  if (when.events) parts.push(`event ${when.events.join("|")}`);
  if (when.permission) parts.push(`actor permission ≥ ${when.permission}`);
  if (when.fork !== undefined) parts.push(when.fork ? "from a fork" : "not from a fork");
  if (when.labels) parts.push(`label ${when.labels.join("|")}`);
  if (when.branches) parts.push(`branch ${when.branches.join("|")}`);
  return parts.length > 0 ? parts.join(" and ") : "always";
}

export function describePolicy(policy: Policy): string[] {
  if (policy.source.empty)
    return [`${policy.source.file}: no policy — every request is denied (publishing still works)`];
  const lines: string[] = [];
  const order = { deny: 0, ask: 1, allow: 2 } as const;
  const sorted = (rules: readonly Rule[]) => [...rules].sort((a, b) => order[a.effect] - order[b.effect]);
  lines.push(`default: ${policy.default}`);
  lines.push("rules (deny > ask > allow):", ...ruleLines(sorted(policy.rules), "  "));
  for (const profile of policy.profiles) {
    const defaultText = profile.default ? `, default ${profile.default}` : "";
    lines.push(
      `profile ${profile.name} — when ${condition(profile)}${profile.inherit ? "" : ", base allow/ask rules dropped"}${defaultText}`,
      ...ruleLines(sorted(profile.rules), "  "),
    );
    const limits = limitText(profile.limits);
    if (limits) lines.push(`  limits: ${limits}`);
  }
  const limits = limitText(policy.limits);
  if (limits) lines.push(`limits: ${limits}`);
  if (policy.protected.length > 0) lines.push(`protected: ${policy.protected.map((p) => p.glob).join(", ")}`);
  if (policy.env.pass.length > 0) lines.push(`env passed to the agent: ${policy.env.pass.join(", ")}`);
  if (policy.agent || policy.agents.allowed)
    lines.push(
      `agent: ${policy.agent ?? "(preset default)"}${policy.agents.allowed ? `; allowed: ${policy.agents.allowed.join(", ")}` : ""}`,
    );
  return lines;
}
