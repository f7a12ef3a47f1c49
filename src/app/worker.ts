// The App's job handler: for one queued delivery, mint an installation token, clone the repository
// into a fresh directory (the token only reaches that git process), and run the same pipeline the
// Action runs. The job's signal cancels the agent cleanly when the worker shuts down.
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SessionOptions, SessionResult } from "../acp/types.js";
import type { GitIdentity, GitWorkspaces } from "../git/port.js";
import type { GitHubPort } from "../github/port.js";
import { runPipeline } from "../pipeline/run.js";
import { parseTrigger, type TriggerSettings, threadNumber } from "../pipeline/trigger.js";
import type { AgentRuntime, RunConfig, RunOutcome } from "../pipeline/types.js";
import type { ShellAnalyzer } from "../policy/index.js";
import type { JobHandler, JobHandlerContext, RunJob } from "../queue/port.js";
import { COMMENT_MARKER } from "../report/markdown.js";
import type { InstallationTokens } from "./auth.js";

/** What the App's operator configures for every run (the Action's inputs, App-wide). */
export interface AppRunSettings {
  /** A preset name or a command line; empty to use each repository policy's `agent`. */
  readonly agent: string;
  readonly trigger: TriggerSettings;
  readonly policyPath: string;
  readonly branchPrefix: string;
  /** Empty for each repository's default branch. */
  readonly baseBranch: string;
  readonly timeoutMinutes: number | null;
  readonly model: string | null;
  readonly draft: boolean;
  readonly gitIdentity: GitIdentity;
}

export const DEFAULT_APP_SETTINGS: AppRunSettings = {
  agent: "",
  trigger: { trigger: "/agent" },
  policyPath: ".github/agent-policy.yml",
  branchPrefix: "agent/",
  baseBranch: "",
  timeoutMinutes: null,
  model: null,
  draft: false,
  gitIdentity: { name: "acp-warden[bot]", email: "acp-warden[bot]@users.noreply.github.com" },
};

export interface JobHandlerOptions {
  readonly tokens: InstallationTokens;
  /** REST API root (GITHUB_API_URL). */
  readonly apiUrl: string;
  /** Web and git root (GITHUB_SERVER_URL): the remote is `${serverUrl}/${owner}/${repo}.git`. */
  readonly serverUrl: string;
  readonly settings: AppRunSettings;
  /** A GitHub client for an installation token (the Octokit port in production). */
  readonly createGitHub: (token: string) => GitHubPort;
  readonly git: GitWorkspaces;
  readonly agents: AgentRuntime;
  readonly runSession: (options: SessionOptions) => Promise<SessionResult>;
  readonly loadShell: () => Promise<ShellAnalyzer>;
  /** Parent of each job's throwaway checkout; default the OS temp dir. */
  readonly workDir?: string;
  /** Where transcripts are kept (they outlive the checkout); default `workDir`. */
  readonly transcriptDir?: string;
  readonly now?: () => number;
  readonly log?: (line: string) => void;
  readonly commentIntervalMs?: number;
  /** Called with every finished run (logging, metrics, tests). */
  readonly onOutcome?: (job: RunJob, outcome: RunOutcome) => void;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The session runner with the job's signal added, so a worker shutdown cancels the agent. */
function withSignal(
  runSession: (options: SessionOptions) => Promise<SessionResult>,
  signal: AbortSignal,
): (options: SessionOptions) => Promise<SessionResult> {
  return (options) =>
    runSession({ ...options, signal: options.signal ? AbortSignal.any([options.signal, signal]) : signal });
}

export function createJobHandler(options: JobHandlerOptions): JobHandler {
  const log = options.log ?? (() => {});
  const now = options.now ?? Date.now;
  const workDir = options.workDir ?? tmpdir();
  const serverUrl = options.serverUrl.replace(/\/+$/, "");

  return async (job: RunJob, context: JobHandlerContext): Promise<void> => {
    const prefix = `${job.id} ${job.lockKey}`;
    const parsed = parseTrigger(job.eventName, job.payload, options.settings.trigger);
    if ("skip" in parsed) {
      log(`${prefix}: nothing to do — ${parsed.skip}`);
      return;
    }
    if (context.signal.aborted) {
      log(`${prefix}: the worker is shutting down; not started`);
      return;
    }
    const trigger = parsed.run;
    const { owner, repo } = job;
    const remoteUrl = `${serverUrl}/${owner}/${repo}.git`;

    let github: GitHubPort | null = null;
    await mkdir(workDir, { recursive: true });
    const dir = await mkdtemp(join(workDir, "acp-warden-job-"));
    try {
      const { token } = await options.tokens.get(job.installationId);
      github = options.createGitHub(token);
      const workspace = join(dir, "repo");
      // The token goes to this git process only; nothing is left in .git/config.
      await options.git.clone({ directory: workspace, remoteUrl, token });
      const transcriptDir = options.transcriptDir ?? workDir;
      await mkdir(transcriptDir, { recursive: true });

      const config: RunConfig = {
        repository: { owner, repo },
        serverUrl,
        runUrl: null,
        workspace,
        agent: options.settings.agent,
        policyPath: options.settings.policyPath,
        branchPrefix: options.settings.branchPrefix,
        baseBranch: options.settings.baseBranch,
        timeoutMinutes: options.settings.timeoutMinutes,
        model: options.settings.model,
        draft: options.settings.draft,
        transcriptDir,
        remoteUrl,
        pushToken: token,
        gitIdentity: options.settings.gitIdentity,
      };
      log(`${prefix}: running (attempt ${context.attempt})`);
      const outcome = await runPipeline(trigger, config, {
        github,
        git: options.git.open(workspace),
        agents: options.agents,
        runSession: withSignal(options.runSession, context.signal),
        loadShell: options.loadShell,
        now,
        log: (line) => log(`${prefix}: ${line}`),
        commentIntervalMs: options.commentIntervalMs ?? 3000,
      });
      const pr = outcome.report?.pullRequest;
      log(
        `${prefix}: ${outcome.status}${pr ? ` — ${pr.url}` : ""}${outcome.exitCode ? ` (${outcome.message})` : ""}`,
      );
      options.onOutcome?.(job, outcome);
    } catch (error) {
      // Failed before the pipeline could report: say so where the command was given, then let the
      // queue decide about retries.
      const message = errorMessage(error);
      log(`${prefix}: could not start the run: ${message}`);
      const number = threadNumber(trigger);
      if (github && number !== null) {
        await github
          .createComment(
            owner,
            repo,
            number,
            `${COMMENT_MARKER}\n### ❌ acp-warden could not start the run\n\n${message.split("\n")[0] ?? ""}`,
          )
          .catch((replyError: unknown) => log(`${prefix}: could not reply: ${errorMessage(replyError)}`));
      }
      throw error;
    } finally {
      await rm(dir, { recursive: true, force: true }).catch((error: unknown) =>
        log(`${prefix}: could not remove ${dir}: ${errorMessage(error)}`),
      );
    }
  };
}
