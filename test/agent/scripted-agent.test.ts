import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { scriptedAgentCommand, scriptedAgentInlineCommand, writeScript } from "../support/scripted-agent.js";
import { parseActionReports, parseScript, type Script, type ToolCallRawOutput } from "./script.js";
import { createScriptedAgent } from "./scripted-agent.js";
import {
  type AgentProcess,
  createTestClient,
  initialize,
  messageText,
  newSession,
  prompt,
  settle,
  spawnAgent,
  type TestClient,
  type TestClientOptions,
  toolCallUpdates,
} from "./test-client.js";

const CWD = "/work/repo";

/** Runs `op` against an in-process scripted agent, already initialized, with one session. */
async function inProcess<T>(
  script: Script,
  op: (agent: acp.ClientContext, sessionId: string, client: TestClient) => Promise<T>,
  options: TestClientOptions & { capabilities?: acp.ClientCapabilities } = {},
): Promise<T> {
  const client = createTestClient(options);
  return client.app.connectWith(createScriptedAgent(script), async (agent) => {
    await initialize(agent, options.capabilities);
    const { sessionId } = await newSession(agent, CWD);
    return op(agent, sessionId, client);
  });
}

function finalRawOutput(client: TestClient, toolCallId: string): { status: unknown; raw: ToolCallRawOutput } {
  const last = toolCallUpdates(client.updates, toolCallId).at(-1);
  if (!last) throw new Error(`no tool_call_update for ${toolCallId}`);
  return { status: last.status, raw: last.rawOutput as ToolCallRawOutput };
}

describe("scripted agent, in-process", () => {
  it("initializes with default agentInfo and capabilities", async () => {
    const client = createTestClient();
    const response = await client.app.connectWith(createScriptedAgent({ turns: [] }), (agent) =>
      initialize(agent),
    );
    expect(response.protocolVersion).toBe(acp.PROTOCOL_VERSION);
    expect(response.agentInfo).toEqual({ name: "scripted-agent", version: "1.0.0" });
    expect(response.agentCapabilities?.promptCapabilities?.embeddedContext).toBe(true);
    expect(response.authMethods).toEqual([]);
  });

  it("requires authentication when authMethods are set", async () => {
    const client = createTestClient();
    const script: Script = { authMethods: [{ id: "token", name: "Token" }], turns: [] };
    await client.app.connectWith(createScriptedAgent(script), async (agent) => {
      const init = await initialize(agent);
      expect(init.authMethods).toEqual([{ id: "token", name: "Token" }]);
      await expect(newSession(agent)).rejects.toMatchObject({ code: -32000 });
      await expect(agent.request(acp.methods.agent.authenticate, { methodId: "nope" })).rejects.toMatchObject(
        {
          code: -32602,
        },
      );
      await agent.request(acp.methods.agent.authenticate, { methodId: "token" });
      expect((await newSession(agent)).sessionId).toMatch(/^scripted-session-/);
    });
  });

  it("plays plan, message, thought and raw updates, with the turn's stop reason", async () => {
    const script: Script = {
      turns: [
        {
          steps: [
            {
              plan: [
                { content: "look", status: "in_progress", priority: "high" },
                { content: "fix", status: "pending" },
              ],
            },
            { thought: "hmm" },
            { message: "hello " },
            { message: "world" },
            { update: { sessionUpdate: "usage_update", used: 10, size: 100 } },
          ],
          stopReason: "max_tokens",
        },
      ],
    };
    const client = createTestClient();
    await client.app.connectWith(createScriptedAgent(script), async (agent) => {
      await initialize(agent);
      const { sessionId } = await newSession(agent);
      expect((await prompt(agent, sessionId)).stopReason).toBe("max_tokens");
      await settle();
    });
    expect(client.updates[0]).toEqual({
      sessionUpdate: "plan",
      entries: [
        { content: "look", status: "in_progress", priority: "high" },
        { content: "fix", status: "pending", priority: "medium" },
      ],
    });
    expect(client.updates[1]).toMatchObject({
      sessionUpdate: "agent_thought_chunk",
      content: { text: "hmm" },
    });
    expect(messageText(client.updates)).toBe("hello world");
    expect(client.updates).toContainEqual({ sessionUpdate: "usage_update", used: 10, size: 100 });
  });

  it("replays the last turn for extra prompts and echoes the prompt", async () => {
    const script: Script = { turns: [{ steps: [{ message: "one" }] }, { steps: [{ echoPrompt: true }] }] };
    await inProcess(script, async (agent, sessionId, client) => {
      await prompt(agent, sessionId, "first");
      await prompt(agent, sessionId, "second");
      await prompt(agent, sessionId, "third");
      await settle();
      expect(messageText(client.updates)).toBe("onesecondthird");
    });
  });

  it("sets modes (sticky or not) and config options", async () => {
    const modes = {
      currentModeId: "ask",
      availableModes: [
        { id: "ask", name: "Ask" },
        { id: "code", name: "Code" },
      ],
    };
    const configOptions: acp.SessionConfigOption[] = [
      {
        id: "model",
        name: "Model",
        type: "select",
        currentValue: "small",
        options: [
          { value: "small", name: "Small" },
          { value: "big", name: "Big" },
        ],
      },
    ];
    const client = createTestClient();
    await client.app.connectWith(createScriptedAgent({ modes, configOptions, turns: [] }), async (agent) => {
      await initialize(agent);
      const session = await newSession(agent);
      expect(session.modes?.currentModeId).toBe("ask");
      const sessionId = session.sessionId;
      await agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: "code" });
      await expect(
        agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: "yolo" }),
      ).rejects.toMatchObject({ code: -32602 });
      const set = await agent.request(acp.methods.agent.session.setConfigOption, {
        sessionId,
        configId: "model",
        value: "big",
      });
      expect(set.configOptions[0]?.currentValue).toBe("big");
      await expect(
        agent.request(acp.methods.agent.session.setConfigOption, {
          sessionId,
          configId: "model",
          value: "huge",
        }),
      ).rejects.toMatchObject({ code: -32602 });
      await settle();
    });
    expect(client.updates).toEqual([{ sessionUpdate: "current_mode_update", currentModeId: "code" }]);

    const stubborn = createTestClient();
    const script: Script = { modes: { ...modes, modeSticks: false }, turns: [] };
    await stubborn.app.connectWith(createScriptedAgent(script), async (agent) => {
      await initialize(agent);
      const { sessionId } = await newSession(agent);
      await agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: "code" });
      await settle();
    });
    expect(stubborn.updates).toEqual([{ sessionUpdate: "current_mode_update", currentModeId: "ask" }]);
  });

  it("performs a permitted action and reports the result in the tool call", async () => {
    const script: Script = {
      turns: [
        {
          steps: [
            {
              toolCall: { id: "w1", title: "Write a.txt", kind: "edit", rawInput: { path: "a.txt" } },
              permission: true,
              action: { writeFile: { path: "a.txt", content: "hi\n" } },
            },
          ],
        },
      ],
    };
    await inProcess(script, async (agent, sessionId, client) => {
      expect((await prompt(agent, sessionId)).stopReason).toBe("end_turn");
      await settle();
      expect(client.files.get("/work/repo/a.txt")).toBe("hi\n");
      const asked = client.requests.find((r) => r.method === "session/request_permission");
      expect(asked?.params).toMatchObject({
        toolCall: { toolCallId: "w1", kind: "edit", rawInput: { path: "a.txt" } },
        options: [
          { kind: "allow_once" },
          { kind: "allow_always" },
          { kind: "reject_once" },
          { kind: "reject_always" },
        ],
      });
      expect(client.updates[0]).toMatchObject({
        sessionUpdate: "tool_call",
        toolCallId: "w1",
        status: "pending",
      });
      expect(finalRawOutput(client, "w1")).toEqual({
        status: "completed",
        raw: {
          permission: { outcome: "selected", optionId: "allow-once", kind: "allow_once" },
          result: { path: "/work/repo/a.txt", bytes: 3 },
        },
      });
    });
  });

  it("does not perform a rejected action and goes on with the turn", async () => {
    const script: Script = {
      turns: [
        {
          steps: [
            {
              toolCall: { id: "w1", title: "Write", kind: "edit" },
              permission: {
                options: [
                  { optionId: "go", name: "Go", kind: "allow_once" },
                  { optionId: "no", name: "No", kind: "reject_once" },
                ],
              },
              action: { writeFile: { path: "a.txt", content: "x" } },
            },
            { message: "after" },
          ],
        },
      ],
    };
    await inProcess(
      script,
      async (agent, sessionId, client) => {
        expect((await prompt(agent, sessionId)).stopReason).toBe("end_turn");
        await settle();
        expect(client.files.size).toBe(0);
        expect(client.requests.some((r) => r.method === "fs/write_text_file")).toBe(false);
        expect(finalRawOutput(client, "w1")).toEqual({
          status: "failed",
          raw: { permission: { outcome: "selected", optionId: "no", kind: "reject_once" } },
        });
        expect(messageText(client.updates)).toBe("after");
      },
      { permission: "reject" },
    );
  });

  it("reads files through the client (relative to cwd) and reports bare actions as lines", async () => {
    const script: Script = {
      turns: [
        {
          steps: [
            { readFile: { path: "src/x.ts", line: 2, limit: 1 } },
            { readFile: { path: "/abs/missing.ts" } },
            {
              toolCall: { id: "r1", title: "Read", kind: "read" },
              action: { readFile: { path: "src/x.ts" } },
            },
          ],
        },
      ],
    };
    await inProcess(
      script,
      async (agent, sessionId, client) => {
        await prompt(agent, sessionId);
        await settle();
        expect(parseActionReports(messageText(client.updates))).toEqual([
          { action: "readFile", ok: true, result: { path: "/work/repo/src/x.ts", content: "b" } },
          {
            action: "readFile",
            ok: false,
            error: {
              code: -32002,
              message: "Resource not found: /abs/missing.ts",
              data: { uri: "/abs/missing.ts" },
            },
          },
        ]);
        expect(finalRawOutput(client, "r1")).toEqual({
          status: "completed",
          raw: { result: { path: "/work/repo/src/x.ts", content: "a\nb\nc" } },
        });
      },
      { files: { "/work/repo/src/x.ts": "a\nb\nc" } },
    );
  });

  it("reports an error instead of calling when the client lacks the capability", async () => {
    const script: Script = {
      turns: [
        {
          steps: [
            { readFile: { path: "x" } },
            {
              toolCall: { id: "t1", title: "Run", kind: "execute" },
              action: { terminal: { command: "true" } },
            },
          ],
        },
      ],
    };
    await inProcess(
      script,
      async (agent, sessionId, client) => {
        await prompt(agent, sessionId);
        await settle();
        expect(client.requests).toEqual([]);
        expect(parseActionReports(messageText(client.updates))[0]).toMatchObject({
          ok: false,
          error: { code: "capability_missing" },
        });
        expect(finalRawOutput(client, "t1")).toMatchObject({
          status: "failed",
          raw: { error: { code: "capability_missing" } },
        });
      },
      { capabilities: { fs: { readTextFile: false, writeTextFile: true } } },
    );
  });

  it("runs terminals: create, wait, output, release; and kill", async () => {
    const node = process.execPath;
    const script: Script = {
      turns: [
        {
          steps: [
            {
              toolCall: { id: "t1", title: "Run", kind: "execute" },
              permission: true,
              action: {
                terminal: {
                  command: node,
                  args: ["-e", "process.stdout.write(process.env.GREETING); process.exit(3)"],
                  env: [{ name: "GREETING", value: "hello" }],
                  cwd: os.tmpdir(),
                },
              },
            },
            { terminal: { command: node, args: ["-e", "setInterval(() => {}, 1000)"], kill: true } },
            { terminal: { command: node, args: ["-e", "setInterval(() => {}, 1000)"], waitMs: 50 } },
            {
              terminal: {
                command: node,
                args: ["-e", "console.log('x'.repeat(100))"],
                waitMs: 10_000,
                outputByteLimit: 20,
              },
            },
          ],
        },
      ],
    };
    await inProcess(script, async (agent, sessionId, client) => {
      await prompt(agent, sessionId);
      await settle();
      expect(toolCallUpdates(client.updates, "t1").some((u) => u.content?.[0]?.type === "terminal")).toBe(
        true,
      );
      expect(finalRawOutput(client, "t1")).toMatchObject({
        status: "completed",
        raw: {
          result: {
            exitCode: 3,
            signal: null,
            output: "hello",
            truncated: false,
            killed: false,
            released: true,
          },
        },
      });
      const [killed, timedOut, quick] = parseActionReports(messageText(client.updates));
      expect(killed).toMatchObject({
        ok: true,
        result: { killed: true, timedOut: false, signal: "SIGTERM" },
      });
      expect(timedOut).toMatchObject({
        ok: true,
        result: { killed: true, timedOut: true, signal: "SIGTERM" },
      });
      expect(quick).toMatchObject({
        ok: true,
        result: { exitCode: 0, killed: false, timedOut: false, truncated: true },
      });
      const methods = client.requests.map((r) => r.method).filter((m) => m.startsWith("terminal/"));
      expect(methods.slice(0, 4)).toEqual([
        "terminal/create",
        "terminal/wait_for_exit",
        "terminal/output",
        "terminal/release",
      ]);
      expect(methods).toContain("terminal/kill");
      expect(client.liveTerminals()).toBe(0);
    });
  });

  it("answers cancelled when cancelled during a hang", async () => {
    const script: Script = {
      turns: [{ steps: [{ message: "working" }, { hang: true }, { message: "never" }] }],
    };
    await inProcess(script, async (agent, sessionId, client) => {
      const pending = prompt(agent, sessionId);
      await new Promise((resolve) => setTimeout(resolve, 30));
      await agent.notify(acp.methods.agent.session.cancel, { sessionId });
      expect((await pending).stopReason).toBe("cancelled");
      await settle();
      expect(messageText(client.updates)).toBe("working");
    });
  });

  it("answers cancelled when cancelled while awaiting a permission", async () => {
    let answerCancelled: (() => void) | undefined;
    const permission = () =>
      new Promise<acp.RequestPermissionResponse>((resolve) => {
        answerCancelled = () => resolve({ outcome: { outcome: "cancelled" } });
      });
    const script: Script = {
      turns: [
        {
          steps: [
            {
              toolCall: { id: "w1", title: "Write", kind: "edit" },
              permission: true,
              action: { writeFile: { path: "a", content: "" } },
            },
          ],
        },
      ],
    };
    await inProcess(
      script,
      async (agent, sessionId, client) => {
        const pending = prompt(agent, sessionId);
        while (!answerCancelled) await new Promise((resolve) => setTimeout(resolve, 5));
        await agent.notify(acp.methods.agent.session.cancel, { sessionId });
        answerCancelled();
        expect((await pending).stopReason).toBe("cancelled");
        await settle();
        expect(client.files.size).toBe(0);
        expect(finalRawOutput(client, "w1").status).toBe("failed");
      },
      { permission },
    );
  });

  it("keeps hanging after a cancel with ignoreCancel", async () => {
    const script: Script = { ignoreCancel: true, turns: [{ steps: [{ hang: true }] }] };
    await inProcess(script, async (agent, sessionId) => {
      const pending = prompt(agent, sessionId);
      pending.catch(() => {});
      await agent.notify(acp.methods.agent.session.cancel, { sessionId });
      const winner = await Promise.race([
        pending,
        new Promise((resolve) => setTimeout(() => resolve("still hanging"), 150)),
      ]);
      expect(winner).toBe("still hanging");
    });
  });

  it("floods message chunks and sends huge updates", async () => {
    const script: Script = {
      turns: [{ steps: [{ flood: { count: 3000 } }, { hugeUpdate: { bytes: 200_000 } }] }],
    };
    await inProcess(script, async (agent, sessionId, client) => {
      await prompt(agent, sessionId);
      await settle();
      expect(client.updates.filter((u) => u.sessionUpdate === "agent_message_chunk")).toHaveLength(3000);
      const huge = toolCallUpdates(client.updates, "huge-1")[0];
      const block = huge?.content?.[0];
      expect(block?.type === "content" && block.content.type === "text" ? block.content.text.length : 0).toBe(
        200_000,
      );
    });
  });

  it("honours then: failed and rejects a selected optionId it never offered", async () => {
    const script: Script = {
      turns: [
        // biome-ignore lint/suspicious/noThenProperty: `then` is part of the script format (a string, not thenable).
        { steps: [{ toolCall: { id: "a", title: "Think", kind: "think" }, then: "failed" }] },
        { steps: [{ toolCall: { id: "b", title: "Edit", kind: "edit" }, permission: true }] },
      ],
    };
    const permission = async () => ({ outcome: { outcome: "selected" as const, optionId: "proceed_once" } });
    await inProcess(
      script,
      async (agent, sessionId, client) => {
        await prompt(agent, sessionId);
        await prompt(agent, sessionId);
        await settle();
        expect(finalRawOutput(client, "a")).toEqual({ status: "failed", raw: {} });
        expect(finalRawOutput(client, "b")).toMatchObject({
          status: "failed",
          raw: { permission: { outcome: "selected", optionId: "proceed_once" }, error: { code: -32602 } },
        });
      },
      { permission },
    );
  });

  it("delays or never answers initialize as scripted", async () => {
    const slow = createTestClient();
    const began = Date.now();
    await slow.app.connectWith(createScriptedAgent({ startup: { delayMs: 60 }, turns: [] }), (agent) =>
      initialize(agent),
    );
    expect(Date.now() - began).toBeGreaterThanOrEqual(55);

    const stuck = createTestClient();
    await stuck.app.connectWith(
      createScriptedAgent({ startup: { hang: true }, turns: [] }),
      async (agent) => {
        const pending = initialize(agent);
        pending.catch(() => {});
        const winner = await Promise.race([
          pending,
          new Promise((resolve) => setTimeout(() => resolve("hung"), 100)),
        ]);
        expect(winner).toBe("hung");
      },
    );
  });

  it("rejects scripts with unknown or ambiguous steps", () => {
    expect(() => parseScript('{"turns":[{"steps":[{"mesage":"typo"}]}]}')).toThrow(/exactly one of/);
    expect(() => parseScript('{"turns":[{"steps":[{"message":"a","thought":"b"}]}]}')).toThrow(
      /exactly one of/,
    );
    expect(() => parseScript('{"steps":[]}')).toThrow(/turns/);
    expect(parseScript('{"turns":[{"steps":[{"hang":true}]}]}').turns).toHaveLength(1);
  });

  it("closes the connection on crash (in-process)", async () => {
    const client = createTestClient();
    const script: Script = { turns: [{ steps: [{ message: "bye" }, { crash: 9 }] }] };
    const connection = client.app.connect(createScriptedAgent(script));
    await initialize(connection.agent);
    const { sessionId } = await newSession(connection.agent);
    await expect(prompt(connection.agent, sessionId)).rejects.toThrow();
    await connection.closed;
    expect(messageText(client.updates)).toBe("bye");
  });
});

describe("scripted agent, subprocess", () => {
  let dir: string;
  const spawned: AgentProcess[] = [];
  const start = (command: Parameters<typeof spawnAgent>[0]) => {
    const agentProcess = spawnAgent(command);
    spawned.push(agentProcess);
    return agentProcess;
  };
  const startScript = async (script: Script) => start(scriptedAgentCommand(await writeScript(dir, script)));

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "scripted-agent-"));
  });
  afterAll(async () => {
    for (const { child } of spawned)
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await rm(dir, { recursive: true, force: true });
  });

  // Subprocess start-up (tsx + SDK) dominates, so each process covers several step kinds.
  it.concurrent("plays a script file end to end: stderr, garbage, raw updates, permission, flood, exit", async () => {
    const script: Script = {
      agentInfo: { name: "fake", version: "9.9.9" },
      stderr: "diagnostic line\n",
      startup: { garbage: "Loading config... done" },
      turns: [
        {
          steps: [
            { plan: [{ content: "write", status: "in_progress" }] },
            {
              toolCall: { id: "w1", title: "Write", kind: "edit" },
              permission: true,
              action: { writeFile: { path: "out.txt", content: "data" } },
            },
            { garbage: "{not json" },
            { update: { sessionUpdate: "made_up_update", foo: 1 } },
            { message: "done" },
          ],
        },
        { steps: [{ flood: { count: 5000, text: "." } }] },
      ],
    };
    const agentProcess = await startScript(script);
    const client = createTestClient();
    // The client SDK rejects (and logs) the nonstandard update; the raw stdout shows it was sent.
    const quiet = vi.spyOn(console, "error").mockImplementation(() => {});
    await client.app
      .connectWith(agentProcess.stream, async (agent) => {
        expect((await initialize(agent)).agentInfo).toEqual({ name: "fake", version: "9.9.9" });
        const { sessionId } = await newSession(agent, "/tmp/ws");
        expect((await prompt(agent, sessionId)).stopReason).toBe("end_turn");
        await settle();
        expect(client.files.get("/tmp/ws/out.txt")).toBe("data");
        expect(client.updates.map((u) => u.sessionUpdate)).toEqual([
          "plan",
          "tool_call",
          "tool_call_update",
          "tool_call_update",
          "agent_message_chunk",
        ]);
        client.updates.length = 0;
        expect((await prompt(agent, sessionId)).stopReason).toBe("end_turn");
        await settle();
        expect(messageText(client.updates)).toBe(".".repeat(5000));
      })
      .finally(() => quiet.mockRestore());
    agentProcess.child.stdin?.end();
    expect(await agentProcess.exited).toEqual({ code: 0, signal: null });
    expect(agentProcess.stderr()).toContain("diagnostic line");
    const lines = agentProcess.stdout().split("\n");
    expect(lines).toContain("{not json");
    const initLine = lines.findIndex((l) => l.includes('"agentInfo"'));
    expect(lines.indexOf("Loading config... done")).toBe(initLine - 1);
    const madeUp = lines.find((l) => l.includes("made_up_update"));
    expect(JSON.parse(madeUp ?? "{}")).toMatchObject({
      method: "session/update",
      params: { update: { sessionUpdate: "made_up_update", foo: 1 } },
    });
  });

  it.concurrent("crashes with the given exit code before answering initialize", async () => {
    const agentProcess = await startScript({ startup: { crash: 7 }, turns: [] });
    const client = createTestClient();
    await expect(client.app.connectWith(agentProcess.stream, (agent) => initialize(agent))).rejects.toThrow();
    expect(await agentProcess.exited).toEqual({ code: 7, signal: null });
  });

  it.concurrent("reads SCRIPTED_AGENT_SCRIPT; cancels a hang; crashes mid-turn with the exit code", async () => {
    const agentProcess = start(
      scriptedAgentInlineCommand({
        turns: [
          { steps: [{ message: "m" }, { hang: true }] },
          { steps: [{ message: "about to die" }, { crash: 3 }] },
        ],
      }),
    );
    const client = createTestClient();
    await expect(
      client.app.connectWith(agentProcess.stream, async (agent) => {
        await initialize(agent);
        const { sessionId } = await newSession(agent);
        const pending = prompt(agent, sessionId);
        while (client.updates.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
        await agent.notify(acp.methods.agent.session.cancel, { sessionId });
        expect((await pending).stopReason).toBe("cancelled");
        await prompt(agent, sessionId);
      }),
    ).rejects.toThrow();
    expect(await agentProcess.exited).toEqual({ code: 3, signal: null });
    expect(messageText(client.updates)).toBe("mabout to die");
  });

  it.concurrent("closes stdout mid-turn and stays alive", async () => {
    const agentProcess = await startScript({
      turns: [{ steps: [{ message: "bye" }, { closeStdout: true }] }],
    });
    const client = createTestClient();
    await expect(
      client.app.connectWith(agentProcess.stream, async (agent) => {
        await initialize(agent);
        const { sessionId } = await newSession(agent);
        await prompt(agent, sessionId);
      }),
    ).rejects.toThrow();
    await agentProcess.stdoutEnded;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(agentProcess.child.exitCode).toBeNull();
    agentProcess.child.kill("SIGTERM");
    expect((await agentProcess.exited).signal).toBe("SIGTERM");
  });
});
