// A scripted model server for running real coding agents offline and deterministically.
//
// It speaks the wire formats the agents use (Anthropic Messages, Gemini generateContent, OpenAI
// chat completions, OpenAI Responses; streamed or not) on 127.0.0.1 and a random port. Each reply
// to a request that offers tools is the scenario step at index N, where N is the number of tool
// results the conversation already holds; past the end it answers `finalText`. Requests without
// tools (titles, routing probes, JSON-schema router calls) get short text or JSON valid for the
// requested schema. Every request is recorded, raw body included, so tests can assert what
// reached the model (and what never did).

import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import zlib from "node:zlib";
import {
  type JsonObject,
  normalizeToolName,
  planToolCall,
  type ScenarioStep,
  sampleFromSchema,
} from "./scenario.js";
import { sendJson } from "./sse.js";
import {
  anthropic,
  gemini,
  openaiChat,
  openaiResponses,
  type Reply,
  type Wire,
  type WireAdapter,
} from "./wires.js";

export type { JsonObject, OfferedTool, PlannedCall, ScenarioStep, ToolStep } from "./scenario.js";
export { applyPatchText, normalizeToolName, planToolCall, sampleFromSchema } from "./scenario.js";
export type { Reply, Wire } from "./wires.js";

export interface ModelServerOptions {
  scenario?: ScenarioStep[];
  /** Relative step paths become absolute against this directory (most agents want absolute paths). */
  workspace?: string;
  /** Answer once the scenario is exhausted. */
  finalText?: string;
  /** Answer to requests that offer no tools (titles, summaries, probes). */
  auxText?: string;
  /**
   * Answer to a structured-output request (a JSON schema in the request, e.g. Gemini's router,
   * Codex's approval reviewer). Default: a minimal value valid for the schema (first enum value).
   */
  structuredReply?: (schema: unknown, request: RecordedRequest) => unknown;
  /** Model id reported in replies and in `GET /v1/models`. */
  model?: string;
  /** Called with one line per request (debugging). */
  log?: (line: string) => void;
}

export type RecordedReply = Reply | { kind: "error"; status: number; message: string };

export interface RecordedRequest {
  seq: number;
  method: string;
  /** Path and query as received. */
  url: string;
  pathname: string;
  headers: IncomingHttpHeaders;
  /** Which wire format the route belongs to; undefined for auxiliary routes (models, counts, 404s). */
  wire: Wire | undefined;
  /** The decoded request body text (after content-encoding). */
  raw: string;
  /** Parsed JSON body, or undefined when not JSON. */
  body: unknown;
  /** Tool names the request offered (as sent). */
  offeredTools: string[];
  /** Tool results the conversation already held. */
  toolResults: number;
  reply: RecordedReply | undefined;
}

export interface ModelServer {
  /** `http://127.0.0.1:<port>`, no trailing slash. */
  readonly url: string;
  readonly port: number;
  /** Base URLs to hand to each agent's configuration. */
  readonly baseUrls: { anthropic: string; gemini: string; openai: string };
  /** Every request so far, in arrival order (live array). */
  readonly requests: readonly RecordedRequest[];
  /** Requests that carried a conversation in one of the four wire formats. */
  modelRequests(): RecordedRequest[];
  /** True when the text occurs in any recorded request body, URL or header value. */
  sawText(needle: string): boolean;
  /** Replace the scenario (and reset nothing else). */
  setScenario(steps: ScenarioStep[]): void;
  clearRequests(): void;
  close(): Promise<void>;
}

const DEFAULT_MODEL = "scripted-model";

function decode(buf: Buffer, encoding: string | undefined): Buffer {
  switch ((encoding ?? "").toLowerCase()) {
    case "gzip":
      return zlib.gunzipSync(buf);
    case "deflate":
      return zlib.inflateSync(buf);
    case "br":
      return zlib.brotliDecompressSync(buf);
    case "zstd": {
      const z = (zlib as unknown as { zstdDecompressSync?: (b: Buffer) => Buffer }).zstdDecompressSync;
      if (!z) throw new Error("zstd request bodies need Node >= 22.15");
      return z(buf);
    }
    default:
      return buf;
  }
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req)
    chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks);
}

interface Route {
  adapter: WireAdapter;
  stream: (body: JsonObject) => boolean;
  sse: boolean;
  model: (body: JsonObject) => string | undefined;
}

const bodyModel = (body: JsonObject) => (typeof body.model === "string" ? body.model : undefined);

function route(method: string, pathname: string, query: URLSearchParams): Route | "aux" | undefined {
  if (method !== "POST") return undefined;
  if (/\/messages\/count_tokens$/.test(pathname)) return "aux";
  if (/\/messages$/.test(pathname))
    return { adapter: anthropic, stream: (b) => b.stream === true, sse: true, model: bodyModel };
  const g = /\/models\/([^/:]+):(streamGenerateContent|generateContent|countTokens)$/.exec(pathname);
  if (g) {
    if (g[2] === "countTokens") return "aux";
    const model = g[1];
    const stream = g[2] === "streamGenerateContent";
    return { adapter: gemini, stream: () => stream, sse: query.get("alt") === "sse", model: () => model };
  }
  if (/\/chat\/completions$/.test(pathname))
    return { adapter: openaiChat, stream: (b) => b.stream === true, sse: true, model: bodyModel };
  if (/\/responses$/.test(pathname))
    return { adapter: openaiResponses, stream: (b) => b.stream === true, sse: true, model: bodyModel };
  return undefined;
}

export async function startModelServer(options: ModelServerOptions = {}): Promise<ModelServer> {
  let scenario: ScenarioStep[] = [...(options.scenario ?? [])];
  const model = options.model ?? DEFAULT_MODEL;
  const finalText = options.finalText ?? "Done.";
  const auxText = options.auxText ?? "Scripted reply";
  const requests: RecordedRequest[] = [];
  const log = options.log;

  function choose(adapter: WireAdapter, body: JsonObject, rec: RecordedRequest): Reply {
    const tools = adapter.tools(body);
    rec.offeredTools = tools.map((t) => t.name);
    rec.toolResults = adapter.toolResults(body);
    const schema = adapter.structuredSchema(body);
    // A request for structured output is a side call (router, reviewer, title), never a scenario
    // step, even when it offers tools.
    if (schema !== undefined)
      return { kind: "json", value: options.structuredReply?.(schema, rec) ?? sampleFromSchema(schema) };
    if (tools.length === 0) return { kind: "text", text: auxText, step: undefined };
    const index = rec.toolResults;
    const step = scenario[index];
    if (!step) return { kind: "text", text: finalText, step: undefined };
    if ("text" in step) return { kind: "text", text: step.text, step: index };
    const call = planToolCall(step, tools, { workspace: options.workspace });
    if (!call) {
      const offered = tools.map((t) => normalizeToolName(t.name)).join(", ");
      return {
        kind: "text",
        text: `[model-server] no offered tool fits step ${index} (${step.tool}); offered: ${offered}`,
        step: index,
      };
    }
    return { kind: "tool", call, step: index };
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const method = req.method ?? "GET";
    const rec: RecordedRequest = {
      seq: requests.length + 1,
      method,
      url: req.url ?? "/",
      pathname: url.pathname,
      headers: req.headers,
      wire: undefined,
      raw: "",
      body: undefined,
      offeredTools: [],
      toolResults: 0,
      reply: undefined,
    };
    requests.push(rec);
    const fail = (status: number, message: string) => {
      rec.reply = { kind: "error", status, message };
      log?.(`[model-server] #${rec.seq} ${method} ${rec.url} -> ${status} ${message}`);
      sendJson(res, status, { error: { type: "invalid_request_error", message, code: status } });
    };
    try {
      const buf = await readBody(req);
      const contentEncoding = req.headers["content-encoding"];
      rec.raw = decode(buf, Array.isArray(contentEncoding) ? contentEncoding[0] : contentEncoding).toString(
        "utf8",
      );
      if (rec.raw.length > 0) {
        try {
          rec.body = JSON.parse(rec.raw);
        } catch {
          rec.body = undefined;
        }
      }
    } catch (err) {
      fail(400, `cannot read body: ${(err as Error).message}`);
      return;
    }

    if (method === "GET" && /\/models$/.test(url.pathname)) {
      const created = Math.floor(Date.now() / 1000);
      sendJson(res, 200, {
        object: "list",
        data: [{ id: model, object: "model", created, owned_by: "model-server" }],
      });
      log?.(`[model-server] #${rec.seq} GET ${rec.url} -> model list`);
      return;
    }
    if ((method === "GET" || method === "HEAD") && url.pathname === "/") {
      res.writeHead(200, { "content-type": "text/plain" });
      res.end(method === "HEAD" ? undefined : "ok");
      return;
    }
    const r = route(method, url.pathname, url.searchParams);
    if (r === "aux") {
      sendJson(res, 200, { input_tokens: 100, totalTokens: 100 });
      return;
    }
    if (!r) {
      fail(404, `model-server: no route for ${method} ${url.pathname}`);
      return;
    }
    const body =
      rec.body && typeof rec.body === "object" && !Array.isArray(rec.body)
        ? (rec.body as JsonObject)
        : undefined;
    if (!body) {
      fail(400, "model-server: request body is not a JSON object");
      return;
    }
    rec.wire = r.adapter.wire;
    const reply = choose(r.adapter, body, rec);
    rec.reply = reply;
    const stream = r.stream(body);
    log?.(
      `[model-server] #${rec.seq} ${r.adapter.wire} tools=${rec.offeredTools.length} results=${rec.toolResults} -> ${
        reply.kind === "tool"
          ? `${reply.call.name} ${reply.call.input ?? JSON.stringify(reply.call.args)}`
          : reply.kind
      }`,
    );
    r.adapter.write(res, reply, { model: r.model(body) ?? model, stream, sse: r.sse });
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: { message: String(err) } });
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;

  return {
    url,
    port,
    baseUrls: { anthropic: url, gemini: url, openai: `${url}/v1` },
    requests,
    modelRequests: () => requests.filter((r) => r.wire !== undefined),
    sawText(needle) {
      return requests.some(
        (r) =>
          r.raw.includes(needle) ||
          r.url.includes(needle) ||
          Object.values(r.headers).some((v) =>
            (Array.isArray(v) ? v.join("\n") : (v ?? "")).includes(needle),
          ),
      );
    },
    setScenario(steps) {
      scenario = [...steps];
    },
    clearRequests() {
      requests.length = 0;
    },
    close() {
      return new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
    },
  };
}
