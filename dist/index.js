import { createRequire as __acpWardenCreateRequire } from 'node:module'; const require = __acpWardenCreateRequire(import.meta.url);
import {
  GitCli,
  createAgentRuntime,
  createOctokitGitHub,
  loadShellAnalyzer,
  parseTrigger,
  renderJobSummary,
  runAgentSession,
  runPipeline
} from "./chunks/chunk-5EIUCSSF.js";

// src/entrypoints/action.ts
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";

// src/entrypoints/runner.ts
import { randomBytes } from "node:crypto";
import { appendFileSync } from "node:fs";
function getInput(env, name) {
  return (env[`INPUT_${name.replace(/ /g, "_").toUpperCase()}`] ?? "").trim();
}
function getBooleanInput(env, name, fallback) {
  const value = getInput(env, name).toLowerCase();
  if (value === "") return fallback;
  if (["true", "yes", "on", "1"].includes(value)) return true;
  if (["false", "no", "off", "0"].includes(value)) return false;
  throw new Error(`input ${name} must be true or false, not ${JSON.stringify(value)}`);
}
function getNumberInput(env, name) {
  const value = getInput(env, name);
  if (value === "") return null;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0)
    throw new Error(`input ${name} must be a positive number, not ${JSON.stringify(value)}`);
  return n;
}
function setOutputs(env, outputs) {
  const file = env.GITHUB_OUTPUT;
  if (!file) return;
  let text = "";
  for (const [name, value] of Object.entries(outputs)) {
    const delimiter = `ghadelimiter_${randomBytes(12).toString("hex")}`;
    text += `${name}<<${delimiter}
${value}
${delimiter}
`;
  }
  appendFileSync(file, text);
}
function appendSummary(env, markdown) {
  const file = env.GITHUB_STEP_SUMMARY;
  if (file) appendFileSync(file, `${markdown}
`);
}
function escapeData(text) {
  return text.replace(/%/g, "%25").replace(/\r/g, "%0D").replace(/\n/g, "%0A");
}
function notice(write, message) {
  write(`::notice::${escapeData(message)}
`);
}
function errorCommand(write, message) {
  write(`::error::${escapeData(message)}
`);
}
function maskValue(write, value) {
  if (value) write(`::add-mask::${escapeData(value)}
`);
}

// src/entrypoints/action.ts
var DEFAULT_IDENTITY = { name: "acp-warden[bot]", email: "acp-warden[bot]@users.noreply.github.com" };
function required(env, name) {
  const value = env[name];
  if (!value) throw new Error(`${name} is not set: acp-warden runs as a step of a GitHub Actions job`);
  return value;
}
async function runAction(env, io, agents) {
  const log = (line) => io.stdout(`${line}
`);
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
    const payload = JSON.parse(readFileSync(eventPath, "utf8"));
    const triggerWord = getInput(env, "trigger") || "/agent";
    const parsed = parseTrigger(eventName, payload, {
      trigger: triggerWord,
      ...getInput(env, "label") ? { label: getInput(env, "label") } : {},
      ...getInput(env, "prompt") ? { prompt: getInput(env, "prompt") } : {}
    });
    if ("skip" in parsed) {
      notice(io.stdout, `acp-warden: nothing to do \u2014 ${parsed.skip}`);
      setOutputs(env, {
        "stop-reason": "",
        allowed: "0",
        denied: "0",
        "pr-url": "",
        "pr-number": "",
        branch: "",
        transcript: ""
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
        gitIdentity: DEFAULT_IDENTITY
      },
      {
        github: createOctokitGitHub({ token, baseUrl: apiUrl, userAgent: "acp-warden" }),
        git: new GitCli().open(workspace),
        agents: agents ?? createAgentRuntime(env, {
          ...getInput(env, "agent-bin-dir") ? { binDir: getInput(env, "agent-bin-dir") } : {},
          tempDir: env.RUNNER_TEMP || tmpdir()
        }),
        runSession: runAgentSession,
        loadShell: () => loadShellAnalyzer(),
        now: Date.now,
        log,
        commentIntervalMs: 3e3
      }
    );
    writeResults(env, outcome, io);
    return outcome.exitCode;
  } catch (error) {
    errorCommand(io.stdout, `acp-warden: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}
function writeResults(env, outcome, io) {
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
    status: outcome.status
  });
  if (report) appendSummary(env, renderJobSummary(report));
  if (outcome.exitCode !== 0) errorCommand(io.stdout, `acp-warden: ${outcome.message}`);
  else
    notice(
      io.stdout,
      `acp-warden: ${outcome.status}${report?.pullRequest ? ` \u2014 ${report.pullRequest.url}` : ""}`
    );
}

// src/entrypoints/action-main.ts
process.exitCode = await runAction(process.env, {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text)
});
