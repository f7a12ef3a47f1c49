/**
 * The JSON "script" played by the scripted ACP test agent (`test/agent/scripted-agent.ts`).
 *
 * A script describes, deterministically, how the fake agent behaves at startup, which session
 * features it offers (auth, modes, config options) and what it does on each `session/prompt`.
 *
 * Turns: turn `i` is played on the `i`-th `session/prompt` *of a session* (counted per session);
 * prompts beyond the last turn replay the last turn. A script with no turns answers every prompt
 * with `end_turn` straight away.
 *
 * Reporting convention (what the client sees):
 * - `toolCall` step: a `tool_call` (status `pending`) is sent first. When `permission` is set, a
 *   `session/request_permission` follows; its outcome is then reported in a `tool_call_update`:
 *   - rejected (selected option of kind `reject_*`): status `failed`, `rawOutput` =
 *     `{ permission: { outcome: "selected", optionId, kind } }`, the action is NOT performed and the
 *     turn goes on with the next step;
 *   - granted (kind `allow_*`) or no permission asked: a `tool_call_update` with status
 *     `in_progress` (and `rawOutput: { permission }` when one was asked), then the action is
 *     performed, then a final `tool_call_update` with status `then ?? "completed"` and
 *     `rawOutput` = `{ permission?, result }`; if the action failed, status `failed` and
 *     `rawOutput` = `{ permission?, error: { code, message, data? } }`;
 *   - outcome `cancelled` (the client cancelled the turn): status `failed`, `rawOutput` =
 *     `{ permission: { outcome: "cancelled" } }`, and the prompt is answered `cancelled`;
 *   - an `optionId` that is not one of the options sent: status `failed`, `rawOutput` =
 *     `{ permission: { outcome: "selected", optionId }, error: { code: -32602, message } }`;
 *   - the permission request itself failed (JSON-RPC error): status `failed`, `rawOutput` =
 *     `{ error: { code, message, data? } }`.
 *   If the turn is cancelled while a tool call is open (awaiting permission or running its action),
 *   a last `tool_call_update` with status `failed` and `rawOutput: { cancelled: true }` is sent before
 *   the prompt is answered `cancelled`.
 *   For a `terminal` action inside a tool call, a `tool_call_update` embedding
 *   `{ type: "terminal", terminalId }` content is sent as soon as the terminal exists.
 * - bare `Action` step (no tool call): the result is sent as one `agent_message_chunk` whose text is
 *   the single line `ACTION_RESULT_PREFIX + JSON.stringify(ActionReport) + "\n"`
 *   (see {@link formatActionReport} / {@link parseActionReports}).
 * - An action needing a client capability the client did not advertise in `initialize`
 *   (`fs.readTextFile`, `fs.writeTextFile`, `terminal`) is not sent; it fails with
 *   `{ code: "capability_missing", message }`.
 * - A JSON-RPC error from the client is reported as `{ code, message, data? }` with the error's code.
 */
import type {
  PermissionOptionKind,
  PlanEntryPriority,
  PlanEntryStatus,
  SessionConfigOption,
  StopReason,
  ToolCallContent,
  ToolKind,
} from "@agentclientprotocol/sdk";

export interface ScriptAgentInfo {
  name: string;
  version: string;
}

export interface ScriptAuthMethod {
  id: string;
  name: string;
}

export interface ScriptModes {
  currentModeId: string;
  availableModes: { id: string; name: string; description?: string }[];
  /**
   * When `false`, `session/set_mode` with a known mode id answers OK but does NOT change the mode
   * (the `current_mode_update` sent afterwards still reports the old mode). Default `true`.
   */
  modeSticks?: boolean;
}

export interface ScriptStartup {
  /** Delay before answering `initialize`. */
  delayMs?: number;
  /** Never answer `initialize`. */
  hang?: boolean;
  /** Exit with this code when `initialize` arrives, before answering it. */
  crash?: number;
  /** Raw text written to stdout (followed by "\n") just before the `initialize` answer. */
  garbage?: string;
}

/** Final stop reason of a turn that was not cancelled. */
export type ScriptStopReason = Exclude<StopReason, "cancelled">;

export interface ScriptTurn {
  steps: Step[];
  /** Default `end_turn`. */
  stopReason?: ScriptStopReason;
}

export interface Script {
  /** Default `{ name: "scripted-agent", version: "1.0.0" }`. */
  agentInfo?: ScriptAgentInfo;
  /** If set, `session/new` fails with `authRequired` until `authenticate` with one of these ids. */
  authMethods?: ScriptAuthMethod[];
  /** Returned by `session/new`; `session/set_mode` changes it (see `modeSticks`). */
  modes?: ScriptModes;
  /** Returned by `session/new`; changed by `session/set_config_option`. */
  configOptions?: SessionConfigOption[];
  startup?: ScriptStartup;
  /** Written to stderr when the executable starts (subprocess mode only). */
  stderr?: string;
  /** When true, `session/cancel` is ignored: the agent keeps hanging / playing. */
  ignoreCancel?: boolean;
  turns: ScriptTurn[];
}

// ---------------------------------------------------------------------------------------------
// Steps

export interface PlanStepEntry {
  content: string;
  status: PlanEntryStatus;
  /** Default `medium`. */
  priority?: PlanEntryPriority;
}

export interface PlanStep {
  plan: PlanStepEntry[];
}
export interface MessageStep {
  message: string;
}
export interface ThoughtStep {
  thought: string;
}
/** A raw `SessionUpdate` object, sent as is (may be nonstandard). */
export interface UpdateStep {
  update: { sessionUpdate: string; [key: string]: unknown };
}
export interface ScriptPermissionOption {
  optionId: string;
  name: string;
  kind: PermissionOptionKind;
}
export interface ScriptToolCall {
  id: string;
  title: string;
  kind: ToolKind;
  rawInput?: Record<string, unknown>;
  locations?: { path: string; line?: number }[];
  content?: ToolCallContent[];
}
export interface ToolCallStep {
  toolCall: ScriptToolCall;
  /** `true` → {@link DEFAULT_PERMISSION_OPTIONS}. */
  permission?: boolean | { options: ScriptPermissionOption[] };
  /** Performed only if permission was granted (or not requested). */
  action?: Action;
  /** Final status when allowed and the action (if any) succeeded. Default `completed`. */
  then?: "completed" | "failed";
}
export interface SleepStep {
  sleepMs: number;
}
/** Stop here; never answer the prompt unless cancelled. */
export interface HangStep {
  hang: true;
}
/** `process.exit(code)` mid-turn (in-process: the connection is closed instead). */
export interface CrashStep {
  crash: number;
}
/** Write this raw text + "\n" to stdout (in-process: handed to `ScriptedAgentHost.writeRaw`). */
export interface GarbageStep {
  garbage: string;
}
/** End stdout mid-turn and keep the process alive (in-process: the connection is closed). */
export interface CloseStdoutStep {
  closeStdout: true;
}
/** `count` `agent_message_chunk` notifications as fast as possible. Default text "x". */
export interface FloodStep {
  flood: { count: number; text?: string };
}
/**
 * A `tool_call` (id `toolCallId`, default `huge-<n>`) followed by one `tool_call_update` whose text
 * content is `bytes` characters (ASCII) long.
 */
export interface HugeUpdateStep {
  hugeUpdate: { bytes: number; toolCallId?: string };
}
/** Addition: echo the prompt's text blocks back as one `agent_message_chunk`. */
export interface EchoPromptStep {
  echoPrompt: true;
}

export type Step =
  | PlanStep
  | MessageStep
  | ThoughtStep
  | UpdateStep
  | ToolCallStep
  | Action
  | SleepStep
  | HangStep
  | CrashStep
  | GarbageStep
  | CloseStdoutStep
  | FloodStep
  | HugeUpdateStep
  | EchoPromptStep;

// ---------------------------------------------------------------------------------------------
// Actions

export interface ReadFileAction {
  /** Relative paths are resolved against the session cwd. */
  readFile: { path: string; line?: number; limit?: number };
}
export interface WriteFileAction {
  writeFile: { path: string; content: string };
}
export interface TerminalActionSpec {
  command: string;
  args?: string[];
  env?: { name: string; value: string }[];
  /** Relative paths are resolved against the session cwd. */
  cwd?: string;
  outputByteLimit?: number;
  /**
   * Kill instead of waiting: `terminal/kill` (after `waitMs`, default 0), then
   * `terminal/wait_for_exit`, then `terminal/output`.
   */
  kill?: boolean;
  /**
   * Without `kill`: a timeout on `terminal/wait_for_exit`; when it expires the agent sends
   * `terminal/kill` and reports `timedOut: true`. With `kill`: the delay before killing.
   */
  waitMs?: number;
  /** Send `terminal/release` at the end. Default true. */
  release?: boolean;
}
export interface TerminalAction {
  terminal: TerminalActionSpec;
}
export type Action = ReadFileAction | WriteFileAction | TerminalAction;
export type ActionName = "readFile" | "writeFile" | "terminal";

// ---------------------------------------------------------------------------------------------
// Results as reported back to the client

export interface ReadFileResult {
  path: string;
  content: string;
}
export interface WriteFileResult {
  path: string;
  bytes: number;
}
export interface TerminalResult {
  terminalId: string;
  exitCode: number | null;
  signal: string | null;
  output: string;
  truncated: boolean;
  killed: boolean;
  timedOut: boolean;
  released: boolean;
}
export type ActionResult = ReadFileResult | WriteFileResult | TerminalResult;

export interface ActionError {
  /** JSON-RPC error code from the client, or `"capability_missing"`. */
  code: number | "capability_missing";
  message: string;
  data?: unknown;
}

export type PermissionReport =
  | { outcome: "cancelled" }
  | { outcome: "selected"; optionId: string; kind?: PermissionOptionKind };

/** `rawOutput` of the final `tool_call_update` of a `toolCall` step. */
export interface ToolCallRawOutput {
  permission?: PermissionReport;
  result?: ActionResult;
  error?: ActionError;
}

/** Line reported for a bare action step. */
export type ActionReport =
  | { action: ActionName; ok: true; result: ActionResult }
  | { action: ActionName; ok: false; error: ActionError };

export const ACTION_RESULT_PREFIX = "[scripted-agent action] ";

export function formatActionReport(report: ActionReport): string {
  return `${ACTION_RESULT_PREFIX}${JSON.stringify(report)}\n`;
}

/** Extracts every action report line from concatenated message text. */
export function parseActionReports(text: string): ActionReport[] {
  const reports: ActionReport[] = [];
  for (const line of text.split("\n")) {
    if (line.startsWith(ACTION_RESULT_PREFIX)) {
      reports.push(JSON.parse(line.slice(ACTION_RESULT_PREFIX.length)) as ActionReport);
    }
  }
  return reports;
}

export const DEFAULT_AGENT_INFO: ScriptAgentInfo = { name: "scripted-agent", version: "1.0.0" };

export const DEFAULT_PERMISSION_OPTIONS: readonly ScriptPermissionOption[] = [
  { optionId: "allow-once", name: "Allow once", kind: "allow_once" },
  { optionId: "allow-always", name: "Always allow", kind: "allow_always" },
  { optionId: "reject-once", name: "Reject", kind: "reject_once" },
  { optionId: "reject-always", name: "Always reject", kind: "reject_always" },
];

// ---------------------------------------------------------------------------------------------
// Validation (light: catches typos in test scripts early)

const STEP_KEYS = [
  "plan",
  "message",
  "thought",
  "update",
  "toolCall",
  "readFile",
  "writeFile",
  "terminal",
  "sleepMs",
  "hang",
  "crash",
  "garbage",
  "closeStdout",
  "flood",
  "hugeUpdate",
  "echoPrompt",
] as const;

export type StepKind = (typeof STEP_KEYS)[number];

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The kind of a step, i.e. its one recognised key. Throws on an unknown or ambiguous step. */
export function stepKind(step: unknown): StepKind {
  if (!isRecord(step)) throw new Error(`script step must be an object, got ${JSON.stringify(step)}`);
  const kinds = STEP_KEYS.filter((key) => key in step);
  const [kind] = kinds;
  if (kind === undefined || kinds.length !== 1) {
    throw new Error(`script step must have exactly one of ${STEP_KEYS.join(", ")}: ${JSON.stringify(step)}`);
  }
  return kind;
}

/** Checks the overall shape of a parsed script and returns it typed. */
export function validateScript(value: unknown): Script {
  if (!isRecord(value)) throw new Error("script must be a JSON object");
  const turns = value.turns;
  if (!Array.isArray(turns)) throw new Error("script.turns must be an array");
  turns.forEach((turn, i) => {
    if (!isRecord(turn) || !Array.isArray(turn.steps)) {
      throw new Error(`script.turns[${i}].steps must be an array`);
    }
    for (const step of turn.steps) {
      const kind = stepKind(step);
      if (kind === "toolCall" && isRecord(step) && step.action !== undefined) {
        const action = stepKind(step.action);
        if (action !== "readFile" && action !== "writeFile" && action !== "terminal") {
          throw new Error(`toolCall.action must be readFile, writeFile or terminal, got ${action}`);
        }
      }
    }
  });
  return value as unknown as Script;
}

export function parseScript(json: string): Script {
  return validateScript(JSON.parse(json));
}
