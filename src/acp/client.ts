// The headless ACP client: launches the agent, drives one prompt turn with nobody at the keyboard,
// answers every permission, fs and terminal request through the injected `decide`, and always
// comes back with the transcript — on success, on timeout, and when the agent misbehaves.
import { lstat, mkdir, readFile, stat, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { confinePath, PathOutsideWorkspaceError, realWorkspaceRoot } from "./confine.js";
import { type AgentProcess, launchAgent } from "./process.js";
import { shellJoin, TerminalRegistry } from "./terminals.js";
import { Transcript } from "./transcript.js";
import {
  AcpSessionError,
  type ActionRequest,
  type ActionRequestSummary,
  type CancelCause,
  DEFAULT_LIMITS,
  type Decision,
  type DecisionRecord,
  type SessionLimits,
  type SessionOptions,
  type SessionResult,
} from "./types.js";
import { agentStream } from "./wire.js";

export const CLIENT_PROTOCOL_VERSION = 1;
const KNOWN_UPDATE_KINDS = new Set([
  "user_message_chunk",
  "agent_message_chunk",
  "agent_thought_chunk",
  "tool_call",
  "tool_call_update",
  "plan",
  "available_commands_update",
  "current_mode_update",
  "config_option_update",
  "session_info_update",
  "usage_update",
  "notice",
  "compaction_update",
  "compaction_summary_chunk",
]);
const MAX_READ_BYTES = 20 * 1024 * 1024;
const DRAIN_QUIET_MS = 40;
const DRAIN_MAX_MS = 500;

/** Runs one session: launch → initialize → (authenticate) → session/new → (mode, config) → prompt. */
export async function runAgentSession(options: SessionOptions): Promise<SessionResult> {
  const run = new SessionRun(options);
  return run.execute();
}

type Phase =
  | "initialize"
  | "authenticate"
  | "session/new"
  | "session/set_mode"
  | "session/set_config_option"
  | "session/prompt";

class SessionRun {
  private readonly limits: SessionLimits;
  private readonly transcript: Transcript;
  private readonly terminals = new TerminalRegistry();
  private agent!: AgentProcess;
  private realRoot = "";
  private cancelling = false;
  private cancelCause: CancelCause | null = null;
  private readonly cancelStarted: Promise<void>;
  private triggerCancel!: () => void;
  private toolCallsSeen = 0;
  private lastIncomingAt = 0;
  private streamClosed: Promise<void> = new Promise(() => undefined);
  private readonly unknownMethods = new Set<string>();
  private modeReports = 0;
  private streamEnded = false;
  private phase: Phase = "initialize";

  constructor(private readonly options: SessionOptions) {
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    this.transcript = new Transcript(options.transcriptPath ?? null, options.onUpdate);
    this.cancelStarted = new Promise<void>((resolve) => {
      this.triggerCancel = resolve;
    });
  }

  async execute(): Promise<SessionResult> {
    let error: AcpSessionError | null = null;
    try {
      this.realRoot = await realWorkspaceRoot(this.options.workspace);
      this.transcript.logEvent("launch", {
        command: this.options.launch.command,
        args: this.options.launch.args,
        envNames: Object.keys(this.options.launch.env).sort(),
        workspace: this.realRoot,
      });
      this.agent = launchAgent(this.options.launch, this.realRoot);
      await this.converse();
    } catch (caught) {
      error = this.toSessionError(caught);
      this.transcript.logEvent("error", { code: error.code, message: error.message });
    } finally {
      await this.shutdown();
    }
    if (this.transcript.state.endedAt === null) this.transcript.finish(this.transcript.state.stopReason);
    this.transcript.close();
    return {
      state: this.transcript.state,
      error,
      transcriptPath: this.transcript.path,
      exit: this.agent?.exitInfo() ?? null,
    };
  }

  private async converse(): Promise<void> {
    const stream = agentStream(
      this.agent.child.stdin,
      this.agent.child.stdout,
      {
        incoming: (message, line) => {
          this.lastIncomingAt = Date.now();
          this.transcript.logLine("in", line);
          if ("method" in message && message.method === "session/update")
            this.checkUpdateKind(message.params);
        },
        outgoing: (_message, line) => this.transcript.logLine("out", line),
        invalidLine: (preview, reason) => {
          this.transcript.state.counts.droppedLines++;
          this.transcript.warn(`agent wrote a line to stdout that is not ACP (${reason}): ${preview}`);
        },
      },
      this.limits.maxMessageBytes,
    );
    this.streamClosed = stream.closed;
    void stream.closed.then(() => {
      this.streamEnded = true;
    });
    const onAbort = () => this.startCancel("aborted");
    this.options.signal?.addEventListener("abort", onAbort, { once: true });
    try {
      if (this.options.signal?.aborted) throw new AcpSessionError("agent_exited", "aborted before start", "");
      await this.buildClient()
        .connectWith(stream, (agent) => this.drive(agent))
        .catch((error: unknown) => this.explainFailure(error, this.phase));
    } finally {
      this.options.signal?.removeEventListener("abort", onAbort);
    }
  }

  private buildClient(): acp.ClientApp {
    const m = acp.methods.client;
    return acp
      .client({ name: this.options.clientName ?? "acp-warden" })
      .onRequest(m.session.requestPermission, ({ params }) => this.onPermission(params))
      .onRequest(m.fs.readTextFile, ({ params }) => this.onReadFile(params))
      .onRequest(m.fs.writeTextFile, ({ params }) => this.onWriteFile(params))
      .onRequest(m.terminal.create, ({ params }) => this.onTerminalCreate(params))
      .onRequest(m.terminal.output, ({ params }) => {
        const snap = this.terminal(params.terminalId).snapshot();
        return { output: snap.output, truncated: snap.truncated, exitStatus: snap.exitStatus };
      })
      .onRequest(m.terminal.waitForExit, async ({ params }) => {
        const exit = await this.terminal(params.terminalId).exited;
        return { exitCode: exit.exitCode, signal: exit.signal };
      })
      .onRequest(m.terminal.kill, ({ params }) => {
        this.terminal(params.terminalId).kill();
        return {};
      })
      .onRequest(m.terminal.release, ({ params }) => {
        this.terminals.release(params.terminalId);
        return {};
      })
      .onNotification(m.session.update, ({ params }) => {
        this.transcript.applyUpdate(params.update);
        if (params.update.sessionUpdate === "tool_call") this.countToolCall();
        if (params.update.sessionUpdate === "current_mode_update") this.modeReports++;
      })
      .onRequest("*", ({ method }) => {
        this.noteUnknown(method);
        throw acp.RequestError.methodNotFound(method);
      })
      .onNotification("*", ({ method }) => this.noteUnknown(method));
  }

  private async drive(agent: acp.ClientContext): Promise<void> {
    const startupDeadline = Date.now() + this.limits.startupTimeoutMs;
    const state = this.transcript.state;
    const init = await this.guard(
      "initialize",
      agent.request(acp.methods.agent.initialize, {
        protocolVersion: CLIENT_PROTOCOL_VERSION,
        clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: true },
        clientInfo: { name: "acp-warden", version: "0.1.0" },
      }),
      startupDeadline,
    );
    state.protocolVersion = init.protocolVersion;
    state.agentInfo = init.agentInfo
      ? { name: init.agentInfo.name, version: init.agentInfo.version, title: init.agentInfo.title ?? null }
      : null;
    state.agentCapabilities = init.agentCapabilities ?? null;
    state.authMethods = init.authMethods ?? [];
    if (init.protocolVersion !== CLIENT_PROTOCOL_VERSION) {
      this.transcript.warn(`agent answered protocol version ${init.protocolVersion}; this client speaks 1`);
    }

    const methodId = this.options.authMethodId;
    if (methodId !== undefined && state.authMethods.length > 0) {
      if (!state.authMethods.some((a) => a.id === methodId)) {
        throw new AcpSessionError(
          "auth_failed",
          `the agent offers no auth method "${methodId}" (it offers: ${state.authMethods.map((a) => a.id).join(", ")})`,
          this.stderrTail(),
        );
      }
      await this.guard(
        "authenticate",
        agent.request(acp.methods.agent.authenticate, { methodId }),
        startupDeadline,
      );
    }

    const session = await this.guard(
      "session/new",
      agent.request(acp.methods.agent.session.new, {
        cwd: this.realRoot,
        mcpServers: [],
        ...(this.options.sessionMeta ? { _meta: { ...this.options.sessionMeta } } : {}),
      }),
      startupDeadline,
    );
    const sessionId = session.sessionId;
    state.sessionId = sessionId;
    state.currentModeId = session.modes?.currentModeId ?? null;
    state.availableModes = session.modes?.availableModes.map((mode) => mode.id) ?? [];
    this.transcript.logEvent("session", {
      sessionId,
      modes: state.availableModes,
      mode: state.currentModeId,
    });

    if (this.options.mode !== undefined)
      await this.applyMode(agent, sessionId, this.options.mode, startupDeadline);
    for (const [key, value] of Object.entries(this.options.config ?? {})) {
      await this.applyConfig(agent, sessionId, session.configOptions ?? [], key, value, startupDeadline);
    }

    await this.runPrompt(agent, sessionId);
  }

  private async applyMode(agent: acp.ClientContext, sessionId: string, mode: string, deadline: number) {
    const state = this.transcript.state;
    if (!state.availableModes.includes(mode)) {
      throw new AcpSessionError(
        "mode_unavailable",
        `the agent has no session mode "${mode}" (it offers: ${state.availableModes.join(", ") || "none"})`,
        this.stderrTail(),
      );
    }
    if (state.currentModeId === mode) return;
    const reportsBefore = this.modeReports;
    await this.guard(
      "session/set_mode",
      agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: mode }),
      deadline,
    );
    // Agents may report the mode they are actually in; give such a report a moment to arrive.
    await this.drain();
    if (this.modeReports > reportsBefore && state.currentModeId !== mode) {
      throw new AcpSessionError(
        "mode_not_applied",
        `the agent accepted session mode "${mode}" but reports mode "${state.currentModeId}"`,
        this.stderrTail(),
      );
    }
    state.currentModeId = mode;
  }

  private async applyConfig(
    agent: acp.ClientContext,
    sessionId: string,
    available: readonly acp.SessionConfigOption[],
    key: string,
    value: string,
    deadline: number,
  ) {
    const option = available.find((o) => o.id === key) ?? available.find((o) => o.category === key);
    if (!option) {
      throw new AcpSessionError(
        "config_not_applied",
        `the agent has no session option "${key}" (it offers: ${available.map((o) => o.id).join(", ") || "none"})`,
        this.stderrTail(),
      );
    }
    const response = await this.guard(
      "session/set_config_option",
      agent.request(acp.methods.agent.session.setConfigOption, { sessionId, configId: option.id, value }),
      deadline,
    );
    const after = response.configOptions.find((o) => o.id === option.id);
    if (!after || String(after.currentValue) !== value) {
      throw new AcpSessionError(
        "config_not_applied",
        `the agent accepted ${option.id}=${value} but reports ${option.id}=${String(after?.currentValue)}`,
        this.stderrTail(),
      );
    }
    this.transcript.logEvent("config", { configId: option.id, value });
  }

  private async runPrompt(agent: acp.ClientContext, sessionId: string): Promise<void> {
    const prompt: acp.ContentBlock[] = [{ type: "text", text: this.options.prompt.text }];
    const embedded = this.transcript.state.agentCapabilities?.promptCapabilities?.embeddedContext === true;
    for (const resource of this.options.prompt.resources ?? []) {
      if (embedded) {
        prompt.push({
          type: "resource",
          resource: {
            uri: resource.uri,
            text: resource.text,
            mimeType: resource.mimeType ?? "text/markdown",
          },
        });
      } else {
        // Agents without embedded-context support still get the text, inline.
        prompt.push({ type: "text", text: `\n\n<${resource.uri}>\n${resource.text}\n</${resource.uri}>` });
      }
    }
    const promptTimer = setTimeout(() => this.startCancel("timeout"), this.limits.timeoutMs);
    try {
      const pending = agent.request(acp.methods.agent.session.prompt, { sessionId, prompt });
      pending.catch(() => undefined);
      const first = await Promise.race([
        this.guard("session/prompt", pending, Number.POSITIVE_INFINITY).then((r) => ({ response: r })),
        this.cancelStarted.then(() => ({ cancel: true as const })),
      ]);
      let response: acp.PromptResponse | null = "response" in first ? first.response : null;
      if (!response) {
        await agent.notify(acp.methods.agent.session.cancel, { sessionId }).catch(() => undefined);
        this.transcript.logEvent("cancel", { cause: this.cancelCause });
        const graceEnd = Date.now() + this.limits.cancelGraceMs;
        response = await this.guard("session/prompt", pending, graceEnd, "cancel_timeout").catch(
          (error: unknown) => {
            if (error instanceof AcpSessionError && error.code === "cancel_timeout") {
              this.transcript.warn(
                `the agent did not stop within ${this.limits.cancelGraceMs} ms of session/cancel; it was killed`,
              );
              return null;
            }
            throw error;
          },
        );
      }
      await this.drain();
      this.transcript.state.cancelCause = this.cancelCause;
      this.transcript.finish(response?.stopReason ?? "cancelled");
    } finally {
      clearTimeout(promptTimer);
    }
  }

  /** Waits until the agent has been quiet briefly, so updates sent after a response are not lost. */
  private async drain(): Promise<void> {
    const until = Date.now() + DRAIN_MAX_MS;
    while (Date.now() < until) {
      if (Date.now() - this.lastIncomingAt >= DRAIN_QUIET_MS) return;
      await sleep(DRAIN_QUIET_MS / 2);
    }
  }

  private startCancel(cause: CancelCause): void {
    if (this.cancelling) return;
    this.cancelling = true;
    this.cancelCause = cause;
    this.transcript.state.cancelCause = cause;
    this.terminals.killAll();
    this.triggerCancel();
  }

  private countToolCall(): void {
    this.toolCallsSeen++;
    const max = this.limits.maxToolCalls;
    if (max !== undefined && this.toolCallsSeen > max) this.startCancel("max_tool_calls");
  }

  /** Races a request against the agent's exit, the stream closing and a deadline. */
  private async guard<T>(
    phase: Phase,
    request: Promise<T>,
    deadline: number,
    timeoutCode: "startup_timeout" | "cancel_timeout" = "startup_timeout",
  ): Promise<T> {
    this.phase = phase;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      if (deadline === Number.POSITIVE_INFINITY) return;
      timer = setTimeout(
        () =>
          reject(
            new AcpSessionError(timeoutCode, `the agent did not answer ${phase} in time`, this.stderrTail()),
          ),
        Math.max(0, deadline - Date.now()),
      );
    });
    const exited = this.agent.exited.then(() => {
      throw this.lostAgent(phase);
    });
    const closed = this.streamClosed.then(async () => {
      // The exit usually follows the end of stdout closely; prefer reporting the exit.
      await Promise.race([this.agent.exited, sleep(200)]);
      throw this.lostAgent(phase);
    });
    try {
      return await Promise.race([
        request.catch((error: unknown) => this.explainFailure(error, phase)),
        timeout,
        exited,
        closed,
      ]);
    } finally {
      if (timer) clearTimeout(timer);
    }
  }

  /** A request failing because the connection went away is reported as what took it away. */
  private async explainFailure(error: unknown, phase: Phase): Promise<never> {
    if (error instanceof AcpSessionError) throw error;
    await Promise.race([this.agent.exited, this.streamClosed, sleep(250)]);
    await Promise.race([this.agent.exited, sleep(this.agent.exitInfo() ? 0 : 200)]);
    if (this.agent.exitInfo() || this.streamEnded) throw this.lostAgent(phase);
    throw this.toSessionError(error, phase);
  }

  /** Why the agent can no longer answer: it never started, it exited, or it closed its stdout. */
  private lostAgent(phase: Phase): AcpSessionError {
    const spawnError = this.agent.spawnError();
    if (spawnError) {
      return new AcpSessionError(
        "spawn_failed",
        `could not start the agent (${this.options.launch.command}): ${spawnError.message}`,
        this.stderrTail(),
      );
    }
    const exit = this.agent.exitInfo();
    if (exit) {
      return new AcpSessionError(
        "agent_exited",
        `the agent exited during ${phase} (exit code ${exit.code}${exit.signal ? `, signal ${exit.signal}` : ""})`,
        this.stderrTail(),
        { exitCode: exit.code, signal: exit.signal },
      );
    }
    return new AcpSessionError(
      "stream_closed",
      `the agent closed its stdout during ${phase}`,
      this.stderrTail(),
    );
  }

  private async decideAndRecord(
    request: ActionRequest,
    summary: ActionRequestSummary,
  ): Promise<DecisionRecord> {
    let decision: Decision;
    try {
      decision = await this.options.decide(request);
    } catch (error) {
      decision = { outcome: "deny", reason: `the policy could not decide: ${messageOf(error)}` };
      this.transcript.warn(decision.reason);
    }
    return { ...decision, at: Date.now(), request: summary };
  }

  private async onPermission(params: acp.RequestPermissionRequest): Promise<acp.RequestPermissionResponse> {
    const known = this.transcript.toolCall(params.toolCall.toolCallId);
    const toolCall: acp.ToolCallUpdate = {
      ...(known
        ? {
            title: known.title,
            kind: known.kind as acp.ToolKind,
            locations: known.locations.map((path) => ({ path })),
          }
        : {}),
      ...stripNulls(params.toolCall),
    };
    this.transcript.upsertToolCall(params.toolCall);
    const summary: ActionRequestSummary = {
      type: "permission",
      toolCallId: toolCall.toolCallId,
      kind: toolCall.kind ?? null,
      title: toolCall.title ?? null,
    };
    if (this.cancelling) return this.cancelledAnswer(summary);
    const decided = await Promise.race([
      this.decideAndRecord({ type: "permission", toolCall, options: params.options }, summary),
      this.cancelStarted.then(() => null),
    ]);
    if (decided === null || this.cancelling) return this.cancelledAnswer(summary);
    const option = this.pickOption(decided, params.options);
    if (option && decided.outcome === "allow" && option.kind !== "allow_once") {
      // Only "allow always" was offered: choosing it would let later calls through unasked.
      const record: DecisionRecord = {
        ...decided,
        outcome: "deny",
        reason: `${decided.reason}; but the agent offered only "allow always", which would skip later checks`,
        answer: option.optionId,
      };
      this.transcript.recordDecision(record);
      return { outcome: { outcome: "selected", optionId: option.optionId } };
    }
    if (!option) {
      const record: DecisionRecord = {
        ...decided,
        outcome: "deny",
        reason: `${decided.reason}; the agent offered no option to ${decided.outcome === "allow" ? "allow once" : "reject"}`,
        answer: "cancelled",
      };
      this.transcript.recordDecision(record);
      return { outcome: { outcome: "cancelled" } };
    }
    this.transcript.recordDecision({ ...decided, answer: option.optionId });
    return { outcome: { outcome: "selected", optionId: option.optionId } };
  }

  private cancelledAnswer(summary: ActionRequestSummary): acp.RequestPermissionResponse {
    this.transcript.recordDecision({
      outcome: "deny",
      reason: "the run was being cancelled",
      at: Date.now(),
      request: summary,
      answer: "cancelled",
    });
    return { outcome: { outcome: "cancelled" } };
  }

  /** Maps a decision to an option by kind: never `allow_always`; a reject that keeps the turn going. */
  private pickOption(
    decision: Decision,
    options: readonly acp.PermissionOption[],
  ): acp.PermissionOption | undefined {
    if (decision.outcome === "allow") {
      const once = options.find((o) => o.kind === "allow_once");
      if (once) return once;
    }
    const rejectOnce = options.filter((o) => o.kind === "reject_once");
    const preferred = this.options.quirks?.pickRejectOption?.(options);
    if (preferred && (preferred.kind === "reject_once" || preferred.kind === "reject_always"))
      return preferred;
    return (
      rejectOnce.find((o) => !/abort|interrupt|stop|cancel/i.test(`${o.optionId} ${o.name}`)) ??
      rejectOnce[0] ??
      options.find((o) => o.kind === "reject_always")
    );
  }

  private async confine(path: string, summary: ActionRequestSummary) {
    try {
      return await confinePath(this.realRoot, path);
    } catch (error) {
      const reason =
        error instanceof PathOutsideWorkspaceError
          ? error.message
          : `cannot resolve ${path}: ${messageOf(error)}`;
      this.transcript.recordDecision({
        outcome: "deny",
        reason,
        ruleId: "workspace",
        at: Date.now(),
        request: summary,
      });
      throw acp.RequestError.invalidParams({ path }, reason);
    }
  }

  private async requireAllowed(request: ActionRequest, summary: ActionRequestSummary): Promise<void> {
    if (this.cancelling) {
      this.transcript.recordDecision({
        outcome: "deny",
        reason: "the run was being cancelled",
        at: Date.now(),
        request: summary,
      });
      throw acp.RequestError.requestCancelled();
    }
    const record = await this.decideAndRecord(request, summary);
    this.transcript.recordDecision(record);
    if (record.outcome !== "allow") {
      throw new acp.RequestError(-32001, `denied by policy: ${record.reason}`, {
        ruleId: record.ruleId ?? null,
      });
    }
  }

  private async onReadFile(params: acp.ReadTextFileRequest): Promise<acp.ReadTextFileResponse> {
    const summary: ActionRequestSummary & { type: "fs_read" } = { type: "fs_read", path: params.path };
    const target = await this.confine(params.path, summary);
    summary.path = target.relative;
    await this.requireAllowed(
      { type: "fs_read", path: target.absolute, relativePath: target.relative },
      summary,
    );
    if (!target.exists) {
      if (this.options.quirks?.missingFileRead === "empty") return { content: "" };
      throw acp.RequestError.resourceNotFound(params.path);
    }
    const info = await stat(target.absolute);
    if (!info.isFile()) throw acp.RequestError.invalidParams({ path: params.path }, "not a regular file");
    if (info.size > MAX_READ_BYTES) {
      throw acp.RequestError.invalidParams(
        { path: params.path },
        `file is larger than ${MAX_READ_BYTES} bytes`,
      );
    }
    const text = await readFile(target.absolute, "utf8");
    if (params.line == null && params.limit == null) return { content: text };
    const lines = text.split("\n");
    const start = Math.max(0, (params.line ?? 1) - 1);
    const end = params.limit == null ? lines.length : start + Math.max(0, params.limit);
    return { content: lines.slice(start, end).join("\n") };
  }

  private async onWriteFile(params: acp.WriteTextFileRequest): Promise<acp.WriteTextFileResponse> {
    const bytes = Buffer.byteLength(params.content, "utf8");
    const summary: ActionRequestSummary & { type: "fs_write" } = {
      type: "fs_write",
      path: params.path,
      bytes,
    };
    const target = await this.confine(params.path, summary);
    summary.path = target.relative;
    if (target.exists) {
      const info = await lstat(target.absolute);
      // A second hard link may live outside the workspace: writing through it would escape.
      if (info.isFile() && info.nlink > 1) {
        const reason = `${params.path} has ${info.nlink} hard links; writing it could change a file outside the workspace`;
        this.transcript.recordDecision({
          outcome: "deny",
          reason,
          ruleId: "workspace",
          at: Date.now(),
          request: summary,
        });
        throw acp.RequestError.invalidParams({ path: params.path }, reason);
      }
    }
    await this.requireAllowed(
      { type: "fs_write", path: target.absolute, relativePath: target.relative, bytes },
      summary,
    );
    await mkdir(dirname(target.absolute), { recursive: true });
    await writeFile(target.absolute, params.content, "utf8");
    return {};
  }

  private async onTerminalCreate(params: acp.CreateTerminalRequest): Promise<acp.CreateTerminalResponse> {
    const args = params.args ?? [];
    // A bare command line with no args is meant for a shell; the policy sees the same text either way.
    const viaShell = args.length === 0 && /[\s;&|<>$`(){}*?'"\\]/.test(params.command);
    const commandLine = viaShell ? params.command : shellJoin(params.command, args);
    const cwdSummary = params.cwd ?? this.realRoot;
    const summary: ActionRequestSummary = { type: "terminal", commandLine, cwd: cwdSummary };
    const cwd = await this.confine(cwdSummary, summary);
    const extraEnv = Object.fromEntries((params.env ?? []).map((v) => [v.name, v.value]));
    await this.requireAllowed(
      {
        type: "terminal",
        commandLine,
        command: params.command,
        args,
        cwd: cwd.absolute,
        envNames: Object.keys(extraEnv),
      },
      summary,
    );
    const limit = Math.min(
      params.outputByteLimit ?? this.limits.terminalOutputBytes,
      this.limits.terminalOutputBytes,
    );
    const terminalId = this.terminals.create({
      command: viaShell ? "/bin/sh" : params.command,
      args: viaShell ? ["-c", params.command] : args,
      cwd: cwd.absolute,
      env: { ...this.options.launch.env, ...extraEnv },
      outputByteLimit: limit,
    });
    this.transcript.logEvent("terminal", { terminalId, commandLine });
    return { terminalId };
  }

  private terminal(id: string) {
    const terminal = this.terminals.get(id);
    if (!terminal) throw acp.RequestError.invalidParams({ terminalId: id }, `unknown terminal ${id}`);
    return terminal;
  }

  /** The SDK drops updates of kinds it does not know; say so instead of losing them silently. */
  private checkUpdateKind(params: unknown): void {
    const kind = (params as { update?: { sessionUpdate?: unknown } } | undefined)?.update?.sessionUpdate;
    if (typeof kind === "string" && !KNOWN_UPDATE_KINDS.has(kind)) this.noteUnknown(`session/update ${kind}`);
  }

  private noteUnknown(method: string): void {
    if (this.unknownMethods.has(method)) return;
    this.unknownMethods.add(method);
    this.transcript.warn(`the agent used a method this client does not serve: ${method}`);
  }

  private async shutdown(): Promise<void> {
    this.terminals.killAll();
    if (!this.agent) return;
    if (!this.agent.exitInfo()) {
      this.agent.child.stdin.end();
      await Promise.race([this.agent.exited, sleep(300)]);
      if (!this.agent.exitInfo()) this.agent.killGroup("SIGTERM");
      await Promise.race([this.agent.exited, sleep(700)]);
    }
    // Whatever the agent left running in its process group goes too.
    this.agent.killGroup("SIGKILL");
    await Promise.race([this.agent.exited, sleep(1000)]);
    this.agent.child.stdout.destroy();
    this.agent.child.stderr.destroy();
  }

  private stderrTail(): string {
    return this.agent ? this.agent.stderr.tail() : "";
  }

  private toSessionError(error: unknown, phase?: Phase): AcpSessionError {
    if (error instanceof AcpSessionError) return error;
    if (error instanceof acp.RequestError) {
      if (error.code === -32000 && (phase === "session/new" || phase === "session/prompt")) {
        return new AcpSessionError(
          "auth_required",
          `the agent requires authentication (${this.transcript.state.authMethods.map((a) => a.id).join(", ") || "no methods offered"}); configure an auth method or its API key`,
          this.stderrTail(),
        );
      }
      return new AcpSessionError(
        "protocol_error",
        `${phase ?? "the session"} failed: ${error.message} (code ${error.code})`,
        this.stderrTail(),
        { code: error.code, data: error.data },
      );
    }
    return new AcpSessionError(
      "protocol_error",
      `${phase ?? "the session"} failed: ${messageOf(error)}`,
      this.stderrTail(),
    );
  }
}

function stripNulls<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null && v !== undefined)) as T;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
