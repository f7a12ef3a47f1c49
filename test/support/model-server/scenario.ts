// Neutral scenario steps and their translation into the tool calls a requesting agent offers.
//
// A step says what the model "wants" (read a file, edit it, run a command, answer); which tool
// name and argument shape carry that intent depends on the agent, so the translation inspects
// the tools the agent declared in its request (names and JSON schemas) and fills the arguments
// by property name.

import path from "node:path";

export type ScenarioStep =
  | { tool: "read"; path: string }
  | { tool: "write"; path: string; content: string }
  | { tool: "edit"; path: string; old: string; new: string }
  | { tool: "shell"; command: string }
  | { text: string };

export type ToolStep = Exclude<ScenarioStep, { text: string }>;

export type JsonObject = { [key: string]: unknown };

/** A tool as declared by the agent, normalised across wire formats. */
export interface OfferedTool {
  name: string;
  /** `custom` = OpenAI Responses free-form tool (takes a raw string input, e.g. Codex apply_patch). */
  kind: "function" | "custom";
  schema: JsonObject | undefined;
}

/** The concrete call the server answers with. */
export interface PlannedCall {
  name: string;
  kind: "function" | "custom";
  /** JSON arguments for function tools. */
  args: JsonObject;
  /** Raw input for custom tools. */
  input?: string;
  /** The neutral step this call implements (after any fallback, e.g. read → shell `cat`). */
  intent: ToolStep["tool"];
}

export function isToolStep(step: ScenarioStep): step is ToolStep {
  return "tool" in step;
}

/** Lower-case, without an MCP-style prefix (`mcp__acp__Read` → `read`). */
export function normalizeToolName(name: string): string {
  const i = name.lastIndexOf("__");
  return (i >= 0 ? name.slice(i + 2) : name).toLowerCase();
}

const CANDIDATES: Record<ToolStep["tool"], string[]> = {
  read: ["read", "read_file", "view", "readfile", "read_text_file"],
  write: ["write", "write_file", "create", "create_file", "writefile"],
  edit: ["edit", "replace", "str_replace", "edit_file", "str_replace_editor", "str_replace_based_edit_tool"],
  shell: ["bash", "run_shell_command", "shell_command", "shell", "exec_command", "run_in_terminal"],
};

function findTool(tools: readonly OfferedTool[], intent: ToolStep["tool"]): OfferedTool | undefined {
  for (const candidate of CANDIDATES[intent]) {
    const hit = tools.find((t) => normalizeToolName(t.name) === candidate);
    if (hit) return hit;
  }
  return undefined;
}

function findApplyPatch(tools: readonly OfferedTool[]): OfferedTool | undefined {
  return tools.find((t) => normalizeToolName(t.name) === "apply_patch");
}

export interface PlanContext {
  /** Workspace directory; relative step paths are made absolute against it when set. */
  workspace: string | undefined;
}

function absolutePath(p: string, ctx: PlanContext): string {
  return ctx.workspace && !path.isAbsolute(p) ? path.join(ctx.workspace, p) : p;
}

function shQuote(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

/**
 * Picks the offered tool for a step and builds its arguments. Returns undefined when the agent
 * offers nothing that can carry the step (the caller then answers with text).
 */
export function planToolCall(
  step: ToolStep,
  tools: readonly OfferedTool[],
  ctx: PlanContext,
): PlannedCall | undefined {
  const direct = findTool(tools, step.tool);
  if (direct) return fromSchema(direct, step, step, ctx);
  const patchTool = findApplyPatch(tools);
  if (step.tool === "read") {
    const shell = findTool(tools, "shell");
    if (shell) {
      const asShell: ToolStep = { tool: "shell", command: `cat ${shQuote(step.path)}` };
      return fromSchema(shell, asShell, step, ctx);
    }
  }
  if ((step.tool === "edit" || step.tool === "write") && patchTool) {
    const patch = applyPatchText(step);
    if (patchTool.kind === "custom")
      return { name: patchTool.name, kind: "custom", args: {}, input: patch, intent: step.tool };
    const props = properties(patchTool.schema);
    const key = Object.keys(props).find((k) => /^(input|patch)$/i.test(k)) ?? "input";
    return { name: patchTool.name, kind: "function", args: { [key]: patch }, intent: step.tool };
  }
  if (step.tool === "write") {
    const shell = findTool(tools, "shell");
    if (shell) {
      const cmd = `printf '%s' ${shQuote(step.content)} > ${shQuote(step.path)}`;
      return fromSchema(shell, { tool: "shell", command: cmd }, step, ctx);
    }
  }
  return undefined;
}

/** Codex's apply_patch envelope. Paths stay as written in the step (relative to the agent's cwd). */
export function applyPatchText(step: Extract<ToolStep, { tool: "edit" | "write" }>): string {
  const lines = (s: string, prefix: string) =>
    s
      .replace(/\n$/, "")
      .split("\n")
      .map((l) => `${prefix}${l}`);
  const body =
    step.tool === "write"
      ? [`*** Add File: ${step.path}`, ...lines(step.content, "+")]
      : [`*** Update File: ${step.path}`, "@@", ...lines(step.old, "-"), ...lines(step.new, "+")];
  return ["*** Begin Patch", ...body, "*** End Patch", ""].join("\n");
}

function properties(schema: JsonObject | undefined): Record<string, JsonObject> {
  const props = schema?.properties;
  if (!props || typeof props !== "object") return {};
  const out: Record<string, JsonObject> = {};
  for (const [k, v] of Object.entries(props as Record<string, unknown>)) {
    out[k] = v && typeof v === "object" ? (v as JsonObject) : {};
  }
  return out;
}

function required(schema: JsonObject | undefined): string[] {
  const r = schema?.required;
  return Array.isArray(r) ? r.filter((x): x is string => typeof x === "string") : [];
}

function typeOf(prop: JsonObject): string | undefined {
  const t = prop.type;
  if (typeof t === "string") return t.toLowerCase();
  if (Array.isArray(t)) {
    const first = t.find((x) => typeof x === "string" && x !== "null");
    return typeof first === "string" ? first.toLowerCase() : undefined;
  }
  return undefined;
}

const key = (k: string) => k.toLowerCase().replaceAll(/[_-]/g, "");
const PATH_KEYS = new Set(["filepath", "path", "absolutepath", "file", "filename", "targetfile"]);
const CONTENT_KEYS = new Set(["content", "contents", "filetext", "newcontent"]);
const OLD_KEYS = new Set(["oldstring", "oldstr", "old", "oldtext"]);
const NEW_KEYS = new Set(["newstring", "newstr", "new", "newtext"]);
const COMMAND_KEYS = new Set(["command", "cmd", "script"]);
const PROSE_KEYS = new Set([
  "description",
  "instruction",
  "explanation",
  "reason",
  "summary",
  "title",
  "justification",
]);
const DIR_KEYS = new Set(["workdir", "cwd", "directory", "dir", "dirpath", "workingdirectory"]);

/** An editor-style tool with a `command` enum (`view`/`create`/`str_replace`). */
const EDITOR_COMMAND: Record<ToolStep["tool"], string[]> = {
  read: ["view", "read"],
  write: ["create", "write"],
  edit: ["str_replace", "edit", "replace"],
  shell: [],
};

function fromSchema(tool: OfferedTool, step: ToolStep, original: ToolStep, ctx: PlanContext): PlannedCall {
  const props = properties(tool.schema);
  const req = new Set(required(tool.schema));
  const args: JsonObject = {};
  for (const [name, prop] of Object.entries(props)) {
    const k = key(name);
    const type = typeOf(prop);
    const value = ((): unknown => {
      if (step.tool !== "shell" && PATH_KEYS.has(k)) return absolutePath(step.path, ctx);
      if (step.tool === "write" && CONTENT_KEYS.has(k)) return step.content;
      if (step.tool === "edit" && OLD_KEYS.has(k)) return step.old;
      if (step.tool === "edit" && NEW_KEYS.has(k)) return step.new;
      if (COMMAND_KEYS.has(k)) {
        const en = prop.enum;
        if (Array.isArray(en)) return EDITOR_COMMAND[step.tool].find((c) => en.includes(c)) ?? en[0];
        if (step.tool !== "shell") return undefined;
        return type === "array" ? ["bash", "-lc", step.command] : step.command;
      }
      if (!req.has(name)) return undefined;
      if (PROSE_KEYS.has(k)) return "scripted step";
      if (DIR_KEYS.has(k)) return ctx.workspace ?? ".";
      return sampleFromSchema(prop);
    })();
    if (value !== undefined) args[name] = value;
  }
  return { name: tool.name, kind: "function", args, intent: original.tool };
}

/**
 * A minimal value that validates against a JSON schema (or Gemini's upper-case `Schema`): the
 * first enum value, `"user"` when the enum offers it (Gemini's next-speaker check), required
 * object properties filled recursively.
 */
export function sampleFromSchema(schema: unknown): unknown {
  if (!schema || typeof schema !== "object") return "ok";
  const s = schema as JsonObject;
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum.includes("user") ? "user" : s.enum[0];
  if ("const" in s) return s.const;
  for (const combo of ["anyOf", "oneOf", "allOf"]) {
    const options = s[combo];
    if (Array.isArray(options) && options.length > 0) return sampleFromSchema(options[0]);
  }
  switch (typeOf(s)) {
    case "object": {
      const out: JsonObject = {};
      const props = properties(s);
      const req = required(s);
      for (const name of req.length > 0 ? req : Object.keys(props)) out[name] = sampleFromSchema(props[name]);
      return out;
    }
    case "array":
      return [];
    case "integer":
    case "number":
      return typeof s.minimum === "number" ? s.minimum : 0;
    case "boolean":
      return false;
    case "null":
      return null;
    default:
      return "ok";
  }
}
