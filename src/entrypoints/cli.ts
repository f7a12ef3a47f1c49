// The CLI front door: `acp-warden run`, `acp-warden policy check|explain`. The only place (with the
// other entrypoints) that reads process.env, builds real adapters and sets the exit code.
import { resolve } from "node:path";
import { Command, InvalidArgumentError } from "commander";
import { type DecideFn, runAgentSession } from "../acp/index.js";
import { ConsoleProgress } from "../report/console.js";
import { splitCommandLine } from "./command-line.js";
import { registerPolicyCommands } from "./policy-commands.js";

export interface CliIo {
  cwd: string;
  env: NodeJS.ProcessEnv;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  setExitCode: (code: number) => void;
}

/** Variables an agent launched from the CLI sees, besides those named with --env. */
const BASE_ENV = ["PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "TERM", "SHELL", "USER"];

export function buildProgram(io: CliIo): Command {
  const program = new Command("acp-warden")
    .description("Run ACP coding agents headless under one policy")
    .version("0.1.0")
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr });

  program
    .command("run")
    .description("Run an agent on a directory with a prompt, printing its plan and tool calls as they stream")
    .requiredOption("--agent-command <cmd>", "command line that starts an ACP agent on stdio")
    .requiredOption("--prompt <text>", "what the agent should do")
    .option("--cwd <dir>", "workspace directory (the agent cannot read or write outside it)", ".")
    .option("--allow-all", "allow every request the agent makes inside the workspace")
    .option("--deny-all", "deny every request (the default until a policy is given)")
    .option("--mode <id>", "session mode to switch to before prompting")
    .option("--timeout-minutes <n>", "stop the agent cleanly after this long", parsePositive, 30)
    .option("--transcript <file>", "write the transcript (JSON lines) here")
    .option("--env <name...>", "extra environment variables to pass to the agent", [])
    .action(async (opts: RunOptions) => {
      io.setExitCode(await runCommand(opts, io));
    });

  registerPolicyCommands(program, io);
  return program;
}

interface RunOptions {
  agentCommand: string;
  prompt: string;
  cwd: string;
  allowAll?: boolean;
  denyAll?: boolean;
  mode?: string;
  timeoutMinutes: number;
  transcript?: string;
  env: string[];
}

async function runCommand(opts: RunOptions, io: CliIo): Promise<number> {
  if (opts.allowAll && opts.denyAll) {
    io.stderr("acp-warden run: --allow-all and --deny-all exclude each other\n");
    return 2;
  }
  let argv: string[];
  try {
    argv = splitCommandLine(opts.agentCommand);
  } catch (error) {
    io.stderr(`acp-warden run: --agent-command: ${(error as Error).message}\n`);
    return 2;
  }
  const [command, ...args] = argv;
  if (!command) {
    io.stderr("acp-warden run: --agent-command is empty\n");
    return 2;
  }
  const env: Record<string, string> = {};
  for (const name of [...BASE_ENV, ...opts.env]) {
    const value = io.env[name];
    if (value !== undefined) env[name] = value;
  }
  const decide: DecideFn = opts.allowAll
    ? () => ({ outcome: "allow", reason: "--allow-all", ruleId: "cli:allow-all" })
    : () => ({ outcome: "deny", reason: "--deny-all (no policy given)", ruleId: "cli:deny-all" });

  const progress = new ConsoleProgress(io.stdout);
  const result = await runAgentSession({
    launch: { command, args, env },
    workspace: resolve(io.cwd, opts.cwd),
    prompt: { text: opts.prompt },
    decide,
    ...(opts.mode === undefined ? {} : { mode: opts.mode }),
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
    io.setExitCode(typeof code === "number" ? (code === 0 ? 0 : 2) : 1);
    if (typeof code !== "number") io.stderr(`acp-warden: ${(error as Error).message}\n`);
  }
}
