// The transcript: every message both ways as JSON lines on disk, and a bounded in-memory reduction
// (plan, tool calls by id, text, usage, decisions, stop reason) that reports render from.
import { closeSync, mkdirSync, openSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import type * as acp from "@agentclientprotocol/sdk";
import type { DecisionRecord, SessionState, StateChange, ToolCallRecord } from "./types.js";

const MAX_TEXT = 64 * 1024;
const MAX_PREVIEW = 2 * 1024;
const MAX_LOGGED_LINE = 64 * 1024;
const MAX_TOOL_CALLS_KEPT = 5000;
const MAX_WARNINGS = 200;
const FLUSH_BYTES = 256 * 1024;

export function emptyState(now: number): SessionState {
  return {
    agentInfo: null,
    agentCapabilities: null,
    authMethods: [],
    protocolVersion: null,
    sessionId: null,
    currentModeId: null,
    availableModes: [],
    plan: [],
    toolCalls: [],
    agentText: "",
    thoughtText: "",
    usage: null,
    decisions: [],
    stopReason: null,
    cancelCause: null,
    warnings: [],
    counts: { messagesIn: 0, messagesOut: 0, updates: 0, droppedLines: 0 },
    startedAt: now,
    endedAt: null,
  };
}

/** Shortens long strings and big collections so a value can be kept or logged at bounded size. */
export function summarize(value: unknown, maxString = MAX_PREVIEW, depth = 0): unknown {
  if (typeof value === "string") {
    return value.length > maxString
      ? `${value.slice(0, maxString)}… [${value.length - maxString} more chars]`
      : value;
  }
  if (value === null || typeof value !== "object") return value;
  if (depth > 8) return "[nested too deep]";
  if (Array.isArray(value)) {
    const head = value.slice(0, 50).map((v) => summarize(v, maxString, depth + 1));
    if (value.length > 50) head.push(`[${value.length - 50} more items]`);
    return head;
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = summarize(v, maxString, depth + 1);
  return out;
}

/**
 * Text that keeps only its newest `max` characters. Chunks are joined lazily so that a flood of
 * small message chunks costs O(1) each instead of copying the kept text every time.
 */
class BoundedText {
  private chunks: string[] = [];
  private length = 0;
  constructor(private readonly max: number) {}

  append(text: string): void {
    this.chunks.push(text);
    this.length += text.length;
    if (this.length > this.max * 2) this.compact();
  }

  toString(): string {
    this.compact();
    return this.chunks[0] ?? "";
  }

  private compact(): void {
    let joined = this.chunks.join("");
    if (joined.length > this.max) joined = joined.slice(joined.length - this.max);
    this.chunks = joined ? [joined] : [];
    this.length = joined.length;
  }
}

function contentText(content: readonly acp.ToolCallContent[] | null | undefined): string {
  if (!content) return "";
  const parts: string[] = [];
  for (const item of content) {
    if (item.type === "content" && item.content.type === "text") parts.push(item.content.text);
    else if (item.type === "diff") parts.push(`diff ${item.path}`);
    else if (item.type === "terminal") parts.push(`terminal ${item.terminalId}`);
  }
  const text = parts.join("\n");
  return text.length > MAX_PREVIEW
    ? `${text.slice(0, MAX_PREVIEW)}… [${text.length - MAX_PREVIEW} more chars]`
    : text;
}

export class Transcript {
  readonly state: SessionState;
  private readonly toolIndex = new Map<string, ToolCallRecord>();
  private fd: number | null = null;
  private buffer: string[] = [];
  private bufferBytes = 0;
  private readonly start: number;
  private readonly agentText = new BoundedText(MAX_TEXT);
  private readonly thoughtText = new BoundedText(MAX_TEXT);

  constructor(
    readonly path: string | null,
    private readonly onChange: (state: SessionState, change: StateChange) => void = () => undefined,
    now = Date.now(),
  ) {
    this.start = now;
    this.state = emptyState(now);
    // The texts are kept in bounded buffers and read through the state like plain strings.
    const texts = { agentText: this.agentText, thoughtText: this.thoughtText };
    for (const [key, buffer] of Object.entries(texts)) {
      Object.defineProperty(this.state, key, { enumerable: true, get: () => buffer.toString() });
    }
    if (path) {
      mkdirSync(dirname(path), { recursive: true });
      this.fd = openSync(path, "w");
    }
  }

  /** Logs a raw JSON-RPC line (already serialized) in the given direction. */
  logLine(direction: "in" | "out", line: string): void {
    if (direction === "in") this.state.counts.messagesIn++;
    else this.state.counts.messagesOut++;
    if (this.fd === null) return;
    let body = line;
    if (line.length > MAX_LOGGED_LINE) {
      try {
        body = JSON.stringify(summarize(JSON.parse(line), 16 * 1024));
      } catch {
        body = JSON.stringify(summarize(line, 16 * 1024));
      }
    }
    this.write(`{"t":${Date.now() - this.start},"dir":"${direction}","msg":${body}}\n`);
  }

  /** Logs a client-side event (decision, warning, lifecycle step). */
  logEvent(event: string, data: Readonly<Record<string, unknown>>): void {
    if (this.fd === null) return;
    this.write(`${JSON.stringify({ t: Date.now() - this.start, dir: "event", event, ...data })}\n`);
  }

  warn(message: string): void {
    if (this.state.warnings.length < MAX_WARNINGS) this.state.warnings.push(message);
    else if (this.state.warnings.length === MAX_WARNINGS)
      this.state.warnings.push("(further warnings omitted)");
    this.logEvent("warning", { message });
    this.onChange(this.state, "warning");
  }

  recordDecision(record: DecisionRecord): void {
    this.state.decisions.push(record);
    if (record.request.type === "permission") {
      const call = this.toolIndex.get(record.request.toolCallId);
      if (call) call.decision = record;
    }
    this.logEvent("decision", { ...record });
    this.onChange(this.state, "decision");
  }

  /** Applies one `session/update` to the reduced state. Synchronous, so arrival order is kept. */
  applyUpdate(update: acp.SessionUpdate): void {
    const state = this.state;
    state.counts.updates++;
    switch (update.sessionUpdate) {
      case "agent_message_chunk":
        if (update.content.type === "text") this.agentText.append(update.content.text);
        this.onChange(state, "message");
        return;
      case "agent_thought_chunk":
        if (update.content.type === "text") this.thoughtText.append(update.content.text);
        this.onChange(state, "thought");
        return;
      case "plan":
        state.plan = update.entries.map((e) => ({
          content: String(summarize(e.content, 500)),
          status: e.status,
          priority: e.priority,
        }));
        this.onChange(state, "plan");
        return;
      case "tool_call":
      case "tool_call_update":
        this.upsertToolCall(update);
        this.onChange(state, "tool_call");
        return;
      case "current_mode_update":
        state.currentModeId = update.currentModeId;
        this.onChange(state, "mode");
        return;
      case "usage_update":
        state.usage = { ...state.usage, used: update.used, size: update.size, cost: update.cost ?? null };
        this.onChange(state, "usage");
        return;
      default:
        this.onChange(state, "other");
    }
  }

  toolCall(id: string): ToolCallRecord | undefined {
    return this.toolIndex.get(id);
  }

  /** Merges a (possibly partial) tool call into the record kept for its id. */
  upsertToolCall(
    update: acp.ToolCallUpdate & { title?: string | null; kind?: acp.ToolKind | null },
  ): ToolCallRecord {
    const now = Date.now();
    let record = this.toolIndex.get(update.toolCallId);
    if (!record) {
      record = {
        id: update.toolCallId,
        title: "",
        kind: "other",
        status: "pending",
        locations: [],
        contentPreview: "",
        startedAt: now,
        updatedAt: now,
      };
      this.toolIndex.set(update.toolCallId, record);
      this.state.toolCalls.push(record);
      if (this.state.toolCalls.length > MAX_TOOL_CALLS_KEPT) {
        const dropped = this.state.toolCalls.shift()!;
        this.toolIndex.delete(dropped.id);
      }
    }
    if (update.title != null) record.title = String(summarize(update.title, 300));
    if (update.kind != null) record.kind = update.kind;
    if (update.status != null) record.status = update.status;
    if (update.rawInput !== undefined) record.rawInput = summarize(update.rawInput);
    if (update.rawOutput !== undefined) record.rawOutput = summarize(update.rawOutput);
    if (update.locations != null) record.locations = update.locations.map((l) => l.path).slice(0, 50);
    if (update.content != null) record.contentPreview = contentText(update.content);
    record.updatedAt = now;
    return record;
  }

  finish(stopReason: acp.StopReason | null): void {
    this.state.stopReason = stopReason;
    this.state.endedAt = Date.now();
    this.logEvent("end", {
      stopReason,
      cancelCause: this.state.cancelCause,
      warnings: this.state.warnings.length,
    });
    this.onChange(this.state, "stop");
  }

  close(): void {
    this.flush();
    if (this.fd !== null) {
      closeSync(this.fd);
      this.fd = null;
    }
  }

  private write(text: string): void {
    this.buffer.push(text);
    this.bufferBytes += text.length;
    if (this.bufferBytes >= FLUSH_BYTES) this.flush();
  }

  flush(): void {
    if (this.fd === null || this.buffer.length === 0) return;
    writeSync(this.fd, this.buffer.join(""));
    this.buffer = [];
    this.bufferBytes = 0;
  }
}
