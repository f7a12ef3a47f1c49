import { execFile } from "node:child_process";
import { copyFile, mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import {
  type ChangedFile,
  type ChangeStatus,
  type CloneInput,
  type FetchInput,
  GitCommandError,
  type GitErrorKind,
  type GitIdentity,
  type GitWorkspace,
  type GitWorkspaces,
  type PushInput,
  type RemoteAccess,
  type WorkspaceDiff,
} from "./port.js";

export interface GitCliOptions {
  /** The git executable; default "git", looked up on `path`. */
  readonly gitBinary?: string;
  /** PATH given to git (it needs its own helpers, e.g. git-remote-https); defaults to the usual system dirs. */
  readonly path?: string;
  /** Variables git may need beyond the minimum, e.g. HTTPS_PROXY. Nothing else of the parent's environment is passed. */
  readonly extraEnv?: Readonly<Record<string, string>>;
  /** Kill a git command running longer than this; default 10 minutes. */
  readonly timeoutMs?: number;
}

const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
const outputLimitBytes = 256 * 1024 * 1024;

/**
 * Settings for every invocation. The workspace's own .git/config may have been written by the
 * agent, so anything in it that runs a program (hooks, fsmonitor, credential helpers, signing)
 * is switched off from the command line, which git reads last.
 */
const hardeningConfig = [
  "core.hooksPath=/dev/null",
  "core.fsmonitor=false",
  "credential.helper=",
  "commit.gpgSign=false",
  "tag.gpgSign=false",
  "core.quotePath=false",
  "color.ui=false",
  "gc.auto=0",
  "maintenance.auto=false",
];

interface RunOptions {
  readonly cwd: string;
  readonly env?: Readonly<Record<string, string>>;
  /** Exit codes that are answers rather than failures (e.g. 1 from `diff --quiet`). */
  readonly acceptExitCodes?: readonly number[];
}

interface RunResult {
  readonly stdout: string;
  readonly stderr: string;
  readonly exitCode: number;
}

export class GitCli implements GitWorkspaces {
  private readonly gitBinary: string;
  private readonly baseEnv: Readonly<Record<string, string>>;
  private readonly timeoutMs: number;

  constructor(options: GitCliOptions = {}) {
    this.gitBinary = options.gitBinary ?? "git";
    this.timeoutMs = options.timeoutMs ?? 10 * 60_000;
    this.baseEnv = {
      ...options.extraEnv,
      PATH: options.path ?? defaultPath,
      GIT_TERMINAL_PROMPT: "0",
      GIT_CONFIG_NOSYSTEM: "1",
      // The workspace is configured by us alone; a user's ~/.gitconfig must not change behaviour.
      GIT_CONFIG_GLOBAL: "/dev/null",
      LC_ALL: "C",
    };
  }

  open(directory: string): GitWorkspace {
    return new GitCliWorkspace(this, resolve(directory));
  }

  async clone(input: CloneInput): Promise<GitWorkspace> {
    const directory = resolve(input.directory);
    await mkdir(dirname(directory), { recursive: true });
    const args = ["clone", "--no-tags"];
    if (input.branch !== undefined) args.push("--branch", assertNotOption(input.branch, "branch"));
    if (input.depth !== undefined) args.push("--depth", String(input.depth));
    args.push("--", checkedRemoteUrl(input.remoteUrl), directory);
    await this.run(args, { cwd: dirname(directory), env: remoteEnv(input) });
    return this.open(directory);
  }

  /** Runs git with the minimal environment; internal to this module's workspaces. */
  async run(args: readonly string[], options: RunOptions): Promise<RunResult> {
    const fullArgs = [
      ...hardeningConfig.flatMap((setting) => ["-c", setting]),
      // Trust the directory we were pointed at even when another user owns it (containers, runners).
      "-c",
      `safe.directory=${options.cwd}`,
      ...args,
    ];
    const env = { ...this.baseEnv, ...options.env };
    const result = await new Promise<RunResult & { spawnError?: Error }>((resolvePromise) => {
      execFile(
        this.gitBinary,
        fullArgs,
        { cwd: options.cwd, env, timeout: this.timeoutMs, maxBuffer: outputLimitBytes, encoding: "utf8" },
        (error, stdout, stderr) => {
          if (!error) {
            resolvePromise({ stdout, stderr, exitCode: 0 });
            return;
          }
          const code = (error as NodeJS.ErrnoException & { code?: unknown }).code;
          resolvePromise({
            stdout,
            stderr,
            exitCode: typeof code === "number" ? code : -1,
            spawnError: typeof code === "number" ? undefined : error,
          });
        },
      );
    });
    if (result.exitCode === 0 || (options.acceptExitCodes ?? []).includes(result.exitCode)) return result;
    const command = args.map(maskCredentials);
    const stderr = maskCredentials(result.stderr.trim());
    const kind = result.spawnError ? "failed" : classify(stderr);
    const reason = result.spawnError ? result.spawnError.message : stderr || `exit code ${result.exitCode}`;
    throw new GitCommandError(
      `git ${command[0] ?? ""} failed: ${maskCredentials(reason)}`,
      { kind, command, exitCode: result.exitCode >= 0 ? result.exitCode : null, stderr },
      { cause: result.spawnError },
    );
  }
}

class GitCliWorkspace implements GitWorkspace {
  constructor(
    private readonly git: GitCli,
    readonly directory: string,
  ) {}

  async ensureIdentity(identity: GitIdentity): Promise<void> {
    await this.run(["config", "--local", "user.name", identity.name]);
    await this.run(["config", "--local", "user.email", identity.email]);
  }

  async headCommit(): Promise<string> {
    return this.revParse("HEAD");
  }

  async currentBranch(): Promise<string | null> {
    const { stdout, exitCode } = await this.run(["symbolic-ref", "--quiet", "--short", "HEAD"], {
      acceptExitCodes: [1],
    });
    return exitCode === 0 ? stdout.trim() : null;
  }

  async checkoutNewBranch(branch: string, base: string): Promise<void> {
    await this.run(["check-ref-format", "--branch", assertNotOption(branch, "branch")]);
    const baseCommit = await this.revParse(base);
    await this.run(["checkout", "-B", branch, baseCommit, "--"]);
  }

  async diff(base: string): Promise<WorkspaceDiff> {
    const baseCommit = await this.revParse(base);
    return this.withSnapshotIndex(async (env) => {
      // Explicit flags so a workspace config (diff.noprefix, diff.relative, …) cannot reshape the output.
      const common = [
        "diff",
        "--cached",
        "-M",
        "--no-ext-diff",
        "--no-textconv",
        "--no-color",
        "--no-relative",
        "--src-prefix=a/",
        "--dst-prefix=b/",
      ];
      const nameStatus = await this.run([...common, "--name-status", "-z", baseCommit, "--"], { env });
      const numstat = await this.run([...common, "--numstat", "-z", baseCommit, "--"], { env });
      const patch = await this.run([...common, "--patch", baseCommit, "--"], { env });
      return {
        base: baseCommit,
        files: mergeFileStats(parseNameStatus(nameStatus.stdout), parseNumstat(numstat.stdout)),
        patch: patch.stdout,
      };
    });
  }

  async changedPaths(base: string): Promise<string[]> {
    const { files } = await this.diff(base);
    const paths = new Set<string>();
    for (const file of files) {
      paths.add(file.path);
      if (file.previousPath !== undefined) paths.add(file.previousPath);
    }
    return [...paths].sort();
  }

  async commitAll(message: string): Promise<string | null> {
    await this.run(["add", "--all"]);
    const staged = await this.run(["diff", "--cached", "--quiet", "--no-ext-diff"], { acceptExitCodes: [1] });
    if (staged.exitCode === 0) return null;
    await this.run(["commit", "--no-verify", "--quiet", "-m", message]);
    return this.headCommit();
  }

  async push(input: PushInput): Promise<void> {
    await this.run(["check-ref-format", "--branch", assertNotOption(input.branch, "branch")]);
    const args = ["push", "--no-verify", "--porcelain"];
    if (input.force) args.push("--force");
    args.push("--", checkedRemoteUrl(input.remoteUrl), `HEAD:refs/heads/${input.branch}`);
    await this.run(args, { env: remoteEnv(input) });
  }

  async fetch(input: FetchInput): Promise<string> {
    const args = ["fetch", "--no-tags", "--quiet"];
    if (input.depth !== undefined) args.push("--depth", String(input.depth));
    args.push("--", checkedRemoteUrl(input.remoteUrl), assertNotOption(input.ref, "ref"));
    await this.run(args, { env: remoteEnv(input) });
    return this.revParse("FETCH_HEAD");
  }

  async stripCheckoutCredentials(): Promise<string[]> {
    const removed: string[] = [];
    for (const { key } of await this.localConfigEntries("^http\\.(.*\\.)?extraheader$")) {
      if (removed.includes(key)) continue;
      await this.run(["config", "--local", "--unset-all", key]);
      removed.push(key);
    }
    // actions/checkout v6 keeps the header in a file under RUNNER_TEMP, pulled in by includeIf.
    for (const { key, value } of await this.localConfigEntries("^includeif\\..*\\.path$")) {
      if (!(await isCredentialsInclude(value, this.directory))) continue;
      await this.run(["config", "--local", "--fixed-value", "--unset-all", key, value]);
      removed.push(key);
    }
    return removed;
  }

  async localConfig(): Promise<string> {
    const { stdout } = await this.run(["config", "--local", "--null", "--list"], { acceptExitCodes: [1] });
    return stdout;
  }

  private async localConfigEntries(pattern: string): Promise<{ key: string; value: string }[]> {
    const { stdout } = await this.run(["config", "--local", "--null", "--get-regexp", pattern], {
      acceptExitCodes: [1],
    });
    return stdout
      .split("\0")
      .filter((entry) => entry.length > 0)
      .map((entry) => {
        const newline = entry.indexOf("\n");
        return newline < 0
          ? { key: entry, value: "" }
          : { key: entry.slice(0, newline), value: entry.slice(newline + 1) };
      });
  }

  private async revParse(revision: string): Promise<string> {
    const { stdout } = await this.run([
      "rev-parse",
      "--verify",
      "--quiet",
      "--end-of-options",
      `${revision}^{commit}`,
    ]).catch((error: unknown) => {
      if (error instanceof GitCommandError) {
        const { command, stderr, exitCode } = error;
        throw new GitCommandError(
          `git rev-parse failed: ${revision} is not a commit here`,
          { kind: "not-found", command, stderr, exitCode },
          { cause: error },
        );
      }
      throw error;
    });
    return stdout.trim();
  }

  /**
   * Stages the whole working tree into a throwaway copy of the index, so diffs see untracked
   * files without disturbing what the user (or the agent) staged.
   */
  private async withSnapshotIndex<T>(use: (env: Record<string, string>) => Promise<T>): Promise<T> {
    const scratch = await mkdtemp(join(tmpdir(), "acp-warden-index-"));
    try {
      const indexFile = join(scratch, "index");
      const { stdout } = await this.run(["rev-parse", "--git-path", "index"]);
      const realIndex = resolve(this.directory, stdout.trim());
      await copyFile(realIndex, indexFile).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== "ENOENT") throw error;
      });
      const env = { GIT_INDEX_FILE: indexFile };
      await this.run(["add", "--all"], { env });
      return await use(env);
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  }

  private run(args: readonly string[], options: Omit<RunOptions, "cwd"> = {}): Promise<RunResult> {
    return this.git.run(args, { ...options, cwd: this.directory });
  }
}

/**
 * The token travels as a URL-scoped `http.<origin>/.extraheader` in GIT_CONFIG_* variables of the
 * one git process that needs it (and its remote helper): not on a command line other users can
 * read, not in .git/config. Scoping it to the origin means an `insteadOf` rewrite planted in the
 * workspace config cannot carry it to another host; redirects are refused for the same reason.
 */
function remoteEnv(access: RemoteAccess): Record<string, string> {
  const settings: [string, string][] = [["http.followRedirects", "false"]];
  if (access.token !== undefined) {
    const scope = `http.${new URL(access.remoteUrl).origin}/.extraheader`;
    const basic = Buffer.from(`x-access-token:${access.token}`).toString("base64");
    // An empty value first clears headers the repository config may add for the same scope.
    settings.push(["http.extraheader", ""], [scope, ""], [scope, `AUTHORIZATION: basic ${basic}`]);
  }
  const env: Record<string, string> = { GIT_CONFIG_COUNT: String(settings.length) };
  settings.forEach(([key, value], index) => {
    env[`GIT_CONFIG_KEY_${index}`] = key;
    env[`GIT_CONFIG_VALUE_${index}`] = value;
  });
  return env;
}

function checkedRemoteUrl(remoteUrl: string): string {
  let url: URL;
  try {
    url = new URL(remoteUrl);
  } catch {
    throw new GitCommandError(`not a remote URL: ${maskCredentials(remoteUrl)}`, {
      kind: "failed",
      command: [],
      exitCode: null,
      stderr: "",
    });
  }
  if ((url.protocol !== "https:" && url.protocol !== "http:") || url.username || url.password) {
    throw new GitCommandError(
      `remote URL must be http(s) without credentials in it (pass a token instead): ${maskCredentials(remoteUrl)}`,
      { kind: "failed", command: [], exitCode: null, stderr: "" },
    );
  }
  return remoteUrl;
}

function assertNotOption(value: string, what: string): string {
  if (value.startsWith("-") || value.length === 0) {
    throw new GitCommandError(`invalid ${what}: ${JSON.stringify(value)}`, {
      kind: "failed",
      command: [],
      exitCode: null,
      stderr: "",
    });
  }
  return value;
}

async function isCredentialsInclude(includePath: string, directory: string): Promise<boolean> {
  if (/^git-credentials-.*\.config$/.test(basename(includePath))) return true;
  const file = isAbsolute(includePath) ? includePath : resolve(directory, ".git", includePath);
  const text = await readFile(file, "utf8").catch(() => "");
  return /extraheader/i.test(text);
}

function maskCredentials(text: string): string {
  return text
    .replace(/(\w+:\/\/)[^/@\s]+@/g, "$1***@")
    .replace(/(authorization:\s*(basic|bearer|token)\s+)\S+/gi, "$1***");
}

function classify(stderr: string): GitErrorKind {
  if (
    /Authentication failed|could not read (Username|Password)|terminal prompts disabled|returned error: (401|403)/i.test(
      stderr,
    )
  )
    return "authentication";
  if (/\[(remote )?rejected\]|non-fast-forward|failed to push/i.test(stderr)) return "rejected";
  if (
    /not found|returned error: 404|couldn't find remote ref|unknown revision|not a valid object name|bad revision/i.test(
      stderr,
    )
  )
    return "not-found";
  return "failed";
}

interface NameStatusEntry {
  readonly path: string;
  readonly status: ChangeStatus;
  readonly previousPath?: string;
}

const statusLetters: Record<string, ChangeStatus> = {
  A: "added",
  M: "modified",
  D: "deleted",
  R: "renamed",
  C: "copied",
  T: "type-changed",
};

/** `--name-status -z`: "M\0path\0" or "R100\0old\0new\0". */
function parseNameStatus(output: string): NameStatusEntry[] {
  const fields = output.split("\0");
  const entries: NameStatusEntry[] = [];
  for (let index = 0; index < fields.length; ) {
    const code = fields[index++] ?? "";
    if (code === "") continue;
    const status = statusLetters[code.charAt(0)] ?? "modified";
    if (status === "renamed" || status === "copied") {
      const previousPath = fields[index++] ?? "";
      const path = fields[index++] ?? "";
      entries.push({ path, status, previousPath });
    } else {
      entries.push({ path: fields[index++] ?? "", status });
    }
  }
  return entries;
}

/** `--numstat -z`: "add\tdel\tpath\0" or, for renames, "add\tdel\t\0old\0new\0"; "-" for binary. */
function parseNumstat(output: string): Map<string, { additions: number | null; deletions: number | null }> {
  const fields = output.split("\0");
  const stats = new Map<string, { additions: number | null; deletions: number | null }>();
  for (let index = 0; index < fields.length; ) {
    const field = fields[index++] ?? "";
    if (field === "") continue;
    const [added = "-", deleted = "-", inlinePath = ""] = field.split("\t");
    let path = inlinePath;
    if (path === "") {
      index++; // previous path of a rename
      path = fields[index++] ?? "";
    }
    stats.set(path, {
      additions: added === "-" ? null : Number(added),
      deletions: deleted === "-" ? null : Number(deleted),
    });
  }
  return stats;
}

function mergeFileStats(
  entries: readonly NameStatusEntry[],
  stats: ReadonlyMap<string, { additions: number | null; deletions: number | null }>,
): ChangedFile[] {
  return entries.map((entry) => {
    const stat = stats.get(entry.path);
    return { ...entry, additions: stat?.additions ?? null, deletions: stat?.deletions ?? null };
  });
}
