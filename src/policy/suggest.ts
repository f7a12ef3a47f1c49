// Turns a denial into the smallest policy change that would allow it: YAML a user can paste,
// or a plain statement that no policy can allow it (and what to do instead).
import { argvToPattern } from "./command-pattern.js";
import { effectiveRules } from "./decide.js";
import { escapeGlob } from "./glob.js";
import type { DecisionResult, MatchDetail, Policy, SourceLocation, TriggerFacts } from "./types.js";

export interface PolicySuggestion {
  /** false when no policy change can allow the request; `text` then says why and what to do instead. */
  possible: boolean;
  /** YAML to paste into the policy, or the explanation. */
  text: string;
}

const UNFIXABLE_PREFIXES = ["shell.", "request.", "path."];

function at(location: SourceLocation | undefined): string {
  return location ? ` (${location.file}:${location.line})` : "";
}

function quote(value: string): string {
  return JSON.stringify(value);
}

/** The allow entry that covers exactly this detail. */
function allowEntry(detail: MatchDetail): string | undefined {
  switch (detail.kind) {
    case "execute": {
      if (!detail.argv) return undefined;
      const pattern = argvToPattern(detail.argv);
      return `- execute: ${quote(detail.unknownTail ? `${pattern} *` : pattern)}`;
    }
    case "read":
    case "edit":
    case "delete":
    case "move":
    case "search": {
      const paths = [...new Set(detail.paths ?? [])];
      if (paths.length === 0) return undefined;
      const globs = paths.map((p) => (p === "" ? "**" : escapeGlob(p)));
      return globs.length === 1
        ? `- ${detail.kind}: ${quote(globs[0]!)}`
        : `- ${detail.kind}: [${globs.map(quote).join(", ")}]`;
    }
    case "fetch":
      return detail.subject.startsWith("search: ")
        ? "- fetch: { search: true }"
        : `- fetch: { domains: [${quote(detail.subject)}] }`;
    case "think":
      return "- think: true";
    case "other":
      return `- other: ${quote(detail.subject || "*")}`;
    case "switch_mode":
      return `- switch_mode: ${quote(detail.subject || "*")}`;
  }
}

function indent(lines: readonly string[], by: string): string[] {
  return lines.map((line) => `${by}${line}`);
}

/** undefined when the decision was allow. */
export function suggestPolicyChange(
  policy: Policy,
  facts: TriggerFacts,
  result: DecisionResult,
): PolicySuggestion | undefined {
  if (result.decision === "allow") return undefined;
  const blocking = result.matched.filter((d) => d.decision !== "allow");
  const unfixable = blocking.filter((d) => UNFIXABLE_PREFIXES.some((p) => d.ruleId.startsWith(p)));
  if (unfixable.length > 0)
    return {
      possible: false,
      text: [
        "No policy change can allow this:",
        ...unfixable.map((d) => `  ${d.reason}`),
        "Rewrite the command (or path) so that it says plainly what it does, e.g. run the inner command directly.",
      ].join("\n"),
    };

  const rules = effectiveRules(policy, facts);
  const ruleById = new Map(
    [...policy.rules, ...policy.profiles.flatMap((p) => p.rules)].map((r) => [r.id, r]),
  );
  const protectedById = new Map(policy.protected.map((p) => [p.id, p]));
  const additions: string[] = [];
  const notes: string[] = [];
  for (const detail of blocking) {
    const rule = ruleById.get(detail.ruleId);
    const guarded = protectedById.get(detail.ruleId);
    if (guarded) {
      notes.push(
        `# remove ${quote(guarded.glob)} from protected${at(guarded.location)} — ${detail.subject} is protected`,
      );
      continue;
    }
    if (rule && rule.effect !== "allow") {
      notes.push(
        `# ${rule.id}${at(rule.location)} ${rule.effect === "deny" ? "denies" : "asks before"} ${detail.kind} ${quote(detail.subject)}` +
          (detail.pattern ? ` via ${quote(detail.pattern)}` : "") +
          ": narrow or remove that pattern (deny and ask beat allow)",
      );
      continue;
    }
    const entry = allowEntry(detail);
    if (entry && !additions.includes(entry)) additions.push(entry);
  }

  const lines = [...notes];
  if (additions.length > 0) {
    // A profile that does not inherit ignores the base allow list: the entry belongs in the profile.
    const owner = [...policy.profiles].reverse().find((p) => rules.profiles.includes(p.name) && !p.inherit);
    if (owner) lines.push("profiles:", `  ${owner.name}:`, "    allow:", ...indent(additions, "      "));
    else lines.push("allow:", ...indent(additions, "  "));
  }
  return { possible: true, text: lines.join("\n") };
}
