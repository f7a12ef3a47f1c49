// YAML text → typed Policy, or errors that name file, line, column and field.
// Missing or empty text is a valid deny-all policy. Inline `tests:` run here: a failing case is a
// load error, so a policy that contradicts its own examples never reaches a run.
import {
  type Document,
  isAlias,
  isMap,
  isPair,
  isScalar,
  isSeq,
  LineCounter,
  type Node,
  parseDocument,
  visit,
} from "yaml";
import type { z } from "zod";
import { parseCommandPattern } from "./command-pattern.js";
import { type DecideContext, decide } from "./decide.js";
import { closest } from "./hints.js";
import { KEYS, type PolicyFile, policyFileSchema, type RuleEntry, type TestCaseEntry } from "./schema.js";
import type { ShellAnalyzer } from "./shell.js";
import {
  DECISIONS,
  type Decision,
  type Limits,
  type PermissionRequest,
  type Policy,
  type PolicyTestCase,
  type Profile,
  type Rule,
  type RuleMatcher,
  type SourceLocation,
  TOOL_KINDS,
  type TriggerFacts,
} from "./types.js";

export const DEFAULT_POLICY_PATH = ".github/agent-policy.yml";

export interface PolicyError {
  file: string;
  line: number;
  column: number;
  /** Dotted field path, e.g. `allow[2].edit[0]`; "" for the whole file. */
  field: string;
  message: string;
  /** A likely intended spelling. */
  hint?: string;
}

export type PolicyLoad = { ok: true; policy: Policy } | { ok: false; errors: readonly PolicyError[] };

export interface LoadOptions {
  /** Shown in errors and kept in `policy.source.file`. */
  file?: string;
  /** Needed to run inline tests with `execute` cases. */
  shell: ShellAnalyzer;
}

/** Workspace used for inline tests: their paths are workspace-relative. */
export const TEST_WORKSPACE = "/workspace";

export function formatPolicyError(error: PolicyError): string {
  const where = `${error.file}:${error.line}:${error.column}`;
  const field = error.field ? ` ${error.field}:` : "";
  const hint = error.hint ? ` (did you mean ${JSON.stringify(error.hint)}?)` : "";
  return `${where}:${field} ${error.message}${hint}`;
}

export function denyAllPolicy(file = DEFAULT_POLICY_PATH): Policy {
  return {
    version: 1,
    source: { file, empty: true },
    agents: {},
    default: "deny",
    rules: [],
    profiles: [],
    limits: {},
    protected: [],
    env: { pass: [] },
    tests: [],
  };
}

type Path = readonly (string | number)[];

function fieldName(path: Path): string {
  let out = "";
  for (const part of path) out += typeof part === "number" ? `[${part}]` : out === "" ? part : `.${part}`;
  return out;
}

class Locator {
  constructor(
    private readonly doc: Document,
    private readonly lines: LineCounter,
    readonly file: string,
  ) {}

  private position(offset: number): SourceLocation {
    const { line, col } = this.lines.linePos(offset);
    return { file: this.file, line, column: col };
  }

  private resolve(node: unknown): unknown {
    return isAlias(node) ? node.resolve(this.doc) : node;
  }

  /** Follows `path` as far as it exists; `complete` says whether it got to the end. */
  private walk(path: Path): { node: unknown; complete: boolean } {
    let current: unknown = this.resolve(this.doc.contents);
    for (const step of path) {
      let next: unknown;
      if (isMap(current)) next = current.items.find((p) => isScalar(p.key) && p.key.value === step)?.value;
      else if (isSeq(current) && typeof step === "number") next = current.items[step];
      // `edit: "src/**"` is shorthand for a one-item list: item 0 is the scalar itself.
      else if (isScalar(current) && step === 0) next = current;
      if (next === undefined || next === null) return { node: current, complete: false };
      current = this.resolve(next);
    }
    return { node: current, complete: true };
  }

  /** The node at `path`, or undefined when the file has nothing there. */
  node(path: Path): Node | undefined {
    const { node, complete } = this.walk(path);
    return complete ? (node as Node) : undefined;
  }

  /** Where `path` is (or, when missing, the nearest enclosing node); `keyOf` points at a key of it. */
  at(path: Path, keyOf?: string): SourceLocation {
    let { node } = this.walk(path);
    if (keyOf !== undefined && isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && p.key.value === keyOf);
      if (pair && isScalar(pair.key)) node = pair.key;
    }
    const range = (node as Node | undefined)?.range;
    return range ? this.position(range[0]) : { file: this.file, line: 1, column: 1 };
  }

  offset(offset: number): SourceLocation {
    return this.position(offset);
  }
}

function located(locator: Locator, path: Path, message: string, hint?: string, keyOf?: string): PolicyError {
  const at = locator.at(path, keyOf);
  return {
    file: at.file,
    line: at.line,
    column: at.column,
    field: fieldName(keyOf !== undefined ? [...path, keyOf] : path),
    message,
    ...(hint ? { hint } : {}),
  };
}

function keysAt(path: Path): readonly string[] {
  const last = path[path.length - 1];
  const parent = path[path.length - 2];
  if (path.length === 0) return KEYS.top;
  if (typeof last === "number" && (parent === "allow" || parent === "ask" || parent === "deny"))
    return KEYS.rule;
  if (typeof last === "number" && parent === "tests") return KEYS.test;
  if (parent === "profiles") return KEYS.profile;
  if (last === "when") return KEYS.when;
  if (last === "limits") return KEYS.limits;
  if (last === "facts") return KEYS.facts;
  if (last === "fetch") return KEYS.fetch;
  if (last === "env") return KEYS.env;
  if (last === "agents") return KEYS.agents;
  return [];
}

const DECISION_LIKE = new Set([
  "yes",
  "no",
  "true",
  "false",
  "on",
  "off",
  "y",
  "n",
  "allowed",
  "denied",
  "permit",
  "block",
]);

function issueToErrors(issue: z.core.$ZodIssue, locator: Locator): PolicyError[] {
  const path = issue.path.filter((p): p is string | number => typeof p !== "symbol");
  const node = locator.node(path);
  const value = isScalar(node) ? node.value : undefined;
  const shown = value === undefined ? "" : ` ${JSON.stringify(value)}`;
  switch (issue.code) {
    case "unrecognized_keys": {
      const valid = keysAt(path);
      return issue.keys.map((key) => {
        const kindLike = keysAt(path) === KEYS.rule;
        const message = kindLike
          ? `unknown key ${JSON.stringify(key)}: a rule takes a tool kind (${TOOL_KINDS.join(", ")}), reason or id`
          : `unknown key ${JSON.stringify(key)}${valid.length ? ` (expected one of: ${valid.join(", ")})` : ""}`;
        return located(locator, path, message, closest(key, valid), key);
      });
    }
    case "invalid_value": {
      const expected = issue.values.map((v) => String(v));
      if (path.length === 1 && path[0] === "version")
        return [
          node === undefined
            ? located(locator, [], "missing `version: 1` at the top of the file")
            : located(locator, path, `unsupported version${shown}: this acp-warden reads \`version: 1\``),
        ];
      const isDecision = expected.length === DECISIONS.length && DECISIONS.every((d) => expected.includes(d));
      const word = typeof value === "string" || typeof value === "boolean" ? String(value) : "";
      if (isDecision && DECISION_LIKE.has(word.toLowerCase()))
        return [
          located(locator, path, `${JSON.stringify(value)} is not a decision: write allow, deny or ask`),
        ];
      return [
        located(
          locator,
          path,
          `${shown.trim() || "value"} is not one of: ${expected.join(", ")}`,
          typeof value === "string" ? closest(value, expected) : undefined,
        ),
      ];
    }
    case "invalid_type": {
      if (value === undefined && node === undefined && path.length === 1 && path[0] === "version")
        return [located(locator, [], "missing `version: 1` at the top of the file")];
      if (node === undefined || (isScalar(node) && node.value === null && issue.expected !== "null"))
        return [located(locator, path, `missing or empty; expected ${describeType(issue.expected)}`)];
      return [
        located(locator, path, `expected ${describeType(issue.expected)}, got${shown || " a collection"}`),
      ];
    }
    case "too_small":
      return [located(locator, path, issue.origin === "array" ? "the list cannot be empty" : issue.message)];
    default:
      return [located(locator, path, issue.message)];
  }
}

function describeType(expected: string): string {
  return (
    {
      array: "a list",
      object: "a mapping (key: value)",
      string: "a string",
      number: "a number",
      int: "an integer",
      boolean: "true or false",
    }[expected] ?? expected
  );
}

// ---- YAML ----

function readYaml(text: string, file: string): { doc: Document; locator: Locator; errors: PolicyError[] } {
  const lines = new LineCounter();
  const doc = parseDocument(text, {
    lineCounter: lines,
    uniqueKeys: true,
    merge: false,
    prettyErrors: true,
    version: "1.2",
  });
  const locator = new Locator(doc, lines, file);
  const errors: PolicyError[] = [];
  for (const error of doc.errors) {
    const at = locator.offset(error.pos[0]);
    const message =
      error.code === "DUPLICATE_KEY"
        ? "duplicate key: each key may appear once in a mapping"
        : (error.message.split("\n")[0] ?? error.message).replace(/ at line \d+, column \d+:?$/, "");
    errors.push({ ...at, field: "", message });
  }
  if (doc.directives?.yaml.explicit)
    errors.push({ ...locator.offset(0), field: "", message: "YAML directives (%YAML) are not supported" });
  visit(doc, {
    Pair(_, pair) {
      if (isPair(pair) && isScalar(pair.key) && pair.key.value === "<<") {
        const range = pair.key.range;
        errors.push({
          ...locator.offset(range?.[0] ?? 0),
          field: "<<",
          message: "YAML merge keys (<<) are not supported: write the entries out",
        });
      }
    },
    Node(_, node) {
      if (node.tag !== undefined) {
        errors.push({
          ...locator.offset(node.range?.[0] ?? 0),
          field: "",
          message: `YAML tag ${node.tag} is not supported: the policy is plain YAML`,
        });
      }
    },
  });
  return { doc, locator, errors };
}

// ---- compilation ----

function ruleMatchers(entry: RuleEntry): RuleMatcher[] {
  const matchers: RuleMatcher[] = [];
  for (const kind of TOOL_KINDS) {
    switch (kind) {
      case "read":
      case "edit":
      case "delete":
      case "move":
      case "search": {
        const globs = entry[kind];
        if (globs) matchers.push({ kind, globs });
        break;
      }
      case "execute":
        if (entry.execute)
          matchers.push({
            kind,
            patterns: entry.execute.map((source) => {
              const parsed = parseCommandPattern(source);
              if (!parsed.ok) throw new Error(`unreachable: pattern validated by the schema: ${source}`);
              return parsed.pattern;
            }),
          });
        break;
      case "fetch":
        if (entry.fetch)
          matchers.push({ kind, domains: entry.fetch.domains ?? [], search: entry.fetch.search === true });
        break;
      case "think":
        if (entry.think) matchers.push({ kind });
        break;
      case "other":
        if (entry.other) matchers.push({ kind, tools: entry.other });
        break;
      case "switch_mode":
        if (entry.switch_mode) matchers.push({ kind, modes: entry.switch_mode });
        break;
    }
  }
  return matchers;
}

function compileRules(
  lists: { allow?: RuleEntry[]; ask?: RuleEntry[]; deny?: RuleEntry[] },
  prefix: Path,
  locator: Locator,
): Rule[] {
  const rules: Rule[] = [];
  for (const effect of ["deny", "ask", "allow"] as const) {
    for (const [index, entry] of (lists[effect] ?? []).entries()) {
      const matchers = ruleMatchers(entry);
      for (const matcher of matchers) {
        const path = [...prefix, effect, index];
        const generated = `${fieldName(path)}.${matcher.kind}`;
        const id =
          entry.id === undefined ? generated : matchers.length > 1 ? `${entry.id}.${matcher.kind}` : entry.id;
        rules.push({
          id,
          effect,
          matcher,
          ...(entry.reason ? { reason: entry.reason } : {}),
          location: locator.at(path, matcher.kind),
        });
      }
    }
  }
  return rules;
}

function compileLimits(raw: PolicyFile["limits"]): Limits {
  const limits: Limits = {};
  if (raw?.["timeout-minutes"] !== undefined) limits.timeoutMinutes = raw["timeout-minutes"];
  if (raw?.["max-tool-calls"] !== undefined) limits.maxToolCalls = raw["max-tool-calls"];
  if (raw?.["max-turns"] !== undefined) limits.maxTurns = raw["max-turns"];
  return limits;
}

function testRequest(test: TestCaseEntry): PermissionRequest {
  if (test.read) return { kind: "read", paths: test.read };
  if (test.edit) return { kind: "edit", paths: test.edit };
  if (test.delete) return { kind: "delete", paths: test.delete };
  if (test.move) return { kind: "move", paths: test.move };
  if (test.search) return { kind: "search", paths: test.search };
  if (test.execute !== undefined) return { kind: "execute", command: test.execute };
  if (test.fetch !== undefined)
    return /^[a-z][a-z0-9+.-]*:/i.test(test.fetch)
      ? { kind: "fetch", url: test.fetch }
      : { kind: "fetch", url: `https://${test.fetch}/` };
  if (test.other !== undefined) return { kind: "other", tool: test.other };
  if (test.switch_mode !== undefined) return { kind: "switch_mode", mode: test.switch_mode };
  return { kind: "think" };
}

function testFacts(raw: TestCaseEntry["facts"]): TriggerFacts {
  const facts: TriggerFacts = {};
  if (!raw) return facts;
  if (raw.event !== undefined) facts.event = raw.event;
  if (raw.permission !== undefined) facts.actorPermission = raw.permission;
  if (raw.fork !== undefined) facts.fork = raw.fork;
  if (raw.labels !== undefined) facts.labels = raw.labels;
  if (raw.branch !== undefined) facts.branch = raw.branch;
  return facts;
}

function describeRequest(request: PermissionRequest): string {
  switch (request.kind) {
    case "execute":
      return `execute ${JSON.stringify(request.command)}`;
    case "fetch":
      return `fetch ${request.url ?? ""}`;
    case "read":
    case "edit":
    case "delete":
    case "move":
    case "search":
      return `${request.kind} ${(request.paths ?? []).join(" → ")}`;
    case "other":
      return `other ${request.tool ?? ""}`;
    case "switch_mode":
      return `switch_mode ${request.mode ?? ""}`;
    case "think":
      return "think";
  }
}

function compile(raw: PolicyFile, file: string, locator: Locator): { policy: Policy; errors: PolicyError[] } {
  const errors: PolicyError[] = [];
  const profiles: Profile[] = Object.entries(raw.profiles ?? {}).map(([name, profile]) => ({
    name,
    when: {
      ...(profile.when.event ? { events: profile.when.event } : {}),
      ...(profile.when.permission ? { permission: profile.when.permission } : {}),
      ...(profile.when.fork !== undefined ? { fork: profile.when.fork } : {}),
      ...(profile.when.label ? { labels: profile.when.label } : {}),
      ...(profile.when.branch ? { branches: profile.when.branch } : {}),
    },
    inherit: profile.inherit ?? true,
    ...(profile.default ? { default: profile.default } : {}),
    rules: compileRules(profile, ["profiles", name], locator),
    limits: compileLimits(profile.limits),
    location: locator.at(["profiles"], name),
  }));
  const rules = compileRules(raw, [], locator);

  const seen = new Map<string, Rule>();
  for (const rule of [...rules, ...profiles.flatMap((p) => p.rules)]) {
    const earlier = seen.get(rule.id);
    if (earlier) {
      const at = rule.location ?? locator.at([]);
      errors.push({
        ...at,
        field: "id",
        message: `rule id ${JSON.stringify(rule.id)} is used twice (first at line ${earlier.location?.line})`,
      });
    }
    seen.set(rule.id, rule);
  }
  if (raw.agent && raw.agents?.allowed && !raw.agents.allowed.includes(raw.agent))
    errors.push(
      located(
        locator,
        ["agent"],
        `agent ${JSON.stringify(raw.agent)} is not in agents.allowed`,
        closest(raw.agent, raw.agents.allowed),
      ),
    );

  const tests: PolicyTestCase[] = (raw.tests ?? []).map((test, index) => {
    const request = testRequest(test);
    return {
      name: test.name ?? `tests[${index}] (${describeRequest(request)})`,
      request,
      facts: testFacts(test.facts),
      expect: test.expect,
      location: locator.at(["tests", index]),
    };
  });

  const policy: Policy = {
    version: 1,
    source: { file, empty: false },
    ...(raw.agent ? { agent: raw.agent } : {}),
    agents: raw.agents?.allowed ? { allowed: raw.agents.allowed } : {},
    default: raw.default ?? "deny",
    ...(raw.default ? { defaultLocation: locator.at([], "default") } : {}),
    rules,
    profiles,
    limits: compileLimits(raw.limits),
    protected: (raw.protected ?? []).map((glob, index) => ({
      id: `protected[${index}]`,
      glob,
      location: locator.at(["protected", index]),
    })),
    env: { pass: raw.env?.pass ?? [] },
    tests,
  };
  return { policy, errors };
}

export interface TestOutcome {
  test: PolicyTestCase;
  actual: Decision;
  ruleId: string;
  reason: string;
  passed: boolean;
}

export function runPolicyTests(policy: Policy, shell: ShellAnalyzer): TestOutcome[] {
  const context: DecideContext = { workspace: TEST_WORKSPACE, shell };
  return policy.tests.map((test) => {
    const result = decide(policy, test.facts, test.request, context);
    return {
      test,
      actual: result.decision,
      ruleId: result.ruleId,
      reason: result.reason,
      passed: result.decision === test.expect,
    };
  });
}

/** Parses, validates, compiles and self-tests a policy. `text` undefined = the file is missing. */
export function loadPolicy(text: string | undefined, options: LoadOptions): PolicyLoad {
  const file = options.file ?? DEFAULT_POLICY_PATH;
  if (text === undefined || text.trim() === "") return { ok: true, policy: denyAllPolicy(file) };
  const { doc, locator, errors } = readYaml(text, file);
  if (errors.length > 0) return { ok: false, errors };
  const data: unknown = doc.toJS({ maxAliasCount: 50 });
  if (data === null || data === undefined) return { ok: true, policy: denyAllPolicy(file) };
  const parsed = policyFileSchema.safeParse(data);
  if (!parsed.success)
    return { ok: false, errors: sortErrors(parsed.error.issues.flatMap((i) => issueToErrors(i, locator))) };
  const { policy, errors: compileErrors } = compile(parsed.data, file, locator);
  if (compileErrors.length > 0) return { ok: false, errors: sortErrors(compileErrors) };
  const failures = runPolicyTests(policy, options.shell).filter((outcome) => !outcome.passed);
  if (failures.length > 0)
    return {
      ok: false,
      errors: failures.map(({ test, actual, reason }) => ({
        file,
        line: test.location?.line ?? 1,
        column: test.location?.column ?? 1,
        field: "tests",
        message: `test ${JSON.stringify(test.name)} expects ${test.expect} but the policy decides ${actual}: ${reason}`,
      })),
    };
  return { ok: true, policy };
}

function sortErrors(errors: PolicyError[]): PolicyError[] {
  return errors.sort((a, b) => a.line - b.line || a.column - b.column);
}
