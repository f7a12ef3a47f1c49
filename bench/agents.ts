// Benchmark: wall time of a 10-step scenario run by each real agent (offline, scripted model),
// once with a bare SDK client that allows everything and once through acp-warden
// (runAgentSession + preset + policy), in one run. Both launches use the same prepared command,
// environment and settings, so the difference is our client and the policy decisions.
//   node --import tsx bench/agents.ts [--rounds N] [--agents claude,gemini]
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import { runAgentSession } from "../src/acp/index.js";
import { createPolicyDecide, type PresetId, prepareAgent, presetFor } from "../src/agents/index.js";
import { loadShellAnalyzer } from "../src/policy/index.js";
import {
  INTEROP_BIN,
  interopInstalled,
  makeWorkspace,
  parentEnv,
  scenarioPolicy,
} from "../test/agents/interop-harness.js";
import { type ScenarioStep, startModelServer } from "../test/support/model-server/index.js";

const STEPS: ScenarioStep[] = [];
for (const [from, to] of [
  ["Hello world.", "Hello one."],
  ["Hello one.", "Hello two."],
  ["Hello two.", "Hello three."],
] as const) {
  STEPS.push(
    { tool: "read", path: "README.md" },
    { tool: "edit", path: "README.md", old: from, new: to },
    {
      tool: "shell",
      command: "printf '%s-%s\\n' inter op",
    },
  );
}
STEPS.push({ tool: "read", path: "README.md" }, { text: "Done." });
const EXPECTED_README = "# Demo\n\nHello three.\n";

type Client = "bare" | "warden";

async function bareSession(
  launch: { command: string; args: readonly string[]; env: Readonly<Record<string, string>> },
  workspace: string,
  mode: string | undefined,
  config: Record<string, string> | undefined,
  sessionMeta: Record<string, unknown> | undefined,
): Promise<string> {
  const child = spawn(launch.command, [...launch.args], {
    cwd: workspace,
    env: launch.env,
    stdio: ["pipe", "pipe", "ignore"],
    detached: true,
  });
  const stream = acp.ndJsonStream(
    Writable.toWeb(child.stdin),
    Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>,
  );
  let stop = "";
  try {
    await acp
      .client({ name: "bare" })
      .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
        const option = params.options.find((o) => o.kind === "allow_once") ?? params.options[0]!;
        return { outcome: { outcome: "selected", optionId: option.optionId } };
      })
      .onRequest(acp.methods.client.fs.readTextFile, async ({ params }) => {
        try {
          return { content: await readFile(params.path, "utf8") };
        } catch {
          return { content: "" };
        }
      })
      .onRequest(acp.methods.client.fs.writeTextFile, async ({ params }) => {
        await mkdir(dirname(params.path), { recursive: true });
        await writeFile(params.path, params.content);
        return {};
      })
      .onNotification(acp.methods.client.session.update, () => undefined)
      .connectWith(stream, async (agent) => {
        await agent.request(acp.methods.agent.initialize, {
          protocolVersion: 1,
          clientCapabilities: { fs: { readTextFile: true, writeTextFile: true } },
        });
        const session = await agent.request(acp.methods.agent.session.new, {
          cwd: workspace,
          mcpServers: [],
          ...(sessionMeta ? { _meta: sessionMeta } : {}),
        });
        if (mode && session.modes?.currentModeId !== mode)
          await agent.request(acp.methods.agent.session.setMode, {
            sessionId: session.sessionId,
            modeId: mode,
          });
        for (const [configId, value] of Object.entries(config ?? {}))
          await agent.request(acp.methods.agent.session.setConfigOption, {
            sessionId: session.sessionId,
            configId,
            value,
          });
        const response = await agent.request(acp.methods.agent.session.prompt, {
          sessionId: session.sessionId,
          prompt: [{ type: "text", text: "Follow the scripted steps." }],
        });
        stop = response.stopReason;
      });
  } finally {
    try {
      if (child.pid) process.kill(-child.pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  return stop;
}

/** Milliseconds from launch to the prompt's stop reason, and to the end of the session (shutdown included). */
async function once(id: PresetId, client: Client): Promise<{ toStop: number; total: number }> {
  const root = await realpath(await mkdtemp(join(tmpdir(), `bench-${id}-`)));
  const workspace = await makeWorkspace(root);
  const homeDir = join(root, "home");
  const server = await startModelServer({ workspace, scenario: STEPS, finalText: "Done." });
  try {
    const policy = await scenarioPolicy();
    const preset = presetFor(id, { binDir: INTEROP_BIN });
    const facts = { event: "cli" };
    const prepared = await prepareAgent(preset, {
      policy,
      facts,
      workspace,
      homeDir,
      env: parentEnv(id, server),
    });
    const started = performance.now();
    let stoppedAt = 0;
    let stop: string;
    if (client === "bare") {
      stop = await bareSession(
        prepared.launch,
        workspace,
        prepared.mode,
        prepared.config,
        prepared.sessionMeta,
      );
    } else {
      const result = await runAgentSession({
        launch: prepared.launch,
        workspace,
        prompt: { text: "Follow the scripted steps." },
        decide: createPolicyDecide(policy, facts, preset, { workspace, shell: await loadShellAnalyzer() }),
        quirks: prepared.quirks,
        ...(prepared.mode !== undefined ? { mode: prepared.mode } : {}),
        ...(prepared.config !== undefined ? { config: prepared.config } : {}),
        ...(prepared.sessionMeta !== undefined ? { sessionMeta: prepared.sessionMeta } : {}),
        transcriptPath: join(root, "transcript.jsonl"),
        limits: { startupTimeoutMs: 90_000, timeoutMs: 120_000 },
        onUpdate: (_state, change) => {
          if (change === "stop" && stoppedAt === 0) stoppedAt = performance.now();
        },
      });
      if (result.error) throw result.error;
      stop = result.state.stopReason ?? "none";
    }
    const total = performance.now() - started;
    const readme = await readFile(join(workspace, "README.md"), "utf8");
    if (readme !== EXPECTED_README)
      throw new Error(`${id}/${client}: README is ${JSON.stringify(readme)} (stop ${stop})`);
    return { toStop: (stoppedAt || performance.now()) - started, total };
  } finally {
    await server.close();
    await rm(root, { recursive: true, force: true }).catch(() => undefined);
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const rounds = Number(args[args.indexOf("--rounds") + 1] ?? 3) || 3;
  const only = args.includes("--agents") ? (args[args.indexOf("--agents") + 1] ?? "").split(",") : undefined;
  await loadShellAnalyzer();
  const ids = (["claude", "gemini", "copilot", "codex", "opencode"] as const).filter(
    (id) => (!only || only.includes(id)) && interopInstalled(id),
  );
  console.log(`10-step scenario, ${rounds} round(s) per client, alternating order; median wall time`);
  console.log("agent     bare: to stop   warden: to stop   overhead   warden total (with clean shutdown)");
  for (const id of ids) {
    const runs: Record<Client, { toStop: number; total: number }[]> = { bare: [], warden: [] };
    for (let round = 0; round < rounds; round++) {
      const order: Client[] = round % 2 === 0 ? ["bare", "warden"] : ["warden", "bare"];
      for (const client of order) runs[client].push(await once(id, client));
    }
    const bare = median(runs.bare.map((r) => r.toStop));
    const warden = median(runs.warden.map((r) => r.toStop));
    const total = median(runs.warden.map((r) => r.total));
    const overhead = ((warden - bare) / bare) * 100;
    const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
    console.log(
      `${id.padEnd(9)} ${s(bare).padStart(13)}   ${s(warden).padStart(15)}   ${`${overhead >= 0 ? "+" : ""}${overhead.toFixed(1)} %`.padStart(8)}   ${s(total).padStart(10)}`,
    );
  }
}

await main();
