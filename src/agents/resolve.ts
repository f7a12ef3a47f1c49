// The `agent` setting → a preset, or a command line launched as is.
import { claudePreset } from "./presets/claude.js";
import { codexPreset } from "./presets/codex.js";
import { copilotPreset } from "./presets/copilot.js";
import { geminiPreset } from "./presets/gemini.js";
import { opencodePreset } from "./presets/opencode.js";
import type { AgentPreset, CommandAgent, Install, PresetId, ResolvedAgent } from "./types.js";
import { PRESET_IDS } from "./types.js";

const FACTORIES: Record<PresetId, () => Omit<AgentPreset, "install">> = {
  claude: claudePreset,
  gemini: geminiPreset,
  copilot: copilotPreset,
  codex: codexPreset,
  opencode: opencodePreset,
};

export interface ResolveOptions {
  /** Launch installed binaries from this directory instead of `npx -y <pkg>@<version>`. */
  binDir?: string;
}

export function isPresetId(value: string): value is PresetId {
  return (PRESET_IDS as readonly string[]).includes(value);
}

export function presetFor(id: PresetId, options: ResolveOptions = {}): AgentPreset {
  const install: Install = options.binDir ? { kind: "bin", dir: options.binDir } : { kind: "npx" };
  return { ...FACTORIES[id](), install };
}

/** Every preset, in table order. */
export function allPresets(options: ResolveOptions = {}): AgentPreset[] {
  return PRESET_IDS.map((id) => presetFor(id, options));
}

/** Splits a command line into words (single and double quotes, backslash escapes; no expansion). */
export function splitCommandLine(line: string): string[] {
  const words: string[] = [];
  let current = "";
  let inWord = false;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === quote) quote = null;
      else if (c === "\\" && quote === '"' && i + 1 < line.length) current += line[++i];
      else current += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
    } else if (c === "\\" && i + 1 < line.length) {
      current += line[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(current);
      current = "";
      inWord = false;
    } else {
      current += c;
      inWord = true;
    }
  }
  if (quote) throw new Error(`unbalanced ${quote} in the agent command line: ${line}`);
  if (inWord) words.push(current);
  return words;
}

/** `claude`, `gemini`, `copilot`, `codex`, `opencode`, or any command line (launched as is). */
export function resolveAgent(setting: string, options: ResolveOptions = {}): ResolvedAgent {
  const trimmed = setting.trim();
  if (isPresetId(trimmed)) return presetFor(trimmed, options);
  const words = splitCommandLine(trimmed);
  if (words.length === 0) throw new Error("the agent setting is empty: name a preset or a command line");
  const command: CommandAgent = {
    type: "command",
    id: "command",
    title: `command \`${trimmed}\``,
    command: words[0]!,
    args: words.slice(1),
  };
  return command;
}
