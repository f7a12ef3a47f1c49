// decide(): one permission request → allow, deny or ask, with the rule that decided and why.
// Order: deny > ask > allow > default. A command line is split into simple commands and every one
// of them (and every path it redirects to) must be allowed; the worst part decides.
import { commandMatches } from "./command-pattern.js";
import { globMatches, nameMatches } from "./glob.js";
import { type PathInspector, resolveWorkspacePath } from "./paths.js";
import type { ShellAnalyzer, SimpleCommand } from "./shell.js";
import {
  type Decision,
  type DecisionResult,
  type Limits,
  type MatchDetail,
  PERMISSION_LEVELS,
  type PermissionRequest,
  type Policy,
  type Profile,
  type ProtectedPath,
  type Rule,
  TOOL_KINDS,
  type ToolKind,
  type TriggerFacts,
  WRITE_KINDS,
} from "./types.js";

export interface DecideContext {
  /** Absolute path of the workspace (the checkout the agent works in). */
  workspace: string;
  /** From `loadShellAnalyzer()`; needed for `execute` requests. */
  shell: ShellAnalyzer;
  /** File-system facts (symlinks, hardlinks); without it paths are judged lexically. */
  paths?: PathInspector;
}

interface RuleSets {
  deny: Rule[];
  ask: Rule[];
  allow: Rule[];
}

export interface EffectiveRules {
  default: Decision;
  defaultId: string;
  profiles: readonly string[];
  byKind: ReadonlyMap<ToolKind, RuleSets>;
  protected: readonly ProtectedPath[];
}

const SEVERITY: Record<Decision, number> = { allow: 0, ask: 1, deny: 2 };

// ---- profiles ----

export function profileApplies(profile: Profile, facts: TriggerFacts): boolean {
  const { when } = profile;
  if (when.events && (facts.event === undefined || !when.events.includes(facts.event))) return false;
  if (when.permission) {
    if (facts.actorPermission === undefined) return false;
    if (PERMISSION_LEVELS.indexOf(facts.actorPermission) < PERMISSION_LEVELS.indexOf(when.permission))
      return false;
  }
  if (when.fork !== undefined && facts.fork !== when.fork) return false;
  if (when.labels && !when.labels.some((label) => facts.labels?.includes(label))) return false;
  if (when.branches) {
    const branch = facts.branch;
    if (branch === undefined || !when.branches.some((pattern) => nameMatches(pattern, branch))) return false;
  }
  return true;
}

const effectiveCache = new WeakMap<Policy, Map<string, EffectiveRules>>();

/** The rules that apply to a run with these trigger facts: base rules extended by matching profiles. */
export function effectiveRules(policy: Policy, facts: TriggerFacts): EffectiveRules {
  const key = JSON.stringify([facts.event, facts.actorPermission, facts.fork, facts.labels, facts.branch]);
  let perPolicy = effectiveCache.get(policy);
  if (!perPolicy) {
    perPolicy = new Map();
    effectiveCache.set(policy, perPolicy);
  }
  const cached = perPolicy.get(key);
  if (cached) return cached;

  let deny = policy.rules.filter((r) => r.effect === "deny");
  let ask = policy.rules.filter((r) => r.effect === "ask");
  let allow = policy.rules.filter((r) => r.effect === "allow");
  let fallback = policy.default;
  let defaultId = "default";
  const active: string[] = [];
  for (const profile of policy.profiles) {
    if (!profileApplies(profile, facts)) continue;
    active.push(profile.name);
    if (!profile.inherit) {
      ask = [];
      allow = [];
    }
    deny = [...deny, ...profile.rules.filter((r) => r.effect === "deny")];
    ask = [...ask, ...profile.rules.filter((r) => r.effect === "ask")];
    allow = [...allow, ...profile.rules.filter((r) => r.effect === "allow")];
    if (profile.default) {
      fallback = profile.default;
      defaultId = `profiles.${profile.name}.default`;
    }
  }
  const byKind = new Map<ToolKind, RuleSets>();
  for (const kind of TOOL_KINDS) {
    const ofKind = (rules: Rule[]) => rules.filter((r) => r.matcher.kind === kind);
    byKind.set(kind, { deny: ofKind(deny), ask: ofKind(ask), allow: ofKind(allow) });
  }
  const result: EffectiveRules = {
    default: fallback,
    defaultId,
    profiles: active,
    byKind,
    protected: policy.protected,
  };
  perPolicy.set(key, result);
  return result;
}

export function effectiveLimits(policy: Policy, facts: TriggerFacts): Limits {
  let limits: Limits = { ...policy.limits };
  for (const profile of policy.profiles)
    if (profileApplies(profile, facts)) limits = { ...limits, ...profile.limits };
  return limits;
}

/** The protected entry covering a workspace-relative path (for the audit of the final diff). */
export function protectedEntryFor(policy: Policy, relativePath: string): ProtectedPath | undefined {
  return policy.protected.find((entry) => globMatches(entry.glob, relativePath, "loose"));
}

// ---- matching ----

type Matcher = (rule: Rule, restrictive: boolean) => string | undefined;

interface Verdict {
  decision: Decision;
  rule?: Rule;
  pattern?: string;
}

function judge(sets: RuleSets | undefined, match: Matcher, fallback: Decision): Verdict {
  if (sets) {
    for (const [decision, rules] of [
      ["deny", sets.deny],
      ["ask", sets.ask],
    ] as const) {
      for (const rule of rules) {
        const pattern = match(rule, true);
        if (pattern !== undefined) return { decision, rule, pattern };
      }
    }
    for (const rule of sets.allow) {
      const pattern = match(rule, false);
      if (pattern !== undefined) return { decision: "allow", rule, pattern };
    }
  }
  return { decision: fallback };
}

function detailFrom(kind: ToolKind, subject: string, verdict: Verdict, rules: EffectiveRules): MatchDetail {
  const shown = `${kind} ${JSON.stringify(subject)}`;
  const { rule } = verdict;
  if (!rule)
    return {
      kind,
      subject,
      decision: verdict.decision,
      ruleId: rules.defaultId,
      reason: `no rule matches ${shown}, so ${rules.defaultId} (${verdict.decision}) applies`,
    };
  const verb = { allow: "allows", deny: "denies", ask: "asks before" }[verdict.decision];
  return {
    kind,
    subject,
    decision: verdict.decision,
    ruleId: rule.id,
    ...(verdict.pattern !== undefined ? { pattern: verdict.pattern } : {}),
    ...(rule.location ? { location: rule.location } : {}),
    reason: `${rule.id} ${verb} ${shown}${verdict.pattern !== undefined ? ` (matches ${JSON.stringify(verdict.pattern)})` : ""}${rule.reason ? `: ${rule.reason}` : ""}`,
  };
}

function refusal(kind: ToolKind, subject: string, ruleId: string, reason: string): MatchDetail {
  return { kind, subject, decision: "deny", ruleId, reason: `${ruleId}: ${reason}` };
}

// ---- per kind ----

function judgePath(
  kind: ToolKind,
  rawPath: string,
  rules: EffectiveRules,
  context: DecideContext,
  base?: string,
): MatchDetail {
  const write = WRITE_KINDS.has(kind);
  const resolved = resolveWorkspacePath(rawPath, {
    workspace: context.workspace,
    write,
    ...(base !== undefined ? { base } : {}),
    ...(context.paths ? { inspector: context.paths } : {}),
  });
  if (!resolved.ok) return refusal(kind, rawPath, resolved.ruleId, resolved.reason);
  const subjects =
    resolved.realRelative === undefined ? [resolved.relative] : [resolved.relative, resolved.realRelative];
  const shownSubject = subjects.join(" → ");
  if (write) {
    for (const entry of rules.protected) {
      const hit = subjects.find((subject) => globMatches(entry.glob, subject, "loose"));
      if (hit !== undefined)
        return {
          kind,
          subject: shownSubject,
          decision: "deny",
          ruleId: entry.id,
          pattern: entry.glob,
          paths: subjects,
          ...(entry.location ? { location: entry.location } : {}),
          reason: `${entry.id} protects ${JSON.stringify(hit)} (matches ${JSON.stringify(entry.glob)}): changes to protected paths block publishing`,
        };
    }
  }
  const match: Matcher = (rule, restrictive) => {
    if (!("globs" in rule.matcher)) return undefined;
    const globs = rule.matcher.globs;
    if (restrictive) return globs.find((g) => subjects.some((s) => globMatches(g, s, "loose")));
    // An allow must cover the path as named and as it really is.
    const first = globs.find((g) => globMatches(g, subjects[0]!, "exact"));
    return first !== undefined && subjects.every((s) => globs.some((g) => globMatches(g, s, "exact")))
      ? first
      : undefined;
  };
  const detail = detailFrom(kind, shownSubject, judge(rules.byKind.get(kind), match, rules.default), rules);
  detail.paths = subjects;
  return detail;
}

function argvText(command: SimpleCommand): string {
  return command.argv.map((t) => t.text).join(" ");
}

function judgeCommand(command: SimpleCommand, rules: EffectiveRules): MatchDetail {
  const sets = rules.byKind.get("execute");
  const innermost = command.invocations[command.invocations.length - 1]!;
  const match: Matcher = (rule, restrictive) => {
    if (rule.matcher.kind !== "execute") return undefined;
    const patterns = rule.matcher.patterns;
    if (restrictive) {
      // A deny or ask rule sees every level: `sudo rm`, `timeout 5 rm` and `rm` alike.
      for (const invocation of command.invocations) {
        const hit = patterns.find((p) => commandMatches(p, invocation.argv, true, invocation.unknownTail));
        if (hit) return hit.source;
      }
      return undefined;
    }
    return patterns.find((p) => commandMatches(p, innermost.argv, false, innermost.unknownTail))?.source;
  };
  const subject = argvText(command);
  const verdict = judge(sets, match, rules.default);
  const detail = detailFrom("execute", subject, verdict, rules);
  detail.argv = innermost.argv.map((t) => t.text);
  if (innermost.unknownTail) detail.unknownTail = true;
  if (verdict.decision !== "allow") return detail;
  // sudo and doas must be allowed as written, on top of what they run.
  for (const invocation of command.invocations) {
    if (invocation.role !== "privileged") continue;
    const allowed = sets?.allow.some(
      (rule) =>
        rule.matcher.kind === "execute" &&
        rule.matcher.patterns.some((p) => commandMatches(p, invocation.argv, false)),
    );
    if (!allowed)
      return {
        kind: "execute",
        subject,
        decision: rules.default === "allow" ? "deny" : rules.default,
        ruleId: "execute.privileged",
        argv: invocation.argv.map((t) => t.text),
        reason: `execute.privileged: ${JSON.stringify(invocation.argv.map((t) => t.text).join(" "))} runs as another user and no allow rule names it as written`,
      };
  }
  return detail;
}

function judgeExecute(
  request: { command: string; cwd?: string },
  rules: EffectiveRules,
  context: DecideContext,
): MatchDetail[] {
  let base: string | undefined;
  if (request.cwd !== undefined) {
    const cwd = resolveWorkspacePath(request.cwd, {
      workspace: context.workspace,
      write: false,
      ...(context.paths ? { inspector: context.paths } : {}),
    });
    if (!cwd.ok) return [refusal("execute", request.command, cwd.ruleId, `working directory: ${cwd.reason}`)];
    base = `${context.workspace.replace(/\/+$/, "")}/${cwd.relative}`;
  }
  const analysis = context.shell.analyze(request.command);
  if (!analysis.ok)
    return [refusal("execute", request.command, `shell.${analysis.construct}`, analysis.message)];
  const details: MatchDetail[] = [];
  for (const command of analysis.commands) {
    details.push(judgeCommand(command, rules));
    details.push(...judgeFileArguments(command, rules, context, base));
    for (const redirect of command.redirects) {
      if (redirect.type === "write") details.push(judgePath("edit", redirect.path, rules, context, base));
      else if (redirect.type === "read") details.push(judgePath("read", redirect.path, rules, context, base));
    }
  }
  return details;
}

/** Commands whose operands are files they read (or copy): `cat .env` is a read of `.env`. */
const FILE_READERS = new Set([
  "cat",
  "tac",
  "head",
  "tail",
  "less",
  "more",
  "nl",
  "wc",
  "sort",
  "uniq",
  "cut",
  "paste",
  "grep",
  "egrep",
  "fgrep",
  "rg",
  "ag",
  "sed",
  "awk",
  "strings",
  "od",
  "xxd",
  "hexdump",
  "base64",
  "base32",
  "md5sum",
  "sha1sum",
  "sha256sum",
  "sha512sum",
  "diff",
  "cmp",
  "comm",
  "file",
  "stat",
  "cp",
  "mv",
  "ln",
  "tar",
  "zip",
  "gzip",
  "bzip2",
  "xz",
  "jq",
  "yq",
  "openssl",
  "source",
  "iconv",
  "fold",
  "fmt",
  "pr",
  "column",
]);

/**
 * An allowed command must not read what the policy's `read` rules deny: the operands of known
 * file readers are judged as reads, and an explicit deny (or ask) on any of them wins. The default
 * alone does not refuse them (`cat notes.txt` under `npm *`-only policies stays the command's call).
 */
function judgeFileArguments(
  command: SimpleCommand,
  rules: EffectiveRules,
  context: DecideContext,
  base: string | undefined,
): MatchDetail[] {
  const innermost = command.invocations[command.invocations.length - 1]!;
  const name = innermost.argv[0]?.text.split("/").pop() ?? "";
  if (!FILE_READERS.has(name)) return [];
  const details: MatchDetail[] = [];
  for (const token of innermost.argv.slice(1)) {
    const operand =
      token.text.includes("=") && token.text.startsWith("-") ? (token.text.split("=")[1] ?? "") : token.text;
    if (operand === "" || operand === "-" || (operand.startsWith("-") && operand === token.text)) continue;
    const detail = judgePath("read", operand, rules, context, base);
    if (detail.decision !== "allow" && detail.ruleId !== rules.defaultId) {
      details.push({ ...detail, reason: `${name} reads ${operand}: ${detail.reason}` });
    }
  }
  return details;
}

function hostOf(url: string): { host: string } | { problem: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { problem: `${JSON.stringify(url)} is not a URL` };
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:")
    return { problem: `${JSON.stringify(url)}: only http and https URLs can be fetched` };
  const host = parsed.hostname
    .toLowerCase()
    .replace(/\.$/, "")
    .replace(/^\[|\]$/g, "");
  if (host === "") return { problem: `${JSON.stringify(url)} has no host` };
  return { host };
}

export function domainMatches(pattern: string, host: string): boolean {
  if (pattern === "*") return true;
  if (pattern.startsWith("*.")) return host.endsWith(pattern.slice(1));
  return host === pattern;
}

function judgeFetch(request: { url?: string; query?: string }, rules: EffectiveRules): MatchDetail {
  const sets = rules.byKind.get("fetch");
  if (request.url === undefined) {
    const query = request.query ?? "";
    const match: Matcher = (rule) =>
      rule.matcher.kind === "fetch" && rule.matcher.search ? "search" : undefined;
    return detailFrom("fetch", `search: ${query}`, judge(sets, match, rules.default), rules);
  }
  const host = hostOf(request.url);
  if ("problem" in host) return refusal("fetch", request.url, "request.bad-url", host.problem);
  const match: Matcher = (rule) =>
    rule.matcher.kind === "fetch" ? rule.matcher.domains.find((d) => domainMatches(d, host.host)) : undefined;
  return detailFrom("fetch", host.host, judge(sets, match, rules.default), rules);
}

function judgeName(
  kind: "other" | "switch_mode",
  value: string | undefined,
  rules: EffectiveRules,
): MatchDetail {
  const subject = value ?? "";
  const match: Matcher = (rule) => {
    const names =
      rule.matcher.kind === "other"
        ? rule.matcher.tools
        : rule.matcher.kind === "switch_mode"
          ? rule.matcher.modes
          : [];
    return names.find((n) => nameMatches(n, subject));
  };
  return detailFrom(kind, subject, judge(rules.byKind.get(kind), match, rules.default), rules);
}

// ---- request validation ----

const FIELDS_BY_KIND: Record<ToolKind, readonly string[]> = {
  read: ["paths"],
  edit: ["paths"],
  delete: ["paths"],
  move: ["paths"],
  search: ["paths", "query"],
  execute: ["command", "cwd"],
  fetch: ["url", "query"],
  think: [],
  other: ["tool"],
  switch_mode: ["mode"],
};
const FACT_FIELDS = ["paths", "query", "command", "cwd", "url", "tool", "mode"];

/** Facts arrive from untrusted agent output: check the shape at run time, whatever the static type says. */
export function requestProblem(request: unknown): { ruleId: string; reason: string } | undefined {
  if (typeof request !== "object" || request === null)
    return { ruleId: "request.missing-kind", reason: "the request carries no facts" };
  const fields = request as Record<string, unknown>;
  const kind = fields.kind;
  if (typeof kind !== "string" || !(TOOL_KINDS as readonly string[]).includes(kind))
    return {
      ruleId: kind === undefined ? "request.missing-kind" : "request.unknown-kind",
      reason: kind === undefined ? "the tool call has no kind" : `unknown tool kind ${JSON.stringify(kind)}`,
    };
  const own = FIELDS_BY_KIND[kind as ToolKind];
  const foreign = FACT_FIELDS.filter((f) => fields[f] !== undefined && !own.includes(f));
  if (foreign.length > 0)
    return {
      ruleId: "request.inconsistent",
      reason: `a ${kind} request carries ${foreign.join(", ")}, which belong to other kinds`,
    };
  for (const field of ["query", "command", "cwd", "url", "tool", "mode"])
    if (fields[field] !== undefined && typeof fields[field] !== "string")
      return { ruleId: "request.inconsistent", reason: `${field} is not a string` };
  const paths = fields.paths;
  if (paths !== undefined && (!Array.isArray(paths) || paths.some((p) => typeof p !== "string")))
    return { ruleId: "request.inconsistent", reason: "paths is not a list of strings" };
  if (["read", "edit", "delete", "move"].includes(kind) && (!Array.isArray(paths) || paths.length === 0))
    return { ruleId: "request.missing-path", reason: `a ${kind} request names no path` };
  if (kind === "move" && Array.isArray(paths) && paths.length !== 2)
    return { ruleId: "request.inconsistent", reason: "a move names exactly [from, to]" };
  if (kind === "execute" && (typeof fields.command !== "string" || fields.command.trim() === ""))
    return { ruleId: "request.missing-command", reason: "an execute request names no command" };
  if (kind === "fetch" && fields.url === undefined && fields.query === undefined)
    return {
      ruleId: "request.missing-url",
      reason: "a fetch request names neither a URL nor a search query",
    };
  const evidence = fields.evidence as { rawInputPresent?: unknown; source?: unknown } | undefined;
  if (evidence !== undefined) {
    if (typeof evidence !== "object" || evidence === null || typeof evidence.rawInputPresent !== "boolean")
      return { ruleId: "request.inconsistent", reason: "evidence is malformed" };
    if (evidence.rawInputPresent && evidence.source !== "raw-input")
      return {
        ruleId: "request.untrusted-source",
        reason: `the agent sent rawInput, so facts read from its ${String(evidence.source)} are not trusted`,
      };
  }
  return undefined;
}

// ---- entry point ----

/**
 * Decides one permission request. Pure and synchronous: the only inputs are the arguments
 * (the path inspector, when given, is the caller's window on the file system).
 */
export function decide(
  policy: Policy,
  facts: TriggerFacts,
  request: PermissionRequest,
  context: DecideContext,
): DecisionResult {
  const rules = effectiveRules(policy, facts);
  const problem = requestProblem(request);
  const details: MatchDetail[] = [];
  if (problem) {
    const kind = (TOOL_KINDS as readonly unknown[]).includes(request?.kind) ? request.kind : "other";
    details.push(refusal(kind, "", problem.ruleId, problem.reason));
  } else {
    switch (request.kind) {
      case "read":
      case "edit":
      case "delete":
      case "move":
        for (const path of request.paths) details.push(judgePath(request.kind, path, rules, context));
        break;
      case "search":
        for (const path of request.paths?.length ? request.paths : ["."])
          details.push(judgePath("search", path, rules, context));
        break;
      case "execute":
        details.push(...judgeExecute(request, rules, context));
        break;
      case "fetch":
        details.push(judgeFetch(request, rules));
        break;
      case "think": {
        const match: Matcher = (rule) => (rule.matcher.kind === "think" ? "true" : undefined);
        details.push(detailFrom("think", "", judge(rules.byKind.get("think"), match, rules.default), rules));
        break;
      }
      case "other":
        details.push(judgeName("other", request.tool, rules));
        break;
      case "switch_mode":
        details.push(judgeName("switch_mode", request.mode, rules));
        break;
    }
  }
  return summarize(details, rules.profiles);
}

function summarize(details: MatchDetail[], profiles: readonly string[]): DecisionResult {
  let deciding = details[0]!;
  for (const detail of details)
    if (SEVERITY[detail.decision] > SEVERITY[deciding.decision]) deciding = detail;
  const position = details.indexOf(deciding);
  const reason =
    details.length === 1
      ? deciding.reason
      : deciding.decision === "allow"
        ? `all ${details.length} parts allowed: ${details.map((d) => d.reason).join("; ")}`
        : `part ${position + 1} of ${details.length}: ${deciding.reason}`;
  return { decision: deciding.decision, ruleId: deciding.ruleId, reason, matched: details, profiles };
}
