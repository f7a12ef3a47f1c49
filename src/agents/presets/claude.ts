// Claude Code through its ACP adapter. It asks through `canUseTool` unless a settings rule decides
// first; in-workspace Read and read-only Bash never ask by default, so the preset writes `ask`
// rules for every tool (and the policy's deny rules) into settings.json in the throwaway HOME,
// and tells the adapter to load user settings only (a repo's own .claude/settings.json could
// otherwise allow tools or add hooks).
import { posix } from "node:path";
import { extractFacts } from "../extract.js";
import { expandBraces, fetchDomains, patternsOf, patternWords, restrictive, unique } from "../rules.js";
import type { AgentPreset, PermissionFacts, SetupContext } from "../types.js";

const ASK_TOOLS = [
  "Bash",
  "Read",
  "Edit",
  "Write",
  "MultiEdit",
  "NotebookEdit",
  "Glob",
  "Grep",
  "WebFetch",
  "WebSearch",
];

function pathRule(tool: string, workspace: string, glob: string): string[] {
  return expandBraces(glob).map((g) => `${tool}(/${posix.join(workspace, g)})`);
}

/** The `permissions.deny` entries the policy compiles to. */
export function claudeDenyRules(context: SetupContext): string[] {
  const { rules, workspace, policy } = context;
  const deny: string[] = [];
  for (const rule of restrictive(rules, "read"))
    if ("globs" in rule.matcher)
      for (const g of rule.matcher.globs) deny.push(...pathRule("Read", workspace, g));
  const editGlobs = [
    ...restrictive(rules, "edit").flatMap((r) => ("globs" in r.matcher ? r.matcher.globs : [])),
    ...policy.protected.map((p) => p.glob),
  ];
  for (const g of editGlobs) deny.push(...pathRule("Edit", workspace, g));
  for (const pattern of [...patternsOf(rules, "deny"), ...patternsOf(rules, "ask")]) {
    const { words, rest } = patternWords(pattern);
    for (const w of words) deny.push(rest ? `Bash(${w.join(" ")}:*)` : `Bash(${w.join(" ")})`);
  }
  const fetchAllowed = rules.default === "allow" || fetchDomains(rules, "allow").length > 0;
  const searchAllowed = rules.byKind
    .get("fetch")
    ?.allow.some((r) => r.matcher.kind === "fetch" && r.matcher.search);
  if (!fetchAllowed) deny.push("WebFetch");
  else for (const d of fetchDomains(rules, "deny")) deny.push(`WebFetch(domain:${d})`);
  if (!searchAllowed && rules.default !== "allow") deny.push("WebSearch");
  return unique(deny);
}

export function claudeSettings(context: SetupContext): Record<string, unknown> {
  return {
    permissions: {
      defaultMode: "default",
      disableBypassPermissionsMode: "disable",
      deny: claudeDenyRules(context),
      ask: ASK_TOOLS,
      allow: [],
      additionalDirectories: [],
    },
    includeCoAuthoredBy: false,
    cleanupPeriodDays: 1,
  };
}

export function claudePreset(): Omit<AgentPreset, "install"> {
  return {
    type: "preset",
    id: "claude",
    title: "Claude Code (ACP adapter)",
    package: { name: "@zed-industries/claude-agent-acp", version: "0.23.1", bin: "claude-agent-acp" },
    args: [],
    envAllow: [
      "ANTHROPIC_API_KEY",
      "ANTHROPIC_AUTH_TOKEN",
      "ANTHROPIC_BASE_URL",
      "ANTHROPIC_MODEL",
      "ANTHROPIC_SMALL_FAST_MODEL",
      "CLAUDE_CODE_OAUTH_TOKEN",
      "CLAUDE_CODE_USE_BEDROCK",
      "CLAUDE_CODE_USE_VERTEX",
      "ANTHROPIC_VERTEX_PROJECT_ID",
      "CLOUD_ML_REGION",
      "AWS_REGION",
      "AWS_ACCESS_KEY_ID",
      "AWS_SECRET_ACCESS_KEY",
      "AWS_SESSION_TOKEN",
    ],
    auth: "ANTHROPIC_API_KEY (or CLAUDE_CODE_OAUTH_TOKEN, Bedrock/Vertex variables); no ACP authenticate call",
    model: "`model` → ANTHROPIC_MODEL",
    askSettings:
      "session/set_mode `default` (checked); settings.json `permissions.ask` on every built-in tool; bypass mode disabled; user settings only (`_meta.claudeCode.options.settingSources`)",
    compiledInto:
      "$HOME/.claude/settings.json `permissions.deny`: Read/Edit paths, WebFetch/WebSearch (Bash prefixes too, but `ask: Bash` takes precedence over them)",
    coverage: {
      read: { asks: "always", compiled: "deny", note: "Read/Glob/Grep ask because of the `ask` rules" },
      search: { asks: "always", compiled: "none", note: "Glob/Grep ask" },
      edit: { asks: "always", compiled: "deny", note: "Edit/Write ask with the tool input as rawInput" },
      execute: {
        asks: "always",
        compiled: "none",
        note: "Bash always asks (`ask: Bash`, so read-only commands too); that rule preempts Bash deny rules in settings, so command denials are answered per request",
      },
      fetch: {
        asks: "always",
        compiled: "deny",
        note: "WebFetch/WebSearch denied unless the policy allows fetch",
      },
    },
    quirkNotes: [
      "the full tool input arrives in a tool_call_update before the permission request (rawInput `{}` first)",
      "the last message chunk and usage_update arrive after the session/prompt response (the client drains)",
      "as root, needs IS_SANDBOX=1",
      "a rejection fails the tool and the turn continues",
    ],
    setup(context) {
      const settings = claudeSettings(context);
      const deny = (settings.permissions as { deny: string[] }).deny;
      const env: Record<string, string> = {
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        DISABLE_AUTOUPDATER: "1",
        DISABLE_TELEMETRY: "1",
        DISABLE_ERROR_REPORTING: "1",
        CLAUDE_CONFIG_DIR: posix.join(context.homeDir, ".claude"),
      };
      if ((context.uid ?? process.getuid?.()) === 0) env.IS_SANDBOX = "1";
      if (context.model) env.ANTHROPIC_MODEL = context.model;
      const file = posix.join(context.homeDir, ".claude", "settings.json");
      return {
        args: [],
        env,
        files: [{ path: file, content: `${JSON.stringify(settings, null, 2)}\n` }],
        mode: "default",
        sessionMeta: { claudeCode: { options: { settingSources: ["user"] } } },
        agentSettings: [
          { where: `${file} permissions.deny`, entries: deny },
          { where: `${file} permissions.ask`, entries: ASK_TOOLS },
        ],
        warnings: [],
      };
    },
    extract: (facts: PermissionFacts) => extractFacts(facts.toolCall, { workspace: facts.workspace }),
    quirks: {},
  };
}
