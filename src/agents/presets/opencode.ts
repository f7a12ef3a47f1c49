// opencode (`opencode acp`). Under its default config nothing asks. The preset writes a
// `permission` block into OPENCODE_CONFIG_CONTENT: edits and commands ask, the policy's denied
// paths and commands are `deny`. Its read permission requests name no file (rawInput `{}`), so
// reads cannot be judged per request: the policy's read rules are compiled into the config whole.
import { posix } from "node:path";
import type { EffectiveRules, ToolKind } from "../../policy/index.js";
import { extractFacts } from "../extract.js";
import {
  allowsEverything,
  expandBraces,
  fetchDomains,
  globsOf,
  patternsOf,
  patternWords,
  restrictive,
} from "../rules.js";
import type { AgentPreset, PermissionFacts, SetupContext } from "../types.js";

type Action = "allow" | "ask" | "deny";

/**
 * A policy glob as opencode wildcards (`*` = any characters, `/` included). `exact` is false when
 * the wildcard matches more paths than the glob: fine for a deny, not for an allow.
 */
export function toWildcard(glob: string): { wildcards: string[]; exact: boolean } {
  const wildcards: string[] = [];
  let exact = true;
  for (const g of expandBraces(glob)) {
    if (g === "**") {
      wildcards.push("*");
      continue;
    }
    if (/^[^*?[\]{}]*\/\*\*$/.test(g)) {
      wildcards.push(`${g.slice(0, -3)}/*`);
      continue;
    }
    if (/[*?[\]]/.test(g)) exact = false;
    wildcards.push(
      g
        .replace(/\*\*\/|\*\*/g, "*")
        .replace(/\*+/g, "*")
        .replace(/\[[^\]]*\]/g, "?"),
    );
  }
  return { wildcards, exact };
}

function pathPermission(
  rules: EffectiveRules,
  kind: ToolKind,
  base: Action,
  options: { compileAllows: boolean; extraDeny?: readonly string[] },
) {
  const out: Record<string, Action> = { "*": base };
  // Allows are compiled only where opencode's request would not say what it touches (reads).
  if (base !== "allow" && options.compileAllows)
    for (const glob of globsOf(rules, kind, "allow")) {
      const { wildcards, exact } = toWildcard(glob);
      if (exact) for (const w of wildcards) out[w] = "allow";
    }
  // Denials last: opencode applies the last matching pattern.
  for (const glob of [
    ...restrictive(rules, kind).flatMap((r) => ("globs" in r.matcher ? r.matcher.globs : [])),
    ...(options.extraDeny ?? []),
  ]) {
    for (const w of toWildcard(glob).wildcards) {
      delete out[w];
      out[w] = "deny";
    }
  }
  return out;
}

export function opencodePermission(context: SetupContext): Record<string, Action | Record<string, Action>> {
  const { rules, policy } = context;
  const bash: Record<string, Action> = { "*": "ask" };
  for (const pattern of [...patternsOf(rules, "deny"), ...patternsOf(rules, "ask")]) {
    const { words, rest } = patternWords(pattern);
    for (const w of words) bash[rest ? `${w.join(" ")} *` : w.join(" ")] = "deny";
  }
  const readBase: Action = allowsEverything(rules, "read")
    ? "allow"
    : rules.default === "allow"
      ? "allow"
      : "deny";
  const searchBase: Action = allowsEverything(rules, "search") ? "allow" : "ask";
  const fetchAllowed = rules.default === "allow" || fetchDomains(rules, "allow").length > 0;
  return {
    "*": "ask",
    read: pathPermission(rules, "read", readBase, { compileAllows: true }),
    edit: pathPermission(rules, "edit", "ask", {
      compileAllows: false,
      extraDeny: policy.protected.map((p) => p.glob),
    }),
    glob: searchBase,
    grep: searchBase,
    list: searchBase,
    bash,
    webfetch: fetchAllowed ? "ask" : "deny",
    websearch: "deny",
    external_directory: "deny",
    task: "deny",
    doom_loop: "deny",
    question: "deny",
    skill: "deny",
    todowrite: "allow",
  };
}

export function opencodeConfig(context: SetupContext): Record<string, unknown> {
  const baseUrl = context.env.OPENAI_BASE_URL;
  const model = context.model ?? (baseUrl ? "acp-warden/default" : undefined);
  const config: Record<string, unknown> = {
    $schema: "https://opencode.ai/config.json",
    autoupdate: false,
    share: "disabled",
    permission: opencodePermission(context),
  };
  if (model) config.model = model;
  if (baseUrl) {
    const modelId = (model ?? "acp-warden/default").replace(/^acp-warden\//, "");
    config.provider = {
      "acp-warden": {
        npm: "@ai-sdk/openai-compatible",
        name: "acp-warden",
        options: { baseURL: baseUrl, apiKey: context.env.OPENAI_API_KEY ?? "x" },
        models: { [modelId]: { name: modelId, tool_call: true } },
      },
    };
  }
  return config;
}

export function opencodePreset(): Omit<AgentPreset, "install"> {
  return {
    type: "preset",
    id: "opencode",
    title: "opencode",
    package: { name: "opencode-ai", version: "1.18.33", bin: "opencode" },
    args: ["acp"],
    envAllow: [
      "OPENAI_API_KEY",
      "OPENAI_BASE_URL",
      "ANTHROPIC_API_KEY",
      "GEMINI_API_KEY",
      "OPENROUTER_API_KEY",
    ],
    auth: "the provider's API key variable (no ACP authenticate call); OPENAI_BASE_URL adds an OpenAI-compatible provider",
    model: "`model` (provider/model) → OPENCODE_CONFIG_CONTENT `model`",
    askSettings:
      "OPENCODE_CONFIG_CONTENT `permission`: ask for edit and bash and any other tool (opencode has no ACP modes; the config cannot be checked over ACP)",
    compiledInto:
      "OPENCODE_CONFIG_CONTENT `permission`: read rules whole (allow/deny by path), edit and bash ask with the policy's denials, web and subagent tools denied",
    coverage: {
      read: {
        asks: "never",
        compiled: "all",
        note: "read requests name no file, so the policy's read rules are compiled into opencode's config and applied by opencode",
      },
      search: {
        asks: "partly",
        compiled: "none",
        note: "glob/grep/list allowed when the policy allows searching everything, otherwise ask",
      },
      edit: {
        asks: "always",
        compiled: "deny",
        note: "edit asks with rawInput {filepath, diff}; writes go through fs/write_text_file",
      },
      execute: { asks: "always", compiled: "deny", note: "bash asks with rawInput {command}" },
      fetch: {
        asks: "always",
        compiled: "deny",
        note: "webfetch denied unless the policy allows fetch; websearch denied",
      },
    },
    quirkNotes: [
      "no ACP modes: the permission config is the only switch, and ACP cannot confirm it took",
      "read permission requests carry rawInput `{}` and no locations",
      "a rejection ends the turn (end_turn)",
      "installs npm packages at startup unless OPENCODE_PURE / default plugins off / a dead registry",
    ],
    setup(context) {
      const env: Record<string, string> = {
        OPENCODE_CONFIG_CONTENT: JSON.stringify(opencodeConfig(context)),
        OPENCODE_DISABLE_MODELS_FETCH: "true",
        OPENCODE_DISABLE_AUTOUPDATE: "true",
        OPENCODE_DISABLE_SHARE: "true",
        OPENCODE_PURE: "1",
        OPENCODE_DISABLE_DEFAULT_PLUGINS: "true",
        OPENCODE_DISABLE_LSP_DOWNLOAD: "true",
        XDG_CONFIG_HOME: posix.join(context.homeDir, ".config"),
        XDG_DATA_HOME: posix.join(context.homeDir, ".local", "share"),
        XDG_CACHE_HOME: posix.join(context.homeDir, ".cache"),
      };
      const permission = opencodePermission(context);
      return {
        args: ["acp"],
        env,
        files: [],
        agentSettings: [
          {
            where: "OPENCODE_CONFIG_CONTENT permission",
            entries: Object.entries(permission).map(([k, v]) => `${k}: ${JSON.stringify(v)}`),
          },
        ],
        warnings: [
          "opencode has no ACP session modes: its permission config cannot be confirmed over ACP (it is passed in OPENCODE_CONFIG_CONTENT)",
        ],
      };
    },
    extract: (facts: PermissionFacts) => extractFacts(facts.toolCall, { workspace: facts.workspace }),
    quirks: {},
  };
}
