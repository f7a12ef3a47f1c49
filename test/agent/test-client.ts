/**
 * A bare SDK client for driving the scripted agent in tests: in-memory fs, real terminals
 * (child processes), scripted permission answers, and a log of every update and request.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

export type PermissionAnswer =
  | "allow"
  | "reject"
  | ((request: acp.RequestPermissionRequest) => Promise<acp.RequestPermissionResponse>);

export interface TestClientOptions {
  permission?: PermissionAnswer;
  files?: Record<string, string>;
}

export interface LoggedRequest {
  method: string;
  params: unknown;
}

interface TestTerminal {
  child: ChildProcess;
  output: string;
  truncated: boolean;
  limit: number | undefined;
  exit: Promise<acp.WaitForTerminalExitResponse>;
}

export interface TestClient {
  app: acp.ClientApp;
  updates: acp.SessionUpdate[];
  requests: LoggedRequest[];
  files: Map<string, string>;
  /** Number of terminals not yet released. */
  liveTerminals(): number;
}

export const ALL_CAPABILITIES: acp.ClientCapabilities = {
  fs: { readTextFile: true, writeTextFile: true },
  terminal: true,
};

function pickKind(request: acp.RequestPermissionRequest, kinds: acp.PermissionOptionKind[]): string {
  const option = request.options.find((candidate) => kinds.includes(candidate.kind));
  if (!option) throw new Error(`no option of kind ${kinds.join("|")}`);
  return option.optionId;
}

export function createTestClient(options: TestClientOptions = {}): TestClient {
  const updates: acp.SessionUpdate[] = [];
  const requests: LoggedRequest[] = [];
  const files = new Map(Object.entries(options.files ?? {}));
  const terminals = new Map<string, TestTerminal>();
  let terminalCount = 0;
  const log = (method: string, params: unknown) => requests.push({ method, params });
  const getTerminal = (id: string): TestTerminal => {
    const terminal = terminals.get(id);
    if (!terminal) throw acp.RequestError.resourceNotFound(id);
    return terminal;
  };

  const app = acp
    .client({ name: "test-client" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      updates.push(params.update);
    })
    .onRequest(acp.methods.client.session.requestPermission, async ({ params }) => {
      log("session/request_permission", params);
      const answer = options.permission ?? "allow";
      if (typeof answer === "function") return answer(params);
      const kinds: acp.PermissionOptionKind[] =
        answer === "allow" ? ["allow_once", "allow_always"] : ["reject_once", "reject_always"];
      return { outcome: { outcome: "selected", optionId: pickKind(params, kinds) } };
    })
    .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => {
      log("fs/read_text_file", params);
      const content = files.get(params.path);
      if (content === undefined) throw acp.RequestError.resourceNotFound(params.path);
      const lines = content.split("\n");
      const start = (params.line ?? 1) - 1;
      const end = params.limit == null ? lines.length : start + params.limit;
      return { content: lines.slice(start, end).join("\n") };
    })
    .onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => {
      log("fs/write_text_file", params);
      files.set(params.path, params.content);
      return {};
    })
    .onRequest(acp.methods.client.terminal.create, ({ params }) => {
      log("terminal/create", params);
      const env: Record<string, string> = {};
      for (const variable of params.env ?? []) env[variable.name] = variable.value;
      const child = spawn(params.command, params.args ?? [], {
        cwd: params.cwd ?? process.cwd(),
        env: { ...process.env, ...env },
        stdio: ["ignore", "pipe", "pipe"],
      });
      const terminal: TestTerminal = {
        child,
        output: "",
        truncated: false,
        limit: params.outputByteLimit ?? undefined,
        exit: new Promise((resolve) => {
          child.on("close", (exitCode, signal) => resolve({ exitCode, signal }));
          child.on("error", () => resolve({ exitCode: 127, signal: null }));
        }),
      };
      const append = (chunk: Buffer) => {
        terminal.output += chunk.toString("utf8");
        if (terminal.limit !== undefined && Buffer.byteLength(terminal.output) > terminal.limit) {
          terminal.output = terminal.output.slice(terminal.output.length - terminal.limit);
          terminal.truncated = true;
        }
      };
      child.stdout?.on("data", append);
      child.stderr?.on("data", append);
      const terminalId = `term-${++terminalCount}`;
      terminals.set(terminalId, terminal);
      return { terminalId };
    })
    .onRequest(acp.methods.client.terminal.output, async ({ params }) => {
      log("terminal/output", params);
      const terminal = getTerminal(params.terminalId);
      const done = terminal.child.exitCode !== null || terminal.child.signalCode !== null;
      return {
        output: terminal.output,
        truncated: terminal.truncated,
        ...(done ? { exitStatus: await terminal.exit } : {}),
      };
    })
    .onRequest(acp.methods.client.terminal.waitForExit, ({ params }) => {
      log("terminal/wait_for_exit", params);
      return getTerminal(params.terminalId).exit;
    })
    .onRequest(acp.methods.client.terminal.kill, ({ params }) => {
      log("terminal/kill", params);
      getTerminal(params.terminalId).child.kill("SIGTERM");
      return {};
    })
    .onRequest(acp.methods.client.terminal.release, ({ params }) => {
      log("terminal/release", params);
      const terminal = getTerminal(params.terminalId);
      if (terminal.child.exitCode === null && terminal.child.signalCode === null)
        terminal.child.kill("SIGKILL");
      terminals.delete(params.terminalId);
      return {};
    });

  return { app, updates, requests, files, liveTerminals: () => terminals.size };
}

export function initialize(
  agent: acp.ClientContext,
  clientCapabilities: acp.ClientCapabilities = ALL_CAPABILITIES,
): Promise<acp.InitializeResponse> {
  return agent.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities,
    clientInfo: { name: "test-client", version: "0.0.0" },
  });
}

export async function newSession(agent: acp.ClientContext, cwd = "/work"): Promise<acp.NewSessionResponse> {
  return agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
}

export function prompt(
  agent: acp.ClientContext,
  sessionId: string,
  text = "go",
): Promise<acp.PromptResponse> {
  return agent.request(acp.methods.agent.session.prompt, {
    sessionId,
    prompt: [{ type: "text", text }],
  });
}

/** Lets notification handlers that were dispatched before a response finish. */
export function settle(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 10));
}

export function messageText(updates: acp.SessionUpdate[]): string {
  return updates
    .flatMap((update) =>
      update.sessionUpdate === "agent_message_chunk" && update.content.type === "text"
        ? [update.content.text]
        : [],
    )
    .join("");
}

export function toolCallUpdates(updates: acp.SessionUpdate[], toolCallId: string) {
  return updates.flatMap((update) =>
    update.sessionUpdate === "tool_call_update" && update.toolCallId === toolCallId ? [update] : [],
  );
}

// ---------------------------------------------------------------------------------------------
// Subprocess

export interface AgentProcess {
  child: ChildProcess;
  stream: acp.Stream;
  /** Everything the agent wrote to stdout so far. */
  stdout(): string;
  stderr(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stdoutEnded: Promise<void>;
}

export function spawnAgent(command: {
  command: string;
  args: string[];
  env?: Record<string, string>;
}): AgentProcess {
  const child = spawn(command.command, command.args, {
    stdio: ["pipe", "pipe", "pipe"],
    env: { ...process.env, ...command.env },
  });
  let stdout = "";
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on("exit", (code, signal) => resolve({ code, signal }));
  });
  if (!child.stdin || !child.stdout) throw new Error("no stdio pipes");
  const [forAcp, forLog] = (Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>).tee();
  const stdoutEnded = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of forLog) stdout += decoder.decode(chunk, { stream: true });
  })();
  const stream = acp.ndJsonStream(Writable.toWeb(child.stdin) as WritableStream<Uint8Array>, forAcp);
  return { child, stream, stdout: () => stdout, stderr: () => stderr, exited, stdoutEnded };
}
