// Reading the effective policy rules in the shapes agents' own permission settings need.
import type { CommandPattern, EffectiveRules, Rule, ToolKind } from "../policy/index.js";

export type Effect = "allow" | "ask" | "deny";

export function rulesOf(rules: EffectiveRules, kind: ToolKind, effect: Effect): readonly Rule[] {
  return rules.byKind.get(kind)?.[effect] ?? [];
}

export function globsOf(rules: EffectiveRules, kind: ToolKind, effect: Effect): string[] {
  return rulesOf(rules, kind, effect).flatMap((r) => ("globs" in r.matcher ? r.matcher.globs : []));
}

export function patternsOf(rules: EffectiveRules, effect: Effect): CommandPattern[] {
  return rulesOf(rules, "execute", effect).flatMap((r) =>
    r.matcher.kind === "execute" ? r.matcher.patterns : [],
  );
}

export function fetchDomains(rules: EffectiveRules, effect: Effect): string[] {
  return rulesOf(rules, "fetch", effect).flatMap((r) =>
    r.matcher.kind === "fetch" ? r.matcher.domains : [],
  );
}

/** Deny and ask both mean "do not let it through unasked" for an agent's own settings. */
export function restrictive(rules: EffectiveRules, kind: ToolKind): readonly Rule[] {
  return [...rulesOf(rules, kind, "deny"), ...rulesOf(rules, kind, "ask")];
}

/** True when the policy lets every path of this kind through (an allow `**` and nothing restrictive). */
export function allowsEverything(rules: EffectiveRules, kind: ToolKind): boolean {
  if (restrictive(rules, kind).length > 0) return false;
  if (rules.default === "allow") return true;
  return globsOf(rules, kind, "allow").includes("**");
}

/** A command pattern as the literal word lists it can match (alternatives expanded), and its rest flag. */
export function patternWords(pattern: CommandPattern): { words: string[][]; rest: boolean } {
  let words: string[][] = [[]];
  for (const token of pattern.tokens) {
    const values = token.type === "literal" ? [token.value] : token.values;
    words = words.flatMap((prefix) => values.map((v) => [...prefix, v]));
  }
  return { words, rest: pattern.rest };
}

/** Expands whole `{a,b}` groups in a glob into separate globs (agents' matchers lack them). */
export function expandBraces(glob: string): string[] {
  const match = /\{([^{}]*,[^{}]*)\}/.exec(glob);
  if (!match) return [glob];
  const head = glob.slice(0, match.index);
  const tail = glob.slice(match.index + match[0].length);
  return match[1]!.split(",").flatMap((alt) => expandBraces(`${head}${alt}${tail}`));
}

export function unique<T>(values: readonly T[]): T[] {
  return [...new Set(values)];
}
