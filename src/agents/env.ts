// The agent's environment, built from scratch: nothing is inherited but what is named here.
import { join } from "node:path";

/** Names that are never passed to an agent, whatever a preset or the policy's `env.pass` says. */
const FORBIDDEN = [
  /^GITHUB_TOKEN$/,
  /^GH_TOKEN$/,
  /^GH_ENTERPRISE_TOKEN$/,
  /^GITHUB_ENTERPRISE_TOKEN$/,
  /^ACTIONS_/,
  /^INPUT_/,
  /^RUNNER_.*TOKEN/,
  /^GITHUB_APP_PRIVATE_KEY/,
  /^ACP_WARDEN_/,
  /^APP_PRIVATE_KEY$/,
  /^PRIVATE_KEY$/,
  /^WEBHOOK_SECRET$/,
  /^REDIS_URL$/,
];

export function isForbiddenEnvName(name: string): boolean {
  return FORBIDDEN.some((pattern) => pattern.test(name));
}

const DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin";

export interface AgentEnvInput {
  parent: Readonly<Record<string, string | undefined>>;
  homeDir: string;
  /** Names the preset takes from the parent when set. */
  presetAllow: readonly string[];
  /** The policy's `env.pass`. */
  policyPass: readonly string[];
  /** Fixed values the preset sets (they win over the parent's). */
  fixed: Readonly<Record<string, string>>;
  /** Prepended to PATH (an installed agent's bin directory). */
  binDir?: string;
}

export interface AgentEnv {
  env: Record<string, string>;
  warnings: string[];
}

/** PATH, HOME, LANG, TMPDIR, CI, TERM, then the allow-listed and fixed variables. */
export function buildAgentEnv(input: AgentEnvInput): AgentEnv {
  const warnings: string[] = [];
  const parentPath = input.parent.PATH || DEFAULT_PATH;
  const env: Record<string, string> = {
    PATH: input.binDir ? `${input.binDir}:${parentPath}` : parentPath,
    HOME: input.homeDir,
    LANG: "C.UTF-8",
    TMPDIR: join(input.homeDir, "tmp"),
    CI: "true",
    TERM: "dumb",
    NO_COLOR: "1",
  };
  for (const name of input.presetAllow) {
    const value = input.parent[name];
    if (value !== undefined && !isForbiddenEnvName(name)) env[name] = value;
  }
  for (const name of input.policyPass) {
    if (isForbiddenEnvName(name)) {
      warnings.push(
        `env.pass names ${name}, which is never passed to an agent (it is a secret of the runner)`,
      );
      continue;
    }
    if (name in env && !input.presetAllow.includes(name)) {
      warnings.push(`env.pass names ${name}, which acp-warden sets itself; ignored`);
      continue;
    }
    const value = input.parent[name];
    if (value !== undefined) env[name] = value;
  }
  for (const [name, value] of Object.entries(input.fixed)) env[name] = value;
  return { env, warnings };
}
