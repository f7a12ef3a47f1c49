// Benchmark: how fast our ACP client consumes a flood of `session/update` notifications from the
// scripted test agent, next to a bare SDK client that only counts them — in one run.
// Each client runs in its own process so that its peak RSS is its own.
//   node --import tsx bench/acp-client.ts [count]
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import * as acp from "@agentclientprotocol/sdk";
import { build } from "esbuild";
import { runAgentSession } from "../src/acp/index.js";
import { buildScriptedAgent, scriptedAgentCommand, writeScript } from "../test/support/scripted-agent.js";

interface Measurement {
  client: string;
  updates: number;
  seconds: number;
  perSecond: number;
  peakRssMb: number;
}

const SELF = fileURLToPath(import.meta.url);
const ROOT = fileURLToPath(new URL("..", import.meta.url));

async function worker(
  mode: "warden" | "bare",
  agent: { command: string; args: string[] },
  dir: string,
): Promise<Measurement> {
  const { command, args } = agent;
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir };
  let first = 0;
  let last = 0;
  let updates = 0;
  if (mode === "warden") {
    const result = await runAgentSession({
      launch: { command, args, env },
      workspace: dir,
      prompt: { text: "flood" },
      decide: () => ({ outcome: "deny", reason: "bench" }),
      transcriptPath: join(dir, "transcript.jsonl"),
      onUpdate: (_state, change) => {
        if (change !== "message") return;
        if (first === 0) first = performance.now();
        last = performance.now();
      },
    });
    if (result.error) throw result.error;
    updates = result.state.counts.updates;
  } else {
    const child = spawn(command, args, { env, stdio: ["pipe", "pipe", "inherit"] });
    const stream = acp.ndJsonStream(
      Writable.toWeb(child.stdin),
      Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>,
    );
    await acp
      .client({ name: "bare" })
      .onNotification(acp.methods.client.session.update, () => {
        if (first === 0) first = performance.now();
        last = performance.now();
        updates++;
      })
      .connectWith(stream, async (agent) => {
        await agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
        const session = await agent.request(acp.methods.agent.session.new, { cwd: dir, mcpServers: [] });
        await agent.request(acp.methods.agent.session.prompt, {
          sessionId: session.sessionId,
          prompt: [{ type: "text", text: "flood" }],
        });
      });
    child.kill();
  }
  const seconds = (last - first) / 1000;
  return {
    client: mode === "warden" ? "acp-warden client" : "bare SDK client",
    updates,
    seconds,
    perSecond: updates / seconds,
    peakRssMb: process.resourceUsage().maxRSS / 1024,
  };
}

/** Bundles this file as plain JS, so the measured processes carry no TypeScript loader. */
async function bundleWorker(dir: string): Promise<string> {
  const outfile = join(dir, "bench-worker.mjs");
  await build({
    entryPoints: [SELF],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    logLevel: "warning",
  });
  return outfile;
}

function runWorker(
  workerFile: string,
  mode: string,
  agent: { command: string; args: string[] },
): Promise<Measurement> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [workerFile, "--worker", mode, JSON.stringify(agent)], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.on("close", (code) => {
      if (code !== 0) reject(new Error(`${mode} worker exited with ${code}`));
      else resolve(JSON.parse(out.trim().split("\n").pop() ?? "{}") as Measurement);
    });
  });
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv[0] === "--worker") {
    const dir = await mkdtemp(join(tmpdir(), "acp-bench-"));
    try {
      const agent = JSON.parse(argv[2] ?? "{}") as { command: string; args: string[] };
      const m = await worker(argv[1] as "warden" | "bare", agent, dir);
      process.stdout.write(`${JSON.stringify(m)}\n`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    return;
  }
  const count = Number(argv[0] ?? 100_000);
  console.log(`ACP client: ${count} session/update notifications from the scripted test agent`);
  const rows: Measurement[] = [];
  const scratch = await mkdtemp(join(ROOT, ".tmp-bench-"));
  try {
    const workerFile = await bundleWorker(scratch);
    await buildScriptedAgent();
    const scriptPath = await writeScript(scratch, {
      turns: [{ steps: [{ flood: { count, text: "token " } }] }],
    });
    const agent = scriptedAgentCommand(scriptPath);
    // Alternate the order so neither client always runs on a cold cache.
    for (const mode of ["bare", "warden", "warden", "bare"])
      rows.push(await runWorker(workerFile, mode, agent));
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  const best = (client: string) =>
    rows.filter((r) => r.client === client).reduce((a, b) => (a.perSecond >= b.perSecond ? a : b));
  const bare = best("bare SDK client");
  const ours = best("acp-warden client");
  for (const r of [bare, ours]) {
    console.log(
      `${r.client.padEnd(18)} ${r.updates} updates in ${r.seconds.toFixed(2)} s = ${Math.round(r.perSecond).toLocaleString("en")} msg/s, peak RSS ${r.peakRssMb.toFixed(0)} MB`,
    );
  }
  const ratio = ours.perSecond / bare.perSecond;
  console.log(
    `ratio ours/bare: ${ratio.toFixed(2)} (target ≥ 0.80); peak RSS ${ours.peakRssMb.toFixed(0)} MB (target < 200 MB)`,
  );
  if (ours.updates !== count)
    console.log(`WARNING: our client counted ${ours.updates} updates, expected ${count}`);
}

await main();
