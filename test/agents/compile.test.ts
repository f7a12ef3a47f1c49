// The policy compiled into each agent's own permission settings.
import { describe, expect, it } from "vitest";
import { presetFor } from "../../src/agents/index.js";
import { claudeDenyRules } from "../../src/agents/presets/claude.js";
import { codexConfig, codexRules } from "../../src/agents/presets/codex.js";
import { copilotFlags } from "../../src/agents/presets/copilot.js";
import { geminiPolicyToml } from "../../src/agents/presets/gemini.js";
import { opencodePermission, toWildcard } from "../../src/agents/presets/opencode.js";
import { contextOf, WS } from "./fixtures.js";

describe("compiling the policy into agent settings", () => {
  it("Claude: deny rules for read/edit paths (protected included), command prefixes and web tools", async () => {
    const deny = claudeDenyRules(await contextOf());
    expect(deny).toEqual([
      `Read(/${WS}/.env*)`,
      `Read(/${WS}/**/*.pem)`,
      `Edit(/${WS}/.github/**)`,
      `Edit(/${WS}/.github/workflows/**)`,
      `Edit(/${WS}/package-lock.json)`,
      "Bash(curl:*)",
      "Bash(rm -rf:*)",
      "WebSearch",
    ]);
    const noFetch = claudeDenyRules(await contextOf("version: 1\nallow: [ { read: '**' } ]\n"));
    expect(noFetch).toEqual(["WebFetch", "WebSearch"]);
  });

  it("Gemini: user-tier ask_user rules for every file/shell/web tool, deny for denied prefixes", async () => {
    const { text, entries } = geminiPolicyToml(await contextOf());
    expect(text).toContain('decision = "ask_user"');
    expect(text).toContain('commandPrefix = ["curl", "rm -rf"]');
    expect(text).not.toContain('web_fetch", "google_web_search"]\ndecision = "deny"');
    expect(entries[0]).toMatch(/^ask_user: read_file, .*run_shell_command/);
    const closed = geminiPolicyToml(await contextOf("version: 1\n"));
    expect(closed.text).toContain('toolName = ["web_fetch", "google_web_search"]\ndecision = "deny"');
  });

  it("Copilot: --deny-tool for commands and literal paths, read tools removed when reads are restricted", async () => {
    const flags = copilotFlags(await contextOf());
    expect(flags.denied).toEqual(["shell(curl:*)", "shell(rm -rf:*)", `write(${WS}/package-lock.json)`]);
    expect(flags.excluded).toEqual(["view", "grep", "glob"]);
    expect(flags.args.slice(0, 4)).toEqual([
      "--acp",
      "--no-auto-update",
      "--disable-builtin-mcps",
      "--disallow-temp-dir",
    ]);
    const open = copilotFlags(await contextOf("version: 1\nallow: [ { read: '**' } ]\n"));
    expect(open.excluded).toEqual([]);
    expect(open.denied).toEqual(["url"]);
  });

  it("Codex: forbidden for denied prefixes, prompt for allowed commands and file readers", async () => {
    const rules = codexRules(await contextOf());
    expect(rules.forbidden).toEqual(["curl", "rm -rf"]);
    expect(rules.prompt).toEqual(
      expect.arrayContaining(["npm test", "npm run lint", "git status", "git diff", "cat", "grep"]),
    );
    expect(rules.text).toContain('prefix_rule(pattern = ["curl"], decision = "forbidden"');
    const context = await contextOf(undefined, { env: { OPENAI_BASE_URL: "http://127.0.0.1:9/v1" } });
    expect(codexConfig(context)).toMatchObject({ model: "gpt-5.5", model_provider: "acp-warden" });
    expect(codexConfig(await contextOf())).toEqual({});
  });

  it("opencode: read rules whole, edit and bash ask with denials last, web and subagents off", async () => {
    const permission = opencodePermission(await contextOf());
    expect(permission).toMatchObject({
      "*": "ask",
      read: { "*": "allow", ".env*": "deny", "*.pem": "deny" },
      edit: { "*": "ask", ".github/*": "deny", ".github/workflows/*": "deny", "package-lock.json": "deny" },
      bash: { "*": "ask", "curl *": "deny", "rm -rf *": "deny" },
      webfetch: "ask",
      websearch: "deny",
      external_directory: "deny",
      task: "deny",
    });
    // `read: "**"` becomes "*": allow, and the denials come after it (opencode applies the last match).
    const read = permission.read as Record<string, string>;
    expect(Object.keys(read)).toEqual(["*", ".env*", "*.pem"]);
    expect(toWildcard("src/**")).toEqual({ wildcards: ["src/*"], exact: true });
    expect(toWildcard("*.{ts,md}")).toEqual({ wildcards: ["*.ts", "*.md"], exact: false });
    expect(toWildcard("**/*.pem").wildcards).toEqual(["*.pem"]);
  });

  it("each preset declares what asks and what is compiled for every covered kind", () => {
    for (const id of ["claude", "gemini", "copilot", "codex", "opencode"] as const) {
      const preset = presetFor(id);
      expect(Object.keys(preset.coverage).sort()).toEqual(["edit", "execute", "fetch", "read", "search"]);
    }
  });
});
