// Gemini CLI (`gemini --acp`). Its permission requests carry no rawInput: facts come from
// locations, diff content and — for the shell tool, whose title is the command itself — the title.
// Reads and read-only shell commands never ask by default; a user-tier policy file (which beats
// the defaults and the workspace's own policies) makes them ask and carries the policy's denials.
import { posix } from "node:path";
import { extractFacts } from "../extract.js";
import { fetchDomains, patternsOf, patternWords, unique } from "../rules.js";
import type { AgentPreset, PermissionFacts, SetupContext } from "../types.js";

const ASK_TOOLS = [
  "read_file",
  "read_many_files",
  "list_directory",
  "glob",
  "grep_search",
  "run_shell_command",
  "replace",
  "write_file",
  "web_fetch",
  "google_web_search",
];

function tomlString(value: string): string {
  return JSON.stringify(value);
}

export function geminiPolicyToml(context: SetupContext): { text: string; entries: string[] } {
  const { rules } = context;
  const lines = ["# Written by acp-warden from the repository's agent policy. Do not edit."];
  const entries: string[] = [];
  lines.push(
    "",
    "[[rule]]",
    `toolName = [${ASK_TOOLS.map(tomlString).join(", ")}]`,
    'decision = "ask_user"',
    "priority = 100",
  );
  entries.push(`ask_user: ${ASK_TOOLS.join(", ")}`);
  const prefixes: string[] = [];
  for (const pattern of [...patternsOf(rules, "deny"), ...patternsOf(rules, "ask")]) {
    for (const words of patternWords(pattern).words) prefixes.push(words.join(" "));
  }
  if (prefixes.length > 0) {
    lines.push(
      "",
      "[[rule]]",
      'toolName = "run_shell_command"',
      `commandPrefix = [${unique(prefixes).map(tomlString).join(", ")}]`,
      'decision = "deny"',
      "priority = 900",
      `deny_message = ${tomlString("denied by the repository's agent policy")}`,
    );
    entries.push(`deny run_shell_command: ${unique(prefixes).join(", ")}`);
  }
  const fetchAllowed = rules.default === "allow" || fetchDomains(rules, "allow").length > 0;
  if (!fetchAllowed) {
    lines.push(
      "",
      "[[rule]]",
      'toolName = ["web_fetch", "google_web_search"]',
      'decision = "deny"',
      "priority = 900",
    );
    entries.push("deny web_fetch, google_web_search");
  }
  return { text: `${lines.join("\n")}\n`, entries };
}

export function geminiSettings(context: SetupContext): Record<string, unknown> {
  const vertex = context.env.GOOGLE_GENAI_USE_VERTEXAI === "true";
  return {
    security: {
      auth: { selectedType: vertex ? "vertex-ai" : "gemini-api-key" },
      // The checkout is not a trusted folder: its own .gemini settings, policies and MCP servers stay off.
      folderTrust: { enabled: true },
      enablePermanentToolApproval: false,
    },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    general: { disableAutoUpdate: true, disableUpdateNag: true },
    ...(context.model ? { model: { name: context.model } } : {}),
  };
}

export function geminiPreset(): Omit<AgentPreset, "install"> {
  return {
    type: "preset",
    id: "gemini",
    title: "Gemini CLI",
    package: { name: "@google/gemini-cli", version: "0.61.0", bin: "gemini" },
    args: ["--acp"],
    envAllow: [
      "GEMINI_API_KEY",
      "GOOGLE_API_KEY",
      "GOOGLE_GEMINI_BASE_URL",
      "GOOGLE_GENAI_USE_VERTEXAI",
      "GOOGLE_CLOUD_PROJECT",
      "GOOGLE_CLOUD_LOCATION",
      "GOOGLE_APPLICATION_CREDENTIALS",
    ],
    auth: "GEMINI_API_KEY with settings `security.auth.selectedType: gemini-api-key` (or Vertex); no ACP authenticate call",
    model: "`model` → settings.json `model.name`",
    askSettings:
      "session/set_mode `default` (checked); user-tier policy rules `ask_user` for read, search, shell, edit and web tools; folder trust on (the checkout is untrusted)",
    compiledInto:
      "$HOME/.gemini/policies/acp-warden.toml: `ask_user` for every file/shell/web tool, `deny` for the policy's denied command prefixes and web tools",
    coverage: {
      read: {
        asks: "always",
        compiled: "none",
        note: "read_file asks (user policy rule); facts from `locations`",
      },
      search: { asks: "always", compiled: "none", note: "glob/grep_search/list_directory ask" },
      edit: {
        asks: "always",
        compiled: "none",
        note: "replace/write_file ask; facts from locations and the diff; writes go through fs/write_text_file",
      },
      execute: {
        asks: "always",
        compiled: "deny",
        note: "run_shell_command asks; no rawInput, the title is the command",
      },
      fetch: { asks: "always", compiled: "deny", note: "web tools denied unless the policy allows fetch" },
    },
    quirkNotes: [
      "no rawInput in permission requests (title, locations, diff content only)",
      "permission option ids are proceed_once/proceed_always/cancel: chosen by kind",
      "creating a file needs fs/read_text_file of a missing file to return empty content",
      "an extra structured-output router model call before the first turn",
    ],
    setup(context) {
      const dir = posix.join(context.homeDir, ".gemini");
      const toml = geminiPolicyToml(context);
      const settingsPath = posix.join(dir, "settings.json");
      const policyPath = posix.join(dir, "policies", "acp-warden.toml");
      return {
        args: ["--acp"],
        env: {},
        files: [
          { path: settingsPath, content: `${JSON.stringify(geminiSettings(context), null, 2)}\n` },
          { path: policyPath, content: toml.text },
          // No trusted folders: the checkout's own .gemini configuration is ignored.
          { path: posix.join(dir, "trustedFolders.json"), content: "{}\n" },
        ],
        mode: "default",
        agentSettings: [{ where: policyPath, entries: toml.entries }],
        warnings: [],
      };
    },
    extract: (facts: PermissionFacts) =>
      extractFacts(facts.toolCall, { titleIsCommand: true, workspace: facts.workspace }),
    quirks: { missingFileRead: "empty" },
  };
}
