// The GitHub Action front door: reads the standard runner environment, builds the real adapters,
// runs the pipeline, and writes outputs and the job summary. Every URL derives from the runner's
// GITHUB_API_URL / GITHUB_SERVER_URL, so the same bundle works on GitHub Enterprise and locally.
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { runAgentSession } from "../acp/index.js";
import { GitCli } from "../git/git-cli.js";
import { createOctokitGitHub } from "../github/octokit.js";
import { runPipeline } from "../pipeline/run.js";
import { parseTrigger } from "../pipeline/trigger.js";
import type { AgentRuntime, RunOutcome } from "../pipeline/types.js";
import { loadShellAnalyzer } from "../policy/index.js";
import { renderJobSummary } from "../report/markdown.js";
import { createAgentRuntime } from "./agent-runtime.js";
import {
  appendSummary,
  type Env,
  errorCommand,
  getBooleanInput,
  getInput,
  getNumberInput,
  maskValue,
  notice,
  setOutputs,
} from "./runner.js";

export interface ActionIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

const DEFAULT_IDENTITY = { name: "acp-warden[bot]", email: "acp-warden[bot]@users.noreply.github.com" };

function required(env: Env, name: string): string {
  const value = env[name];
  if (!value) throw new Error(`${name} is not set: acp-warden runs as a step of a GitHub Actions job`);
  return value;
}

/** Runs the Action; returns the process exit code. */
export async function runAction(env: Env, io: ActionIo, agents?: AgentRuntime): Promise<number> {
  const log = (line: string) => io.stdout(`${line}\n`);
  try {
    const eventName = required(env, "GITHUB_EVENT_NAME");
    const eventPath = required(env, "GITHUB_EVENT_PATH");
    const [owner, repo] = required(env, "GITHUB_REPOSITORY").split("/");
    if (!owner || !repo)
      throw new Error(`GITHUB_REPOSITORY must be owner/name, not ${env.GITHUB_REPOSITORY}`);
    const workspace = required(env, "GITHUB_WORKSPACE");
    const apiUrl = (env.GITHUB_API_URL || "https://api.github.com").replace(/\/+$/, "");
    const serverUrl = (env.GITHUB_SERVER_URL || "https://github.com").replace(/\/+$/, "");
    const token = getInput(env, "github-token");
    if (!token) throw new Error("the github-token input is empty (by default it is the job's GITHUB_TOKEN)");
    maskValue(io.stdout, token);

    const payload: unknown = JSON.parse(readFileSync(eventPath, "utf8"));
    const triggerWord = getInput(env, "trigger") || "/agent";
    const parsed = parseTrigger(eventName, payload, {
      trigger: triggerWord,
      ...(getInput(env, "label") ? { label: getInput(env, "label") } : {}),
      ...(getInput(env, "prompt") ? { prompt: getInput(env, "prompt") } : {}),
    });
    if ("skip" in parsed) {
      notice(io.stdout, `acp-warden: nothing to do — ${parsed.skip}`);
      setOutputs(env, {
        "stop-reason": "",
        allowed: "0",
        denied: "0",
        "pr-url": "",
        "pr-number": "",
        branch: "",
        transcript: "",
      });
      return 0;
    }

    const runId = env.GITHUB_RUN_ID;
    const outcome = await runPipeline(
      parsed.run,
      {
        repository: { owner, repo },
        serverUrl,
        runUrl: runId ? `${serverUrl}/${owner}/${repo}/actions/runs/${runId}` : null,
        workspace,
        agent: getInput(env, "agent"),
        policyPath: getInput(env, "policy") || ".github/agent-policy.yml",
        branchPrefix: getInput(env, "branch-prefix") || "agent/",
        baseBranch: getInput(env, "base-branch"),
        timeoutMinutes: getNumberInput(env, "timeout-minutes"),
        model: getInput(env, "model") || null,
        draft: getBooleanInput(env, "draft", false),
        transcriptDir: env.RUNNER_TEMP || tmpdir(),
        remoteUrl: `${serverUrl}/${owner}/${repo}.git`,
        pushToken: token,
        gitIdentity: DEFAULT_IDENTITY,
      },
      {
        github: createOctokitGitHub({ token, baseUrl: apiUrl, userAgent: "acp-warden" }),
        git: new GitCli().open(workspace),
        agents:
          agents ??
          createAgentRuntime(env, {
            ...(getInput(env, "agent-bin-dir") ? { binDir: getInput(env, "agent-bin-dir") } : {}),
            tempDir: env.RUNNER_TEMP || tmpdir(),
          }),
        runSession: runAgentSession,
        loadShell: () => loadShellAnalyzer(),
        now: Date.now,
        log,
        commentIntervalMs: 3000,
      },
    );
    writeResults(env, outcome, io);
    return outcome.exitCode;
  } catch (error) {
    errorCommand(io.stdout, `acp-warden: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}

function writeResults(env: Env, outcome: RunOutcome, io: ActionIo): void {
  const report = outcome.report;
  const decisions = report?.session?.decisions ?? [];
  setOutputs(env, {
    "pr-url": report?.pullRequest?.url ?? "",
    "pr-number": report?.pullRequest ? String(report.pullRequest.number) : "",
    branch: report?.branch ?? "",
    "stop-reason": report?.session?.stopReason ?? "",
    allowed: String(decisions.filter((d) => d.outcome === "allow").length),
    denied: String(decisions.filter((d) => d.outcome === "deny").length),
    transcript: report?.transcriptPath ?? "",
    status: outcome.status,
  });
  if (report) appendSummary(env, renderJobSummary(report));
  if (outcome.exitCode !== 0) errorCommand(io.stdout, `acp-warden: ${outcome.message}`);
  else
    notice(
      io.stdout,
      `acp-warden: ${outcome.status}${report?.pullRequest ? ` — ${report.pullRequest.url}` : ""}`,
    );
}
