// `acp-warden policy check|explain`. Exit codes: 0 valid / allowed, 1 denied (or ask: nobody
// answers in a headless run), 2 invalid policy or bad usage.
import { readFileSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { type Command, CommanderError, Option } from "commander";
import {
  createPathInspector,
  DEFAULT_POLICY_PATH,
  decide,
  describePolicy,
  formatPolicyError,
  loadPolicy,
  loadShellAnalyzer,
  PERMISSION_LEVELS,
  type PermissionRequest,
  type Policy,
  runPolicyTests,
  type ShellAnalyzer,
  suggestPolicyChange,
  TOOL_KINDS,
  type ToolKind,
  type TriggerFacts,
} from "../policy/index.js";

export interface PolicyCommandIo {
  cwd: string;
  stdout: (s: string) => void;
  stderr: (s: string) => void;
  setExitCode: (n: number) => void;
}

export const EXIT_OK = 0;
export const EXIT_DENIED = 1;
export const EXIT_INVALID = 2;

function readPolicyFile(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

async function loadFrom(
  io: PolicyCommandIo,
  file: string | undefined,
): Promise<{ policy: Policy; shell: ShellAnalyzer; shown: string } | undefined> {
  const shown = file ?? DEFAULT_POLICY_PATH;
  const path = isAbsolute(shown) ? shown : join(io.cwd, shown);
  let text: string | undefined;
  try {
    text = readPolicyFile(path);
  } catch (error) {
    io.stderr(`cannot read ${shown}: ${error instanceof Error ? error.message : String(error)}\n`);
    io.setExitCode(EXIT_INVALID);
    return undefined;
  }
  if (text === undefined && file !== undefined) {
    io.stderr(`${shown}: no such file\n`);
    io.setExitCode(EXIT_INVALID);
    return undefined;
  }
  const shell = await loadShellAnalyzer();
  const loaded = loadPolicy(text, { file: shown, shell });
  if (!loaded.ok) {
    io.stderr(`${shown} is not a valid policy:\n`);
    for (const error of loaded.errors) io.stderr(`  ${formatPolicyError(error)}\n`);
    io.setExitCode(EXIT_INVALID);
    return undefined;
  }
  return { policy: loaded.policy, shell, shown };
}

function requestFor(kind: ToolKind, subject: string | undefined): PermissionRequest | string {
  const needsSubject = !["think"].includes(kind);
  if (needsSubject && (subject === undefined || subject === ""))
    return `policy explain --kind ${kind} needs a subject after --, e.g. -- "src/index.ts"`;
  const value = subject ?? "";
  switch (kind) {
    case "execute":
      return { kind, command: value };
    case "read":
    case "edit":
    case "delete":
    case "search":
      return { kind, paths: [value] };
    case "move": {
      const [from, to, ...rest] = value.split(/\s+/);
      if (!from || !to || rest.length > 0) return 'policy explain --kind move takes -- "FROM TO"';
      return { kind, paths: [from, to] };
    }
    case "fetch":
      return /^[a-z][a-z0-9+.-]*:/i.test(value) ? { kind, url: value } : { kind, url: `https://${value}/` };
    case "other":
      return { kind, tool: value };
    case "switch_mode":
      return { kind, mode: value };
    case "think":
      return { kind };
  }
}

interface ExplainOptions {
  kind: ToolKind;
  policy?: string;
  event?: string;
  permission?: (typeof PERMISSION_LEVELS)[number];
  fork?: boolean;
  label?: string[];
  branch?: string;
  json?: boolean;
}

function usageErrors(command: Command, io: PolicyCommandIo): Command {
  return command
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .exitOverride((error: CommanderError) => {
      // Help and version are not failures; everything else commander rejects is a usage error.
      io.setExitCode(error.exitCode === 0 ? EXIT_OK : EXIT_INVALID);
      throw error;
    });
}

/**
 * Adds `policy check` and `policy explain` to the program. Usage errors set exit code 2 and are
 * thrown as CommanderError (the caller's parseAsync rejects with it; catch and ignore it).
 */
export function registerPolicyCommands(program: Command, io: PolicyCommandIo): Command {
  const policy = usageErrors(
    program.command("policy").description("check a policy file or explain one decision"),
    io,
  );

  usageErrors(
    policy
      .command("check")
      .description(`validate a policy (default ${DEFAULT_POLICY_PATH}), run its inline tests, summarize it`)
      .argument("[file]", "policy file, relative to the current directory"),
    io,
  ).action(async (file: string | undefined) => {
    const loaded = await loadFrom(io, file);
    if (!loaded) return;
    const outcomes = runPolicyTests(loaded.policy, loaded.shell);
    const status = loaded.policy.source.empty ? "no policy file (deny-all)" : "valid";
    io.stdout(
      `${loaded.shown}: ${status}; ${outcomes.length} inline test${outcomes.length === 1 ? "" : "s"} passed\n`,
    );
    for (const line of describePolicy(loaded.policy)) io.stdout(`${line}\n`);
    io.setExitCode(EXIT_OK);
  });

  usageErrors(
    policy
      .command("explain")
      .description('decide one request: policy explain -- "npm test && curl x"')
      .argument("<subject...>", "command line, path, URL, tool name or mode (after --)")
      .addOption(new Option("--kind <kind>", "ACP tool kind").choices([...TOOL_KINDS]).default("execute"))
      .option("--policy <file>", `policy file (default ${DEFAULT_POLICY_PATH})`)
      .option("--event <event>", "trigger event, e.g. issue_comment, schedule")
      .addOption(new Option("--permission <level>", "actor permission").choices([...PERMISSION_LEVELS]))
      .option("--fork", "the run comes from a fork")
      .option("--label <label...>", "labels on the issue or pull request")
      .option("--branch <branch>", "branch of the run")
      .option("--json", "print the decision as JSON"),
    io,
  ).action(async (subjectWords: string[], options: ExplainOptions) => {
    const request = requestFor(options.kind, subjectWords.join(" "));
    if (typeof request === "string") {
      io.stderr(`${request}\n`);
      io.setExitCode(EXIT_INVALID);
      return;
    }
    const loaded = await loadFrom(io, options.policy);
    if (!loaded) return;
    const facts: TriggerFacts = {
      event: options.event ?? "cli",
      ...(options.permission ? { actorPermission: options.permission } : {}),
      ...(options.fork ? { fork: true } : {}),
      ...(options.label ? { labels: options.label } : {}),
      ...(options.branch ? { branch: options.branch } : {}),
    };
    const result = decide(loaded.policy, facts, request, {
      workspace: io.cwd,
      shell: loaded.shell,
      paths: createPathInspector(),
    });
    const suggestion = suggestPolicyChange(loaded.policy, facts, result);
    if (options.json) {
      io.stdout(`${JSON.stringify({ ...result, suggestion: suggestion ?? null }, null, 2)}\n`);
    } else {
      const lines = [
        `decision: ${result.decision}`,
        `rule: ${result.ruleId}`,
        `reason: ${result.reason}`,
        ...(result.profiles.length > 0 ? [`profiles: ${result.profiles.join(", ")}`] : []),
      ];
      if (result.matched.length > 1) {
        lines.push("parts:");
        for (const part of result.matched)
          lines.push(
            `  ${part.decision.padEnd(5)} ${part.kind} ${JSON.stringify(part.subject)}  [${part.ruleId}]`,
          );
      }
      if (suggestion) {
        lines.push(
          suggestion.possible ? `suggested change to ${loaded.shown}:` : "suggested change: none possible",
          ...suggestion.text.split("\n").map((line) => `  ${line}`),
        );
      }
      io.stdout(`${lines.join("\n")}\n`);
    }
    io.setExitCode(result.decision === "allow" ? EXIT_OK : EXIT_DENIED);
  });
  return policy;
}

/** For entry scripts: true when a rejection was commander reporting usage (already printed). */
export function isUsageError(error: unknown): boolean {
  return error instanceof CommanderError;
}
