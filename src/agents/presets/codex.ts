// Codex through its ACP adapter. Its default `agent` mode sends approvals to a reviewer model,
// never to the client, so the preset switches to `read-only` (apply_patch asks; commands run in a
// read-only, offline sandbox) and writes exec-policy rules: the policy's denied commands are
// `forbidden`, its allowed commands and common file readers `prompt` (they ask us).
import { posix } from "node:path";
import { extractFacts } from "../extract.js";
import { patternsOf, patternWords, restrictive } from "../rules.js";
import type { AgentPreset, PermissionFacts, SetupContext } from "../types.js";

export const CODEX_MODE = "read-only";
/** Commands that print files: they ask when the policy restricts reads. */
const FILE_READERS = [
  "cat",
  "head",
  "tail",
  "less",
  "more",
  "nl",
  "sed",
  "awk",
  "grep",
  "rg",
  "od",
  "xxd",
  "base64",
  "strings",
];

function starlarkList(words: readonly string[]): string {
  return `[${words.map((w) => JSON.stringify(w)).join(", ")}]`;
}

export function codexRules(context: SetupContext): { text: string; forbidden: string[]; prompt: string[] } {
  const { rules } = context;
  const forbidden = new Set<string>();
  const prompt = new Set<string>();
  const lines = ["# Written by acp-warden from the repository's agent policy. Do not edit."];
  for (const pattern of [...patternsOf(rules, "deny"), ...patternsOf(rules, "ask")])
    for (const words of patternWords(pattern).words) forbidden.add(JSON.stringify(words));
  for (const pattern of patternsOf(rules, "allow"))
    for (const words of patternWords(pattern).words) prompt.add(JSON.stringify(words));
  if (restrictive(rules, "read").length > 0)
    for (const reader of FILE_READERS) prompt.add(JSON.stringify([reader]));
  for (const key of forbidden) {
    lines.push(
      `prefix_rule(pattern = ${starlarkList(JSON.parse(key) as string[])}, decision = "forbidden", justification = "denied by the repository's agent policy")`,
    );
  }
  for (const key of prompt) {
    if (forbidden.has(key)) continue;
    lines.push(`prefix_rule(pattern = ${starlarkList(JSON.parse(key) as string[])}, decision = "prompt")`);
  }
  const words = (set: Set<string>) => [...set].map((k) => (JSON.parse(k) as string[]).join(" "));
  return { text: `${lines.join("\n")}\n`, forbidden: words(forbidden), prompt: words(prompt) };
}

export function codexConfig(context: SetupContext): Record<string, unknown> {
  const baseUrl = context.env.OPENAI_BASE_URL;
  const model = context.model ?? (baseUrl ? "gpt-5.5" : undefined);
  return {
    ...(model ? { model } : {}),
    ...(baseUrl
      ? {
          model_provider: "acp-warden",
          model_providers: {
            "acp-warden": {
              name: "acp-warden",
              base_url: baseUrl,
              wire_api: "responses",
              env_key: "OPENAI_API_KEY",
            },
          },
        }
      : {}),
  };
}

export function codexPreset(): Omit<AgentPreset, "install"> {
  return {
    type: "preset",
    id: "codex",
    title: "Codex (ACP adapter)",
    package: { name: "@agentclientprotocol/codex-acp", version: "2.6.0", bin: "codex-acp" },
    args: [],
    envAllow: ["OPENAI_API_KEY", "CODEX_API_KEY", "OPENAI_BASE_URL"],
    auth: "OPENAI_API_KEY (api-key method, NO_BROWSER=1); OPENAI_BASE_URL adds a Responses provider",
    model: "`model` → CODEX_CONFIG `model` (a model of Codex's catalogue: unknown ids get no apply_patch)",
    askSettings:
      "session/set_mode `read-only` (checked; INITIAL_AGENT_MODE too): apply_patch asks; exec rules with `prompt`",
    compiledInto:
      "$CODEX_HOME/rules/default.rules: `forbidden` prefix rules for denied commands, `prompt` for allowed commands and, when reads are restricted, file readers (cat, head, grep…)",
    coverage: {
      read: {
        asks: "partly",
        compiled: "deny",
        note: "reads are shell commands: common file readers ask when reads are restricted; any other program runs unasked in the read-only sandbox",
      },
      search: {
        asks: "partly",
        compiled: "none",
        note: "grep/rg ask when reads are restricted; others run sandboxed",
      },
      edit: {
        asks: "always",
        compiled: "none",
        note: "apply_patch asks (no rawInput: facts from locations); shell writes fail in the read-only sandbox",
      },
      execute: {
        asks: "partly",
        compiled: "deny",
        note: "denied prefixes are forbidden, allowed ones ask; other commands run unasked in the read-only, network-less sandbox",
      },
      fetch: { asks: "never", compiled: "none", removed: true, note: "no network inside the sandbox" },
    },
    quirkNotes: [
      "the default `agent` mode sends approvals to a reviewer model, never to the client",
      "only one reject option (`cancel`), and it aborts the turn (stopReason cancelled)",
      "approval_policy in CODEX_CONFIG is rejected; exec-policy rules are the way to make commands ask",
      "terminal output streams in `_meta.terminal_output_delta` (non-standard)",
      "a title call arrives after the prompt response",
    ],
    setup(context) {
      const codexHome = posix.join(context.homeDir, ".codex");
      const rulesPath = posix.join(codexHome, "rules", "default.rules");
      const compiled = codexRules(context);
      return {
        args: [],
        env: {
          CODEX_HOME: codexHome,
          NO_BROWSER: "1",
          INITIAL_AGENT_MODE: CODEX_MODE,
          CODEX_CONFIG: JSON.stringify(codexConfig(context)),
        },
        files: [{ path: rulesPath, content: compiled.text }],
        mode: CODEX_MODE,
        agentSettings: [
          { where: `${rulesPath} forbidden`, entries: compiled.forbidden },
          { where: `${rulesPath} prompt`, entries: compiled.prompt },
        ],
        warnings: [],
      };
    },
    extract: (facts: PermissionFacts) => extractFacts(facts.toolCall, { workspace: facts.workspace }),
    quirks: {
      // Prefer any reject that does not abort; Codex 2.6 offers only `cancel`, which does.
      pickRejectOption: (options) =>
        options.find((o) => o.kind === "reject_once" && !/cancel|abort/i.test(`${o.optionId} ${o.name}`)),
    },
  };
}
