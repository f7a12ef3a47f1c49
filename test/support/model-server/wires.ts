// The four wire formats: how to read tools / tool results out of a request body, and how to
// write a reply (one tool call, or text) back, streamed or not.

import type { ServerResponse } from "node:http";
import type { JsonObject, OfferedTool, PlannedCall } from "./scenario.js";
import { nextId, sendEvent, sendJson, startSse } from "./sse.js";

export type Wire = "anthropic" | "gemini" | "openai-chat" | "openai-responses";

export type Reply =
  | { kind: "tool"; call: PlannedCall; step: number }
  | { kind: "text"; text: string; step: number | undefined }
  | { kind: "json"; value: unknown };

export interface ReplyContext {
  model: string;
  stream: boolean;
  /** Gemini: `alt=sse` framing (otherwise a streamed JSON array). */
  sse: boolean;
}

export interface WireAdapter {
  wire: Wire;
  tools(body: JsonObject): OfferedTool[];
  toolResults(body: JsonObject): number;
  /** The JSON schema of a structured-output request, if the request asks for one. */
  structuredSchema(body: JsonObject): unknown;
  write(res: ServerResponse, reply: Reply, ctx: ReplyContext): void;
}

const asObject = (v: unknown): JsonObject | undefined =>
  v && typeof v === "object" && !Array.isArray(v) ? (v as JsonObject) : undefined;
const asArray = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

function replyText(reply: Reply): string {
  if (reply.kind === "text") return reply.text;
  if (reply.kind === "json") return JSON.stringify(reply.value);
  return "";
}

function estimateTokens(s: string): number {
  return Math.max(1, Math.ceil(s.length / 4));
}

// ---------------------------------------------------------------- Anthropic Messages

function anthropicUsage(output: number): JsonObject {
  return {
    input_tokens: 100,
    output_tokens: output,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
    server_tool_use: { web_search_requests: 0, web_fetch_requests: 0 },
    service_tier: "standard",
  };
}

export const anthropic: WireAdapter = {
  wire: "anthropic",
  tools(body) {
    return asArray(body.tools).flatMap((t): OfferedTool[] => {
      const o = asObject(t);
      const name = str(o?.name);
      return name ? [{ name, kind: "function", schema: asObject(o?.input_schema) }] : [];
    });
  },
  toolResults(body) {
    let n = 0;
    for (const m of asArray(body.messages))
      for (const block of asArray(asObject(m)?.content)) if (asObject(block)?.type === "tool_result") n++;
    return n;
  },
  structuredSchema(body) {
    const format = asObject(body.output_format);
    return format?.type === "json_schema" ? (format.schema ?? {}) : undefined;
  },
  write(res, reply, ctx) {
    const id = nextId("msg_");
    const block: JsonObject =
      reply.kind === "tool"
        ? { type: "tool_use", id: nextId("toolu_"), name: reply.call.name, input: reply.call.args }
        : { type: "text", text: replyText(reply) };
    const stopReason = reply.kind === "tool" ? "tool_use" : "end_turn";
    const outTokens = estimateTokens(JSON.stringify(block));
    if (!ctx.stream) {
      sendJson(res, 200, {
        id,
        type: "message",
        role: "assistant",
        model: ctx.model,
        content: [block],
        stop_reason: stopReason,
        stop_sequence: null,
        usage: anthropicUsage(outTokens),
      });
      return;
    }
    startSse(res);
    sendEvent(
      res,
      {
        type: "message_start",
        message: {
          id,
          type: "message",
          role: "assistant",
          model: ctx.model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: anthropicUsage(1),
        },
      },
      "message_start",
    );
    if (reply.kind === "tool") {
      sendEvent(
        res,
        { type: "content_block_start", index: 0, content_block: { ...block, input: {} } },
        "content_block_start",
      );
      sendEvent(
        res,
        {
          type: "content_block_delta",
          index: 0,
          delta: { type: "input_json_delta", partial_json: JSON.stringify(reply.call.args) },
        },
        "content_block_delta",
      );
    } else {
      sendEvent(
        res,
        { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
        "content_block_start",
      );
      sendEvent(
        res,
        { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: replyText(reply) } },
        "content_block_delta",
      );
    }
    sendEvent(res, { type: "content_block_stop", index: 0 }, "content_block_stop");
    sendEvent(
      res,
      {
        type: "message_delta",
        delta: { stop_reason: stopReason, stop_sequence: null },
        usage: anthropicUsage(outTokens),
      },
      "message_delta",
    );
    sendEvent(res, { type: "message_stop" }, "message_stop");
    res.end();
  },
};

// ---------------------------------------------------------------- Gemini generateContent

export const gemini: WireAdapter = {
  wire: "gemini",
  tools(body) {
    return asArray(body.tools).flatMap((t) =>
      asArray(asObject(t)?.functionDeclarations).flatMap((d): OfferedTool[] => {
        const o = asObject(d);
        const name = str(o?.name);
        const schema = asObject(o?.parametersJsonSchema) ?? asObject(o?.parameters);
        return name ? [{ name, kind: "function", schema }] : [];
      }),
    );
  },
  toolResults(body) {
    let n = 0;
    for (const c of asArray(body.contents))
      for (const part of asArray(asObject(c)?.parts)) if (asObject(part)?.functionResponse) n++;
    return n;
  },
  structuredSchema(body) {
    const cfg = asObject(body.generationConfig) ?? asObject(body.config);
    if (!cfg) return undefined;
    const schema = cfg.responseJsonSchema ?? cfg.responseSchema;
    if (schema !== undefined) return schema;
    return cfg.responseMimeType === "application/json" ? {} : undefined;
  },
  write(res, reply, ctx) {
    const part: JsonObject =
      reply.kind === "tool"
        ? { functionCall: { id: nextId("call_"), name: reply.call.name, args: reply.call.args } }
        : { text: replyText(reply) };
    const out = estimateTokens(JSON.stringify(part));
    const chunk = {
      candidates: [{ content: { role: "model", parts: [part] }, finishReason: "STOP", index: 0 }],
      usageMetadata: { promptTokenCount: 100, candidatesTokenCount: out, totalTokenCount: 100 + out },
      modelVersion: ctx.model,
      responseId: nextId("resp_"),
    };
    if (!ctx.stream) {
      sendJson(res, 200, chunk);
      return;
    }
    if (!ctx.sse) {
      sendJson(res, 200, [chunk]);
      return;
    }
    startSse(res);
    sendEvent(res, chunk);
    res.end();
  },
};

// ---------------------------------------------------------------- OpenAI chat completions

export const openaiChat: WireAdapter = {
  wire: "openai-chat",
  tools(body) {
    return asArray(body.tools).flatMap((t): OfferedTool[] => {
      const fn = asObject(asObject(t)?.function);
      const name = str(fn?.name);
      return name ? [{ name, kind: "function", schema: asObject(fn?.parameters) }] : [];
    });
  },
  toolResults(body) {
    return asArray(body.messages).filter((m) => asObject(m)?.role === "tool").length;
  },
  structuredSchema(body) {
    const format = asObject(body.response_format);
    if (format?.type === "json_schema") return asObject(format.json_schema)?.schema ?? {};
    return format?.type === "json_object" ? {} : undefined;
  },
  write(res, reply, ctx) {
    const id = nextId("chatcmpl-");
    const created = Math.floor(Date.now() / 1000);
    const toolCall =
      reply.kind === "tool"
        ? {
            id: nextId("call_"),
            type: "function",
            function: { name: reply.call.name, arguments: JSON.stringify(reply.call.args) },
          }
        : undefined;
    const text = reply.kind === "tool" ? null : replyText(reply);
    const finish = reply.kind === "tool" ? "tool_calls" : "stop";
    const completion = estimateTokens(JSON.stringify(toolCall ?? text));
    const usage = { prompt_tokens: 100, completion_tokens: completion, total_tokens: 100 + completion };
    if (!ctx.stream) {
      sendJson(res, 200, {
        id,
        object: "chat.completion",
        created,
        model: ctx.model,
        choices: [
          {
            index: 0,
            message: { role: "assistant", content: text, ...(toolCall ? { tool_calls: [toolCall] } : {}) },
            finish_reason: finish,
          },
        ],
        usage,
      });
      return;
    }
    startSse(res);
    const base = { id, object: "chat.completion.chunk", created, model: ctx.model };
    const delta = toolCall
      ? { role: "assistant", content: null, tool_calls: [{ index: 0, ...toolCall }] }
      : { role: "assistant", content: text };
    sendEvent(res, { ...base, choices: [{ index: 0, delta, finish_reason: null }] });
    sendEvent(res, { ...base, choices: [{ index: 0, delta: {}, finish_reason: finish }] });
    sendEvent(res, { ...base, choices: [], usage });
    sendEvent(res, "[DONE]");
    res.end();
  },
};

// ---------------------------------------------------------------- OpenAI Responses

export const openaiResponses: WireAdapter = {
  wire: "openai-responses",
  tools(body) {
    return asArray(body.tools).flatMap((t): OfferedTool[] => {
      const o = asObject(t);
      const name = str(o?.name);
      if (!name) return [];
      if (o?.type === "custom") return [{ name, kind: "custom", schema: undefined }];
      return o?.type === "function" ? [{ name, kind: "function", schema: asObject(o.parameters) }] : [];
    });
  },
  toolResults(body) {
    return asArray(body.input).filter((item) => {
      const type = str(asObject(item)?.type);
      return type?.endsWith("_call_output") ?? false;
    }).length;
  },
  structuredSchema(body) {
    const format = asObject(asObject(body.text)?.format);
    return format?.type === "json_schema" ? (format.schema ?? {}) : undefined;
  },
  write(res, reply, ctx) {
    const responseId = nextId("resp_");
    const item: JsonObject =
      reply.kind === "tool"
        ? reply.call.kind === "custom"
          ? {
              type: "custom_tool_call",
              id: nextId("ctc_"),
              call_id: nextId("call_"),
              name: reply.call.name,
              input: reply.call.input ?? "",
              status: "completed",
            }
          : {
              type: "function_call",
              id: nextId("fc_"),
              call_id: nextId("call_"),
              name: reply.call.name,
              arguments: JSON.stringify(reply.call.args),
              status: "completed",
            }
        : {
            type: "message",
            id: nextId("msg_"),
            role: "assistant",
            status: "completed",
            content: [{ type: "output_text", text: replyText(reply), annotations: [] }],
          };
    const out = estimateTokens(JSON.stringify(item));
    const usage = {
      input_tokens: 100,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: out,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 100 + out,
    };
    const response = (status: string, output: JsonObject[]) => ({
      id: responseId,
      object: "response",
      created_at: Math.floor(Date.now() / 1000),
      status,
      model: ctx.model,
      output,
      usage: status === "completed" ? usage : null,
    });
    if (!ctx.stream) {
      sendJson(res, 200, response("completed", [item]));
      return;
    }
    startSse(res);
    let seq = 0;
    const emit = (type: string, data: JsonObject) => {
      sendEvent(res, { type, sequence_number: seq++, ...data }, type);
    };
    emit("response.created", { response: response("in_progress", []) });
    emit("response.in_progress", { response: response("in_progress", []) });
    const added = item.type === "message" ? { ...item, status: "in_progress", content: [] } : item;
    emit("response.output_item.added", { output_index: 0, item: added });
    if (item.type === "message") {
      const text = replyText(reply);
      const part = { type: "output_text", text: "", annotations: [] };
      emit("response.content_part.added", { item_id: item.id, output_index: 0, content_index: 0, part });
      emit("response.output_text.delta", {
        item_id: item.id,
        output_index: 0,
        content_index: 0,
        delta: text,
      });
      emit("response.output_text.done", { item_id: item.id, output_index: 0, content_index: 0, text });
      emit("response.content_part.done", {
        item_id: item.id,
        output_index: 0,
        content_index: 0,
        part: { ...part, text },
      });
    }
    emit("response.output_item.done", { output_index: 0, item });
    emit("response.completed", { response: response("completed", [item]) });
    res.end();
  },
};
