// The CLI front door: `acp-warden run`, `acp-warden policy check|explain`. The only place (with the
// other entrypoints) that reads process.env, builds real adapters and sets the exit code.
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { Command, InvalidArgumentError } from "commander";
import { runAgentSession } from "../acp/index.js";
import type { PreparedAgent } from "../pipeline/types.js";
import { DEFAULT_POLICY_PATH, formatPolicyError, loadPolicy, loadShellAnalyzer } from "../policy/index.js";
import { ConsoleProgress } from "../report/console.js";
import { createAgentRuntime } from "./agent-runtime.js";
import { serveCommand, workerCommand } from "./app-main.js";
import { registerPolicyCommands } from "./policy-commands.js";

export interface CliIo {
  cwd: string;
  env: NodeJS.ProcessEnv;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  setExitCode: (code: number) => void;
}

const PERMISSIVE_POLICY = "version: 1\ndefault: allow\n";

export function buildProgram(io: CliIo): Command {
  const program = new Command("acp-warden")
    .description("Run ACP coding agents headless under one policy")
    .version("0.1.0")
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr });

  program
    .command("run")
    .description("Run an agent on a directory with a prompt, printing its plan and tool calls as they stream")
    .option(
      "--agent <preset|command>",
      "claude, gemini, copilot, codex, opencode, or a command line (ACP on stdio)",
    )
    .option(
      "--agent-command <cmd>",
      "a command line that starts an ACP agent on stdio (same as --agent <command>)",
    )
    .requiredOption("--prompt <text>", "what the agent should do")
    .option("--cwd <dir>", "workspace directory (the agent cannot read or write outside it)", ".")
    .option(
      "--policy <file>",
      "policy to answer requests with (default: <cwd>/.github/agent-policy.yml; missing = deny all)",
    )
    .option("--allow-all", "allow every request instead of asking a policy")
    .option("--deny-all", "deny every request instead of asking a policy")
    .option("--mode <id>", "session mode to switch to before prompting (presets choose their own)")
    .option("--model <id>", "model, where the agent's preset can choose one")
    .option(
      "--agent-bin-dir <dir>",
      "directory with installed agent binaries (otherwise presets run through npx)",
    )
    .option("--timeout-minutes <n>", "stop the agent cleanly after this long", parsePositive, 30)
    .option("--transcript <file>", "write the transcript (JSON lines) here")
    .option("--env <name...>", "extra environment variables to pass to the agent", [])
    .action(async (opts: RunOptions) => {
      io.setExitCode(await runCommand(opts, io));
    });

  program
    .command("serve")
    .description(
      "GitHub App webhook server (settings from the environment; see README). Runs jobs itself unless ACP_WARDEN_REDIS_URL is set",
    )
    .action(async () => {
      io.setExitCode(await serveCommand(io.env, io));
    });
  program
    .command("worker")
    .description(
      "Run GitHub App jobs from the Redis queue on ACP_WARDEN_REDIS_URL (start any number, on any machines)",
    )
    .action(async () => {
      io.setExitCode(await workerCommand(io.env, io));
    });

  registerPolicyCommands(program, io);
  return program;
}

interface RunOptions {
  agent?: string;
  agentCommand?: string;
  prompt: string;
  cwd: string;
  policy?: string;
  allowAll?: boolean;
  denyAll?: boolean;
  mode?: string;
  model?: string;
  agentBinDir?: string;
  timeoutMinutes: number;
  transcript?: string;
  env: string[];
}

async function runCommand(opts: RunOptions, io: CliIo): Promise<number> {
  const fail = (message: string) => {
    io.stderr(`acp-warden run: ${message}\n`);
    return 2;
  };
  if (opts.allowAll && opts.denyAll) return fail("--allow-all and --deny-all exclude each other");
  const agent = opts.agent ?? opts.agentCommand;
  if (!agent?.trim()) return fail("name an agent with --agent (a preset or a command line)");
  const workspace = resolve(io.cwd, opts.cwd);

  const shell = await loadShellAnalyzer();
  const policyFile = resolve(io.cwd, opts.policy ?? join(opts.cwd, DEFAULT_POLICY_PATH));
  let text: string | undefined;
  if (opts.allowAll) text = PERMISSIVE_POLICY;
  else if (!opts.denyAll) text = readOptional(policyFile);
  if (opts.policy && text === undefined && !opts.allowAll && !opts.denyAll)
    return fail(`${policyFile} does not exist`);
  const loaded = loadPolicy(text, { file: opts.allowAll ? "--allow-all" : policyFile, shell });
  if (!loaded.ok) return fail(`invalid policy:\n${loaded.errors.map(formatPolicyError).join("\n")}`);
  // --env names are passed like the policy's env.pass.
  const policy = { ...loaded.policy, env: { pass: [...loaded.policy.env.pass, ...opts.env] } };
  if (policy.source.empty && !opts.denyAll) {
    io.stderr(
      `acp-warden run: no policy at ${policyFile}: every request will be denied (use --policy or --allow-all)\n`,
    );
  }

  let prepared: PreparedAgent;
  try {
    prepared = await createAgentRuntime(
      io.env,
      opts.agentBinDir ? { binDir: resolve(io.cwd, opts.agentBinDir) } : {},
    ).prepare({
      agent,
      policy,
      facts: { event: "cli" },
      workspace,
      model: opts.model ?? null,
      shell,
    });
  } catch (error) {
    return fail((error as Error).message);
  }
  for (const note of prepared.notes) io.stderr(`note: ${note}\n`);
  const progress = new ConsoleProgress(io.stdout);
  try {
    const result = await runAgentSession({
      ...prepared.session,
      ...(opts.mode === undefined ? {} : { mode: opts.mode }),
      workspace,
      prompt: { text: opts.prompt },
      limits: { timeoutMs: opts.timeoutMinutes * 60_000 },
      ...(opts.transcript === undefined ? {} : { transcriptPath: resolve(io.cwd, opts.transcript) }),
      onUpdate: (state, change) => progress.update(state, change),
    });
    progress.finish(result);
    if (result.error) {
      io.stderr(`acp-warden run: ${result.error.message}\n`);
      return 1;
    }
    return 0;
  } finally {
    await prepared.dispose();
  }
}

function readOptional(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

function parsePositive(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError("expected a positive number");
  return n;
}

export async function main(argv: readonly string[], io: CliIo): Promise<void> {
  const program = buildProgram(io);
  try {
    await program.parseAsync([...argv], { from: "user" });
  } catch (error) {
    const code = (error as { exitCode?: number }).exitCode;
    if (typeof code === "number") {
      // commander already printed help, the version, or the usage error.
      if (code !== 0) io.setExitCode(2);
      return;
    }
    io.setExitCode(1);
    io.stderr(`acp-warden: ${(error as Error).message}\n`);
  }
}
