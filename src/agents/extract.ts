// Facts from one ACP permission request. The facts come from `rawInput` whenever the agent sends
// it: the title only describes the call, and an agent (or a prompt injection steering it) can make
// the title say anything. Agents that send no rawInput (Gemini CLI, Codex's apply_patch) are read
// from their `locations`, diff content, and — for Gemini's shell tool only — the title, which
// Gemini sets to the command itself.
import type { acp } from "../acp/index.js";
import type { FactEvidence, PermissionRequest, ToolKind } from "../policy/index.js";
import { TOOL_KINDS } from "../policy/index.js";

type Json = Record<string, unknown>;

const PATH_KEYS = [
  "file_path",
  "filePath",
  "filepath",
  "path",
  "fileName",
  "filename",
  "notebook_path",
  "absolute_path",
  "target_file",
  "dir_path",
];
const COMMAND_KEYS = ["command", "cmd"];
const CWD_KEYS = ["cwd", "workdir", "dir_path", "directory"];

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function str(value: unknown): string | undefined {
  return typeof value === "string" && value.length > 0 ? value : undefined;
}

function quoteWord(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/** A command as a string; an argv array is unwrapped from `bash -lc X` or quoted word by word. */
export function commandText(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (!Array.isArray(value) || value.length === 0 || !value.every((w) => typeof w === "string"))
    return undefined;
  const words = value as string[];
  const shell = /(^|\/)(ba|z|da)?sh$/.test(words[0]!);
  if (shell && words.length === 3 && /^-l?c$|^-cl$/.test(words[1]!)) return words[2];
  return words.map(quoteWord).join(" ");
}

/** Paths named in a unified diff (`--- a/x`, `+++ b/x`) or an apply_patch envelope. */
export function pathsInPatch(text: string, workspace?: string): string[] {
  const out = new Set<string>();
  for (const line of text.split("\n")) {
    const unified = /^(?:\+\+\+|---) (?:[ab]\/)?(.+?)\s*$/.exec(line);
    if (unified && unified[1] !== "/dev/null") {
      // Copilot writes absolute paths as `a/tmp/ws/x`: the workspace prefix gives them away.
      const path = unified[1]!;
      const absolute = `/${path}`;
      out.add(workspace && absolute.startsWith(`${workspace.replace(/\/+$/, "")}/`) ? absolute : path);
    }
    const envelope = /^\*\*\* (?:Add|Update|Delete) File: (.+?)\s*$/.exec(line);
    if (envelope) out.add(envelope[1]!);
    const moved = /^\*\*\* Move to: (.+?)\s*$/.exec(line);
    if (moved) out.add(moved[1]!);
  }
  return [...out];
}

function rawPaths(raw: Json, workspace?: string): string[] {
  const out: string[] = [];
  for (const key of PATH_KEYS) {
    const value = raw[key];
    if (typeof value === "string" && value.length > 0) out.push(value);
    else if (Array.isArray(value)) for (const v of value) if (typeof v === "string") out.push(v);
  }
  for (const key of ["paths", "file_paths"]) {
    const value = raw[key];
    if (Array.isArray(value)) for (const v of value) if (typeof v === "string") out.push(v);
  }
  for (const key of ["diff", "patch", "input"]) {
    const value = raw[key];
    if (typeof value === "string") out.push(...pathsInPatch(value, workspace));
  }
  return [...new Set(out)];
}

function locationPaths(toolCall: acp.ToolCallUpdate): string[] {
  return (toolCall.locations ?? []).map((l) => l.path).filter((p) => typeof p === "string" && p !== "");
}

function diffPaths(toolCall: acp.ToolCallUpdate): string[] {
  const out: string[] = [];
  for (const item of toolCall.content ?? []) if (item.type === "diff" && item.path) out.push(item.path);
  return out;
}

function asKind(value: unknown): ToolKind | undefined {
  return typeof value === "string" && (TOOL_KINDS as readonly string[]).includes(value)
    ? (value as ToolKind)
    : undefined;
}

function toolNameOf(toolCall: acp.ToolCallUpdate): string | undefined {
  const meta = toolCall._meta;
  if (isObject(meta)) {
    for (const value of Object.values(meta))
      if (isObject(value) && typeof value.toolName === "string") return value.toolName;
  }
  return undefined;
}

/** Facts from a tool call that carries `rawInput` (every agent but Gemini, and Codex's patches). */
export function factsFromRawInput(
  toolCall: acp.ToolCallUpdate,
  raw: Json,
  workspace?: string,
): PermissionRequest {
  const evidence: FactEvidence = { rawInputPresent: true, source: "raw-input" };
  const command = COMMAND_KEYS.map((k) => commandText(raw[k])).find((c) => c !== undefined);
  const kind = asKind(toolCall.kind) ?? (command !== undefined ? "execute" : "other");
  const cwd = CWD_KEYS.map((k) => str(raw[k])).find((c) => c !== undefined);
  switch (kind) {
    case "execute":
      return { kind, command: command ?? "", ...(cwd ? { cwd } : {}), evidence };
    case "read":
    case "edit":
    case "delete":
      // Codex runs `cat x` as a read with a command; judge it as the command it is.
      if (command !== undefined && rawPaths(raw, workspace).length === 0)
        return { kind: "execute", command, ...(cwd ? { cwd } : {}), evidence };
      return { kind, paths: rawPaths(raw, workspace), evidence };
    case "move": {
      const from = str(raw.source) ?? str(raw.from) ?? str(raw.source_path);
      const to = str(raw.destination) ?? str(raw.to) ?? str(raw.destination_path);
      return { kind, paths: from && to ? [from, to] : rawPaths(raw, workspace), evidence };
    }
    case "search": {
      const paths = rawPaths(raw, workspace);
      const query = str(raw.pattern) ?? str(raw.query);
      return { kind, ...(paths.length ? { paths } : {}), ...(query ? { query } : {}), evidence };
    }
    case "fetch": {
      const url = str(raw.url);
      const query = str(raw.query);
      return { kind, ...(url ? { url } : {}), ...(query ? { query } : {}), evidence };
    }
    case "think":
      return { kind, evidence };
    case "switch_mode": {
      const mode = str(raw.mode) ?? str(raw.modeId);
      return { kind, ...(mode ? { mode } : {}), evidence };
    }
    case "other": {
      const tool = toolNameOf(toolCall);
      return { kind, ...(tool ? { tool } : {}), evidence };
    }
  }
}

/**
 * Facts from a tool call without `rawInput`: locations and diff paths; for execute, the title
 * (only for agents whose title is the command, `titleIsCommand`).
 */
export function factsWithoutRawInput(
  toolCall: acp.ToolCallUpdate,
  options: { titleIsCommand: boolean },
): PermissionRequest {
  const kind = asKind(toolCall.kind) ?? "other";
  const paths = [...new Set([...locationPaths(toolCall), ...diffPaths(toolCall)])];
  const source: FactEvidence["source"] =
    locationPaths(toolCall).length > 0
      ? "locations"
      : diffPaths(toolCall).length > 0
        ? "diff-content"
        : "title";
  const evidence: FactEvidence = { rawInputPresent: false, source };
  switch (kind) {
    case "execute": {
      if (!options.titleIsCommand || !toolCall.title)
        return { kind, command: "", evidence: { rawInputPresent: false, source: "title" } };
      const cwd = explanationCwd(toolCall);
      return {
        kind,
        command: toolCall.title,
        ...(cwd ? { cwd } : {}),
        evidence: { rawInputPresent: false, source: "title" },
      };
    }
    case "read":
    case "edit":
    case "delete":
      return { kind, paths, evidence };
    case "move":
      return { kind, paths, evidence };
    case "search":
      return { kind, ...(paths.length ? { paths } : {}), evidence };
    case "fetch":
      return { kind, evidence };
    case "think":
      return { kind, evidence };
    case "switch_mode":
      return { kind, evidence };
    case "other": {
      const tool = toolNameOf(toolCall);
      return { kind, ...(tool ? { tool } : {}), evidence };
    }
  }
}

/** Gemini's shell explanation: `[in DIR]` (the model chose a directory) or `[current working directory …]`. */
function explanationCwd(toolCall: acp.ToolCallUpdate): string | undefined {
  for (const item of toolCall.content ?? []) {
    if (item.type !== "content" || item.content.type !== "text") continue;
    const match = /^\[in (.+?)\](?: \(|$| \[)/.exec(item.content.text);
    if (match) return match[1];
  }
  return undefined;
}

/** The default extraction: rawInput when the agent sent any, otherwise locations and diffs only. */
export interface ExtractOptions {
  /** The agent sets an execute call's title to the command itself (Gemini CLI). */
  titleIsCommand?: boolean;
  /** Absolute workspace path: recognises absolute paths written without their leading '/' in diffs. */
  workspace?: string;
}

export function extractFacts(toolCall: acp.ToolCallUpdate, options: ExtractOptions = {}): PermissionRequest {
  const raw = toolCall.rawInput;
  if (isObject(raw)) return factsFromRawInput(toolCall, raw, options.workspace);
  if (raw !== undefined && raw !== null) {
    const command = commandText(raw);
    if (command !== undefined)
      return { kind: "execute", command, evidence: { rawInputPresent: true, source: "raw-input" } };
  }
  return factsWithoutRawInput(toolCall, { titleIsCommand: options.titleIsCommand === true });
}
