// `policy check` and `policy explain` through registerPolicyCommands, one real subprocess through
// tsx, and one through an esbuild bundle laid out like dist/ (wasm files next to the bundle).
import { execFile } from "node:child_process";
import { copyFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Command } from "commander";
import { build } from "esbuild";
import { afterAll, describe, expect, it } from "vitest";
import { isUsageError, registerPolicyCommands } from "../../src/entrypoints/policy-commands.js";
import { fixture } from "./helpers.js";

const run = promisify(execFile);
const root = new URL("../../", import.meta.url).pathname;
const examples = join(root, "examples/policies");
const scratch = mkdtempSync(join(tmpdir(), "acp-warden-cli-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

async function cli(args: string[], cwd = join(root, "test/policy/fixtures")) {
  const out: string[] = [];
  const err: string[] = [];
  let code: number | undefined;
  const program = new Command("acp-warden").exitOverride();
  registerPolicyCommands(program, {
    cwd,
    stdout: (s) => out.push(s),
    stderr: (s) => err.push(s),
    setExitCode: (n) => {
      code = n;
    },
  });
  try {
    await program.parseAsync(["node", "acp-warden", ...args]);
  } catch (error) {
    if (!isUsageError(error)) throw error;
  }
  return { code, stdout: out.join(""), stderr: err.join("") };
}

describe("policy check", () => {
  it.each(readdirSync(examples).filter((f) => f.endsWith(".yml")))(
    "passes examples/policies/%s",
    async (file) => {
      const result = await cli(["policy", "check", join(examples, file)]);
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/: valid; \d+ inline tests passed\ndefault: deny\n/);
    },
  );

  it("passes this repository's own .github/agent-policy.yml", async () => {
    const result = await cli(["policy", "check", join(root, ".github/agent-policy.yml")]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("valid; 5 inline tests passed");
  });

  it("exits 2 with located errors for an invalid policy", async () => {
    writeFileSync(join(scratch, "bad.yml"), "version: 1\nalow:\n  - read: x\n");
    const result = await cli(["policy", "check", "bad.yml"], scratch);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('bad.yml:2:1: alow: unknown key "alow"');
    expect(result.stderr).toContain('(did you mean "allow"?)');
  });

  it("treats a missing default policy as deny-all", async () => {
    const result = await cli(["policy", "check"], scratch);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("no policy file (deny-all)");
  });

  it("exits 2 when a named file is missing", async () => {
    expect((await cli(["policy", "check", "nope.yml"], scratch)).code).toBe(2);
  });
});

describe("policy explain", () => {
  it("allows with the rule and exits 0", async () => {
    const result = await cli([
      "policy",
      "explain",
      "--policy",
      "base-policy.yml",
      "--",
      'npm run lint -- "a;b"',
    ]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("decision: allow\nrule: allow[3].execute\n");
  });

  it("denies with the reason and a paste-ready change, exit 1", async () => {
    const result = await cli([
      "policy",
      "explain",
      "--policy",
      "base-policy.yml",
      "--",
      "npm test && npm run build",
    ]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain("decision: deny\nrule: default\n");
    expect(result.stdout).toContain(
      'suggested change to base-policy.yml:\n  allow:\n    - execute: "npm run build"',
    );
  });

  it("explains paths with --kind and profiles with trigger facts", async () => {
    const edit = await cli([
      "policy",
      "explain",
      "--policy",
      "base-policy.yml",
      "--kind",
      "edit",
      "--",
      ".github/workflows/ci.yml",
    ]);
    expect(edit.stdout).toContain("rule: protected[0]");
    const json = await cli([
      "policy",
      "explain",
      "--policy",
      join(examples, "nightly-refactor.yml"),
      "--event",
      "schedule",
      "--branch",
      "main",
      "--kind",
      "edit",
      "--json",
      "--",
      "scripts/x.ts",
    ]);
    expect(JSON.parse(json.stdout)).toMatchObject({
      decision: "allow",
      profiles: ["nightly"],
      suggestion: null,
    });
  });

  it("exits 2 on usage errors", async () => {
    expect((await cli(["policy", "explain", "--kind", "exec", "--", "ls"])).code).toBe(2);
    expect((await cli(["policy", "explain"])).code).toBe(2);
  });
});

describe("as a process", () => {
  it("runs under tsx with the wasm files from node_modules", async () => {
    const { stdout } = await run(
      process.execPath,
      [
        "--import",
        "tsx",
        fixture("cli-entry.ts"),
        "policy",
        "explain",
        "--policy",
        "base-policy.yml",
        "--",
        "npm test",
      ],
      { cwd: join(root, "test/policy/fixtures") },
    );
    expect(stdout).toContain("decision: allow");
  });

  it("runs bundled, finding the wasm files next to the bundle (the dist/ layout)", async () => {
    const outdir = join(scratch, "dist");
    const require = createRequire(import.meta.url);
    await build({
      absWorkingDir: root,
      entryPoints: { cli: fixture("cli-entry.ts") },
      outdir,
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      splitting: true,
      chunkNames: "chunks/[name]-[hash]",
      logLevel: "silent",
      banner: {
        js: "import { createRequire as __acpWardenCreateRequire } from 'node:module'; const require = __acpWardenCreateRequire(import.meta.url);",
      },
    });
    for (const file of ["web-tree-sitter/web-tree-sitter.wasm", "tree-sitter-bash/tree-sitter-bash.wasm"])
      copyFileSync(require.resolve(file), join(outdir, file.split("/")[1]!));
    // cwd outside the project: node_modules cannot be reached, only the copies next to cli.js.
    const { stdout } = await run(
      process.execPath,
      [join(outdir, "cli.js"), "policy", "explain", "--", "npm test"],
      {
        cwd: scratch,
      },
    ).catch((error: { code: number; stdout: string; stderr: string }) => {
      if (error.code === 1) return { stdout: error.stdout };
      throw error;
    });
    expect(stdout).toContain("decision: deny\nrule: default\n");
    expect(stdout).toContain('- execute: "npm test"');
  });
});
