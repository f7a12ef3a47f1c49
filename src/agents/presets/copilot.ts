// GitHub Copilot CLI (`copilot --acp`). Edits and shell commands ask in its `#agent` mode with
// `allow_all` off; `view`, `grep` and `glob` never ask, so when the policy restricts reads those
// tools are removed (reads then go through the shell, which asks). Denied commands, write paths
// and URLs become `--deny-tool` flags, which Copilot applies before asking.
import { posix } from "node:path";
import { extractFacts } from "../extract.js";
import { fetchDomains, patternsOf, patternWords, restrictive, unique } from "../rules.js";
import type { AgentPreset, PermissionFacts, SetupContext } from "../types.js";

export const COPILOT_AGENT_MODE = "https://agentclientprotocol.com/protocol/session-modes#agent";
const UNASKED_READ_TOOLS = ["view", "grep", "glob"];
const GLOB_CHARS = /[*?[\]{}]/;

export function copilotFlags(context: SetupContext): {
  args: string[];
  denied: string[];
  excluded: string[];
} {
  const { rules, policy, workspace } = context;
  const denied: string[] = [];
  for (const pattern of [...patternsOf(rules, "deny"), ...patternsOf(rules, "ask")]) {
    const { words, rest } = patternWords(pattern);
    for (const w of words) denied.push(`shell(${w.join(" ")}${rest ? ":*" : ""})`);
  }
  const editGlobs = [
    ...restrictive(rules, "edit").flatMap((r) => ("globs" in r.matcher ? r.matcher.globs : [])),
    ...policy.protected.map((p) => p.glob),
  ];
  // `write(path)` takes a path, not a glob: literal paths only; the rest is answered per request.
  for (const g of editGlobs) if (!GLOB_CHARS.test(g)) denied.push(`write(${posix.join(workspace, g)})`);
  const fetchAllowed = rules.default === "allow" || fetchDomains(rules, "allow").length > 0;
  if (!fetchAllowed) denied.push("url");
  const excluded = restrictive(rules, "read").length > 0 ? UNASKED_READ_TOOLS : [];
  const args = [
    "--acp",
    "--no-auto-update",
    "--disable-builtin-mcps",
    "--disallow-temp-dir",
    ...unique(denied).map((d) => `--deny-tool=${d}`),
    ...excluded.map((t) => `--excluded-tools=${t}`),
  ];
  return { args, denied: unique(denied), excluded };
}

export function copilotPreset(): Omit<AgentPreset, "install"> {
  return {
    type: "preset",
    id: "copilot",
    title: "GitHub Copilot CLI",
    package: { name: "@github/copilot", version: "1.0.102", bin: "copilot" },
    args: ["--acp"],
    envAllow: [
      "COPILOT_GITHUB_TOKEN",
      "COPILOT_MODEL",
      "COPILOT_OFFLINE",
      "COPILOT_PROVIDER_BASE_URL",
      "COPILOT_PROVIDER_API_KEY",
      "COPILOT_PROVIDER_WIRE_API",
    ],
    auth: "COPILOT_GITHUB_TOKEN (a token with the Copilot permission; never GITHUB_TOKEN), or a bring-your-own provider (COPILOT_PROVIDER_*, COPILOT_OFFLINE=true)",
    model: "`model` → COPILOT_MODEL (default gpt-5 with a custom provider: gpt-4o gets no edit tool)",
    askSettings: "session/set_mode `#agent` (checked) and config `allow_all=off` (checked)",
    compiledInto:
      "flags: `--deny-tool shell(…)` for denied commands, `write(path)` for literal denied/protected paths, `url` unless fetch is allowed; `--excluded-tools view/grep/glob` when reads are restricted",
    coverage: {
      read: {
        asks: "partly",
        compiled: "deny",
        note: "view/grep/glob never ask: they are removed when the policy restricts reads, so reads go through bash (asks)",
      },
      search: { asks: "never", compiled: "none", note: "grep/glob run unasked unless removed (see read)" },
      edit: { asks: "always", compiled: "deny", note: "edit/create ask with rawInput {fileName, diff}" },
      execute: {
        asks: "always",
        compiled: "deny",
        note: "bash asks with rawInput {command}; the title is prose",
      },
      fetch: { asks: "always", compiled: "deny", note: "all URLs denied unless the policy allows fetch" },
    },
    quirkNotes: [
      "modes are URLs (#agent, #plan, #autopilot); autopilot allows everything",
      "the bash permission title is the model's description, not the command",
      "a rejection ends the turn (end_turn)",
      "gpt-4o offers no edit tool; gpt-5 does",
    ],
    setup(context) {
      const flags = copilotFlags(context);
      const env: Record<string, string> = { COPILOT_AUTO_UPDATE: "false" };
      const model = context.model ?? (context.env.COPILOT_PROVIDER_BASE_URL ? "gpt-5" : undefined);
      if (model) env.COPILOT_MODEL = model;
      return {
        args: flags.args,
        env,
        files: [],
        mode: COPILOT_AGENT_MODE,
        config: { allow_all: "off" },
        agentSettings: [
          { where: "copilot --deny-tool", entries: flags.denied },
          ...(flags.excluded.length ? [{ where: "copilot --excluded-tools", entries: flags.excluded }] : []),
        ],
        warnings: [],
      };
    },
    extract: (facts: PermissionFacts) => extractFacts(facts.toolCall, { workspace: facts.workspace }),
    quirks: {},
  };
}
