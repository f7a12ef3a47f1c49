// Presets: resolution, launch commands pinned to interop/package.json, environment from scratch.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  allPresets,
  buildAgentEnv,
  isForbiddenEnvName,
  launchCommand,
  PRESET_IDS,
  prepareAgent,
  presetFor,
  resolveAgent,
  splitCommandLine,
} from "../../src/agents/index.js";
import { policyOf, WS } from "./fixtures.js";

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "agents-presets-"));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("resolveAgent", () => {
  it("returns a preset for each known name and a command for anything else", () => {
    for (const id of PRESET_IDS) expect(resolveAgent(id)).toMatchObject({ type: "preset", id });
    expect(resolveAgent(`my-agent --acp --name "two words" 'it''s'`)).toEqual({
      type: "command",
      id: "command",
      title: "command `my-agent --acp --name \"two words\" 'it''s'`",
      command: "my-agent",
      args: ["--acp", "--name", "two words", "its"],
    });
    expect(() => resolveAgent("  ")).toThrow(/empty/);
    expect(() => splitCommandLine(`a "b`)).toThrow(/unbalanced/);
  });

  it("pins npx launches to the versions in interop/package.json, and uses binDir when given", async () => {
    const interop = JSON.parse(
      await readFile(new URL("../../interop/package.json", import.meta.url), "utf8"),
    ) as {
      dependencies: Record<string, string>;
    };
    for (const preset of allPresets()) {
      expect(interop.dependencies[preset.package.name]).toBe(preset.package.version);
      const { command, args } = launchCommand(preset, preset.args);
      expect(command).toBe("npx");
      expect(args).toEqual([
        "-y",
        `--package=${preset.package.name}@${preset.package.version}`,
        "--",
        preset.package.bin,
        ...preset.args,
      ]);
    }
    const gemini = presetFor("gemini", { binDir: "/opt/bin" });
    expect(launchCommand(gemini, ["--acp"])).toEqual({ command: "/opt/bin/gemini", args: ["--acp"] });
  });
});

describe("agent environment", () => {
  const parent = {
    PATH: "/usr/bin:/bin",
    HOME: "/root",
    GITHUB_TOKEN: "ghs_secret",
    GH_TOKEN: "gho_secret",
    ACTIONS_RUNTIME_TOKEN: "rt",
    ACTIONS_ID_TOKEN_REQUEST_URL: "https://x",
    ACTIONS_ID_TOKEN_REQUEST_TOKEN: "t",
    AWS_SECRET_ACCESS_KEY: "aws",
    ANTHROPIC_API_KEY: "sk-ant",
    NPM_CONFIG_REGISTRY: "https://registry.example",
    UNRELATED: "x",
  };

  it("is built from scratch: base variables, the preset's allow-list and env.pass, never runner secrets", () => {
    const { env, warnings } = buildAgentEnv({
      parent,
      homeDir: "/tmp/h",
      presetAllow: ["ANTHROPIC_API_KEY", "GITHUB_TOKEN"],
      policyPass: ["NPM_CONFIG_REGISTRY", "GITHUB_TOKEN", "ACTIONS_RUNTIME_TOKEN", "HOME"],
      fixed: { DISABLE_TELEMETRY: "1" },
      binDir: "/opt/bin",
    });
    expect(env).toEqual({
      PATH: "/opt/bin:/usr/bin:/bin",
      HOME: "/tmp/h",
      LANG: "C.UTF-8",
      TMPDIR: "/tmp/h/tmp",
      CI: "true",
      TERM: "dumb",
      NO_COLOR: "1",
      ANTHROPIC_API_KEY: "sk-ant",
      NPM_CONFIG_REGISTRY: "https://registry.example",
      DISABLE_TELEMETRY: "1",
    });
    expect(warnings).toEqual([
      expect.stringContaining("GITHUB_TOKEN"),
      expect.stringContaining("ACTIONS_RUNTIME_TOKEN"),
      expect.stringContaining("HOME"),
    ]);
    for (const name of ["GITHUB_TOKEN", "GH_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN", "INPUT_GITHUB-TOKEN"])
      expect(isForbiddenEnvName(name)).toBe(true);
  });

  it("prepareAgent writes the settings into the throwaway HOME and passes only allow-listed variables", async () => {
    const policy = await policyOf();
    const homeDir = join(root, "home-claude");
    const prepared = await prepareAgent(presetFor("claude", { binDir: "/opt/bin" }), {
      policy,
      facts: {},
      workspace: WS,
      homeDir,
      env: parent,
      uid: 0,
      model: "claude-sonnet-4-6",
    });
    expect(prepared.launch.command).toBe("/opt/bin/claude-agent-acp");
    expect(Object.keys(prepared.launch.env).sort()).toEqual(
      [
        "PATH",
        "HOME",
        "LANG",
        "TMPDIR",
        "CI",
        "TERM",
        "NO_COLOR",
        "ANTHROPIC_API_KEY",
        "AWS_SECRET_ACCESS_KEY",
        "NPM_CONFIG_REGISTRY",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
        "DISABLE_AUTOUPDATER",
        "DISABLE_TELEMETRY",
        "DISABLE_ERROR_REPORTING",
        "CLAUDE_CONFIG_DIR",
        "IS_SANDBOX",
        "ANTHROPIC_MODEL",
      ].sort(),
    );
    expect(prepared.launch.env.ANTHROPIC_MODEL).toBe("claude-sonnet-4-6");
    expect(prepared.mode).toBe("default");
    expect(prepared.sessionMeta).toEqual({ claudeCode: { options: { settingSources: ["user"] } } });
    const settings = JSON.parse(await readFile(join(homeDir, ".claude", "settings.json"), "utf8")) as {
      permissions: { deny: string[]; ask: string[] };
    };
    expect(settings.permissions.deny).toContain(`Read(/${WS}/.env*)`);
    expect(settings.permissions.ask).toContain("Bash");
    expect(prepared.warnings).toEqual([expect.stringContaining("GITHUB_TOKEN")]);
  });

  it("an unknown command agent runs as is, with a warning that nothing was made to ask", async () => {
    const prepared = await prepareAgent(resolveAgent("my-agent --acp"), {
      policy: await policyOf(),
      facts: {},
      workspace: WS,
      homeDir: join(root, "home-cmd"),
      env: parent,
    });
    expect(prepared.launch).toMatchObject({ command: "my-agent", args: ["--acp"] });
    expect(prepared.launch.env.ANTHROPIC_API_KEY).toBeUndefined();
    expect(prepared.launch.env.GITHUB_TOKEN).toBeUndefined();
    expect(prepared.warnings.join("\n")).toMatch(/not a preset: acp-warden cannot make it ask/);
    expect(
      prepared.enforcement.rules.filter((r) => r.effect === "deny").every((r) => r.bypass !== null),
    ).toBe(true);
  });

  it("gives each preset a mode or config that makes it ask, checked by the client at session start", async () => {
    const policy = await policyOf();
    const asks: Record<string, unknown> = {};
    for (const preset of allPresets({ binDir: "/opt/bin" })) {
      const prepared = await prepareAgent(preset, {
        policy,
        facts: {},
        workspace: WS,
        homeDir: join(root, `home-${preset.id}`),
        env: { OPENAI_BASE_URL: "http://127.0.0.1:1/v1", COPILOT_PROVIDER_BASE_URL: "http://127.0.0.1:1/v1" },
      });
      asks[preset.id] = { mode: prepared.mode, config: prepared.config };
    }
    expect(asks).toEqual({
      claude: { mode: "default", config: undefined },
      gemini: { mode: "default", config: undefined },
      copilot: {
        mode: "https://agentclientprotocol.com/protocol/session-modes#agent",
        config: { allow_all: "off" },
      },
      codex: { mode: "read-only", config: undefined },
      opencode: { mode: undefined, config: undefined },
    });
  });
});
