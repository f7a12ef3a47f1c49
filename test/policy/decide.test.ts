// decide() beyond shell and paths: precedence, profiles, fetch, the small kinds, untrusted
// facts, and suggestions that really turn a denial into an allow.
import { beforeAll, describe, expect, it } from "vitest";
import {
  effectiveLimits,
  type PermissionRequest,
  type Policy,
  suggestPolicyChange,
  type TriggerFacts,
} from "../../src/policy/index.js";
import { decider, policyFrom } from "./helpers.js";

const POLICY = `version: 1
default: deny
allow:
  - { read: "**", reason: reading is fine }
  - edit: ["src/**"]
  - execute: ["npm test", "npm run {lint,build} *", "npm publish *"]
  - fetch: { domains: [registry.npmjs.org, "*.github.com"] }
  - switch_mode: [plan]
ask:
  - execute: "npm publish *"
    reason: publishing needs a human
deny:
  - edit: "src/generated/**"
profiles:
  nightly:
    when: { event: schedule }
    allow: [ { edit: "**/*.ts" } ]
    limits: { max-turns: 100 }
  fork-pr:
    when: { fork: true }
    inherit: false
    allow: [ { read: "src/**" } ]
  maintainers:
    when: { permission: maintain, label: agent-trusted }
    default: ask
  release:
    when: { branch: "release/*" }
    allow: [ { think: true } ]
limits: { max-turns: 50, timeout-minutes: 30 }
`;

let policy: Policy;
let run: (
  request: PermissionRequest,
  facts?: TriggerFacts,
) => ReturnType<Awaited<ReturnType<typeof decider>>>;
beforeAll(async () => {
  policy = await policyFrom(POLICY);
  run = await decider(policy);
});

describe("precedence and profiles", () => {
  const table: [string, PermissionRequest, TriggerFacts, string, string][] = [
    ["allow by rule", { kind: "execute", command: "npm run lint -- --fix" }, {}, "allow", "allow[2].execute"],
    ["alternatives", { kind: "execute", command: "npm run build" }, {}, "allow", "allow[2].execute"],
    ["alternatives reject others", { kind: "execute", command: "npm run deploy" }, {}, "deny", "default"],
    ["ask beats allow", { kind: "execute", command: "npm publish --tag next" }, {}, "ask", "ask[0].execute"],
    ["deny beats allow", { kind: "edit", paths: ["src/generated/api.ts"] }, {}, "deny", "deny[0].edit"],
    [
      "profile extends base",
      { kind: "edit", paths: ["scripts/x.ts"] },
      { event: "schedule" },
      "allow",
      "profiles.nightly.allow[0].edit",
    ],
    [
      "profile does not leak",
      { kind: "edit", paths: ["scripts/x.ts"] },
      { event: "issue_comment" },
      "deny",
      "default",
    ],
    [
      "deny survives profiles",
      { kind: "edit", paths: ["src/generated/a.ts"] },
      { event: "schedule" },
      "deny",
      "deny[0].edit",
    ],
    [
      "inherit: false drops base allows",
      { kind: "read", paths: ["README.md"] },
      { fork: true },
      "deny",
      "default",
    ],
    [
      "inherit: false keeps its own",
      { kind: "read", paths: ["src/a.ts"] },
      { fork: true },
      "allow",
      "profiles.fork-pr.allow[0].read",
    ],
    [
      "inherit: false drops base commands",
      { kind: "execute", command: "npm test" },
      { fork: true },
      "deny",
      "default",
    ],
    [
      "permission below the minimum",
      { kind: "execute", command: "curl x" },
      { actorPermission: "write", labels: ["agent-trusted"] },
      "deny",
      "default",
    ],
    [
      "permission and label",
      { kind: "execute", command: "curl x" },
      { actorPermission: "admin", labels: ["agent-trusted"] },
      "ask",
      "profiles.maintainers.default",
    ],
    ["branch glob", { kind: "think" }, { branch: "release/1.2" }, "allow", "profiles.release.allow[0].think"],
    ["branch glob miss", { kind: "think" }, { branch: "main" }, "deny", "default"],
  ];
  it.each(table)("%s", (_name, request, facts, decision, ruleId) => {
    const result = run(request, facts);
    expect(result.decision).toBe(decision);
    expect(result.ruleId).toBe(ruleId);
    expect(result.reason).toContain(ruleId);
  });

  it("names the profiles that applied and merges their limits", () => {
    expect(run({ kind: "think" }, { event: "schedule", fork: true }).profiles).toEqual([
      "nightly",
      "fork-pr",
    ]);
    expect(effectiveLimits(policy, { event: "schedule" })).toEqual({ maxTurns: 100, timeoutMinutes: 30 });
    expect(effectiveLimits(policy, {})).toEqual({ maxTurns: 50, timeoutMinutes: 30 });
  });
});

describe("fetch and the small kinds", () => {
  const table: [string, PermissionRequest, string, string][] = [
    ["listed domain", { kind: "fetch", url: "https://registry.npmjs.org/zod" }, "allow", "allow[3].fetch"],
    ["subdomain wildcard", { kind: "fetch", url: "https://api.github.com/repos" }, "allow", "allow[3].fetch"],
    ["wildcard is not the apex", { kind: "fetch", url: "https://github.com/" }, "deny", "default"],
    ["look-alike suffix", { kind: "fetch", url: "https://evilgithub.com/" }, "deny", "default"],
    ["userinfo trick", { kind: "fetch", url: "https://registry.npmjs.org@evil.com/" }, "deny", "default"],
    ["upper case host", { kind: "fetch", url: "HTTPS://REGISTRY.NPMJS.ORG./x" }, "allow", "allow[3].fetch"],
    ["file URL", { kind: "fetch", url: "file:///etc/passwd" }, "deny", "request.bad-url"],
    ["not a URL", { kind: "fetch", url: "registry npmjs" }, "deny", "request.bad-url"],
    ["web search without a rule", { kind: "fetch", query: "zod docs" }, "deny", "default"],
    ["mode", { kind: "switch_mode", mode: "plan" }, "allow", "allow[4].switch_mode"],
    ["other mode", { kind: "switch_mode", mode: "bypassPermissions" }, "deny", "default"],
    ["other tool", { kind: "other", tool: "mcp__x" }, "deny", "default"],
  ];
  it.each(table)("%s", (_name, request, decision, ruleId) => {
    const result = run(request);
    expect(result.decision).toBe(decision);
    expect(result.ruleId).toBe(ruleId);
  });
});

describe("facts that are missing, inconsistent or untrusted", () => {
  const table: [string, unknown, string][] = [
    ["no kind", { command: "npm test" }, "request.missing-kind"],
    ["unknown kind", { kind: "shell", command: "npm test" }, "request.unknown-kind"],
    [
      "command on an edit",
      { kind: "edit", paths: ["src/a.ts"], command: "rm -rf /" },
      "request.inconsistent",
    ],
    [
      "paths on an execute",
      { kind: "execute", command: "npm test", paths: ["/etc"] },
      "request.inconsistent",
    ],
    ["paths not strings", { kind: "read", paths: [42] }, "request.inconsistent"],
    ["move with one path", { kind: "move", paths: ["a"] }, "request.inconsistent"],
    ["fetch with nothing", { kind: "fetch" }, "request.missing-url"],
    [
      "title used although rawInput was sent",
      { kind: "execute", command: "npm test", evidence: { rawInputPresent: true, source: "title" } },
      "request.untrusted-source",
    ],
    ["null", null, "request.missing-kind"],
  ];
  it.each(table)("%s", (_name, request, ruleId) => {
    const result = run(request as PermissionRequest);
    expect(result).toMatchObject({ decision: "deny", ruleId });
    expect(result.reason).toContain(ruleId);
  });

  it("accepts facts from the title when the agent sends no rawInput (Gemini)", () => {
    const result = run({
      kind: "execute",
      command: "npm test",
      evidence: { rawInputPresent: false, source: "title" },
    });
    expect(result.decision).toBe("allow");
  });
});

describe("suggestPolicyChange", () => {
  const base = `version: 1\ndefault: deny\n`;
  const requests: PermissionRequest[] = [
    { kind: "execute", command: "npm run typecheck" },
    { kind: "execute", command: "npm test && git commit -m 'fix: a thing'" },
    { kind: "execute", command: "git ls-files | xargs wc -l" },
    { kind: "edit", paths: ["docs/[draft] notes*.md"] },
    { kind: "fetch", url: "https://example.com/x" },
    { kind: "move", paths: ["a.ts", "b.ts"] },
    { kind: "switch_mode", mode: "plan" },
    { kind: "think" },
  ];
  it.each(requests)("turns %j into an allow once pasted", async (request) => {
    const strict = await policyFrom(base);
    const denied = (await decider(strict))(request);
    expect(denied.decision).toBe("deny");
    const suggestion = suggestPolicyChange(strict, {}, denied);
    expect(suggestion?.possible).toBe(true);
    const amended = await policyFrom(`${base}${suggestion!.text}\n`);
    expect((await decider(amended))(request).decision).toBe("allow");
  });

  it("puts the entry in a profile that does not inherit", async () => {
    const result = run({ kind: "edit", paths: ["src/x.ts"] }, { fork: true });
    expect(suggestPolicyChange(policy, { fork: true }, result)?.text).toBe(
      'profiles:\n  fork-pr:\n    allow:\n      - edit: "src/x.ts"',
    );
  });

  it("points at the deny rule instead of adding an allow", () => {
    const result = run({ kind: "edit", paths: ["src/generated/a.ts"] });
    expect(suggestPolicyChange(policy, {}, result)?.text).toMatch(
      /^# deny\[0\]\.edit \(agent-policy\.yml:13\) denies edit/,
    );
  });

  it("says when no policy can help", () => {
    const result = run({ kind: "execute", command: "echo $(id)" });
    expect(suggestPolicyChange(policy, {}, result)).toMatchObject({ possible: false });
    expect(suggestPolicyChange(policy, {}, run({ kind: "execute", command: "npm test" }))).toBeUndefined();
  });
});

describe("commands that read files obey the read rules", () => {
  const READERS = `version: 1
default: deny
allow:
  - read: "**"
  - execute: ["cat *", "grep *", "cp *", "head *", "npm test"]
deny:
  - read: [".env*", "secrets/**"]
    reason: secrets stay out of the model's context
`;
  let readers: Awaited<ReturnType<typeof decider>>;
  beforeAll(async () => {
    readers = await decider(await policyFrom(READERS));
  });

  it.each([
    ["cat of a denied file", "cat .env", "deny", "deny[0].read"],
    ["head of a denied directory's file", "head -n 5 secrets/token.txt", "deny", "deny[0].read"],
    ["grep into a denied file", "grep -r TOKEN .env.local", "deny", "deny[0].read"],
    ["cp out of a denied directory", "cp secrets/token.txt notes.txt", "deny", "deny[0].read"],
    ["a reader after an allowed command", "npm test && cat secrets/x", "deny", "deny[0].read"],
    ["cat of an allowed file", "cat README.md", "allow", "allow[1].execute"],
    [
      "grep with options and an allowed file",
      "grep -n --color=never TODO src/index.ts",
      "allow",
      "allow[1].execute",
    ],
  ])("%s: %s", (_label, command, decision, ruleId) => {
    const result = readers({ kind: "execute", command });
    expect(result.decision).toBe(decision);
    expect(result.ruleId).toBe(ruleId);
    if (decision === "deny") expect(result.reason).toContain("reads");
  });
});
