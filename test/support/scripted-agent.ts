/**
 * Helpers for tests that run the scripted ACP test agent (`test/agent/scripted-agent.ts`) as a
 * real subprocess.
 */
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { Script } from "../agent/script.js";

export type { Script } from "../agent/script.js";

/** Absolute path of the scripted agent's entry point. */
export const SCRIPTED_AGENT_ENTRY = fileURLToPath(new URL("../agent/scripted-agent.ts", import.meta.url));

/** `file:` URL of tsx's ESM loader, so `--import` resolves from any cwd. */
const TSX_LOADER = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;

/** Writes `script` as JSON into `dir` under a unique name; returns its absolute path. */
export async function writeScript(dir: string, script: Script): Promise<string> {
  const file = path.resolve(dir, `scripted-agent-${randomUUID()}.json`);
  await writeFile(file, `${JSON.stringify(script, null, 2)}\n`, "utf8");
  return file;
}

/**
 * The scripted agent bundled as plain JS (by `buildScriptedAgent`, which vitest's global setup
 * runs): it starts in ~0.15 s instead of ~1 s under tsx, which adds up over many subprocess tests.
 */
export const SCRIPTED_AGENT_BUNDLE = fileURLToPath(new URL("../../.tmp/scripted-agent.mjs", import.meta.url));

export async function buildScriptedAgent(): Promise<string> {
  const { build } = await import("esbuild");
  await build({
    entryPoints: [SCRIPTED_AGENT_ENTRY],
    outfile: SCRIPTED_AGENT_BUNDLE,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    logLevel: "warning",
  });
  return SCRIPTED_AGENT_BUNDLE;
}

function agentEntryArgs(): string[] {
  return existsSync(SCRIPTED_AGENT_BUNDLE)
    ? [SCRIPTED_AGENT_BUNDLE]
    : ["--import", TSX_LOADER, SCRIPTED_AGENT_ENTRY];
}

/** Command line that runs the scripted agent on the script file at `scriptPath`. */
export function scriptedAgentCommand(scriptPath: string): { command: string; args: string[] } {
  return { command: process.execPath, args: [...agentEntryArgs(), path.resolve(scriptPath)] };
}

/** Command line plus environment that runs the scripted agent on an inline script (no file). */
export function scriptedAgentInlineCommand(script: Script): {
  command: string;
  args: string[];
  env: Record<string, string>;
} {
  return {
    command: process.execPath,
    args: agentEntryArgs(),
    env: { SCRIPTED_AGENT_SCRIPT: JSON.stringify(script) },
  };
}
