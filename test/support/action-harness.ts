// Runs the bundled Action (`node dist/index.js`) the way a runner does: a checkout made like
// actions/checkout (token left in .git/config), an event payload file, the runner's environment,
// and GitHub + the git remote served locally.
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { COMMENT_MARKER } from "../../src/report/markdown.js";
import type { Script, Step } from "../agent/script.js";
import { FakeGitHub } from "./fake-github/index.js";
import { GitHttpRemote } from "./git-remote.js";
import { scriptedAgentCommand, writeScript } from "./scripted-agent.js";

const run = promisify(execFile);
export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const ACTION_ENTRY = join(ROOT, "dist", "index.js");
export const TOKEN = "ghs_actions_token_for_tests";
export const OWNER = "acme";
export const REPO = "widgets";
export const FULL = `${OWNER}/${REPO}`;

export const POLICY = `version: 1
agents: { allowed: [claude, gemini] }
default: deny
allow:
  - read: "**"
  - edit: ["src/**", "README.md"]
  - execute: ["echo *", "npm test"]
deny:
  - execute: ["curl *"]
    reason: no network from the agent
protected: [".github/workflows/**"]
`;

export const FILES: Record<string, string> = {
  "README.md": "# widgets\n",
  "src/app.js": 'export const greet = () => "helo";\n',
  ".github/agent-policy.yml": POLICY,
  ".github/workflows/ci.yml": "name: ci\n",
};

/** src/app.js with the greeting fixed, and the agent step that writes it (asking first). */
export const FIXED = 'export const greet = () => "hello";\n';
export const FIX_APP_STEP: Step = {
  toolCall: { id: "edit", title: "Edit src/app.js", kind: "edit", rawInput: { path: "src/app.js" } },
  permission: true,
  action: { writeFile: { path: "src/app.js", content: FIXED } },
};

export interface Servers {
  github: FakeGitHub;
  remote: GitHttpRemote;
  close(): Promise<void>;
}

export async function startServers(): Promise<Servers> {
  const remote = await GitHttpRemote.start({ tokens: [TOKEN] });
  // Links point at the same server URL the Action is given (GITHUB_SERVER_URL = the git remote).
  const github = await FakeGitHub.start({ tokens: { [TOKEN]: "github-actions[bot]" }, webUrl: remote.url });
  return {
    github,
    remote,
    async close() {
      await github.close();
      await remote.close();
    },
  };
}

/** A fresh repository on both servers, with `files` committed on main. */
export async function createRepository(
  servers: Servers,
  name: string,
  files: Record<string, string> = FILES,
) {
  const full = `${OWNER}/${name}`;
  await servers.remote.createRepository(full, { files, defaultBranch: "main" });
  servers.github.addRepository({
    owner: OWNER,
    name,
    defaultBranch: "main",
    cloneUrl: servers.remote.repositoryUrl(full),
    content: servers.remote.contentSource(full),
    collaborators: { maint: "maintain", reader: "read" },
  });
  return full;
}

/** Clones like actions/checkout: the token stays behind in .git/config as an extraheader. */
export async function checkout(servers: Servers, full: string, dir: string, ref = "main"): Promise<string> {
  const url = servers.remote.repositoryUrl(full);
  const workspace = join(dir, "workspace");
  const header = `AUTHORIZATION: basic ${Buffer.from(`x-access-token:${TOKEN}`).toString("base64")}`;
  await run("git", ["-c", `http.extraheader=${header}`, "clone", "--quiet", "--branch", ref, url, workspace]);
  await run("git", ["config", "--local", `http.${servers.remote.url}/.extraheader`, header], {
    cwd: workspace,
  });
  return workspace;
}

export interface ActionRun {
  exitCode: number;
  stdout: string;
  stderr: string;
  outputs: Record<string, string>;
  summary: string;
  dir: string;
  workspace: string;
}

export interface RunActionInput {
  servers: Servers;
  full: string;
  event: string;
  payload: unknown;
  script?: Script;
  /** Extra `INPUT_*` values by input name. */
  inputs?: Record<string, string>;
  ref?: string;
  /** Runs once the checkout exists; returns extra environment for the Action (e.g. model base URLs). */
  prepare?: (workspace: string) => Promise<Record<string, string>>;
}

export async function runAction(input: RunActionInput): Promise<ActionRun> {
  const dir = await mkdtemp(join(tmpdir(), "acp-warden-e2e-"));
  const workspace = await checkout(input.servers, input.full, dir, input.ref);
  const runnerTemp = join(dir, "runner-temp");
  await mkdir(runnerTemp);
  const eventPath = join(dir, "event.json");
  await writeFile(eventPath, JSON.stringify(input.payload));
  const outputPath = join(dir, "output.txt");
  const summaryPath = join(dir, "summary.md");
  await writeFile(outputPath, "");
  await writeFile(summaryPath, "");
  const agent = input.script ? scriptedAgentCommand(await writeScript(dir, input.script)) : null;
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: dir,
    GITHUB_ACTIONS: "true",
    GITHUB_EVENT_NAME: input.event,
    GITHUB_EVENT_PATH: eventPath,
    GITHUB_REPOSITORY: input.full,
    GITHUB_WORKSPACE: workspace,
    GITHUB_API_URL: input.servers.github.url,
    GITHUB_SERVER_URL: input.servers.remote.url,
    GITHUB_OUTPUT: outputPath,
    GITHUB_STEP_SUMMARY: summaryPath,
    GITHUB_RUN_ID: "4242",
    GITHUB_ACTOR: "maint",
    GITHUB_TOKEN: TOKEN,
    ACTIONS_ID_TOKEN_REQUEST_TOKEN: "oidc-secret-for-tests",
    RUNNER_TEMP: runnerTemp,
    "INPUT_GITHUB-TOKEN": TOKEN,
    INPUT_TRIGGER: "/agent",
    ...(agent ? { INPUT_AGENT: [agent.command, ...agent.args].map(quote).join(" ") } : {}),
  };
  for (const [name, value] of Object.entries(input.inputs ?? {})) env[`INPUT_${name.toUpperCase()}`] = value;
  Object.assign(env, await input.prepare?.(workspace));
  let exitCode = 0;
  let stdout = "";
  let stderr = "";
  try {
    const result = await run(process.execPath, [ACTION_ENTRY], {
      env,
      cwd: workspace,
      maxBuffer: 64 * 1024 * 1024,
    });
    stdout = result.stdout;
    stderr = result.stderr;
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    exitCode = typeof failed.code === "number" ? failed.code : 1;
    stdout = failed.stdout ?? "";
    stderr = failed.stderr ?? "";
  }
  return {
    exitCode,
    stdout,
    stderr,
    outputs: parseOutputs(await readFile(outputPath, "utf8")),
    summary: await readFile(summaryPath, "utf8"),
    dir,
    workspace,
  };
}

function quote(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** Reads the `name<<DELIMITER … DELIMITER` blocks the runner's GITHUB_OUTPUT file holds. */
export function parseOutputs(text: string): Record<string, string> {
  const outputs: Record<string, string> = {};
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const match = /^([^<]+)<<(.+)$/.exec(lines[i]!);
    if (!match) continue;
    const [, name, delimiter] = match;
    const value: string[] = [];
    for (i++; i < lines.length && lines[i] !== delimiter; i++) value.push(lines[i]!);
    outputs[name!] = value.join("\n");
  }
  return outputs;
}

/** The tracking comment acp-warden keeps on an issue or pull request (the one with its marker). */
export function trackingComment(github: FakeGitHub, full: string, number: number) {
  return github.commentsOn(full, number).find((c) => c.body.startsWith(COMMENT_MARKER));
}

export function commentPayload(
  issue: { number: number; title: string; pull?: boolean },
  comment: { id: number; body: string; login?: string },
) {
  const user = { login: comment.login ?? "maint", type: comment.login?.endsWith("[bot]") ? "Bot" : "User" };
  return {
    action: "created",
    issue: {
      number: issue.number,
      title: issue.title,
      ...(issue.pull ? { pull_request: { url: "x" } } : {}),
    },
    comment: { id: comment.id, body: comment.body, user },
    repository: { full_name: FULL, name: REPO, owner: { login: OWNER } },
    sender: user,
  };
}
