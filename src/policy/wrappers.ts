// Commands that run other commands. A wrapper is resolved to the command it finally runs, so a rule
// about `rm` cannot be dodged with `timeout 5 rm …`; commands that run text we cannot see
// (`bash -c`, `eval`, `find -exec`, `git -c`) are refused outright, whatever the policy allows.
import type { ArgvToken } from "./command-pattern.js";
import type { UnsafeConstruct } from "./shell.js";

/** `VAR=value cmd` is accepted only for variables that cannot change what runs or where. */
export const SAFE_ENV_PREFIXES: ReadonlySet<string> = new Set([
  "CI",
  "NODE_ENV",
  "FORCE_COLOR",
  "NO_COLOR",
  "TZ",
  "LANG",
  "LC_ALL",
  "TERM",
  "COLUMNS",
  "DEBUG",
]);

export interface Invocation {
  argv: readonly ArgvToken[];
  /**
   * `command`: what finally runs. `wrapper`: a transparent wrapper (env, timeout, nice, nohup,
   * time, command, exec, xargs) — only its inner command needs allowing. `privileged`: sudo/doas —
   * both the full line and the inner command must be allowed.
   */
  role: "command" | "wrapper" | "privileged";
  /** `xargs` appends arguments we cannot see. */
  unknownTail: boolean;
}

export type InvocationResolution =
  | { ok: true; invocations: readonly Invocation[] }
  | { ok: false; construct: UnsafeConstruct; message: string };

interface OptionTable {
  /** Options that take the next token (or an attached `--opt=value` / `-Xvalue`). */
  withValue: readonly string[];
  flags: readonly string[];
  /** Options that make the wrapper run something we cannot see, or change directory. */
  refused?: Readonly<Record<string, [UnsafeConstruct, string]>>;
  /** Short options whose value may be attached (`-n1`, `-I{}`). */
  attached?: readonly string[];
}

type WrapperSpec = OptionTable & {
  role: "wrapper" | "privileged";
  /** Positional operands before the command (timeout's duration). */
  operands?: number;
  /** No inner command: the wrapper itself is the command (`env`, `nice`), or it is refused. */
  withoutCommand: "self" | "refuse";
  assignments?: boolean;
  unknownTail?: boolean;
  /** The command run when none is named. */
  defaultCommand?: string;
  /** Any of these options turns the wrapper into a plain command (`command -v npm`). */
  selfOptions?: readonly string[];
};

const WRAPPERS: Record<string, WrapperSpec> = {
  env: {
    role: "wrapper",
    withValue: ["-u", "--unset"],
    flags: ["-i", "--ignore-environment", "-0", "--null", "-v", "--debug", "-"],
    refused: {
      "-C": ["wrapper", "env -C changes directory"],
      "--chdir": ["wrapper", "env --chdir changes directory"],
      "-S": ["nested-shell", "env -S splits a string into a command line"],
      "--split-string": ["nested-shell", "env --split-string splits a string into a command line"],
    },
    withoutCommand: "self",
    assignments: true,
  },
  timeout: {
    role: "wrapper",
    withValue: ["-s", "--signal", "-k", "--kill-after"],
    flags: ["--preserve-status", "--foreground", "-v", "--verbose"],
    attached: ["-s", "-k"],
    operands: 1,
    withoutCommand: "refuse",
  },
  nice: {
    role: "wrapper",
    withValue: ["-n", "--adjustment"],
    flags: [],
    attached: ["-n"],
    withoutCommand: "self",
  },
  nohup: { role: "wrapper", withValue: [], flags: [], withoutCommand: "refuse" },
  time: { role: "wrapper", withValue: [], flags: ["-p"], withoutCommand: "self" },
  command: {
    role: "wrapper",
    withValue: [],
    flags: ["-p"],
    withoutCommand: "self",
    selfOptions: ["-v", "-V"],
  },
  exec: {
    role: "wrapper",
    withValue: ["-a"],
    flags: ["-c", "-l"],
    withoutCommand: "refuse",
  },
  xargs: {
    role: "wrapper",
    withValue: [
      "-I",
      "-L",
      "-n",
      "-P",
      "-s",
      "-d",
      "-E",
      "-a",
      "--arg-file",
      "--delimiter",
      "--max-args",
      "--max-procs",
      "--replace",
      "--max-lines",
      "--max-chars",
      "--eof",
      "--process-slot-var",
    ],
    attached: ["-I", "-L", "-n", "-P", "-s", "-d", "-E", "-i", "-l", "-e"],
    flags: [
      "-0",
      "--null",
      "-r",
      "--no-run-if-empty",
      "-t",
      "--verbose",
      "-p",
      "--interactive",
      "-x",
      "--exit",
      "-o",
      "--open-tty",
      "-i",
      "-l",
      "-e",
    ],
    withoutCommand: "self",
    unknownTail: true,
    defaultCommand: "echo",
  },
  sudo: {
    role: "privileged",
    withValue: [
      "-u",
      "--user",
      "-g",
      "--group",
      "-C",
      "--close-from",
      "-h",
      "--host",
      "-p",
      "--prompt",
      "-r",
      "--role",
      "-t",
      "--type",
      "-U",
      "--other-user",
      "-T",
      "--command-timeout",
    ],
    flags: [
      "-E",
      "--preserve-env",
      "-H",
      "--set-home",
      "-n",
      "--non-interactive",
      "-P",
      "--preserve-groups",
      "-S",
      "--stdin",
      "-k",
      "--reset-timestamp",
      "-b",
      "--background",
      "-A",
      "--askpass",
      "-B",
      "--bell",
      "-N",
      "--no-update",
      "--",
    ],
    attached: ["-u", "-g"],
    refused: {
      "-s": ["privilege", "sudo -s starts a shell"],
      "--shell": ["privilege", "sudo --shell starts a shell"],
      "-i": ["privilege", "sudo -i starts a login shell"],
      "--login": ["privilege", "sudo --login starts a login shell"],
      "-e": ["privilege", "sudo -e edits files as root"],
      "--edit": ["privilege", "sudo --edit edits files as root"],
      "-D": ["privilege", "sudo -D changes directory"],
      "--chdir": ["privilege", "sudo --chdir changes directory"],
      "-l": ["privilege", "sudo -l"],
      "-v": ["privilege", "sudo -v"],
    },
    withoutCommand: "refuse",
    assignments: true,
  },
  doas: {
    role: "privileged",
    withValue: ["-u"],
    flags: ["-n"],
    refused: {
      "-s": ["privilege", "doas -s starts a shell"],
      "-C": ["privilege", "doas -C"],
    },
    withoutCommand: "refuse",
  },
};

const SHELLS: ReadonlySet<string> = new Set([
  "sh",
  "bash",
  "zsh",
  "dash",
  "ksh",
  "mksh",
  "ash",
  "fish",
  "csh",
  "tcsh",
  "busybox",
]);

const FIND_ACTIONS: ReadonlySet<string> = new Set([
  "-exec",
  "-execdir",
  "-ok",
  "-okdir",
  "-delete",
  "-fprint",
  "-fprint0",
  "-fprintf",
  "-fls",
]);

/** git options that run programs, read config we did not check, or leave the workspace. */
const GIT_GLOBAL_REFUSED = [
  "-c",
  "-C",
  "--exec-path",
  "--git-dir",
  "--work-tree",
  "--namespace",
  "--config-env",
  "--super-prefix",
  "--list-cmds",
];
const GIT_ANYWHERE_REFUSED = [
  "--upload-pack",
  "--receive-pack",
  "--exec",
  "--output",
  "--config",
  "--template",
  "--separate-git-dir",
  "--ext-diff",
  "--textconv",
];
const GIT_SHORT_UPLOAD_PACK: ReadonlySet<string> = new Set([
  "clone",
  "fetch",
  "pull",
  "ls-remote",
  "archive",
]);

type Fail = { ok: false; construct: UnsafeConstruct; message: string };
const fail = (construct: UnsafeConstruct, message: string): Fail => ({ ok: false, construct, message });

export function commandBasename(word: string): string {
  const slash = word.lastIndexOf("/");
  return slash >= 0 ? word.slice(slash + 1) : word;
}

function optionName(token: string): string {
  const eq = token.indexOf("=");
  return token.startsWith("--") && eq > 0 ? token.slice(0, eq) : token;
}

/** Where the inner command starts, or a refusal. */
function skipWrapperOptions(name: string, spec: WrapperSpec, argv: readonly ArgvToken[]): number | Fail {
  let i = 1;
  let operandsLeft = spec.operands ?? 0;
  while (i < argv.length) {
    const token = argv[i]!;
    if (token.dynamic)
      return fail("glob-argument", `${name}: glob ${JSON.stringify(token.text)} could expand to any option`);
    const text = token.text;
    if (text === "--") {
      i++;
      break;
    }
    if (text.startsWith("-") && (text !== "-" || spec.flags.includes("-"))) {
      const option = optionName(text);
      const refused = spec.refused?.[option] ?? spec.refused?.[text.slice(0, 2)];
      if (refused) return fail(refused[0], refused[1]);
      if (spec.withValue.includes(option)) {
        i += option === text ? 2 : 1;
        continue;
      }
      if (spec.flags.includes(text) || spec.flags.includes(option)) {
        i++;
        continue;
      }
      if (spec.attached?.some((short) => text.startsWith(short) && text.length > short.length)) {
        i++;
        continue;
      }
      // nice -10 cmd: the historical spelling of nice -n 10.
      if (name === "nice" && /^-\d+$/.test(text)) {
        i++;
        continue;
      }
      return fail(
        "wrapper",
        `${name}: option ${JSON.stringify(text)} is not understood, so the inner command is unknown`,
      );
    }
    if (spec.assignments && /^[A-Za-z_][A-Za-z0-9_]*=/.test(text)) {
      const variable = text.slice(0, text.indexOf("="));
      if (!SAFE_ENV_PREFIXES.has(variable))
        return fail("env-prefix", `${name} sets ${variable}=, which is not in the safe list`);
      i++;
      continue;
    }
    if (operandsLeft > 0) {
      operandsLeft--;
      i++;
      continue;
    }
    break;
  }
  if (i > argv.length) return fail("wrapper", `${name}: an option is missing its value`);
  return i;
}

function checkShell(name: string, argv: readonly ArgvToken[]): Fail | undefined {
  let i = 1;
  for (; i < argv.length; i++) {
    const token = argv[i]!;
    if (token.dynamic)
      return fail("glob-argument", `${name}: glob ${JSON.stringify(token.text)} among shell options`);
    const text = token.text;
    if (text === "--" || text === "-") {
      i++;
      break;
    }
    if (text.startsWith("--")) {
      if (["--init-file", "--rcfile"].includes(optionName(text)))
        return fail("nested-shell", `${name} ${text} runs another file first`);
      continue;
    }
    if (/^[-+][A-Za-z]+$/.test(text)) {
      if (/[csi]/.test(text.slice(1)))
        return fail(
          "nested-shell",
          `${name} ${text}: the shell runs a string or reads commands we cannot see`,
        );
      if (text.slice(1).includes("o")) i++;
      continue;
    }
    break;
  }
  if (i >= argv.length) return fail("nested-shell", `${name} without a script reads commands from its input`);
  return undefined;
}

function checkGit(argv: readonly ArgvToken[]): Fail | undefined {
  let subcommand: string | undefined;
  let afterSeparator = false;
  for (let i = 1; i < argv.length; i++) {
    const token = argv[i]!;
    if (afterSeparator) continue;
    if (token.dynamic)
      return fail(
        "glob-argument",
        `git: glob ${JSON.stringify(token.text)} could expand to an option (put it after --)`,
      );
    const text = token.text;
    if (text === "--") {
      afterSeparator = true;
      continue;
    }
    const option = optionName(text);
    if (subcommand === undefined) {
      if (GIT_GLOBAL_REFUSED.some((o) => option === o || (o.length === 2 && text.startsWith(o))))
        return fail("git-option", `git ${text} changes configuration, programs or directories git uses`);
      if (!text.startsWith("-")) subcommand = text;
      continue;
    }
    if (GIT_ANYWHERE_REFUSED.includes(option))
      return fail("git-option", `git ${subcommand} ${text} runs a program or writes outside git's control`);
    if (GIT_SHORT_UPLOAD_PACK.has(subcommand) && (text === "-u" || (subcommand === "clone" && text === "-c")))
      return fail("git-option", `git ${subcommand} ${text} runs a program or sets configuration`);
  }
  return undefined;
}

/** Refusals that no allow rule can override. */
export function checkCommand(argv: readonly ArgvToken[]): Fail | undefined {
  const first = argv[0];
  if (!first) return fail("empty", "empty command");
  const name = commandBasename(first.text);
  if (name === "eval") return fail("eval", "eval runs a string as a command");
  if (name === "source" || name === ".") return fail("source", `${name} runs a script inside the shell`);
  if (name === "su") return fail("privilege", "su starts a shell as another user");
  if (SHELLS.has(name)) return checkShell(name, argv);
  if (name === "find") {
    for (const token of argv.slice(1)) {
      if (token.dynamic) return fail("glob-argument", `find: unquoted glob ${JSON.stringify(token.text)}`);
      if (FIND_ACTIONS.has(token.text))
        return fail("find-exec", `find ${token.text} runs or deletes for every match`);
    }
  }
  if (name === "git") return checkGit(argv);
  return undefined;
}

export function resolveInvocations(argv: readonly ArgvToken[]): InvocationResolution {
  const invocations: Invocation[] = [];
  let current = argv;
  let unknownTail = false;
  for (let depth = 0; depth < 8; depth++) {
    const refusal = checkCommand(current);
    if (refusal) return refusal;
    const name = commandBasename(current[0]!.text);
    const spec = WRAPPERS[name];
    const selfOption = spec?.selfOptions?.some((o) => current.slice(1).some((t) => t.text === o));
    if (!spec || selfOption) {
      invocations.push({ argv: current, role: "command", unknownTail });
      return { ok: true, invocations };
    }
    const start = skipWrapperOptions(name, spec, current);
    if (typeof start !== "number") return start;
    let inner = current.slice(start);
    if (inner.length === 0) {
      if (spec.defaultCommand) inner = [{ text: spec.defaultCommand, dynamic: false }];
      else if (spec.withoutCommand === "self") {
        invocations.push({ argv: current, role: "command", unknownTail });
        return { ok: true, invocations };
      } else return fail("wrapper", `${name} without a command`);
    }
    const innerName = inner[0]!;
    if (innerName.dynamic || !/^[A-Za-z0-9_.+@%:/-]+$/.test(innerName.text) || innerName.text.startsWith("-"))
      return fail(
        "command-name",
        `${name} runs ${JSON.stringify(innerName.text)}, which is not a plain command name`,
      );
    invocations.push({ argv: current, role: spec.role, unknownTail });
    unknownTail ||= spec.unknownTail === true;
    current = inner;
  }
  return fail("wrapper", "wrappers nested too deeply");
}
