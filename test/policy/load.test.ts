// Policy files that must not load, each with the file, line, column and field of the problem.
import { beforeAll, describe, expect, it } from "vitest";
import {
  formatPolicyError,
  loadPolicy,
  type PolicyError,
  type ShellAnalyzer,
} from "../../src/policy/index.js";
import { shell } from "./helpers.js";

let analyzer: ShellAnalyzer;
beforeAll(async () => {
  analyzer = await shell();
});

function errorsOf(text: string): readonly PolicyError[] {
  const loaded = loadPolicy(text, { file: "p.yml", shell: analyzer });
  if (loaded.ok) throw new Error("expected the policy to be rejected");
  return loaded.errors;
}

type Bad = [
  name: string,
  yaml: string,
  line: number,
  column: number,
  field: string,
  message: RegExp,
  hint?: string,
];

const V = "version: 1\n";
const bad: Bad[] = [
  ["unknown top-level key", `${V}alow:\n  - read: "**"\n`, 2, 1, "alow", /unknown key "alow"/, "allow"],
  [
    "unknown tool kind",
    `${V}allow:\n  - exec: "npm test"\n`,
    3,
    5,
    "allow[0].exec",
    /a rule takes a tool kind/,
    "execute",
  ],
  ["misspelled kind", `${V}deny:\n  - raed: ".env"\n`, 3, 5, "deny[0].raed", /unknown key/, "read"],
  ["duplicate key", `${V}default: deny\ndefault: allow\n`, 3, 1, "", /duplicate key/],
  ["merge key", `${V}base: &b { read: "**" }\nallow:\n  - <<: *b\n`, 4, 5, "<<", /merge keys/],
  ["custom tag", `${V}allow:\n  - read: !glob "**"\n`, 3, 17, "", /tag !glob is not supported/],
  ["core tag", `${V}default: !!str deny\n`, 2, 16, "", /tag tag:yaml.org,2002:str is not supported/],
  ["wrong type for globs", `${V}allow:\n  - edit: 5\n`, 3, 11, "allow[0].edit", /expected a list, got 5/],
  ["wrong type for rules", `${V}allow: "read"\n`, 2, 8, "allow", /expected a list/],
  ["bad glob bracket", `${V}allow:\n  - edit: "src/[abc"\n`, 3, 11, "allow[0].edit[0]", /bad glob/],
  ["absolute glob", `${V}allow:\n  - edit: ["/etc/**"]\n`, 3, 12, "allow[0].edit[0]", /workspace-relative/],
  ["dot-dot glob", `${V}allow:\n  - read: "../**"\n`, 3, 11, "allow[0].read[0]", /'\.\.' segments/],
  ["negated glob", `${V}deny:\n  - read: "!src/**"\n`, 3, 11, "deny[0].read[0]", /negated globs/],
  ["unsupported version", "version: 2\n", 1, 10, "version", /unsupported version 2/],
  ["missing version", "default: deny\n", 1, 1, "", /missing `version: 1`/],
  ["yes is not a decision", `${V}default: yes\n`, 2, 10, "default", /"yes" is not a decision/],
  ["boolean is not a decision", `${V}default: true\n`, 2, 10, "default", /true is not a decision/],
  [
    "no in a test",
    `${V}tests:\n  - { execute: "ls", expect: no }\n`,
    3,
    30,
    "tests[0].expect",
    /"no" is not a decision/,
  ],
  ["typo in a decision", `${V}default: alow\n`, 2, 10, "default", /not one of: allow, deny, ask/, "allow"],
  [
    "pattern with shell syntax",
    `${V}allow:\n  - execute: "npm test; ls"\n`,
    3,
    14,
    "allow[0].execute[0]",
    /shell syntax/,
  ],
  [
    "star in the middle",
    `${V}allow:\n  - execute: "npm * test"\n`,
    3,
    14,
    "allow[0].execute[0]",
    /must be the last token/,
  ],
  ["rule without a kind", `${V}deny:\n  - reason: because\n`, 3, 5, "deny[0]", /at least one tool kind/],
  [
    "fetch with a scheme",
    `${V}allow:\n  - fetch: "https://x.com"\n`,
    3,
    12,
    "allow[0].fetch.domains[0]",
    /not a host name/,
  ],
  [
    "profile condition typo",
    `${V}profiles:\n  p:\n    when: { evnt: schedule }\n`,
    4,
    13,
    "profiles.p.when.evnt",
    /unknown key/,
    "event",
  ],
  [
    "event typo",
    `${V}profiles:\n  p:\n    when: { event: schedul }\n`,
    4,
    20,
    "profiles.p.when.event[0]",
    /not one of/,
    "schedule",
  ],
  ["negative limit", `${V}limits: { max-turns: -1 }\n`, 2, 22, "limits.max-turns", /too small|>0|positive/i],
  ["limit key typo", `${V}limits: { max-turn: 3 }\n`, 2, 11, "limits.max-turn", /unknown key/, "max-turns"],
  ["env name", `${V}env: { pass: ["A-B"] }\n`, 2, 15, "env.pass[0]", /environment variable names/],
  [
    "agent not allowed",
    `${V}agent: claude\nagents: { allowed: [gemini] }\n`,
    2,
    8,
    "agent",
    /not in agents.allowed/,
  ],
  [
    "duplicate rule id",
    `${V}allow:\n  - { id: x, read: "**" }\n  - { id: x, edit: "**" }\n`,
    4,
    14,
    "id",
    /used twice/,
  ],
  ["two documents", `${V}---\nversion: 1\n`, 2, 1, "", /multiple documents/i],
  ["YAML syntax", `${V}allow:\n  - read: "**"\n - edit: x\n`, 4, 1, "", /.+/],
  ["YAML directive", `%YAML 1.1\n---\n${V}`, 1, 1, "", /directives/],
  [
    "test with two kinds",
    `${V}tests:\n  - { read: a, edit: b, expect: deny }\n`,
    3,
    5,
    "tests[0]",
    /exactly one tool kind/,
  ],
  [
    "failing inline test",
    `${V}allow:\n  - execute: "npm test"\ntests:\n  - { name: curl is fine, execute: "curl x", expect: allow }\n`,
    5,
    5,
    "tests",
    /test "curl is fine" expects allow but the policy decides deny/,
  ],
];

describe("loadPolicy rejects", () => {
  it.each(bad)("%s", (_name, yaml, line, column, field, message, hint) => {
    const errors = errorsOf(yaml);
    const first = errors[0]!;
    expect({ line: first.line, column: first.column, field: first.field }).toEqual({ line, column, field });
    expect(first.message).toMatch(message);
    expect(first.hint).toBe(hint);
    expect(formatPolicyError(first)).toMatch(new RegExp(`^p\\.yml:${line}:${column}:`));
  });
});

describe("loadPolicy accepts", () => {
  it.each([
    ["a missing file", undefined],
    ["an empty file", ""],
    ["a comments-only file", "# nothing yet\n"],
  ])("%s as deny-all", async (_name, text) => {
    const loaded = loadPolicy(text, { file: "p.yml", shell: analyzer });
    expect(loaded.ok && loaded.policy.source.empty && loaded.policy.default).toBe("deny");
  });

  it("aliases, but still no unknown keys", () => {
    const loaded = loadPolicy(`${V}shared: &src ["src/**"]\nallow:\n  - edit: *src\n`, {
      file: "p.yml",
      shell: analyzer,
    });
    expect(loaded.ok).toBe(false);
    if (!loaded.ok) expect(loaded.errors[0]).toMatchObject({ field: "shared", line: 2, column: 1 });
  });

  it("a complete policy into typed sections", () => {
    const loaded = loadPolicy(
      `version: 1
agent: claude
agents: { allowed: [claude, gemini] }
default: ask
allow:
  - { read: "**", search: "**", reason: reading is fine }
  - edit: &src ["src/**"]
  - { delete: *src, fetch: [registry.npmjs.org], think: true, other: true, switch_mode: [plan] }
profiles:
  fork-pr: { when: { fork: true }, inherit: false, default: deny, allow: [ { read: "**" } ], limits: { max-turns: 5 } }
limits: { timeout-minutes: 30, max-tool-calls: 300, max-turns: 50 }
protected: [package-lock.json]
env: { pass: [NPM_CONFIG_REGISTRY] }
`,
      { file: "p.yml", shell: analyzer },
    );
    if (!loaded.ok) throw new Error(loaded.errors.map(formatPolicyError).join("\n"));
    const { policy } = loaded;
    expect(policy.agent).toBe("claude");
    expect(policy.agents.allowed).toEqual(["claude", "gemini"]);
    expect(policy.default).toBe("ask");
    expect(policy.rules.map((r) => r.id)).toEqual([
      "allow[0].read",
      "allow[0].search",
      "allow[1].edit",
      "allow[2].delete",
      "allow[2].think",
      "allow[2].fetch",
      "allow[2].other",
      "allow[2].switch_mode",
    ]);
    expect(policy.rules[2]!.location).toEqual({ file: "p.yml", line: 7, column: 5 });
    expect(policy.rules[0]!.reason).toBe("reading is fine");
    expect(policy.profiles[0]).toMatchObject({
      name: "fork-pr",
      inherit: false,
      default: "deny",
      limits: { maxTurns: 5 },
    });
    expect(policy.limits).toEqual({ timeoutMinutes: 30, maxToolCalls: 300, maxTurns: 50 });
    expect(policy.protected.map((p) => p.glob)).toEqual(["package-lock.json"]);
    expect(policy.env.pass).toEqual(["NPM_CONFIG_REGISTRY"]);
  });
});
