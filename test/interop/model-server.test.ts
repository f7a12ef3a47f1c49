import { gzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import {
  type ModelServer,
  planToolCall,
  type ScenarioStep,
  sampleFromSchema,
  startModelServer,
} from "../support/model-server/index.js";

// Hand-written requests shaped like the ones the real agents sent (see interop/FINDINGS.md).

const WS = "/work/ws";
const SCENARIO: ScenarioStep[] = [
  { tool: "read", path: "README.md" },
  { tool: "edit", path: "README.md", old: "Hello world.", new: "Hello interop." },
  { tool: "shell", command: "echo hello" },
  { text: "All steps finished." },
];

type Json = Record<string, unknown>;

let server: ModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(
  scenario: ScenarioStep[] = SCENARIO,
  workspace: string | undefined = WS,
): Promise<ModelServer> {
  server = await startModelServer(workspace === undefined ? { scenario } : { scenario, workspace });
  return server;
}

async function post(
  s: ModelServer,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${s.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" || body instanceof Uint8Array ? body : JSON.stringify(body),
  });
}

interface SseEvent {
  event: string | undefined;
  data: string;
}

async function readSse(res: Response): Promise<SseEvent[]> {
  expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
  const text = await res.text();
  return text
    .split("\n\n")
    .filter((frame) => frame.trim().length > 0)
    .map((frame) => {
      let event: string | undefined;
      const data: string[] = [];
      for (const line of frame.split("\n")) {
        if (line.startsWith("event: ")) event = line.slice(7);
        else if (line.startsWith("data: ")) data.push(line.slice(6));
      }
      return { event, data: data.join("\n") };
    });
}

const jsonEvents = (events: SseEvent[]): Json[] =>
  events.filter((e) => e.data !== "[DONE]").map((e) => JSON.parse(e.data) as Json);

function obj(v: unknown): Json {
  expect(v).toBeTypeOf("object");
  return v as Json;
}

// ------------------------------------------------------------------ Anthropic

const claudeTools = [
  {
    name: "Read",
    input_schema: {
      type: "object",
      properties: { file_path: { type: "string" }, offset: { type: "number" }, limit: { type: "number" } },
      required: ["file_path"],
    },
  },
  {
    name: "Edit",
    input_schema: {
      type: "object",
      properties: {
        file_path: { type: "string" },
        old_string: { type: "string" },
        new_string: { type: "string" },
        replace_all: { type: "boolean" },
      },
      required: ["file_path", "old_string", "new_string"],
    },
  },
  {
    name: "Bash",
    input_schema: {
      type: "object",
      properties: {
        command: { type: "string" },
        description: { type: "string" },
        timeout: { type: "number" },
      },
      required: ["command"],
    },
  },
];

function anthropicRequest(toolResults: number, extra: Json = {}): Json {
  const messages: Json[] = [
    { role: "user", content: [{ type: "text", text: "Follow the scripted steps." }] },
  ];
  for (let i = 0; i < toolResults; i++) {
    messages.push({
      role: "assistant",
      content: [{ type: "tool_use", id: `t${i}`, name: "Read", input: {} }],
    });
    messages.push({ role: "user", content: [{ type: "tool_result", tool_use_id: `t${i}`, content: "ok" }] });
  }
  return {
    model: "claude-sonnet-4-6",
    max_tokens: 1024,
    stream: true,
    tools: claudeTools,
    messages,
    ...extra,
  };
}

describe("Anthropic Messages", () => {
  it("streams the step chosen by the number of tool results, with full usage fields", async () => {
    const s = await start();
    const events = await readSse(await post(s, "/v1/messages?beta=true", anthropicRequest(0)));
    expect(events.map((e) => e.event)).toEqual([
      "message_start",
      "content_block_start",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    const [start0, blockStart, delta, , messageDelta] = jsonEvents(events);
    const usage = obj(obj(obj(start0).message).usage);
    for (const field of [
      "input_tokens",
      "output_tokens",
      "cache_creation_input_tokens",
      "cache_read_input_tokens",
    ])
      expect(usage[field]).toBeTypeOf("number");
    expect(obj(obj(messageDelta).usage).cache_read_input_tokens).toBe(0);
    expect(obj(obj(messageDelta).delta).stop_reason).toBe("tool_use");
    expect(obj(obj(blockStart).content_block)).toMatchObject({ type: "tool_use", name: "Read" });
    const input = JSON.parse(String(obj(obj(delta).delta).partial_json)) as Json;
    expect(input).toEqual({ file_path: `${WS}/README.md` });

    const second = jsonEvents(await readSse(await post(s, "/v1/messages?beta=true", anthropicRequest(1))));
    expect(obj(obj(second[1]).content_block).name).toBe("Edit");
    expect(JSON.parse(String(obj(obj(second[2]).delta).partial_json))).toEqual({
      file_path: `${WS}/README.md`,
      old_string: "Hello world.",
      new_string: "Hello interop.",
    });

    const fourth = jsonEvents(await readSse(await post(s, "/v1/messages?beta=true", anthropicRequest(3))));
    expect(obj(obj(fourth[2]).delta)).toEqual({ type: "text_delta", text: "All steps finished." });
    expect(obj(obj(fourth[4]).delta).stop_reason).toBe("end_turn");
    expect(s.modelRequests().map((r) => r.toolResults)).toEqual([0, 1, 3]);
  });

  it("answers a non-streamed request without tools with short text", async () => {
    const s = await start();
    const res = await post(s, "/v1/messages", {
      model: "claude-haiku",
      max_tokens: 32,
      messages: [{ role: "user", content: "Write a title" }],
    });
    const body = obj(await res.json());
    expect(body.stop_reason).toBe("end_turn");
    expect(body.content).toEqual([{ type: "text", text: "Scripted reply" }]);
    expect(obj(body.usage).cache_creation_input_tokens).toBe(0);
  });

  it("counts tokens", async () => {
    const s = await start();
    const res = await post(s, "/v1/messages/count_tokens?beta=true", anthropicRequest(0));
    expect(obj(await res.json()).input_tokens).toBeTypeOf("number");
  });
});

// ------------------------------------------------------------------ Gemini

const geminiTools = [
  {
    functionDeclarations: [
      {
        name: "read_file",
        parametersJsonSchema: {
          type: "object",
          properties: { file_path: { type: "string" }, start_line: { type: "number" } },
          required: ["file_path"],
        },
      },
      {
        name: "replace",
        parametersJsonSchema: {
          type: "object",
          properties: {
            file_path: { type: "string" },
            instruction: { type: "string" },
            old_string: { type: "string" },
            new_string: { type: "string" },
          },
          required: ["file_path", "instruction", "old_string", "new_string"],
        },
      },
      {
        name: "run_shell_command",
        parametersJsonSchema: {
          type: "object",
          properties: { command: { type: "string" }, description: { type: "string" } },
          required: ["command"],
        },
      },
    ],
  },
];

function geminiRequest(toolResults: number): Json {
  const contents: Json[] = [{ role: "user", parts: [{ text: "Follow the scripted steps." }] }];
  for (let i = 0; i < toolResults; i++) {
    contents.push({ role: "model", parts: [{ functionCall: { name: "read_file", args: {} } }] });
    contents.push({
      role: "user",
      parts: [{ functionResponse: { name: "read_file", response: { output: "x" } } }],
    });
  }
  return { contents, tools: geminiTools, generationConfig: { temperature: 0 } };
}

describe("Gemini generateContent", () => {
  it("streams function calls over alt=sse, mapped to Gemini's tool names", async () => {
    const s = await start();
    const path = "/v1beta/models/gemini-3.1-pro-preview:streamGenerateContent?alt=sse";
    const [first] = jsonEvents(await readSse(await post(s, path, geminiRequest(1))));
    const candidate = obj((obj(first).candidates as unknown[])[0]);
    expect(candidate.finishReason).toBe("STOP");
    const part = obj((obj(candidate.content).parts as unknown[])[0]);
    expect(obj(part.functionCall)).toMatchObject({
      name: "replace",
      args: {
        file_path: `${WS}/README.md`,
        instruction: "scripted step",
        old_string: "Hello world.",
        new_string: "Hello interop.",
      },
    });
    expect(obj(first).usageMetadata).toMatchObject({ promptTokenCount: expect.any(Number) });

    const [third] = jsonEvents(await readSse(await post(s, path, geminiRequest(2))));
    const call = obj(
      obj((obj(obj((obj(third).candidates as unknown[])[0]).content).parts as unknown[])[0]).functionCall,
    );
    expect(call).toMatchObject({ name: "run_shell_command", args: { command: "echo hello" } });
  });

  it("answers the JSON-schema router call with JSON valid for the schema", async () => {
    const s = await start();
    const res = await post(s, "/v1beta/models/gemini-flash-lite:generateContent", {
      contents: [{ role: "user", parts: [{ text: "route this" }] }],
      generationConfig: {
        responseMimeType: "application/json",
        responseJsonSchema: {
          type: "object",
          properties: {
            complexity_reasoning: { type: "string" },
            complexity_score: { type: "integer", minimum: 1, maximum: 100 },
            model_choice: { type: "string", enum: ["flash", "pro"] },
          },
          required: ["complexity_reasoning", "complexity_score", "model_choice"],
        },
      },
    });
    const body = obj(await res.json());
    const text = String(
      obj((obj(obj((body.candidates as unknown[])[0]).content).parts as unknown[])[0]).text,
    );
    expect(JSON.parse(text)).toEqual({
      complexity_reasoning: "ok",
      complexity_score: 1,
      model_choice: "flash",
    });
    expect(s.requests[0]?.reply?.kind).toBe("json");
  });

  it("counts tokens", async () => {
    const s = await start();
    const res = await post(s, "/v1beta/models/gemini-3.1-pro-preview:countTokens", geminiRequest(0));
    expect(obj(await res.json()).totalTokens).toBeTypeOf("number");
  });
});

// ------------------------------------------------------------------ OpenAI chat completions

const fn = (name: string, properties: Json, required: string[]) => ({
  type: "function",
  function: { name, parameters: { type: "object", properties, required } },
});

const opencodeTools = [
  fn("read", { filePath: { type: "string" }, offset: { type: "number" } }, ["filePath"]),
  fn("edit", { filePath: { type: "string" }, oldString: { type: "string" }, newString: { type: "string" } }, [
    "filePath",
    "oldString",
    "newString",
  ]),
  fn("bash", { command: { type: "string" }, description: { type: "string" } }, ["command", "description"]),
];

const copilotTools = [
  fn("view", { path: { type: "string" }, view_range: { type: "array" } }, ["path"]),
  fn("edit", { path: { type: "string" }, old_str: { type: "string" }, new_str: { type: "string" } }, [
    "path",
  ]),
  fn("bash", { command: { type: "string" }, description: { type: "string" } }, ["command", "description"]),
];

function chatRequest(tools: unknown[], toolResults: number, stream = true): Json {
  const messages: Json[] = [
    { role: "system", content: "You are an agent." },
    { role: "user", content: "Follow the scripted steps." },
  ];
  for (let i = 0; i < toolResults; i++) {
    messages.push({
      role: "assistant",
      content: null,
      tool_calls: [{ id: `c${i}`, type: "function", function: { name: "read", arguments: "{}" } }],
    });
    messages.push({ role: "tool", tool_call_id: `c${i}`, content: "ok" });
  }
  return { model: "gpt-5", stream, stream_options: { include_usage: true }, tools, messages };
}

describe("OpenAI chat completions", () => {
  it("streams a tool call in opencode's argument shape, then finishes with [DONE]", async () => {
    const s = await start();
    const events = await readSse(await post(s, "/v1/chat/completions", chatRequest(opencodeTools, 1)));
    expect(events.at(-1)?.data).toBe("[DONE]");
    const chunks = jsonEvents(events);
    const first = obj((obj(chunks[0]).choices as unknown[])[0]);
    const toolCall = obj((obj(first.delta).tool_calls as unknown[])[0]);
    expect(toolCall.index).toBe(0);
    expect(obj(toolCall.function).name).toBe("edit");
    expect(JSON.parse(String(obj(toolCall.function).arguments))).toEqual({
      filePath: `${WS}/README.md`,
      oldString: "Hello world.",
      newString: "Hello interop.",
    });
    expect(obj((obj(chunks[1]).choices as unknown[])[0]).finish_reason).toBe("tool_calls");
    expect(obj(chunks[2]).usage).toMatchObject({ total_tokens: expect.any(Number) });
  });

  it("fills Copilot's view/edit/bash arguments, non-streamed too", async () => {
    const s = await start();
    const res = await post(s, "/v1/chat/completions", chatRequest(copilotTools, 0, false));
    const message = obj(obj((obj(await res.json()).choices as unknown[])[0]).message);
    const call = obj((message.tool_calls as unknown[])[0]);
    expect(obj(call.function).name).toBe("view");
    expect(JSON.parse(String(obj(call.function).arguments))).toEqual({ path: `${WS}/README.md` });

    const shell = await post(s, "/v1/chat/completions", chatRequest(copilotTools, 2, false));
    const shellCall = obj(
      (obj(obj((obj(await shell.json()).choices as unknown[])[0]).message).tool_calls as unknown[])[0],
    );
    expect(JSON.parse(String(obj(shellCall.function).arguments))).toEqual({
      command: "echo hello",
      description: "scripted step",
    });
  });

  it("answers a title request (no tools) with text, and serves a model list", async () => {
    const s = await start();
    const events = jsonEvents(await readSse(await post(s, "/v1/chat/completions", chatRequest([], 0))));
    expect(obj(obj((obj(events[0]).choices as unknown[])[0]).delta).content).toBe("Scripted reply");
    const models = obj(await (await fetch(`${s.url}/v1/models`)).json());
    expect(models.data).toEqual([expect.objectContaining({ id: "scripted-model" })]);
  });
});

// ------------------------------------------------------------------ OpenAI Responses

const codexTools = [
  {
    type: "function",
    name: "exec_command",
    parameters: {
      type: "object",
      properties: { cmd: { type: "string" }, workdir: { type: "string" }, justification: { type: "string" } },
      required: ["cmd"],
    },
  },
  {
    type: "custom",
    name: "apply_patch",
    format: { type: "grammar", syntax: "lark", definition: "start: x" },
  },
  { type: "web_search" },
];

function responsesRequest(toolResults: number, extra: Json = {}): Json {
  const input: Json[] = [
    { type: "message", role: "user", content: [{ type: "input_text", text: "Follow the scripted steps." }] },
  ];
  for (let i = 0; i < toolResults; i++) {
    input.push({ type: "function_call", call_id: `c${i}`, name: "exec_command", arguments: "{}" });
    input.push({ type: "function_call_output", call_id: `c${i}`, output: "ok" });
  }
  return { model: "gpt-5.5", stream: true, tools: codexTools, input, ...extra };
}

describe("OpenAI Responses", () => {
  it("reads through the shell when no read tool is offered", async () => {
    const s = await start(SCENARIO, undefined);
    const events = await readSse(await post(s, "/v1/responses", responsesRequest(0)));
    const types = events.map((e) => e.event);
    expect(types[0]).toBe("response.created");
    expect(types.at(-1)).toBe("response.completed");
    const done = jsonEvents(events).find((e) => e.type === "response.output_item.done");
    const item = obj(obj(done).item);
    expect(item).toMatchObject({ type: "function_call", name: "exec_command" });
    expect(JSON.parse(String(item.arguments))).toEqual({ cmd: "cat 'README.md'" });
    const completed = obj(jsonEvents(events).at(-1));
    expect(obj(completed.response).usage).toMatchObject({
      input_tokens: 100,
      total_tokens: expect.any(Number),
    });
  });

  it("edits through Codex's free-form apply_patch tool", async () => {
    const s = await start(SCENARIO, undefined);
    const events = jsonEvents(await readSse(await post(s, "/v1/responses", responsesRequest(1))));
    const item = obj(obj(events.find((e) => e.type === "response.output_item.done")).item);
    expect(item.type).toBe("custom_tool_call");
    expect(item.name).toBe("apply_patch");
    expect(item.input).toBe(
      [
        "*** Begin Patch",
        "*** Update File: README.md",
        "@@",
        "-Hello world.",
        "+Hello interop.",
        "*** End Patch",
        "",
      ].join("\n"),
    );
  });

  it("streams final text as an output_text message", async () => {
    const s = await start(SCENARIO, undefined);
    const events = jsonEvents(await readSse(await post(s, "/v1/responses", responsesRequest(3))));
    const delta = events.find((e) => e.type === "response.output_text.delta");
    expect(obj(delta).delta).toBe("All steps finished.");
    const item = obj(obj(events.find((e) => e.type === "response.output_item.done")).item);
    expect(item).toMatchObject({ type: "message", role: "assistant" });
  });

  it("answers a structured-output side call (Codex's approval reviewer) with JSON even when tools are offered", async () => {
    const s = await start();
    const schema = {
      type: "object",
      properties: {
        risk_level: { type: "string", enum: ["low", "medium", "high"] },
        outcome: { type: "string", enum: ["allow", "deny"] },
      },
      required: ["outcome"],
    };
    const request = responsesRequest(0, { text: { format: { type: "json_schema", name: "out", schema } } });
    const events = jsonEvents(await readSse(await post(s, "/v1/responses", request)));
    const text = obj(events.find((e) => e.type === "response.output_text.done")).text;
    expect(JSON.parse(String(text))).toEqual({ outcome: "allow" });
  });
});

// ------------------------------------------------------------------ recording and mapping

describe("recording", () => {
  it("records every request body, decoded, so a test can assert a secret never reached the model", async () => {
    const s = await start();
    const secret = "ghp_SECRET_should_never_leak";
    await post(s, "/v1/messages?beta=true", gzipSync(JSON.stringify(anthropicRequest(0))), {
      "content-encoding": "gzip",
    });
    await post(s, "/v1/chat/completions", chatRequest(opencodeTools, 0));
    expect(s.sawText(secret)).toBe(false);
    await post(s, "/v1/chat/completions", {
      ...chatRequest(opencodeTools, 0),
      messages: [{ role: "user", content: `token ${secret}` }],
    });
    expect(s.sawText(secret)).toBe(true);
    const [first] = s.requests;
    expect(first).toMatchObject({ wire: "anthropic", pathname: "/v1/messages", toolResults: 0 });
    expect(first?.offeredTools).toEqual(["Read", "Edit", "Bash"]);
    expect(obj(first?.body).model).toBe("claude-sonnet-4-6");
    expect(first?.reply).toMatchObject({ kind: "tool", step: 0, call: { name: "Read" } });
  });

  it("records unknown routes as 404s", async () => {
    const s = await start();
    const res = await post(s, "/v1/embeddings", { input: "x" });
    expect(res.status).toBe(404);
    expect(s.requests[0]?.reply).toMatchObject({ kind: "error", status: 404 });
  });

  it("answers with a diagnostic text when no offered tool fits a step", async () => {
    const s = await start([{ tool: "edit", path: "a", old: "x", new: "y" }]);
    const res = await post(s, "/v1/chat/completions", chatRequest([fn("search", {}, [])], 0, false));
    const message = obj(obj((obj(await res.json()).choices as unknown[])[0]).message);
    expect(String(message.content)).toMatch(/no offered tool fits step 0 \(edit\)/);
  });
});

describe("planToolCall", () => {
  it("passes an argv array to a shell tool whose command is an array", () => {
    const call = planToolCall(
      { tool: "shell", command: "echo hi" },
      [
        {
          name: "shell",
          kind: "function",
          schema: {
            type: "object",
            properties: {
              command: { type: "array", items: { type: "string" } },
              workdir: { type: "string" },
            },
            required: ["command"],
          },
        },
      ],
      { workspace: undefined },
    );
    expect(call).toEqual({
      name: "shell",
      kind: "function",
      args: { command: ["bash", "-lc", "echo hi"] },
      intent: "shell",
    });
  });

  it("prefers MCP-prefixed tools by their base name and writes files with write tools", () => {
    const call = planToolCall(
      { tool: "write", path: "new.txt", content: "hi\n" },
      [
        {
          name: "mcp__acp__Write",
          kind: "function",
          schema: {
            type: "object",
            properties: { file_path: { type: "string" }, content: { type: "string" } },
            required: ["file_path", "content"],
          },
        },
      ],
      { workspace: "/w" },
    );
    expect(call?.name).toBe("mcp__acp__Write");
    expect(call?.args).toEqual({ file_path: "/w/new.txt", content: "hi\n" });
  });

  it("samples schemas: enums, minimums, nested required objects", () => {
    expect(
      sampleFromSchema({
        type: "OBJECT",
        properties: {
          next_speaker: { type: "STRING", enum: ["model", "user"] },
          n: { type: "INTEGER", minimum: 3 },
          inner: { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] },
        },
        required: ["next_speaker", "n", "inner"],
      }),
    ).toEqual({ next_speaker: "user", n: 3, inner: { ok: false } });
  });
});
