// In-process unit tests of the client's parts: framing, the transcript reducer, confinement,
// bounded buffers. The subprocess tests (client.test.ts) cover them working together.
import { mkdir, mkdtemp, readFile, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import type { AnyMessage } from "@agentclientprotocol/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { confinePath, isWithin, PathOutsideWorkspaceError } from "../../src/acp/confine.js";
import { TailBuffer } from "../../src/acp/process.js";
import { shellJoin, Terminal } from "../../src/acp/terminals.js";
import { summarize, Transcript } from "../../src/acp/transcript.js";
import { agentStream } from "../../src/acp/wire.js";

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "acp-units-"));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

async function readAll(stream: ReadableStream<AnyMessage>): Promise<AnyMessage[]> {
  const out: AnyMessage[] = [];
  for await (const message of stream as unknown as AsyncIterable<AnyMessage>) out.push(message);
  return out;
}

describe("framing", () => {
  it("reassembles lines split across chunks and drops what is not a JSON-RPC object", async () => {
    const stdout = new PassThrough();
    const invalid: string[] = [];
    const lines: string[] = [];
    const stream = agentStream(
      new PassThrough(),
      stdout,
      {
        incoming: (_m, line) => lines.push(line),
        outgoing: () => undefined,
        invalidLine: (p, r) => invalid.push(`${r}: ${p}`),
      },
      1024,
    );
    const done = readAll(stream.readable);
    stdout.write('{"jsonrpc":"2.0","met');
    stdout.write('hod":"a"}\nnot json\n[1,2]\n{"broken\n\n');
    stdout.write(`{"jsonrpc":"2.0","method":"${"x".repeat(2000)}"}\n`);
    stdout.end('{"jsonrpc":"2.0","method":"last"}');
    const messages = await done;
    expect(messages.map((m) => (m as { method: string }).method)).toEqual(["a", "last"]);
    expect(lines).toHaveLength(2);
    expect(invalid).toEqual([
      "not a JSON object: not json",
      "not a JSON object: [1,2]",
      'invalid JSON: {"broken',
      expect.stringContaining("line longer than 1024 bytes"),
    ]);
  });

  it("writes one line per outgoing message and reports it to the tap", async () => {
    const stdin = new PassThrough();
    const sent: string[] = [];
    const stream = agentStream(
      stdin,
      new PassThrough(),
      {
        incoming: () => undefined,
        outgoing: (_m, line) => sent.push(line),
        invalidLine: () => undefined,
      },
      1024,
    );
    const writer = stream.writable.getWriter();
    await writer.write({ jsonrpc: "2.0", id: 1, method: "initialize", params: {} });
    expect(stdin.read()?.toString()).toBe(`${sent[0]}\n`);
  });
});

describe("transcript", () => {
  it("upserts tool calls by id, keeps text bounded, and logs summarized lines", async () => {
    const path = join(root, "t.jsonl");
    const transcript = new Transcript(path);
    transcript.applyUpdate({
      sessionUpdate: "tool_call",
      toolCallId: "a",
      title: "Read",
      kind: "read",
      status: "pending",
    });
    transcript.applyUpdate({
      sessionUpdate: "tool_call_update",
      toolCallId: "a",
      status: "completed",
      rawOutput: { big: "y".repeat(10_000) },
    });
    for (let i = 0; i < 5000; i++) {
      transcript.applyUpdate({
        sessionUpdate: "agent_message_chunk",
        content: { type: "text", text: `chunk-${i} ${"z".repeat(20)}` },
      });
    }
    const { state } = transcript;
    expect(state.toolCalls).toHaveLength(1);
    expect(state.toolCalls[0]).toMatchObject({ id: "a", title: "Read", kind: "read", status: "completed" });
    expect(JSON.stringify(state.toolCalls[0]!.rawOutput).length).toBeLessThan(3000);
    expect(state.agentText.length).toBe(64 * 1024);
    expect(state.agentText.endsWith(`chunk-4999 ${"z".repeat(20)}`)).toBe(true);
    transcript.logLine(
      "in",
      JSON.stringify({ jsonrpc: "2.0", method: "x", params: { text: "q".repeat(200_000) } }),
    );
    transcript.close();
    const logged = (await readFile(path, "utf8")).trim().split("\n");
    expect(logged).toHaveLength(1);
    expect(logged[0]!.length).toBeLessThan(20_000);
    expect(JSON.parse(logged[0]!)).toMatchObject({ dir: "in", msg: { method: "x" } });
  });

  it("summarizes deep and wide values", () => {
    const wide = summarize(Array.from({ length: 100 }, (_, i) => i)) as unknown[];
    expect(wide).toHaveLength(51);
    expect(wide.at(-1)).toBe("[50 more items]");
    let deep: unknown = "leaf";
    for (let i = 0; i < 20; i++) deep = { next: deep };
    expect(JSON.stringify(summarize(deep))).toContain("[nested too deep]");
  });
});

describe("confinement", () => {
  it("treats a sibling directory sharing the prefix as outside", () => {
    expect(isWithin("/w/repo", "/w/repo")).toBe(true);
    expect(isWithin("/w/repo", "/w/repo/a")).toBe(true);
    expect(isWithin("/w/repo", "/w/repo-evil/a")).toBe(false);
    expect(isWithin("/w/repo", "/w")).toBe(false);
  });

  it("resolves missing paths through their deepest existing ancestor", async () => {
    const ws = join(root, "ws");
    await mkdir(join(ws, "a"), { recursive: true });
    await symlink("/etc", join(ws, "etc-link"));
    await symlink(join(root, "nowhere"), join(ws, "dangling"));
    await expect(confinePath(ws, "a/b/c.txt")).resolves.toMatchObject({
      relative: "a/b/c.txt",
      exists: false,
    });
    await expect(confinePath(ws, "etc-link/new.txt")).rejects.toBeInstanceOf(PathOutsideWorkspaceError);
    await expect(confinePath(ws, "dangling")).rejects.toBeInstanceOf(PathOutsideWorkspaceError);
    await expect(confinePath(ws, "a/../../x")).rejects.toBeInstanceOf(PathOutsideWorkspaceError);
    await expect(confinePath(ws, "a\0b")).rejects.toThrow("NUL");
  });
});

describe("bounded buffers", () => {
  it("keeps the tail of stderr", () => {
    const tail = new TailBuffer(10);
    tail.push(Buffer.from("line one\n"));
    tail.push(Buffer.from("line two\n"));
    expect(tail.byteLength).toBeLessThanOrEqual(10);
    expect(tail.tail(1)).toBe("line two");
  });

  it("never splits a UTF-8 character when it drops the oldest terminal output", async () => {
    const terminal = new Terminal({
      command: "printf",
      args: ["ééééé"],
      cwd: root,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
      outputByteLimit: 5,
    });
    await terminal.exited;
    const snap = terminal.snapshot();
    expect(snap.truncated).toBe(true);
    expect(snap.output).toBe("éé");
    expect(snap.exitStatus).toEqual({ exitCode: 0, signal: null });
  });

  it("quotes arguments the way a shell reads them back", () => {
    expect(shellJoin("echo", ["a b", "it's", "plain", ""])).toBe(`echo 'a b' 'it'\\''s' plain ''`);
  });
});
