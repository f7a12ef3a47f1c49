// Everything a run needs to launch one agent: its command, an environment built from scratch, its
// settings files written into the throwaway HOME, the session mode/config that make it ask, and
// the report of where each policy rule is enforced.
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { AgentLaunch } from "../acp/index.js";
import { effectiveRules } from "../policy/index.js";
import { enforcementReport } from "./enforcement.js";
import { buildAgentEnv } from "./env.js";
import type { AgentPreset, AgentSetup, PreparedAgent, PrepareOptions, ResolvedAgent } from "./types.js";

/** Registry variables npx needs to fetch a pinned agent package. */
const NPX_ENV = ["npm_config_registry", "NPM_CONFIG_REGISTRY", "npm_config_cache"];

export function launchCommand(
  preset: AgentPreset,
  args: readonly string[],
): { command: string; args: string[] } {
  const { name, version, bin } = preset.package;
  if (preset.install.kind === "bin") return { command: join(preset.install.dir, bin), args: [...args] };
  return { command: "npx", args: ["-y", `--package=${name}@${version}`, "--", bin, ...args] };
}

/** The settings one preset computes for one run, without touching the disk (for tests and `policy explain`). */
export function presetSetup(preset: AgentPreset, options: PrepareOptions): AgentSetup {
  const setup = preset.setup({ ...options, rules: effectiveRules(options.policy, options.facts) });
  // An installed opencode must not npm-install plugins at startup; npx still needs the registry.
  if (preset.id === "opencode" && preset.install.kind === "bin")
    setup.env.npm_config_registry = "http://127.0.0.1:9/";
  return setup;
}

async function writeFiles(files: readonly { path: string; content: string }[]): Promise<void> {
  for (const file of files) {
    await mkdir(dirname(file.path), { recursive: true });
    await writeFile(file.path, file.content, { encoding: "utf8", mode: 0o600 });
  }
}

export async function prepareAgent(agent: ResolvedAgent, options: PrepareOptions): Promise<PreparedAgent> {
  await mkdir(join(options.homeDir, "tmp"), { recursive: true });
  if (agent.type === "command") {
    const { env, warnings } = buildAgentEnv({
      parent: options.env,
      homeDir: options.homeDir,
      presetAllow: [],
      policyPass: options.policy.env.pass,
      fixed: {},
    });
    const enforcement = enforcementReport(agent, options.policy, options.facts, undefined);
    return {
      launch: { command: agent.command, args: agent.args, env },
      quirks: {},
      enforcement,
      warnings: [...warnings, ...enforcement.gaps],
      files: [],
    };
  }
  const setup = presetSetup(agent, options);
  await writeFiles(setup.files);
  const { env, warnings } = buildAgentEnv({
    parent: options.env,
    homeDir: options.homeDir,
    presetAllow: agent.install.kind === "npx" ? [...agent.envAllow, ...NPX_ENV] : agent.envAllow,
    policyPass: options.policy.env.pass,
    fixed: setup.env,
    ...(agent.install.kind === "bin" ? { binDir: agent.install.dir } : {}),
  });
  const { command, args } = launchCommand(agent, setup.args);
  const launch: AgentLaunch = { command, args, env };
  const enforcement = enforcementReport(agent, options.policy, options.facts, setup);
  return {
    launch,
    ...(setup.mode !== undefined ? { mode: setup.mode } : {}),
    ...(setup.config !== undefined ? { config: setup.config } : {}),
    ...(setup.authMethodId !== undefined ? { authMethodId: setup.authMethodId } : {}),
    ...(setup.sessionMeta !== undefined ? { sessionMeta: setup.sessionMeta } : {}),
    quirks: agent.quirks,
    enforcement,
    warnings: [...setup.warnings, ...warnings],
    files: setup.files,
  };
}
