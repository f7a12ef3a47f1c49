// Public types of the headless ACP client. This module knows nothing of GitHub or of the policy:
// it asks an injected `decide` function about every action the agent wants to take.
import type * as acp from "@agentclientprotocol/sdk";

export type { acp };

/** How to start the agent process. `env` is the complete environment: the parent's is never inherited. */
export interface AgentLaunch {
  command: string;
  args: readonly string[];
  env: Readonly<Record<string, string>>;
  /** Working directory of the agent process; defaults to the workspace. */
  cwd?: string;
}

/** One action the agent wants to take, as the client sees it, handed to `decide`. */
export type ActionRequest =
  | {
      type: "permission";
      /** The tool call the agent asks about, merged with what earlier updates said about it. */
      toolCall: acp.ToolCallUpdate;
      options: readonly acp.PermissionOption[];
    }
  | { type: "fs_read"; path: string; relativePath: string }
  | { type: "fs_write"; path: string; relativePath: string; bytes: number }
  | {
      type: "terminal";
      /** The command line as the shell would see it (command and args joined, quoted where needed). */
      commandLine: string;
      command: string;
      args: readonly string[];
      cwd: string;
      envNames: readonly string[];
    };

export interface Decision {
  outcome: "allow" | "deny";
  /** Why, in words a maintainer can act on. */
  reason: string;
  /** Which rule of the caller's policy matched, when there is one. */
  ruleId?: string;
  /** A change to the caller's policy that would allow this, for denials (YAML to paste). */
  suggestion?: string;
  /** For denials no policy change can lift: what to do instead. */
  advice?: string;
}

export type DecideFn = (request: ActionRequest) => Decision | Promise<Decision>;

/** A decision as recorded in the transcript. */
export interface DecisionRecord extends Decision {
  at: number;
  request: ActionRequestSummary;
  /** For permission requests: the option id we selected, or "cancelled". */
  answer?: string;
}

export type ActionRequestSummary =
  | { type: "permission"; toolCallId: string; kind: string | null; title: string | null }
  | { type: "fs_read"; path: string }
  | { type: "fs_write"; path: string; bytes: number }
  | { type: "terminal"; commandLine: string; cwd: string };

/** Agent-specific behaviour the client needs, supplied by the agent preset. */
export interface ClientQuirks {
  /**
   * What `fs/read_text_file` answers for a missing file inside the workspace. Some agents can only
   * create new files when the read of a missing file returns empty content.
   */
  missingFileRead?: "error" | "empty";
  /** Pick the reject option that keeps the turn going when an agent offers several. */
  pickRejectOption?: (options: readonly acp.PermissionOption[]) => acp.PermissionOption | undefined;
}

export interface PromptResource {
  uri: string;
  text: string;
  mimeType?: string;
}

export interface PromptInput {
  text: string;
  /** Extra context sent as embedded resources, e.g. the issue body (when the agent accepts them). */
  resources?: readonly PromptResource[];
}

export interface SessionLimits {
  /** Overall deadline for the prompt turn, from the moment the prompt is sent. */
  timeoutMs: number;
  /** How long the agent may take to answer `initialize` and `session/new`. */
  startupTimeoutMs: number;
  /** After `session/cancel`, how long to wait for the prompt response before killing the agent. */
  cancelGraceMs: number;
  /** Cancel the turn once the agent has started this many tool calls. */
  maxToolCalls?: number;
  /** Cap on one terminal's retained output (the oldest bytes are dropped). */
  terminalOutputBytes: number;
  /** Longest single line accepted from the agent; longer lines are dropped with a warning. */
  maxMessageBytes: number;
}

export const DEFAULT_LIMITS: SessionLimits = {
  timeoutMs: 30 * 60_000,
  startupTimeoutMs: 60_000,
  cancelGraceMs: 10_000,
  terminalOutputBytes: 1024 * 1024,
  maxMessageBytes: 128 * 1024 * 1024,
};

export interface SessionOptions {
  launch: AgentLaunch;
  /** Absolute path of the workspace; fs and terminal requests are confined to it. */
  workspace: string;
  prompt: PromptInput;
  decide: DecideFn;
  limits?: Partial<SessionLimits>;
  /** Authenticate with this method when the agent advertises auth methods. */
  authMethodId?: string;
  /** Session mode to switch to after `session/new` (e.g. the mode in which the agent asks before edits). */
  mode?: string;
  /** Session config options to set after `session/new`, e.g. `{ model: "sonnet" }` (by id or category). */
  config?: Readonly<Record<string, string>>;
  quirks?: ClientQuirks;
  /** Agent-specific `_meta` sent with `session/new` (e.g. Claude's `claudeCode.options`). */
  sessionMeta?: Readonly<Record<string, unknown>>;
  /** Abort from outside (e.g. a budget or a stop command): cancels the turn cleanly. */
  signal?: AbortSignal;
  /** Where to write the transcript as JSON lines. */
  transcriptPath?: string;
  /** Called after every change to the session state (throttle on the caller's side). */
  onUpdate?: (state: SessionState, change: StateChange) => void;
  clientName?: string;
}

export interface PlanEntryRecord {
  content: string;
  status: string;
  priority: string;
}

export interface ToolCallRecord {
  id: string;
  title: string;
  kind: string;
  status: string;
  rawInput?: unknown;
  rawOutput?: unknown;
  locations: string[];
  /** Text of the tool call's content, shortened. */
  contentPreview: string;
  startedAt: number;
  updatedAt: number;
  /** The decision taken on this tool call's permission request, if it asked. */
  decision?: DecisionRecord;
}

export interface UsageRecord {
  used?: number;
  size?: number;
  cost?: { amount: number; currency: string } | null;
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
}

export type CancelCause = "timeout" | "aborted" | "max_tool_calls";

export interface SessionState {
  agentInfo: { name: string; version: string; title?: string | null } | null;
  agentCapabilities: acp.AgentCapabilities | null;
  authMethods: acp.AuthMethod[];
  protocolVersion: number | null;
  sessionId: string | null;
  currentModeId: string | null;
  availableModes: string[];
  plan: PlanEntryRecord[];
  toolCalls: ToolCallRecord[];
  agentText: string;
  thoughtText: string;
  usage: UsageRecord | null;
  decisions: DecisionRecord[];
  stopReason: acp.StopReason | null;
  cancelCause: CancelCause | null;
  warnings: string[];
  counts: { messagesIn: number; messagesOut: number; updates: number; droppedLines: number };
  startedAt: number;
  endedAt: number | null;
}

export type StateChange =
  | "plan"
  | "tool_call"
  | "message"
  | "thought"
  | "usage"
  | "decision"
  | "mode"
  | "warning"
  | "stop"
  | "other";

export type AcpErrorCode =
  | "spawn_failed"
  | "startup_timeout"
  | "agent_exited"
  | "stream_closed"
  | "protocol_error"
  | "auth_required"
  | "auth_failed"
  | "mode_unavailable"
  | "mode_not_applied"
  | "config_not_applied"
  | "cancel_timeout";

export interface SessionResult {
  state: SessionState;
  /** Set when the session did not end with a stop reason from the agent. */
  error: AcpSessionError | null;
  transcriptPath: string | null;
  exit: { code: number | null; signal: string | null } | null;
}

/** A failure of the agent or of the protocol, with what is needed to diagnose it. */
export class AcpSessionError extends Error {
  override readonly name = "AcpSessionError";
  constructor(
    readonly code: AcpErrorCode,
    message: string,
    readonly stderrTail: string,
    readonly details: Readonly<Record<string, unknown>> = {},
  ) {
    super(stderrTail ? `${message}\n--- agent stderr (last lines) ---\n${stderrTail}` : message);
  }
}
