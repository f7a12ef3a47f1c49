// The headless ACP client driven against the scripted test agent as a real subprocess over stdio.
import { link, mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ActionRequest,
  type DecideFn,
  runAgentSession,
  type SessionOptions,
  type SessionResult,
  type ToolCallRecord,
} from "../../src/acp/index.js";
import type { Script, ToolCallRawOutput } from "../agent/script.js";
import { scriptedAgentCommand, writeScript } from "../support/scripted-agent.js";

let root: string;
let counter = 0;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "acp-client-"));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const allowAll: DecideFn = () => ({ outcome: "allow", reason: "test allows", ruleId: "test:allow" });
const denyAll: DecideFn = () => ({ outcome: "deny", reason: "test denies", ruleId: "test:deny" });

interface Run {
  result: SessionResult;
  workspace: string;
  requests: ActionRequest[];
}

async function run(
  script: Script,
  options: Partial<SessionOptions> & {
    files?: Record<string, string>;
    setup?: (workspace: string) => Promise<void>;
  } = {},
): Promise<Run> {
  const { files, setup, ...sessionOptions } = options;
  const dir = join(root, `case-${++counter}`);
  const workspace = join(dir, "repo");
  await mkdir(workspace, { recursive: true });
  for (const [name, content] of Object.entries(files ?? {})) {
    await mkdir(join(workspace, name, ".."), { recursive: true });
    await writeFile(join(workspace, name), content);
  }
  await setup?.(workspace);
  const scriptPath = await writeScript(dir, script);
  const { command, args } = scriptedAgentCommand(scriptPath);
  const requests: ActionRequest[] = [];
  const decide = options.decide ?? allowAll;
  const result = await runAgentSession({
    launch: { command, args, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir } },
    workspace,
    prompt: { text: "do the task" },
    transcriptPath: join(dir, "transcript.jsonl"),
    ...sessionOptions,
    decide: (request) => {
      requests.push(request);
      return decide(request);
    },
    limits: { startupTimeoutMs: 15_000, cancelGraceMs: 2_000, ...sessionOptions.limits },
  });
  return { result, workspace, requests };
}

function tool(result: SessionResult, id: string): ToolCallRecord {
  const call = result.state.toolCalls.find((c) => c.id === id);
  if (!call) throw new Error(`no tool call ${id}`);
  return call;
}

function output(result: SessionResult, id: string): ToolCallRawOutput {
  return tool(result, id).rawOutput as ToolCallRawOutput;
}

describe("a full session", () => {
  it("streams plan, tool calls and messages, serves fs and terminal requests, and writes a transcript", async () => {
    const { result, workspace, requests } = await run(
      {
        agentInfo: { name: "scripted", version: "2.0.0" },
        turns: [
          {
            steps: [
              {
                plan: [
                  { content: "read", status: "in_progress" },
                  { content: "edit", status: "pending" },
                ],
              },
              { thought: "thinking" },
              {
                toolCall: { id: "r1", title: "Read a.txt", kind: "read", locations: [{ path: "a.txt" }] },
                action: { readFile: { path: "a.txt", line: 2, limit: 2 } },
              },
              {
                toolCall: { id: "w1", title: "Write b/c.txt", kind: "edit" },
                permission: true,
                action: { writeFile: { path: "b/c.txt", content: "new file\n" } },
              },
              {
                toolCall: { id: "x1", title: "echo", kind: "execute", rawInput: { command: "echo hi" } },
                permission: true,
                action: { terminal: { command: "echo", args: ["hi there"] } },
              },
              {
                plan: [
                  { content: "read", status: "completed" },
                  { content: "edit", status: "completed" },
                ],
              },
              { update: { sessionUpdate: "usage_update", used: 1200, size: 200000 } },
              { message: "All done." },
            ],
          },
        ],
      },
      { files: { "a.txt": "one\ntwo\nthree\nfour\n" } },
    );
    expect(result.error).toBeNull();
    const { state } = result;
    expect(state.stopReason).toBe("end_turn");
    expect(state.agentInfo).toMatchObject({ name: "scripted", version: "2.0.0" });
    expect(state.protocolVersion).toBe(1);
    expect(state.plan.map((e) => e.status)).toEqual(["completed", "completed"]);
    expect(state.thoughtText).toContain("thinking");
    expect(state.agentText).toContain("All done.");
    expect(state.usage).toMatchObject({ used: 1200, size: 200000 });
    expect(output(result, "r1").result).toMatchObject({ content: "two\nthree" });
    expect(await readFile(join(workspace, "b/c.txt"), "utf8")).toBe("new file\n");
    expect(output(result, "x1").result).toMatchObject({ exitCode: 0, output: "hi there\n" });
    expect(state.toolCalls.map((c) => [c.id, c.status])).toEqual([
      ["r1", "completed"],
      ["w1", "completed"],
      ["x1", "completed"],
    ]);
    expect(tool(result, "w1").decision).toMatchObject({ outcome: "allow", answer: "allow-once" });
    expect(requests.map((r) => r.type)).toEqual([
      "fs_read",
      "permission",
      "fs_write",
      "permission",
      "terminal",
    ]);
    const terminal = requests.find((r) => r.type === "terminal");
    expect(terminal).toMatchObject({ commandLine: "echo 'hi there'", command: "echo", args: ["hi there"] });

    const lines = (await readFile(result.transcriptPath!, "utf8"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const methods = lines.filter((l) => l.dir !== "event").map((l) => l.msg.method ?? "(response)");
    expect(methods).toContain("initialize");
    expect(methods).toContain("session/prompt");
    expect(methods).toContain("fs/read_text_file");
    expect(methods).toContain("terminal/create");
    expect(lines.every((l) => typeof l.t === "number")).toBe(true);
    expect(lines.filter((l) => l.event === "decision")).toHaveLength(5);
    expect(state.counts.messagesIn).toBe(lines.filter((l) => l.dir === "in").length);
  });
});

describe("permission requests", () => {
  const ask = (
    options?: {
      optionId: string;
      name: string;
      kind: "allow_once" | "allow_always" | "reject_once" | "reject_always";
    }[],
  ): Script => ({
    turns: [
      {
        steps: [
          {
            toolCall: { id: "e1", title: "Edit x", kind: "edit", rawInput: { path: "x" } },
            permission: options ? { options } : true,
            action: { writeFile: { path: "x.txt", content: "changed" } },
          },
          { message: "after" },
        ],
      },
    ],
  });

  it("selects by kind, not by id (Gemini-style ids)", async () => {
    const options = [
      { optionId: "proceed_always", name: "Always", kind: "allow_always" as const },
      { optionId: "proceed_once", name: "Once", kind: "allow_once" as const },
      { optionId: "cancel", name: "No", kind: "reject_once" as const },
    ];
    const allowed = await run(ask(options));
    expect(output(allowed.result, "e1").permission).toMatchObject({ optionId: "proceed_once" });
    const denied = await run(ask(options), { decide: denyAll });
    expect(output(denied.result, "e1").permission).toMatchObject({ optionId: "cancel" });
    expect(denied.result.state.agentText).toContain("after");
    expect(tool(denied.result, "e1").status).toBe("failed");
  });

  it("never selects allow_always, even when it is the only allow option", async () => {
    const { result, workspace } = await run(
      ask([
        { optionId: "always", name: "Always", kind: "allow_always" },
        { optionId: "no", name: "No", kind: "reject_once" },
      ]),
      { files: { "x.txt": "orig" } },
    );
    expect(output(result, "e1").permission).toMatchObject({ optionId: "no" });
    expect(result.state.decisions[0]).toMatchObject({ outcome: "deny", answer: "no" });
    expect(result.state.decisions[0]!.reason).toContain("allow always");
    expect(result.state.stopReason).toBe("end_turn");
    expect(await readFile(join(workspace, "x.txt"), "utf8")).toBe("orig");
  });

  it("picks the reject option that does not abort the turn when two are offered", async () => {
    const { result } = await run(
      ask([
        { optionId: "approved", name: "Yes", kind: "allow_once" },
        { optionId: "abort", name: "No, and tell the agent to stop", kind: "reject_once" },
        { optionId: "denied", name: "No, continue", kind: "reject_once" },
      ]),
      { decide: denyAll },
    );
    expect(output(result, "e1").permission).toMatchObject({ optionId: "denied" });
  });

  it("lets the preset choose the reject option", async () => {
    const { result } = await run(
      ask([
        { optionId: "a", name: "Yes", kind: "allow_once" },
        { optionId: "r1", name: "No", kind: "reject_once" },
        { optionId: "r2", name: "No (keep going)", kind: "reject_once" },
      ]),
      { decide: denyAll, quirks: { pickRejectOption: (opts) => opts.find((o) => o.optionId === "r2") } },
    );
    expect(output(result, "e1").permission).toMatchObject({ optionId: "r2" });
  });

  it("hands the merged tool call (kind and rawInput) to decide and records the rule", async () => {
    const { result, requests } = await run(ask(), { decide: denyAll });
    const permission = requests.find((r) => r.type === "permission");
    expect(permission).toMatchObject({
      toolCall: { toolCallId: "e1", kind: "edit", rawInput: { path: "x" } },
    });
    expect(result.state.decisions[0]).toMatchObject({
      outcome: "deny",
      ruleId: "test:deny",
      answer: "reject-once",
    });
  });

  it("treats a decide function that throws as a denial with a warning", async () => {
    const { result } = await run(ask(), {
      decide: () => {
        throw new Error("policy exploded");
      },
    });
    expect(result.state.decisions[0]).toMatchObject({ outcome: "deny" });
    expect(result.state.decisions[0]!.reason).toContain("policy exploded");
    expect(result.state.warnings.join("\n")).toContain("policy exploded");
  });
});

describe("fs requests stay inside the workspace", () => {
  const fsStep = (path: string, write = true): Script => ({
    turns: [
      {
        steps: [
          write
            ? {
                toolCall: { id: "t", title: "write", kind: "edit" },
                action: { writeFile: { path, content: "pwned" } },
              }
            : { toolCall: { id: "t", title: "read", kind: "read" }, action: { readFile: { path } } },
        ],
      },
    ],
  });

  it.each([
    ["a relative .. path", "../outside.txt"],
    ["a nested .. path", "sub/../../outside.txt"],
  ])("refuses %s", async (_label, path) => {
    const { result, workspace, requests } = await run(fsStep(path));
    expect(output(result, "t").error?.message).toContain("outside the workspace");
    expect(requests).toHaveLength(0);
    expect(result.state.decisions[0]).toMatchObject({ outcome: "deny", ruleId: "workspace" });
    await expect(stat(join(workspace, "..", "outside.txt"))).rejects.toThrow();
  });

  it("refuses an absolute path outside, a symlink that points out, and a sibling directory sharing the prefix", async () => {
    const dir = join(root, "escape-targets");
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, "secret.txt"), "secret");
    const sibling = join(root, `case-${counter + 1}`, "repo-evil");
    await mkdir(sibling, { recursive: true });
    const { result, workspace } = await run(
      {
        turns: [
          {
            steps: [
              {
                toolCall: { id: "abs", title: "r", kind: "read" },
                action: { readFile: { path: join(dir, "secret.txt") } },
              },
              {
                toolCall: { id: "link", title: "r", kind: "read" },
                action: { readFile: { path: "out/secret.txt" } },
              },
              {
                toolCall: { id: "linkw", title: "w", kind: "edit" },
                action: { writeFile: { path: "out/new.txt", content: "x" } },
              },
              {
                toolCall: { id: "sib", title: "w", kind: "edit" },
                action: { writeFile: { path: join(sibling, "f.txt"), content: "x" } },
              },
              {
                toolCall: { id: "ok", title: "r", kind: "read" },
                action: { readFile: { path: "inside.txt" } },
              },
            ],
          },
        ],
      },
      { files: { "inside.txt": "in" }, setup: (ws) => symlink(dir, join(ws, "out")) },
    );
    expect(await readFile(join(workspace, "out", "secret.txt"), "utf8")).toBe("secret");
    for (const id of ["abs", "link", "linkw", "sib"]) {
      expect(output(result, id).error?.message, id).toContain("outside the workspace");
    }
    expect(output(result, "ok").result).toMatchObject({ content: "in" });
    await expect(stat(join(dir, "new.txt"))).rejects.toThrow();
    await expect(stat(join(sibling, "f.txt"))).rejects.toThrow();
  });

  it("refuses to write a file that has a second hard link", async () => {
    const dir = join(root, `case-${counter + 1}`);
    await mkdir(join(dir, "repo"), { recursive: true });
    await writeFile(join(dir, "outside.txt"), "original");
    await link(join(dir, "outside.txt"), join(dir, "repo", "linked.txt"));
    const { result } = await run(fsStep("linked.txt"));
    expect(output(result, "t").error?.message).toContain("hard links");
    expect(await readFile(join(dir, "outside.txt"), "utf8")).toBe("original");
  });

  it("answers a read of a missing file with an error, or with empty content when the preset says so", async () => {
    const missing = fsStep("new.txt", false);
    const strict = await run(missing);
    expect(output(strict.result, "t").error?.code).toBe(-32002);
    const lenient = await run(missing, { quirks: { missingFileRead: "empty" } });
    expect(output(lenient.result, "t").result).toMatchObject({ content: "" });
  });

  it("passes fs requests through decide and refuses what it denies", async () => {
    const { result, workspace, requests } = await run(fsStep("a.txt"), {
      files: { "a.txt": "keep" },
      decide: (r) =>
        r.type === "fs_write"
          ? { outcome: "deny", reason: "no edits", ruleId: "deny.edit[0]" }
          : { outcome: "allow", reason: "ok" },
    });
    expect(requests[0]).toMatchObject({ type: "fs_write", relativePath: "a.txt", bytes: 5 });
    expect(output(result, "t").error?.message).toContain("no edits");
    expect(await readFile(join(workspace, "a.txt"), "utf8")).toBe("keep");
  });

  it("keeps symlinks pointing inside usable", async () => {
    const dir = join(root, `case-${counter + 1}`, "repo");
    await mkdir(join(dir, "real"), { recursive: true });
    await writeFile(join(dir, "real", "f.txt"), "via link");
    await symlink(join(dir, "real"), join(dir, "alias"));
    const { result } = await run(fsStep("alias/f.txt", false));
    expect(output(result, "t").result).toMatchObject({ content: "via link" });
  });
});

describe("terminals", () => {
  it("runs only allowed commands, with the agent's env only", async () => {
    process.env.ACP_TEST_PARENT_SECRET = "leak";
    const { result, requests } = await run(
      {
        turns: [
          {
            steps: [
              {
                toolCall: { id: "env", title: "env", kind: "execute" },
                action: { terminal: { command: "env" } },
              },
              {
                toolCall: { id: "denied", title: "rm", kind: "execute" },
                action: { terminal: { command: "sh", args: ["-c", "echo ran > ran.txt"] } },
              },
            ],
          },
        ],
      },
      {
        decide: (r) =>
          r.type === "terminal" && r.command === "sh"
            ? { outcome: "deny", reason: "no shells" }
            : { outcome: "allow", reason: "ok" },
      },
    );
    delete process.env.ACP_TEST_PARENT_SECRET;
    const envOut = (output(result, "env").result as { output: string }).output;
    expect(envOut).toContain("PATH=");
    expect(envOut).not.toContain("ACP_TEST_PARENT_SECRET");
    expect(output(result, "denied").error?.message).toContain("no shells");
    expect(requests.filter((r) => r.type === "terminal")).toHaveLength(2);
  });

  it("keeps only the newest bytes of a 50 MB output", async () => {
    const { result } = await run(
      {
        turns: [
          {
            steps: [
              {
                toolCall: { id: "big", title: "big", kind: "execute" },
                action: {
                  terminal: {
                    command: "sh",
                    args: ["-c", "head -c 50000000 /dev/zero | tr '\\0' a; echo END"],
                    outputByteLimit: 1000,
                  },
                },
              },
            ],
          },
        ],
      },
      { limits: { terminalOutputBytes: 1024 * 1024 } },
    );
    const res = output(result, "big").result as { output: string; truncated: boolean; exitCode: number };
    expect(res.exitCode).toBe(0);
    expect(res.truncated).toBe(true);
    expect(res.output.length).toBeLessThanOrEqual(1000);
    expect(res.output.length).toBeGreaterThan(900);
    expect(res.output.endsWith("aEND\n")).toBe(true);
  });

  it("kills and releases a running command", async () => {
    const { result } = await run({
      turns: [
        {
          steps: [
            {
              toolCall: { id: "k", title: "sleep", kind: "execute" },
              action: { terminal: { command: "sleep", args: ["30"], kill: true, waitMs: 100 } },
            },
          ],
        },
      ],
    });
    const res = output(result, "k").result as { signal: string | null; killed: boolean; released: boolean };
    expect(res.killed).toBe(true);
    expect(res.signal).toBe("SIGKILL");
    expect(res.released).toBe(true);
  });
});

describe("limits and cancellation", () => {
  it("times out a hanging turn: session/cancel, the agent stops, the transcript so far is kept", async () => {
    const { result } = await run(
      { turns: [{ steps: [{ plan: [{ content: "step", status: "in_progress" }] }, { hang: true }] }] },
      { limits: { timeoutMs: 1000 } },
    );
    expect(result.error).toBeNull();
    expect(result.state.stopReason).toBe("cancelled");
    expect(result.state.cancelCause).toBe("timeout");
    expect(result.state.plan).toHaveLength(1);
    const log = await readFile(result.transcriptPath!, "utf8");
    expect(log).toContain('"session/cancel"');
  });

  it("answers a pending permission request `cancelled` when the deadline passes", async () => {
    const { result, workspace } = await run(
      {
        turns: [
          {
            steps: [
              {
                toolCall: { id: "p", title: "edit", kind: "edit" },
                permission: true,
                action: { writeFile: { path: "f", content: "x" } },
              },
            ],
          },
        ],
      },
      { decide: () => new Promise(() => undefined), limits: { timeoutMs: 1500 } },
    );
    expect(result.state.stopReason).toBe("cancelled");
    expect(tool(result, "p").status).toBe("failed");
    expect(result.state.decisions).toEqual([
      expect.objectContaining({ outcome: "deny", answer: "cancelled" }),
    ]);
    await expect(stat(join(workspace, "f"))).rejects.toThrow();
  });

  it("kills an agent that ignores session/cancel after the grace period", async () => {
    const started = Date.now();
    const { result } = await run(
      { ignoreCancel: true, turns: [{ steps: [{ message: "working" }, { hang: true }] }] },
      { limits: { timeoutMs: 1000, cancelGraceMs: 300 } },
    );
    expect(Date.now() - started).toBeLessThan(8_000);
    expect(result.state.stopReason).toBe("cancelled");
    expect(result.state.warnings.join("\n")).toContain("did not stop");
    expect(result.state.agentText).toContain("working");
    expect(result.exit).not.toBeNull();
  });

  it("cancels when the agent exceeds max tool calls", async () => {
    const steps = Array.from({ length: 5 }, (_, i) => ({
      toolCall: { id: `t${i}`, title: `t${i}`, kind: "think" as const },
    }));
    const { result } = await run(
      { turns: [{ steps: [...steps, { hang: true }] }] },
      { limits: { maxToolCalls: 2 } },
    );
    expect(result.state.cancelCause).toBe("max_tool_calls");
    expect(result.state.stopReason).toBe("cancelled");
  });

  it("cancels on an external abort signal", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 500);
    const { result } = await run({ turns: [{ steps: [{ hang: true }] }] }, { signal: controller.signal });
    expect(result.state.cancelCause).toBe("aborted");
    expect(result.state.stopReason).toBe("cancelled");
  });
});

describe("misbehaving agents", () => {
  it("reports an agent that hangs at start with a typed error and its stderr", async () => {
    const { result } = await run(
      { stderr: "booting slowly\n", startup: { hang: true }, turns: [] },
      { limits: { startupTimeoutMs: 3000 } },
    );
    expect(result.error?.code).toBe("startup_timeout");
    expect(result.error?.stderrTail).toContain("booting slowly");
    expect(result.error?.message).toContain("initialize");
  });

  it("reports an agent that crashes mid-turn, keeping the transcript so far", async () => {
    const { result } = await run({
      stderr: "about to fail\n",
      turns: [
        {
          steps: [{ plan: [{ content: "a", status: "in_progress" }] }, { message: "partial" }, { crash: 3 }],
        },
      ],
    });
    expect(result.error?.code).toBe("agent_exited");
    expect(result.error?.details).toMatchObject({ exitCode: 3 });
    expect(result.error?.stderrTail).toContain("about to fail");
    expect(result.state.agentText).toContain("partial");
    expect(result.state.plan).toHaveLength(1);
    const log = await readFile(result.transcriptPath!, "utf8");
    expect(log).toContain("agent_exited");
  });

  it("reports a command that cannot be started", async () => {
    const result = await runAgentSession({
      launch: { command: join(root, "no-such-agent"), args: [], env: {} },
      workspace: root,
      prompt: { text: "x" },
      decide: allowAll,
    });
    expect(result.error?.code).toBe("spawn_failed");
  });

  it("records stdout pollution as warnings and carries on", async () => {
    const { result } = await run({
      startup: { garbage: "Loading config..." },
      turns: [
        { steps: [{ garbage: "[debug] not json {" }, { garbage: "{broken json" }, { message: "fine" }] },
      ],
    });
    expect(result.error).toBeNull();
    expect(result.state.stopReason).toBe("end_turn");
    expect(result.state.counts.droppedLines).toBe(3);
    expect(result.state.warnings.join("\n")).toContain("Loading config...");
    expect(result.state.agentText).toContain("fine");
  });

  it("reports an agent that closes stdout mid-request", async () => {
    const { result } = await run({ turns: [{ steps: [{ message: "before" }, { closeStdout: true }] }] });
    // The scripted agent stays alive after closing stdout: this is a closed stream, not an exit.
    expect(result.error?.code).toBe("stream_closed");
    expect(result.state.agentText).toContain("before");
  });

  it("summarizes a 50 MB tool output instead of keeping it", async () => {
    const { result } = await run({
      turns: [{ steps: [{ hugeUpdate: { bytes: 50_000_000, toolCallId: "huge" } }, { message: "after" }] }],
    });
    expect(result.error).toBeNull();
    expect(tool(result, "huge").contentPreview.length).toBeLessThan(4096);
    expect(result.state.agentText).toContain("after");
    expect((await stat(result.transcriptPath!)).size).toBeLessThan(1024 * 1024);
  });

  it("warns about update kinds it does not know and carries on", async () => {
    const { result } = await run({
      turns: [{ steps: [{ update: { sessionUpdate: "x_custom_progress", value: 1 } }, { message: "ok" }] }],
    });
    expect(result.state.stopReason).toBe("end_turn");
    expect(result.state.agentText).toContain("ok");
    expect(result.state.warnings.join("\n")).toContain("session/update x_custom_progress");
  });
});

describe("session set-up", () => {
  it("authenticates when the agent requires it and a method is configured", async () => {
    const script: Script = {
      authMethods: [{ id: "api-key", name: "API key" }],
      turns: [{ steps: [{ message: "hi" }] }],
    };
    const ok = await run(script, { authMethodId: "api-key" });
    expect(ok.result.error).toBeNull();
    expect(ok.result.state.authMethods.map((a) => a.id)).toEqual(["api-key"]);
    const missing = await run(script);
    expect(missing.result.error?.code).toBe("auth_required");
    expect(missing.result.error?.message).toContain("api-key");
    const wrong = await run(script, { authMethodId: "oauth" });
    expect(wrong.result.error?.code).toBe("auth_failed");
  });

  it("switches the session mode and checks that it took", async () => {
    const modes = {
      currentModeId: "auto",
      availableModes: [
        { id: "auto", name: "Auto" },
        { id: "ask", name: "Ask first" },
      ],
    };
    const ok = await run({ modes, turns: [{ steps: [{ message: "hi" }] }] }, { mode: "ask" });
    expect(ok.result.error).toBeNull();
    expect(ok.result.state.currentModeId).toBe("ask");
    const unknown = await run({ modes, turns: [] }, { mode: "plan" });
    expect(unknown.result.error?.code).toBe("mode_unavailable");
    expect(unknown.result.error?.message).toContain("auto, ask");
    const stuck = await run({ modes: { ...modes, modeSticks: false }, turns: [] }, { mode: "ask" });
    expect(stuck.result.error?.code).toBe("mode_not_applied");
  });

  it("sets a model through session config options and checks that it took", async () => {
    const configOptions: Script["configOptions"] = [
      {
        id: "model",
        name: "Model",
        category: "model",
        type: "select",
        currentValue: "small",
        options: [
          { value: "small", name: "Small" },
          { value: "large", name: "Large" },
        ],
      },
    ];
    const ok = await run(
      { configOptions, turns: [{ steps: [{ message: "hi" }] }] },
      { config: { model: "large" } },
    );
    expect(ok.result.error).toBeNull();
    const bad = await run({ configOptions, turns: [] }, { config: { effort: "high" } });
    expect(bad.result.error?.code).toBe("config_not_applied");
  });

  it("sends extra context as embedded resources", async () => {
    const { result } = await run(
      { turns: [{ steps: [{ echoPrompt: true }] }] },
      {
        prompt: {
          text: "fix issue",
          resources: [{ uri: "github://issue/7", text: "The parser breaks on tabs." }],
        },
      },
    );
    expect(result.state.agentText).toContain("fix issue");
    const log = await readFile(result.transcriptPath!, "utf8");
    const prompt = log
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .find((l) => l.msg?.method === "session/prompt");
    expect(prompt.msg.params.prompt[1]).toEqual({
      type: "resource",
      resource: { uri: "github://issue/7", text: "The parser breaks on tabs.", mimeType: "text/markdown" },
    });
  });
});
