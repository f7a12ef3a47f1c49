// Path rules: containment, the sibling-prefix trap, case and Unicode tricks on deny lists,
// and (on a real temp directory) symlinks, dangling links and hardlinks.
import { linkSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createPathInspector,
  type DecisionResult,
  type PermissionRequest,
  relativeInside,
  resolveWorkspacePath,
} from "../../src/policy/index.js";
import { basePolicy, decider, policyFrom } from "./helpers.js";

let run: (request: PermissionRequest) => DecisionResult;
beforeAll(async () => {
  run = await decider(await basePolicy());
});

type PathCase = [
  kind: "read" | "edit" | "delete" | "move" | "search",
  paths: string[],
  decision: string,
  ruleId: string,
];

const cases: PathCase[] = [
  ["edit", ["src/a.ts"], "allow", "allow[2].edit"],
  ["edit", ["/w/repo/src/a.ts"], "allow", "allow[2].edit"],
  ["edit", ["./src/./a.ts"], "allow", "allow[2].edit"],
  ["edit", ["README.md"], "allow", "allow[2].edit"],
  ["edit", ["docs/guide.md"], "deny", "default"],
  ["edit", ["/w/repo-evil/src/a.ts"], "deny", "path.outside-workspace"],
  ["edit", ["../repo-evil/src/a.ts"], "deny", "path.outside-workspace"],
  ["edit", ["src/../../repo-evil/a.ts"], "deny", "path.outside-workspace"],
  ["read", ["/etc/passwd"], "deny", "path.outside-workspace"],
  ["read", ["/w"], "deny", "path.outside-workspace"],
  ["edit", ["src/a\0.ts"], "deny", "path.nul"],
  ["read", [".env"], "deny", "deny[1].read"],
  ["read", [".ENV.local"], "deny", "deny[1].read"],
  ["read", ["certs/KEY.PEM"], "deny", "deny[1].read"],
  ["edit", [".github/CODEOWNERS"], "deny", "deny[0].edit"],
  ["edit", [".GitHub/CODEOWNERS"], "deny", "deny[0].edit"],
  ["edit", [".GitHub/Workflows/ci.yml"], "deny", "protected[0]"],
  ["edit", ["src/../.github/workflows/ci.yml"], "deny", "protected[0]"],
  ["edit", ["package-lock.json"], "deny", "protected[1]"],
  ["edit", ["PACKAGE-LOCK.JSON"], "deny", "protected[1]"],
  ["read", ["package-lock.json"], "allow", "allow[0].read"],
  ["edit", ["SRC/a.ts"], "deny", "default"],
  ["delete", ["src/a.ts"], "deny", "default"],
  ["move", ["src/a.ts", "src/b.ts"], "deny", "default"],
  ["edit", [], "deny", "request.missing-path"],
  ["edit", ["src/a.ts", ".github/x"], "deny", "deny[0].edit"],
  ["search", [], "allow", "allow[1].search"],
  ["search", ["src"], "allow", "allow[1].search"],
];

describe("path rules", () => {
  it.each(cases)("%s %j → %s by %s", (kind, paths, decision, ruleId) => {
    const result = run({ kind, paths } as PermissionRequest);
    expect(result.decision).toBe(decision);
    expect(result.ruleId).toBe(ruleId);
    expect(result.reason).toContain(ruleId);
  });

  it("matches deny lists on NFC-normalized text", async () => {
    const policy = await policyFrom(
      `version: 1\nallow:\n  - read: "**"\ndeny:\n  - read: "secrets/caf\u00e9/**"\n`,
    );
    const decideIt = await decider(policy);
    const decomposed = "secrets/cafe\u0301/key.txt";
    expect(decideIt({ kind: "read", paths: [decomposed] })).toMatchObject({
      decision: "deny",
      ruleId: "deny[0].read",
    });
  });

  it("tells sibling directories apart", () => {
    expect(relativeInside("/w/repo", "/w/repo-evil/x")).toBeUndefined();
    expect(relativeInside("/w/repo", "/w/repo/x")).toBe("x");
    expect(relativeInside("/w/repo", "/w/repo")).toBe("");
    expect(resolveWorkspacePath("x", { workspace: "/w/repo/", write: true })).toEqual({
      ok: true,
      relative: "x",
    });
  });
});

describe("path rules on a real file system", () => {
  const root = mkdtempSync(join(tmpdir(), "acp-warden-paths-"));
  const workspace = join(root, "repo");
  let realRun: (request: PermissionRequest) => DecisionResult;

  beforeAll(async () => {
    mkdirSync(join(workspace, "src"), { recursive: true });
    mkdirSync(join(workspace, ".github/workflows"), { recursive: true });
    mkdirSync(join(root, "repo-evil"), { recursive: true });
    writeFileSync(join(workspace, ".github/workflows/ci.yml"), "on: push\n");
    writeFileSync(join(root, "secret.txt"), "s3cret\n");
    writeFileSync(join(workspace, "src/shared.ts"), "export {};\n");
    linkSync(join(workspace, "src/shared.ts"), join(root, "outside-link.ts"));
    symlinkSync("../.github/workflows", join(workspace, "src/wf"));
    symlinkSync(join(root, "secret.txt"), join(workspace, "src/secret.txt"));
    symlinkSync(join(root, "repo-evil"), join(workspace, "src/evil"));
    symlinkSync(join(root, "nowhere/file"), join(workspace, "src/dangling"));
    realRun = await decider(await basePolicy(), { workspace, paths: createPathInspector() });
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  const table: [string, PathCase[0], string, string][] = [
    ["a plain new file", "edit", "src/new.ts", "allow[2].edit"],
    ["a symlink into protected files", "edit", "src/wf/ci.yml", "protected[0]"],
    ["a symlink to a file outside", "read", "src/secret.txt", "path.outside-workspace"],
    ["a new file under a symlinked directory outside", "edit", "src/evil/x.ts", "path.outside-workspace"],
    ["a dangling symlink", "edit", "src/dangling", "path.dangling-symlink"],
    ["a hardlinked file (write)", "edit", "src/shared.ts", "path.hardlink"],
    ["a hardlinked file (read)", "read", "src/shared.ts", "allow[0].read"],
  ];
  it.each(table)("%s", (_name, kind, path, ruleId) => {
    const result = realRun({ kind, paths: [path] } as PermissionRequest);
    expect(result.ruleId).toBe(ruleId);
    expect(result.decision).toBe(ruleId.startsWith("allow") ? "allow" : "deny");
  });

  it("checks redirect targets of commands with the same rules", () => {
    expect(realRun({ kind: "execute", command: "echo x > src/wf/ci.yml" }).ruleId).toBe("protected[0]");
    expect(realRun({ kind: "execute", command: "echo x > src/fresh.ts" }).decision).toBe("allow");
  });
});
