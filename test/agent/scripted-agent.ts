/**
 * Scripted ACP test agent: a deterministic fake coding agent that speaks real ACP (v1) and plays
 * a JSON {@link Script} (format and reporting conventions: `./script.ts`).
 *
 * Subprocess:  node --import tsx test/agent/scripted-agent.ts <script.json>
 *              (or the script JSON in env SCRIPTED_AGENT_SCRIPT). stdout carries ACP only.
 * In-process:  createScriptedAgent(script) returns an SDK `AgentApp`; connect a client with
 *              `acp.client(...).connectWith(agentApp, op)`. One connection per app instance.
 */
import { realpathSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import * as acp from "@agentclientprotocol/sdk";
import {
  type Action,
  type ActionError,
  type ActionName,
  type ActionResult,
  DEFAULT_AGENT_INFO,
  DEFAULT_PERMISSION_OPTIONS,
  formatActionReport,
  type PermissionReport,
  parseScript,
  type Script,
  type ScriptToolCall,
  type Step,
  stepKind,
  type TerminalActionSpec,
  type TerminalResult,
  type ToolCallRawOutput,
  type ToolCallStep,
} from "./script.js";

/** Process-level effects, replaceable for in-process use. */
export interface ScriptedAgentHost {
  /** `crash` steps. Subprocess: `process.exit(code)`. In-process default: close the connection. */
  exit(code: number): void;
  /** `garbage` steps. Subprocess: raw write to stdout. In-process default: ignored. */
  writeRaw(text: string): void | Promise<void>;
  /** `closeStdout` steps. Subprocess: end stdout, stay alive. In-process default: close the connection. */
  closeOutput(): void;
}

export interface ScriptedAgentOptions {
  host?: Partial<ScriptedAgentHost>;
}

/** Thrown inside a turn when it must stop because it was cancelled. */
class Cancelled extends Error {
  constructor() {
    super("turn cancelled");
  }
}

interface SessionState {
  id: string;
  cwd: string;
  modes: acp.SessionModeState | undefined;
  configOptions: acp.SessionConfigOption[] | undefined;
  prompts: number;
  turn: AbortController | undefined;
}

interface TurnContext {
  client: acp.AgentContext;
  session: SessionState;
  signal: AbortSignal;
  prompt: acp.ContentBlock[];
}

type ActionOutcome = { ok: true; result: ActionResult } | { ok: false; error: ActionError };

const FLOOD_BATCH = 512;

function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => {});
    return Promise.reject(new Cancelled());
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new Cancelled());
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(new Cancelled());
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new Cancelled());
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** Resolves never; rejects with Cancelled when `signal` aborts. */
function untilAborted(signal: AbortSignal): Promise<never> {
  return new Promise<never>((_resolve, reject) => {
    if (signal.aborted) reject(new Cancelled());
    else signal.addEventListener("abort", () => reject(new Cancelled()), { once: true });
  });
}

function toActionError(error: unknown): ActionError {
  if (error instanceof acp.RequestError) {
    return error.data === undefined
      ? { code: error.code, message: error.message }
      : { code: error.code, message: error.message, data: error.data };
  }
  return { code: -32603, message: error instanceof Error ? error.message : String(error) };
}

function capabilityMissing(capability: string): ActionOutcome {
  return {
    ok: false,
    error: { code: "capability_missing", message: `client did not advertise ${capability}` },
  };
}

function actionName(action: Action): ActionName {
  if ("readFile" in action) return "readFile";
  if ("writeFile" in action) return "writeFile";
  return "terminal";
}

function selectValues(option: acp.SessionConfigOption & { type: "select" }): string[] {
  const entries = option.options as Array<acp.SessionConfigSelectOption | acp.SessionConfigSelectGroup>;
  return entries.flatMap((entry) => ("group" in entry ? entry.options : [entry])).map((o) => o.value);
}

export function createScriptedAgent(script: Script, options: ScriptedAgentOptions = {}): acp.AgentApp {
  const app = acp.agent({ name: script.agentInfo?.name ?? DEFAULT_AGENT_INFO.name });
  let connection: acp.AgentConnection | undefined;
  const host: ScriptedAgentHost = {
    exit: (code) => connection?.close(new Error(`scripted agent crashed with exit code ${code}`)),
    writeRaw: () => {},
    closeOutput: () => connection?.close(new Error("scripted agent closed its output")),
    ...options.host,
  };
  let clientCapabilities: acp.ClientCapabilities = {};
  let authenticated = false;
  let sessionCount = 0;
  const sessions = new Map<string, SessionState>();

  const getSession = (sessionId: string): SessionState => {
    const session = sessions.get(sessionId);
    if (!session) throw acp.RequestError.sessionNotFound(sessionId);
    return session;
  };

  // --- session/update helpers -------------------------------------------------------------

  const send = (ctx: TurnContext, update: acp.SessionUpdate): Promise<void> =>
    ctx.client.notify(acp.methods.client.session.update, { sessionId: ctx.session.id, update });

  const sendRaw = (ctx: TurnContext, update: Record<string, unknown>): Promise<void> =>
    ctx.client.notify<{ sessionId: string; update: Record<string, unknown> }>("session/update", {
      sessionId: ctx.session.id,
      update,
    });

  const text = (value: string): acp.ContentBlock => ({ type: "text", text: value });

  // --- actions ------------------------------------------------------------------------------

  const readFileAction = async (
    ctx: TurnContext,
    spec: { path: string; line?: number; limit?: number },
  ): Promise<ActionOutcome> => {
    if (!clientCapabilities.fs?.readTextFile) return capabilityMissing("fs.readTextFile");
    const filePath = path.resolve(ctx.session.cwd, spec.path);
    try {
      const response = await abortable(
        ctx.client.request(acp.methods.client.fs.readTextFile, {
          sessionId: ctx.session.id,
          path: filePath,
          ...(spec.line === undefined ? {} : { line: spec.line }),
          ...(spec.limit === undefined ? {} : { limit: spec.limit }),
        }),
        ctx.signal,
      );
      return { ok: true, result: { path: filePath, content: response.content } };
    } catch (error) {
      if (error instanceof Cancelled) throw error;
      return { ok: false, error: toActionError(error) };
    }
  };

  const writeFileAction = async (
    ctx: TurnContext,
    spec: { path: string; content: string },
  ): Promise<ActionOutcome> => {
    if (!clientCapabilities.fs?.writeTextFile) return capabilityMissing("fs.writeTextFile");
    const filePath = path.resolve(ctx.session.cwd, spec.path);
    try {
      await abortable(
        ctx.client.request(acp.methods.client.fs.writeTextFile, {
          sessionId: ctx.session.id,
          path: filePath,
          content: spec.content,
        }),
        ctx.signal,
      );
      return { ok: true, result: { path: filePath, bytes: Buffer.byteLength(spec.content) } };
    } catch (error) {
      if (error instanceof Cancelled) throw error;
      return { ok: false, error: toActionError(error) };
    }
  };

  const terminalAction = async (
    ctx: TurnContext,
    spec: TerminalActionSpec,
    toolCallId: string | undefined,
  ): Promise<ActionOutcome> => {
    if (!clientCapabilities.terminal) return capabilityMissing("terminal");
    const { client, signal } = ctx;
    const sessionId = ctx.session.id;
    let terminalId: string | undefined;
    let released = false;
    const release = async (): Promise<void> => {
      if (terminalId === undefined || released || spec.release === false) return;
      released = true;
      await client.request(acp.methods.client.terminal.release, { sessionId, terminalId });
    };
    try {
      const created: acp.CreateTerminalResponse = await abortable(
        client.request(acp.methods.client.terminal.create, {
          sessionId,
          command: spec.command,
          args: spec.args,
          env: spec.env,
          cwd: spec.cwd === undefined ? undefined : path.resolve(ctx.session.cwd, spec.cwd),
          outputByteLimit: spec.outputByteLimit,
        }),
        signal,
      );
      const id = created.terminalId;
      terminalId = id;
      if (toolCallId !== undefined) {
        await send(ctx, {
          sessionUpdate: "tool_call_update",
          toolCallId,
          content: [{ type: "terminal", terminalId: id }],
        });
      }
      const kill = () =>
        abortable(client.request(acp.methods.client.terminal.kill, { sessionId, terminalId: id }), signal);
      let killed = false;
      let timedOut = false;
      let exit: acp.WaitForTerminalExitResponse;
      if (spec.kill) {
        if (spec.waitMs !== undefined) await sleep(spec.waitMs, signal);
        await kill();
        killed = true;
        exit = await abortable(
          client.request(acp.methods.client.terminal.waitForExit, { sessionId, terminalId: id }),
          signal,
        );
      } else {
        const waiting: Promise<acp.WaitForTerminalExitResponse> = client.request(
          acp.methods.client.terminal.waitForExit,
          { sessionId, terminalId: id },
        );
        waiting.catch(() => {});
        if (spec.waitMs !== undefined) {
          let timer: NodeJS.Timeout | undefined;
          const timeout = new Promise<"timeout">((resolve) => {
            timer = setTimeout(() => resolve("timeout"), spec.waitMs);
          });
          const first = await abortable(Promise.race([waiting, timeout]), signal).finally(() =>
            clearTimeout(timer),
          );
          if (first === "timeout") {
            timedOut = true;
            await kill();
            killed = true;
          }
        }
        exit = await abortable(waiting, signal);
      }
      const output: acp.TerminalOutputResponse = await abortable(
        client.request(acp.methods.client.terminal.output, { sessionId, terminalId: id }),
        signal,
      );
      await abortable(release(), signal);
      const result: TerminalResult = {
        terminalId: id,
        exitCode: exit.exitCode ?? null,
        signal: exit.signal ?? null,
        output: output.output,
        truncated: output.truncated,
        killed,
        timedOut,
        released,
      };
      return { ok: true, result };
    } catch (error) {
      // Best effort: do not leave the terminal running behind us.
      release().catch(() => {});
      if (error instanceof Cancelled) throw error;
      return { ok: false, error: toActionError(error) };
    }
  };

  const performAction = (ctx: TurnContext, action: Action, toolCallId?: string): Promise<ActionOutcome> => {
    if ("readFile" in action) return readFileAction(ctx, action.readFile);
    if ("writeFile" in action) return writeFileAction(ctx, action.writeFile);
    return terminalAction(ctx, action.terminal, toolCallId);
  };

  // --- tool calls ---------------------------------------------------------------------------

  const finishToolCall = (
    ctx: TurnContext,
    toolCallId: string,
    status: "completed" | "failed",
    rawOutput: ToolCallRawOutput,
  ): Promise<void> => send(ctx, { sessionUpdate: "tool_call_update", toolCallId, status, rawOutput });

  /** Asks permission; returns the report and whether it was granted. */
  const askPermission = async (
    ctx: TurnContext,
    toolCall: ScriptToolCall,
    permission: NonNullable<ToolCallStep["permission"]>,
  ): Promise<{ report?: PermissionReport; granted: boolean; error?: ActionError }> => {
    const permissionOptions =
      typeof permission === "object" ? permission.options : [...DEFAULT_PERMISSION_OPTIONS];
    let response: acp.RequestPermissionResponse;
    try {
      response = await abortable(
        ctx.client.request(acp.methods.client.session.requestPermission, {
          sessionId: ctx.session.id,
          toolCall: {
            toolCallId: toolCall.id,
            title: toolCall.title,
            kind: toolCall.kind,
            status: "pending",
            ...(toolCall.rawInput === undefined ? {} : { rawInput: toolCall.rawInput }),
            ...(toolCall.locations === undefined ? {} : { locations: toolCall.locations }),
          },
          options: permissionOptions,
        }),
        ctx.signal,
      );
    } catch (error) {
      if (error instanceof Cancelled) throw error;
      return { granted: false, error: toActionError(error) };
    }
    const outcome = response.outcome;
    if (outcome.outcome === "cancelled") return { report: { outcome: "cancelled" }, granted: false };
    const selected = permissionOptions.find((option) => option.optionId === outcome.optionId);
    if (!selected) {
      return {
        report: { outcome: "selected", optionId: outcome.optionId },
        granted: false,
        error: { code: -32602, message: `unknown permission optionId ${JSON.stringify(outcome.optionId)}` },
      };
    }
    return {
      report: { outcome: "selected", optionId: selected.optionId, kind: selected.kind },
      granted: selected.kind === "allow_once" || selected.kind === "allow_always",
    };
  };

  const playToolCall = async (ctx: TurnContext, step: ToolCallStep): Promise<void> => {
    const tc = step.toolCall;
    await send(ctx, {
      sessionUpdate: "tool_call",
      toolCallId: tc.id,
      title: tc.title,
      kind: tc.kind,
      status: "pending",
      ...(tc.rawInput === undefined ? {} : { rawInput: tc.rawInput }),
      ...(tc.locations === undefined ? {} : { locations: tc.locations }),
      ...(tc.content === undefined ? {} : { content: tc.content }),
    });
    let finished = false;
    try {
      let permission: PermissionReport | undefined;
      if (step.permission) {
        const asked = await askPermission(ctx, tc, step.permission);
        permission = asked.report;
        if (!asked.granted) {
          finished = true;
          await finishToolCall(ctx, tc.id, "failed", {
            ...(asked.report === undefined ? {} : { permission: asked.report }),
            ...(asked.error === undefined ? {} : { error: asked.error }),
          });
          if (asked.report?.outcome === "cancelled" && !script.ignoreCancel) throw new Cancelled();
          return;
        }
      }
      await send(ctx, {
        sessionUpdate: "tool_call_update",
        toolCallId: tc.id,
        status: "in_progress",
        ...(permission === undefined ? {} : { rawOutput: { permission } }),
      });
      const base: ToolCallRawOutput = permission === undefined ? {} : { permission };
      if (step.action === undefined) {
        await finishToolCall(ctx, tc.id, step.then ?? "completed", base);
        return;
      }
      const outcome = await performAction(ctx, step.action, tc.id);
      if (outcome.ok) {
        await finishToolCall(ctx, tc.id, step.then ?? "completed", { ...base, result: outcome.result });
      } else {
        await finishToolCall(ctx, tc.id, "failed", { ...base, error: outcome.error });
      }
    } catch (error) {
      if (error instanceof Cancelled && !finished) {
        // Close the tool call before answering `cancelled`; best effort.
        await send(ctx, {
          sessionUpdate: "tool_call_update",
          toolCallId: tc.id,
          status: "failed",
          rawOutput: { cancelled: true },
        }).catch(() => {});
      }
      throw error;
    }
  };

  // --- steps --------------------------------------------------------------------------------

  let hugeCount = 0;

  const playStep = async (ctx: TurnContext, step: Step): Promise<void> => {
    const kind = stepKind(step);
    switch (kind) {
      case "plan": {
        const { plan } = step as { plan: Extract<Step, { plan: unknown }>["plan"] };
        await send(ctx, {
          sessionUpdate: "plan",
          entries: plan.map((entry) => ({
            content: entry.content,
            status: entry.status,
            priority: entry.priority ?? "medium",
          })),
        });
        return;
      }
      case "message":
        await send(ctx, {
          sessionUpdate: "agent_message_chunk",
          content: text((step as { message: string }).message),
        });
        return;
      case "thought":
        await send(ctx, {
          sessionUpdate: "agent_thought_chunk",
          content: text((step as { thought: string }).thought),
        });
        return;
      case "update": {
        const { update } = step as Extract<Step, { update: unknown }>;
        const modes = ctx.session.modes;
        if (
          update.sessionUpdate === "current_mode_update" &&
          typeof update.currentModeId === "string" &&
          modes
        ) {
          modes.currentModeId = update.currentModeId;
        }
        await sendRaw(ctx, update);
        return;
      }
      case "toolCall":
        await playToolCall(ctx, step as ToolCallStep);
        return;
      case "readFile":
      case "writeFile":
      case "terminal": {
        const action = step as Action;
        const outcome = await performAction(ctx, action);
        const name = actionName(action);
        const line = formatActionReport(
          outcome.ok
            ? { action: name, ok: true, result: outcome.result }
            : { action: name, ok: false, error: outcome.error },
        );
        await send(ctx, { sessionUpdate: "agent_message_chunk", content: text(line) });
        return;
      }
      case "sleepMs":
        await sleep((step as { sleepMs: number }).sleepMs, ctx.signal);
        return;
      case "hang":
        await untilAborted(ctx.signal);
        return;
      case "crash":
        host.exit((step as { crash: number }).crash);
        await untilAborted(ctx.signal);
        return;
      case "garbage":
        await host.writeRaw(`${(step as { garbage: string }).garbage}\n`);
        return;
      case "closeStdout":
        host.closeOutput();
        await untilAborted(ctx.signal);
        return;
      case "flood": {
        const { count, text: chunk = "x" } = (step as Extract<Step, { flood: unknown }>).flood;
        for (let sent = 0; sent < count; ) {
          if (ctx.signal.aborted) throw new Cancelled();
          const batch: Promise<void>[] = [];
          for (const end = Math.min(count, sent + FLOOD_BATCH); sent < end; sent++) {
            batch.push(send(ctx, { sessionUpdate: "agent_message_chunk", content: text(chunk) }));
          }
          await Promise.all(batch);
        }
        return;
      }
      case "hugeUpdate": {
        const { bytes, toolCallId = `huge-${++hugeCount}` } = (step as Extract<Step, { hugeUpdate: unknown }>)
          .hugeUpdate;
        await send(ctx, {
          sessionUpdate: "tool_call",
          toolCallId,
          title: "huge update",
          kind: "other",
          status: "in_progress",
        });
        await send(ctx, {
          sessionUpdate: "tool_call_update",
          toolCallId,
          status: "completed",
          content: [{ type: "content", content: text("x".repeat(bytes)) }],
        });
        return;
      }
      case "echoPrompt": {
        const echoed = ctx.prompt.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("\n");
        await send(ctx, { sessionUpdate: "agent_message_chunk", content: text(echoed) });
        return;
      }
    }
  };

  // --- ACP handlers -------------------------------------------------------------------------

  app.onConnect((conn) => {
    connection = conn;
  });

  app.onRequest(acp.methods.agent.initialize, async ({ params, signal }) => {
    clientCapabilities = params.clientCapabilities ?? {};
    const startup = script.startup ?? {};
    if (startup.delayMs !== undefined) await sleep(startup.delayMs, signal);
    if (startup.garbage !== undefined) await host.writeRaw(`${startup.garbage}\n`);
    if (startup.crash !== undefined) {
      host.exit(startup.crash);
      await untilAborted(signal);
    }
    if (startup.hang) await untilAborted(signal);
    return {
      protocolVersion: acp.PROTOCOL_VERSION,
      agentCapabilities: {
        loadSession: false,
        promptCapabilities: { image: false, audio: false, embeddedContext: true },
        mcpCapabilities: { http: false, sse: false },
      },
      authMethods: (script.authMethods ?? []).map((method) => ({ id: method.id, name: method.name })),
      agentInfo: script.agentInfo ?? DEFAULT_AGENT_INFO,
    };
  });

  app.onRequest(acp.methods.agent.authenticate, ({ params }) => {
    if (!script.authMethods?.some((method) => method.id === params.methodId)) {
      throw acp.RequestError.invalidParams({ methodId: params.methodId }, "unknown auth method");
    }
    authenticated = true;
    return {};
  });

  app.onRequest(acp.methods.agent.session.new, ({ params }) => {
    if (script.authMethods !== undefined && script.authMethods.length > 0 && !authenticated) {
      throw acp.RequestError.authRequired();
    }
    const id = `scripted-session-${++sessionCount}`;
    const modes: acp.SessionModeState | undefined = script.modes && {
      currentModeId: script.modes.currentModeId,
      availableModes: script.modes.availableModes.map((mode) => ({ ...mode })),
    };
    const configOptions = script.configOptions && structuredClone(script.configOptions);
    sessions.set(id, { id, cwd: params.cwd, modes, configOptions, prompts: 0, turn: undefined });
    return {
      sessionId: id,
      ...(modes === undefined ? {} : { modes: structuredClone(modes) }),
      ...(configOptions === undefined ? {} : { configOptions: structuredClone(configOptions) }),
    };
  });

  app.onRequest(acp.methods.agent.session.setMode, async ({ params, client }) => {
    const session = getSession(params.sessionId);
    const modes = session.modes;
    if (!modes) throw acp.RequestError.invalidParams(undefined, "this agent has no modes");
    if (!modes.availableModes.some((mode) => mode.id === params.modeId)) {
      throw acp.RequestError.invalidParams({ modeId: params.modeId }, "unknown mode");
    }
    if (script.modes?.modeSticks !== false) modes.currentModeId = params.modeId;
    await client.notify(acp.methods.client.session.update, {
      sessionId: session.id,
      update: { sessionUpdate: "current_mode_update", currentModeId: modes.currentModeId },
    });
    return {};
  });

  app.onRequest(acp.methods.agent.session.setConfigOption, ({ params }) => {
    const session = getSession(params.sessionId);
    const configOptions = session.configOptions;
    const index = configOptions?.findIndex((option) => option.id === params.configId) ?? -1;
    const option = configOptions?.[index];
    if (!configOptions || !option) {
      throw acp.RequestError.invalidParams({ configId: params.configId }, "unknown config option");
    }
    const value = params.value;
    if (option.type === "boolean") {
      if (typeof value !== "boolean") throw acp.RequestError.invalidParams({ value }, "expected a boolean");
      configOptions[index] = { ...option, currentValue: value };
    } else {
      if (typeof value !== "string" || !selectValues(option).includes(value)) {
        throw acp.RequestError.invalidParams({ value }, "unknown value");
      }
      configOptions[index] = { ...option, currentValue: value };
    }
    return { configOptions: structuredClone(configOptions) };
  });

  app.onRequest(acp.methods.agent.session.prompt, async ({ params, client, signal }) => {
    const session = getSession(params.sessionId);
    if (session.turn) throw acp.RequestError.invalidRequest(undefined, "a prompt is already running");
    const turn = script.turns[Math.min(session.prompts, script.turns.length - 1)];
    session.prompts++;
    const abort = new AbortController();
    const onRequestAbort = () => abort.abort();
    signal.addEventListener("abort", onRequestAbort, { once: true });
    if (signal.aborted) abort.abort();
    session.turn = abort;
    const ctx: TurnContext = { client, session, signal: abort.signal, prompt: params.prompt };
    try {
      for (const step of turn?.steps ?? []) {
        if (abort.signal.aborted) throw new Cancelled();
        await playStep(ctx, step);
      }
      if (abort.signal.aborted) throw new Cancelled();
      return { stopReason: turn?.stopReason ?? "end_turn" };
    } catch (error) {
      if (error instanceof Cancelled) return { stopReason: "cancelled" };
      if (error instanceof acp.RequestError) throw error;
      throw acp.RequestError.internalError(undefined, error instanceof Error ? error.message : String(error));
    } finally {
      signal.removeEventListener("abort", onRequestAbort);
      session.turn = undefined;
    }
  });

  app.onNotification(acp.methods.agent.session.cancel, ({ params }) => {
    if (script.ignoreCancel) return;
    sessions.get(params.sessionId)?.turn?.abort();
  });

  return app;
}

// ---------------------------------------------------------------------------------------------
// Executable

async function loadScript(): Promise<Script> {
  const file = process.argv[2];
  if (file !== undefined) return parseScript(await readFile(file, "utf8"));
  const inline = process.env.SCRIPTED_AGENT_SCRIPT;
  if (inline !== undefined) return parseScript(inline);
  throw new Error("usage: scripted-agent <script.json> (or env SCRIPTED_AGENT_SCRIPT)");
}

/** After stdout was closed on purpose, stay alive until killed or orphaned. */
function keepAliveWhileParentLives(): void {
  const parent = process.ppid;
  const started = Date.now();
  setInterval(() => {
    if (process.ppid !== parent || Date.now() - started > 120_000) process.exit(0);
  }, 200);
}

async function main(): Promise<void> {
  let script: Script;
  try {
    script = await loadScript();
  } catch (error) {
    process.stderr.write(`scripted-agent: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(2);
  }
  if (script.stderr !== undefined) process.stderr.write(script.stderr);
  let outputClosed = false;
  const host: ScriptedAgentHost = {
    exit: (code) => process.exit(code),
    writeRaw: (raw) => new Promise<void>((resolve) => process.stdout.write(raw, () => resolve())),
    closeOutput: () => {
      outputClosed = true;
      keepAliveWhileParentLives();
      process.stdout.end();
    },
  };
  const connection = createScriptedAgent(script, { host }).connect(
    acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)),
  );
  await connection.closed;
  if (!outputClosed) process.exit(0);
}

function isMain(): boolean {
  const entry = process.argv[1];
  if (entry === undefined) return false;
  try {
    return realpathSync(entry) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isMain()) void main();
