// Scaling out: `acp-warden serve` with ACP_WARDEN_REDIS_URL only verifies, authorizes, reacts and
// enqueues; `acp-warden worker` (another process in production, any machine) takes the job from
// Redis (BullMQ) and runs the pipeline — configured only through the environment, like the CLI.
import { generateKeyPairSync } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import webhookExamples from "@octokit/webhooks-examples";
import { sign } from "@octokit/webhooks-methods";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serveCommand, workerCommand } from "../../src/entrypoints/app-main.js";
import type { Script } from "../agent/script.js";
import { FILES, FIX_APP_STEP, FIXED } from "../support/action-harness.js";
import { FakeGitHub } from "../support/fake-github/index.js";
import { GitHttpRemote } from "../support/git-remote.js";
import { startRedis } from "../support/redis.js";
import { scriptedAgentCommand, writeScript } from "../support/scripted-agent.js";

const APP_ID = 5150;
const INSTALLATION_ID = 77;
const SECRET = "scale-out-secret";

const { privateKey, publicKey } = generateKeyPairSync("rsa", {
  modulusLength: 2048,
  privateKeyEncoding: { type: "pkcs8", format: "pem" },
  publicKeyEncoding: { type: "spki", format: "pem" },
});

const script: Script = {
  turns: [
    {
      steps: [FIX_APP_STEP, { message: "Fixed." }],
    },
  ],
};

let dir: string;
let redis: Awaited<ReturnType<typeof startRedis>>;
let github: FakeGitHub;
let remote: GitHttpRemote;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "acp-warden-scale-"));
  redis = await startRedis();
  github = await FakeGitHub.start({ app: { id: APP_ID, slug: "acp-warden", publicKey } });
  // Like GitHub's git servers: any installation token GitHub minted is accepted.
  remote = await GitHttpRemote.start({
    acceptToken: (token) => github.state.installationTokens.some((t) => t.token === token),
  });
});
afterAll(async () => {
  await github?.close();
  await remote?.close();
  await redis?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function until<T>(what: string, probe: () => T | undefined, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("serve + worker over Redis", () => {
  it("a signed /agent fix delivery is enqueued by serve and run by a separate worker", {
    timeout: 120_000,
  }, async () => {
    const full = "acme/scaled";
    await remote.createRepository(full, { files: FILES, defaultBranch: "main" });
    github.addRepository({
      owner: "acme",
      name: "scaled",
      defaultBranch: "main",
      cloneUrl: remote.repositoryUrl(full),
      content: remote.contentSource(full),
      collaborators: { maint: "maintain" },
      installationId: INSTALLATION_ID,
    });
    const issue = github.addIssue(full, { title: "Greeting is misspelled", body: "helo" });
    const comment = github.addComment(full, issue.number, { body: "/agent fix", author: "maint" });

    const agent = scriptedAgentCommand(await writeScript(dir, script));
    const env = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      APP_ID: String(APP_ID),
      PRIVATE_KEY: privateKey,
      WEBHOOK_SECRET: SECRET,
      PORT: "0",
      HOST: "127.0.0.1",
      GITHUB_API_URL: github.url,
      GITHUB_SERVER_URL: remote.url,
      ACP_WARDEN_REDIS_URL: redis.url,
      ACP_WARDEN_AGENT: [agent.command, ...agent.args].join(" "),
      ACP_WARDEN_WORK_DIR: dir,
      LOG_LEVEL: "fatal",
    };
    const logs = { serve: "", worker: "" };
    const stop = new AbortController();
    let url = "";
    const serving = serveCommand(
      env,
      { stdout: (t) => (logs.serve += t), stderr: (t) => (logs.serve += t) },
      {
        signal: stop.signal,
        onReady: (info) => {
          url = info.url ?? "";
        },
      },
    );
    const working = workerCommand(
      env,
      { stdout: (t) => (logs.worker += t), stderr: (t) => (logs.worker += t) },
      { signal: stop.signal },
    );
    await until("the server", () => (url ? url : undefined));

    const example = (webhookExamples as unknown as { name: string; examples: Record<string, unknown>[] }[])
      .find((e) => e.name === "issue_comment")!
      .examples.find((e) => e.action === "created")!;
    const payload = structuredClone(example) as Record<string, Record<string, unknown>>;
    const user = { ...(payload.sender ?? {}), login: "maint", type: "User" };
    payload.issue = { ...payload.issue, number: issue.number, title: issue.title, user };
    delete payload.issue.pull_request;
    payload.comment = { ...payload.comment, id: comment.id, body: comment.body, user };
    payload.repository = { ...payload.repository, name: "scaled", full_name: full, owner: { login: "acme" } };
    payload.sender = user;
    payload.installation = { id: INSTALLATION_ID };
    const body = JSON.stringify(payload);
    const response = await fetch(`${url}/api/github/webhooks`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-github-event": "issue_comment",
        "x-github-delivery": "scale-out-1",
        "x-hub-signature-256": await sign(SECRET, body),
      },
      body,
    });
    expect(response.status).toBe(200);

    const pr = await until("the pull request", () => github.pullRequestsOf(full)[0]);
    expect(await remote.readFile(full, pr.head.ref, "src/app.js")).toBe(FIXED);
    expect(github.state.reactions).toContainEqual(
      expect.objectContaining({ content: "eyes", target: { kind: "issue-comment", commentId: comment.id } }),
    );
    // serve enqueued and did not run the job; the worker ran it.
    expect(logs.serve).toContain("jobs go to Redis");
    expect(logs.serve).not.toContain("published");

    stop.abort();
    expect(await serving).toBe(0);
    expect(await working).toBe(0);
  });
});
