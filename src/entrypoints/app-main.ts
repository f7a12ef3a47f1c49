// `acp-warden serve` and `acp-warden worker`: the GitHub App's processes. The only place the App's
// settings are read from the environment.
//   serve  — webhook server; without ACP_WARDEN_REDIS_URL it also runs jobs (in-process queue).
//   worker — runs jobs from BullMQ on ACP_WARDEN_REDIS_URL; start any number, on any machines.
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { runAgentSession } from "../acp/index.js";
import { isForbiddenEnvName } from "../agents/env.js";
import { createInstallationTokens, type InstallationTokens } from "../app/auth.js";
import { type AppRunSettings, createJobHandler, DEFAULT_APP_SETTINGS } from "../app/worker.js";
import { GitCli } from "../git/git-cli.js";
import { createOctokitGitHub } from "../github/octokit.js";
import { loadShellAnalyzer } from "../policy/index.js";
import { createBullMqQueue } from "../queue/bullmq.js";
import { createInProcessQueue } from "../queue/in-process.js";
import type { JobHandler, JobQueue } from "../queue/port.js";
import { createAgentRuntime } from "./agent-runtime.js";
import { startAppServer } from "./app.js";

export type AppEnv = Readonly<Record<string, string | undefined>>;

export interface AppCommandIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

export interface AppCommandOptions {
  /** Stops the command (default: SIGINT or SIGTERM). */
  readonly signal?: AbortSignal;
  /** Called once the server listens / the worker takes jobs. */
  readonly onReady?: (info: { readonly url: string | null }) => void;
}

/** A setting that is missing or malformed; the message says how to fix it. */
export class AppConfigError extends Error {
  override readonly name = "AppConfigError";
}

interface GitHubSettings {
  appId: number;
  privateKey: string;
  apiUrl: string;
  serverUrl: string;
}

function value(env: AppEnv, name: string): string {
  return (env[name] ?? "").trim();
}

function integer(env: AppEnv, name: string, fallback: number, min: number): number {
  const text = value(env, name);
  if (text === "") return fallback;
  const parsed = Number(text);
  if (!Number.isSafeInteger(parsed) || parsed < min)
    throw new AppConfigError(`${name} must be an integer ≥ ${min}, not ${JSON.stringify(text)}`);
  return parsed;
}

function readPrivateKey(env: AppEnv): string {
  const inline = env.PRIVATE_KEY ?? "";
  const path = value(env, "PRIVATE_KEY_PATH");
  let key: string;
  if (inline.trim() !== "") {
    key = inline.trim();
    // One-line forms: base64 of the PEM, or the PEM with literal "\n".
    if (!key.includes("-----BEGIN")) {
      const decoded = Buffer.from(key, "base64").toString("utf8");
      if (!decoded.includes("-----BEGIN"))
        throw new AppConfigError(
          "PRIVATE_KEY is neither a PEM private key nor one encoded in base64: paste the .pem GitHub gave you, or use PRIVATE_KEY_PATH",
        );
      key = decoded;
    }
    key = key.replace(/\\n/g, "\n");
  } else if (path !== "") {
    try {
      key = readFileSync(path, "utf8");
    } catch (error) {
      throw new AppConfigError(
        `PRIVATE_KEY_PATH=${path} cannot be read: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  } else {
    throw new AppConfigError(
      "the App's private key is not set: set PRIVATE_KEY (the .pem's content) or PRIVATE_KEY_PATH (its path), from the App's settings → Private keys",
    );
  }
  return key;
}

function readGitHubSettings(env: AppEnv): GitHubSettings {
  const appIdText = value(env, "APP_ID");
  if (appIdText === "")
    throw new AppConfigError("APP_ID is not set: it is the App ID shown on the GitHub App's settings page");
  const appId = Number(appIdText);
  if (!Number.isSafeInteger(appId) || appId <= 0)
    throw new AppConfigError(`APP_ID must be the App's numeric id, not ${JSON.stringify(appIdText)}`);
  return {
    appId,
    privateKey: readPrivateKey(env),
    apiUrl: (value(env, "GITHUB_API_URL") || "https://api.github.com").replace(/\/+$/, ""),
    serverUrl: (value(env, "GITHUB_SERVER_URL") || "https://github.com").replace(/\/+$/, ""),
  };
}

function readRunSettings(env: AppEnv): AppRunSettings {
  const label = value(env, "ACP_WARDEN_LABEL");
  const timeout = integer(env, "ACP_WARDEN_TIMEOUT_MINUTES", 0, 0);
  const draft = value(env, "ACP_WARDEN_DRAFT").toLowerCase();
  if (draft !== "" && draft !== "true" && draft !== "false")
    throw new AppConfigError(`ACP_WARDEN_DRAFT must be true or false, not ${JSON.stringify(draft)}`);
  return {
    ...DEFAULT_APP_SETTINGS,
    agent: value(env, "ACP_WARDEN_AGENT"),
    trigger: { trigger: value(env, "ACP_WARDEN_TRIGGER") || "/agent", ...(label ? { label } : {}) },
    policyPath: value(env, "ACP_WARDEN_POLICY") || DEFAULT_APP_SETTINGS.policyPath,
    branchPrefix: value(env, "ACP_WARDEN_BRANCH_PREFIX") || DEFAULT_APP_SETTINGS.branchPrefix,
    baseBranch: value(env, "ACP_WARDEN_BASE_BRANCH"),
    timeoutMinutes: timeout > 0 ? timeout : null,
    model: value(env, "ACP_WARDEN_MODEL") || null,
    draft: draft === "true",
  };
}

/** The environment agents are prepared from: the App's own secrets are left out entirely. */
function agentParentEnv(env: AppEnv): Record<string, string | undefined> {
  const secrets = new Set(["APP_ID", "PRIVATE_KEY", "PRIVATE_KEY_PATH", "WEBHOOK_SECRET", "REDIS_URL"]);
  return Object.fromEntries(
    Object.entries(env).filter(([name]) => !secrets.has(name) && !isForbiddenEnvName(name)),
  );
}

function jobHandler(
  env: AppEnv,
  github: GitHubSettings,
  tokens: InstallationTokens,
  log: (line: string) => void,
): JobHandler {
  const workDir = value(env, "ACP_WARDEN_WORK_DIR") || tmpdir();
  const binDir = value(env, "ACP_WARDEN_AGENT_BIN_DIR");
  return createJobHandler({
    tokens,
    apiUrl: github.apiUrl,
    serverUrl: github.serverUrl,
    settings: readRunSettings(env),
    createGitHub: (token) =>
      createOctokitGitHub({ token, baseUrl: github.apiUrl, userAgent: "acp-warden-app" }),
    git: new GitCli(),
    agents: createAgentRuntime(agentParentEnv(env), { ...(binDir ? { binDir } : {}), tempDir: workDir }),
    runSession: runAgentSession,
    loadShell: () => loadShellAnalyzer(),
    workDir,
    transcriptDir: value(env, "ACP_WARDEN_TRANSCRIPT_DIR") || workDir,
    log,
  });
}

function redisQueue(url: string, log: (line: string) => void): JobQueue {
  return createBullMqQueue({
    connection: { url },
    onError: (error, details) =>
      log(
        `queue: ${error instanceof Error ? error.message : String(error)}${details.job ? ` (${details.job.id})` : ""}`,
      ),
  });
}

function redisUrl(env: AppEnv): string {
  const url = value(env, "ACP_WARDEN_REDIS_URL");
  if (url !== "" && !/^rediss?:\/\//.test(url))
    throw new AppConfigError(
      `ACP_WARDEN_REDIS_URL must be a redis:// or rediss:// URL, not ${JSON.stringify(url)}`,
    );
  return url;
}

function warnIgnored(env: AppEnv, log: (line: string) => void): void {
  if (value(env, "REDIS_URL"))
    log(
      "note: REDIS_URL is ignored (it would switch on Probot's own Redis client); the job queue uses ACP_WARDEN_REDIS_URL",
    );
  if (value(env, "WEBHOOK_PROXY_URL"))
    log(
      "note: WEBHOOK_PROXY_URL is ignored: forward deliveries to the server's /api/github/webhooks yourself",
    );
}

/** Resolves when `signal` aborts, or on SIGINT/SIGTERM when no signal is given. */
function stopped(signal: AbortSignal | undefined): Promise<string> {
  if (signal) {
    if (signal.aborted) return Promise.resolve("stopped");
    return new Promise((resolve) =>
      signal.addEventListener("abort", () => resolve("stopped"), { once: true }),
    );
  }
  return new Promise((resolve) => {
    const on = (name: NodeJS.Signals) => {
      process.off("SIGINT", onInt);
      process.off("SIGTERM", onTerm);
      resolve(name);
    };
    const onInt = () => on("SIGINT");
    const onTerm = () => on("SIGTERM");
    process.once("SIGINT", onInt);
    process.once("SIGTERM", onTerm);
  });
}

function fail(io: AppCommandIo, command: string, error: unknown): number {
  io.stderr(`acp-warden ${command}: ${error instanceof Error ? error.message : String(error)}\n`);
  return 1;
}

/**
 * `acp-warden serve`: the webhook server. Runs jobs in this process unless ACP_WARDEN_REDIS_URL
 * is set, in which case it only enqueues and `acp-warden worker` processes run them.
 * Resolves with the exit code once stopped.
 */
export async function serveCommand(
  env: AppEnv,
  io: AppCommandIo,
  options: AppCommandOptions = {},
): Promise<number> {
  const log = (line: string) => io.stdout(`${line}\n`);
  let queue: JobQueue | null = null;
  let worker: { close(): Promise<void> } | null = null;
  let server: { url: string; webhookUrl: string; close(): Promise<void> } | null = null;
  try {
    const github = readGitHubSettings(env);
    const webhookSecret = env.WEBHOOK_SECRET ?? "";
    if (webhookSecret === "")
      throw new AppConfigError(
        "WEBHOOK_SECRET is not set: use the webhook secret entered in the GitHub App's settings (deliveries are verified with it)",
      );
    const port = integer(env, "PORT", 3000, 0);
    const url = redisUrl(env);
    const settings = readRunSettings(env);
    const concurrency = integer(env, "ACP_WARDEN_CONCURRENCY", 1, 1);
    warnIgnored(env, log);
    const tokens = createInstallationTokens({
      appId: github.appId,
      privateKey: github.privateKey,
      baseUrl: github.apiUrl,
    });

    if (url) {
      queue = redisQueue(url, log);
      log(`jobs go to Redis (ACP_WARDEN_REDIS_URL); run \`acp-warden worker\` to run them`);
    } else {
      queue = createInProcessQueue({
        onFailed: (job, error, attempt) =>
          log(
            `${job.id}: failed after ${attempt} attempt(s): ${error instanceof Error ? error.message : String(error)}`,
          ),
      });
      worker = queue.work(jobHandler(env, github, tokens, log), { concurrency });
      log(`jobs run in this process (in-process queue, concurrency ${concurrency})`);
    }
    const host = value(env, "HOST");
    const logLevel = value(env, "LOG_LEVEL");
    const levels = ["trace", "debug", "info", "warn", "error", "fatal"] as const;
    const probotLogLevel = levels.find((level) => level === logLevel);
    if (logLevel !== "" && !probotLogLevel)
      throw new AppConfigError(
        `LOG_LEVEL must be one of ${levels.join(", ")}, not ${JSON.stringify(logLevel)}`,
      );
    server = await startAppServer({
      appId: github.appId,
      privateKey: github.privateKey,
      webhookSecret,
      port,
      ...(host ? { host } : {}),
      baseUrl: github.apiUrl,
      queue,
      trigger: settings.trigger,
      ...(value(env, "WEBHOOK_PATH") ? { webhookPath: value(env, "WEBHOOK_PATH") } : {}),
      tokens,
      log,
      ...(probotLogLevel ? { probotLogLevel } : {}),
    });
    log(`acp-warden serve: listening on ${server.webhookUrl}`);
    options.onReady?.({ url: server.url });
    const why = await stopped(options.signal);
    log(`acp-warden serve: ${why}, shutting down`);
    return 0;
  } catch (error) {
    return fail(io, "serve", error);
  } finally {
    await server?.close().catch(() => {});
    await worker?.close().catch(() => {});
    await queue?.close().catch(() => {});
  }
}

/**
 * `acp-warden worker`: runs jobs from the BullMQ queue on ACP_WARDEN_REDIS_URL. Start as many as
 * you like on as many machines; on stop, running agents are cancelled cleanly.
 */
export async function workerCommand(
  env: AppEnv,
  io: AppCommandIo,
  options: AppCommandOptions = {},
): Promise<number> {
  const log = (line: string) => io.stdout(`${line}\n`);
  let queue: JobQueue | null = null;
  let worker: { close(): Promise<void> } | null = null;
  try {
    const url = redisUrl(env);
    if (url === "")
      throw new AppConfigError(
        "ACP_WARDEN_REDIS_URL is not set: `acp-warden worker` takes jobs from Redis. Without Redis, `acp-warden serve` runs the jobs itself",
      );
    const github = readGitHubSettings(env);
    readRunSettings(env);
    const concurrency = integer(env, "ACP_WARDEN_CONCURRENCY", 1, 1);
    warnIgnored(env, log);
    const tokens = createInstallationTokens({
      appId: github.appId,
      privateKey: github.privateKey,
      baseUrl: github.apiUrl,
    });
    queue = redisQueue(url, log);
    worker = queue.work(jobHandler(env, github, tokens, log), { concurrency });
    log(`acp-warden worker: taking jobs from Redis (concurrency ${concurrency})`);
    options.onReady?.({ url: null });
    const why = await stopped(options.signal);
    log(`acp-warden worker: ${why}, finishing running jobs`);
    return 0;
  } catch (error) {
    return fail(io, "worker", error);
  } finally {
    await worker?.close().catch(() => {});
    await queue?.close().catch(() => {});
  }
}
