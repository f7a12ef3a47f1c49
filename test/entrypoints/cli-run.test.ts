// `acp-warden run`: the CLI front door over the same agent runtime and policy as the Action.
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../src/entrypoints/cli.js";
import type { Script } from "../agent/script.js";
import { scriptedAgentCommand, writeScript } from "../support/scripted-agent.js";

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "acp-cli-"));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const script: Script = {
  turns: [
    {
      steps: [
        { plan: [{ content: "Edit the readme", status: "in_progress" }] },
        {
          toolCall: { id: "e", title: "Edit README.md", kind: "edit", rawInput: { path: "README.md" } },
          permission: true,
          action: { writeFile: { path: "README.md", content: "changed\n" } },
        },
        {
          toolCall: {
            id: "c",
            title: "curl",
            kind: "execute",
            rawInput: { command: "curl https://example.invalid" },
          },
          permission: true,
        },
        { message: "done" },
      ],
    },
  ],
};

async function cli(args: string[], policy?: string) {
  const dir = await mkdtemp(join(root, "ws-"));
  await writeFile(join(dir, "README.md"), "original\n");
  if (policy !== undefined) {
    await mkdir(join(dir, ".github"));
    await writeFile(join(dir, ".github", "agent-policy.yml"), policy);
  }
  const agent = scriptedAgentCommand(await writeScript(root, script));
  const out: string[] = [];
  const err: string[] = [];
  let code = 0;
  await main(["run", "--agent", [agent.command, ...agent.args].join(" "), "--prompt", "edit", ...args], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
    stdout: (t) => out.push(t),
    stderr: (t) => err.push(t),
    setExitCode: (c) => {
      code = c;
    },
  });
  return {
    code,
    stdout: out.join(""),
    stderr: err.join(""),
    readme: await readFile(join(dir, "README.md"), "utf8"),
  };
}

describe("acp-warden run", () => {
  it("answers from the policy in the workspace and prints the plan, tool calls and decisions", async () => {
    const result = await cli([], 'version: 1\nallow:\n  - edit: ["README.md"]\n');
    expect(result.code).toBe(0);
    expect(result.readme).toBe("changed\n");
    expect(result.stdout).toContain("plan 0/1");
    expect(result.stdout).toContain("✓ [edit] Edit README.md — completed");
    expect(result.stdout).toMatch(/DENIED execute curl \[default\]/);
    expect(result.stdout).toContain("stop reason: end_turn");
  });

  it("denies everything without a policy, and says so", async () => {
    const result = await cli([]);
    expect(result.code).toBe(0);
    expect(result.readme).toBe("original\n");
    expect(result.stderr).toContain("every request will be denied");
  });

  it("allows everything with --allow-all", async () => {
    const result = await cli(["--allow-all"]);
    expect(result.readme).toBe("changed\n");
  });

  it("exits 2 with located errors for an invalid policy, and for bad usage", async () => {
    const invalid = await cli([], "version: 1\nalow: []\n");
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toContain('agent-policy.yml:2:1: alow: unknown key "alow"');
    const both = await cli(["--allow-all", "--deny-all"]);
    expect(both.code).toBe(2);
  });
});
