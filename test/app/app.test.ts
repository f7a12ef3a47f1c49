// The GitHub App front door, end to end over loopback: signed webhook deliveries POSTed to the
// running Probot server, a fake GitHub REST server that verifies the App's RS256 JWTs and mints
// installation tokens, a real git remote over HTTP, and the scripted ACP agent run by the worker.
import { generateKeyPairSync } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import webhookExamples from "@octokit/webhooks-examples";
import { sign } from "@octokit/webhooks-methods";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAgentSession } from "../../src/acp/index.js";
import { createInstallationTokens, type InstallationTokens } from "../../src/app/auth.js";
import type { WebhookDecision, WebhookDelivery } from "../../src/app/webhooks.js";
import { createJobHandler, DEFAULT_APP_SETTINGS } from "../../src/app/worker.js";
import { createAgentRuntime } from "../../src/entrypoints/agent-runtime.js";
import { type AppServer, startAppServer } from "../../src/entrypoints/app.js";
import { GitCli } from "../../src/git/git-cli.js";
import { createOctokitGitHub } from "../../src/github/octokit.js";
import type { RunOutcome } from "../../src/pipeline/types.js";
import { loadShellAnalyzer } from "../../src/policy/index.js";
import { createInProcessQueue } from "../../src/queue/in-process.js";
import type { JobHandler, JobQueue, QueueWorker, RunJob } from "../../src/queue/port.js";
import type { Script } from "../agent/script.js";
import { FILES, FIX_APP_STEP, FIXED, POLICY, trackingComment } from "../support/action-harness.js";
import { FakeGitHub } from "../support/fake-github/index.js";
import { GitHttpRemote } from "../support/git-remote.js";
import { scriptedAgentCommand, writeScript } from "../support/scripted-agent.js";

const APP_ID = 31337;
const INSTALLATION_ID = 4242;
const SECRET = "webhook-secret-for-tests";
const OWNER = "acme";
const FAKE_PRIVATE_KEY_ENV = "-----BEGIN PRIVATE KEY-----not-a-real-key-----END PRIVATE KEY-----";

const { privateKey, publicKey } = generateKeyPairSync("rsa", {
  modulusLength: 2048,
  privateKeyEncoding: { type: "pkcs1", format: "pem" },
  publicKeyEncoding: { type: "spki", format: "pem" },
});

// The agent edits the file, prints its environment and reads .git/config: the transcript then
// shows everything the agent could see.
const SCRIPT: Script = {
  turns: [
    {
      steps: [
        {
          toolCall: { id: "read", title: "Read src/app.js", kind: "read", rawInput: { path: "src/app.js" } },
          action: { readFile: { path: "src/app.js" } },
        },
        FIX_APP_STEP,
        {
          toolCall: { id: "env", title: "printenv", kind: "execute", rawInput: { command: "printenv" } },
          permission: true,
          action: { terminal: { command: "printenv", args: [] } },
        },
        { readFile: { path: ".git/config" } },
        { message: "Fixed the greeting." },
      ],
    },
  ],
};

interface Harness {
  dir: string;
  github: FakeGitHub;
  remote: GitHttpRemote;
  queue: JobQueue;
  worker: QueueWorker;
  server: AppServer;
  enqueued: RunJob[];
  decisions: { delivery: WebhookDelivery; decision: WebhookDecision }[];
  outcomes: Map<string, RunOutcome[]>;
  logs: string[];
  makeHandler(agentLine: string, onOutcome: (job: RunJob, outcome: RunOutcome) => void): JobHandler;
  waitForRun(jobId: string): Promise<RunOutcome>;
}

let h: Harness;
let repoCounter = 0;
let deliveryCounter = 0;

function commandLine(agent: { command: string; args: string[] }): string {
  return [agent.command, ...agent.args].map(quote).join(" ");
}

function quote(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** Counts enqueue calls that reached the queue and were accepted. */
function recording(queue: JobQueue, enqueued: RunJob[]): JobQueue {
  return {
    async enqueue(job) {
      const result = await queue.enqueue(job);
      if (result.accepted) enqueued.push(job);
      return result;
    },
    work: (handler, options) => queue.work(handler, options),
    close: () => queue.close(),
  };
}

beforeAll(async () => {
  const dir = await mkdtemp(join(tmpdir(), "acp-warden-app-test-"));
  const remote = await GitHttpRemote.start({ tokens: [] });
  const github = await FakeGitHub.start({
    app: { id: APP_ID, slug: "acp-warden", publicKey },
    webUrl: remote.url,
  });
  // Installation tokens are minted by the fake GitHub (JWT verified there); the git remote learns
  // each one as it is handed to the App, as GitHub's own git servers would accept it.
  const minted = createInstallationTokens({ appId: APP_ID, privateKey, baseUrl: github.url });
  const tokens: InstallationTokens = {
    async get(installationId) {
      const token = await minted.get(installationId);
      remote.addToken(token.token);
      return token;
    },
  };
  const createGitHub = (token: string) =>
    createOctokitGitHub({
      token,
      baseUrl: github.url,
      retry: { backoffUnitMs: 1 },
      throttle: { secondUnitMs: 10, writeSpacingMs: 0, notificationSpacingMs: 0 },
    });

  const agent = scriptedAgentCommand(await writeScript(dir, SCRIPT));
  const enqueued: RunJob[] = [];
  const decisions: Harness["decisions"] = [];
  const outcomes = new Map<string, RunOutcome[]>();
  const waiters = new Map<string, (outcome: RunOutcome) => void>();
  const failures = new Map<string, (error: unknown) => void>();
  const logs: string[] = [];
  const queue = recording(
    createInProcessQueue({
      attempts: 1,
      onFailed: (job, error) => failures.get(job.id)?.(error),
    }),
    enqueued,
  );
  const makeHandler = (agentLine: string, onOutcome: (job: RunJob, outcome: RunOutcome) => void) =>
    createJobHandler({
      tokens,
      apiUrl: github.url,
      serverUrl: remote.url,
      settings: { ...DEFAULT_APP_SETTINGS, agent: agentLine },
      createGitHub,
      git: new GitCli(),
      // The App's secrets sit in the parent environment; the agent must never see them.
      agents: createAgentRuntime(
        {
          PATH: process.env.PATH ?? "/usr/bin:/bin",
          PRIVATE_KEY: FAKE_PRIVATE_KEY_ENV,
          WEBHOOK_SECRET: SECRET,
          APP_ID: String(APP_ID),
        },
        { tempDir: dir },
      ),
      runSession: runAgentSession,
      loadShell: () => loadShellAnalyzer(),
      workDir: join(dir, "work"),
      transcriptDir: join(dir, "transcripts"),
      commentIntervalMs: 0,
      log: (line) => {
        logs.push(line);
        if (process.env.DEBUG_APP_TEST) console.error(line);
      },
      onOutcome,
    });
  const worker = queue.work(
    makeHandler(commandLine(agent), (job, outcome) => {
      outcomes.set(job.id, [...(outcomes.get(job.id) ?? []), outcome]);
      waiters.get(job.id)?.(outcome);
    }),
    { concurrency: 2 },
  );
  const server = await startAppServer({
    appId: APP_ID,
    privateKey,
    webhookSecret: SECRET,
    port: 0,
    host: "127.0.0.1",
    baseUrl: github.url,
    queue,
    trigger: DEFAULT_APP_SETTINGS.trigger,
    tokens,
    createGitHub,
    onDecision: (delivery, decision) => decisions.push({ delivery, decision }),
    probotLogLevel: "fatal",
  });
  h = {
    dir,
    github,
    remote,
    queue,
    worker,
    server,
    enqueued,
    decisions,
    outcomes,
    logs,
    makeHandler,
    waitForRun: (jobId) =>
      new Promise((resolve, reject) => {
        const done = outcomes.get(jobId)?.[0];
        if (done) resolve(done);
        else {
          waiters.set(jobId, resolve);
          failures.set(jobId, (error) =>
            reject(new Error(`job ${jobId} failed: ${String(error)}\n${logs.join("\n")}`)),
          );
        }
      }),
  };
});

afterAll(async () => {
  await h?.server.close();
  await h?.worker.close();
  await h?.queue.close();
  await h?.github.close();
  await h?.remote.close();
  if (h) await rm(h.dir, { recursive: true, force: true });
});

async function newRepository(): Promise<string> {
  const name = `widgets-${++repoCounter}`;
  const full = `${OWNER}/${name}`;
  const policy = POLICY.replace(
    'execute: ["echo *", "npm test"]',
    'execute: ["echo *", "npm test", "printenv"]',
  );
  await h.remote.createRepository(full, {
    files: { ...FILES, ".github/agent-policy.yml": policy },
    defaultBranch: "main",
  });
  h.github.addRepository({
    owner: OWNER,
    name,
    defaultBranch: "main",
    cloneUrl: h.remote.repositoryUrl(full),
    content: h.remote.contentSource(full),
    collaborators: { maint: "maintain", reader: "read" },
    installationId: INSTALLATION_ID,
  });
  return full;
}

type Example = Record<string, unknown>;

/** An `issue_comment.created` payload shaped like GitHub's own example, aimed at our fakes. */
function commentDelivery(
  full: string,
  issue: { number: number; title: string },
  comment: { id: number; body: string; login: string },
) {
  const examples = webhookExamples as unknown as { name: string; examples: Example[] }[];
  const base = examples
    .find((entry) => entry.name === "issue_comment")
    ?.examples.find((example) => example.action === "created");
  if (!base) throw new Error("no issue_comment.created example in @octokit/webhooks-examples");
  const payload = structuredClone(base) as Record<string, Record<string, unknown>>;
  const [owner, name] = full.split("/") as [string, string];
  const user = { ...(payload.sender ?? {}), login: comment.login, type: "User" };
  payload.issue = { ...payload.issue, number: issue.number, title: issue.title, user };
  delete payload.issue.pull_request;
  payload.comment = { ...payload.comment, id: comment.id, body: comment.body, user };
  payload.repository = {
    ...payload.repository,
    name,
    full_name: full,
    owner: { ...(payload.repository?.owner as Record<string, unknown>), login: owner },
  };
  payload.sender = user;
  payload.installation = { id: INSTALLATION_ID, node_id: "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uNDI0Mg==" };
  return { id: `delivery-${++deliveryCounter}-${Date.now()}`, name: "issue_comment", payload };
}

async function deliver(
  delivery: { id: string; name: string; payload: unknown },
  options: { secret?: string; signature?: string; url?: string } = {},
): Promise<{ status: number; text: string }> {
  const body = JSON.stringify(delivery.payload);
  const signature = options.signature ?? (await sign(options.secret ?? SECRET, body));
  const response = await fetch(options.url ?? h.server.webhookUrl, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-github-event": delivery.name,
      "x-github-delivery": delivery.id,
      "x-hub-signature-256": signature,
      "user-agent": "GitHub-Hookshot/test",
    },
    body,
  });
  return { status: response.status, text: await response.text() };
}

function issueWithComment(full: string, body = "/agent fix", login = "maint") {
  const issue = h.github.addIssue(full, { title: "Greeting is misspelled", body: "It says helo." });
  const comment = h.github.addComment(full, issue.number, { body, author: login });
  return { issue, comment, delivery: commentDelivery(full, issue, { id: comment.id, body, login }) };
}

describe("the GitHub App front door", () => {
  it("turns a signed `/agent fix` delivery into 👀, a job, and a pull request with the fix", async () => {
    const full = await newRepository();
    const { issue, comment, delivery } = issueWithComment(full);
    const response = await deliver(delivery);
    expect(response.status, response.text).toBe(200);

    // Decided before answering: authorized, 👀, enqueued.
    const decision = h.decisions.find((d) => d.delivery.id === delivery.id)?.decision;
    expect(decision?.action).toBe("enqueued");
    const job = h.enqueued.find((j) => j.id === delivery.id);
    expect(job).toMatchObject({
      installationId: INSTALLATION_ID,
      owner: OWNER,
      repo: full.split("/")[1],
      eventName: "issue_comment",
      lockKey: `${full}#${issue.number}`,
    });
    expect(h.github.state.reactions).toContainEqual(
      expect.objectContaining({ content: "eyes", target: { kind: "issue-comment", commentId: comment.id } }),
    );

    const outcome = await h.waitForRun(delivery.id);
    expect(outcome.status, outcome.message).toBe("published");
    const pulls = h.github.pullRequestsOf(full);
    expect(pulls).toHaveLength(1);
    const pr = pulls[0]!;
    expect(pr.head.ref).toBe(`agent/${issue.number}-greeting-is-misspelled`);
    expect(pr.body).toContain(`Fixes #${issue.number}`);
    expect(await h.remote.readFile(full, pr.head.ref, "src/app.js")).toBe(FIXED);

    // The tracking comment ends with the pull request; the checkout is gone.
    const tracking = trackingComment(h.github, full, issue.number);
    expect(tracking?.body).toContain(`#${pr.number}`);
    // The git remote was only ever reached with installation tokens.
    const minted = new Set(h.github.state.installationTokens.map((t) => t.token));
    const used = h.remote.requests.filter((r) => r.url.startsWith(`/${full}.git`));
    expect(used.length).toBeGreaterThan(0);
    for (const request of used.filter((r) => r.authorized))
      expect(minted.has(request.credentials[0]?.password ?? "")).toBe(true);
  });

  it("keeps the installation token and the App's secrets from the agent", async () => {
    const full = await newRepository();
    const { delivery } = issueWithComment(full);
    expect((await deliver(delivery)).status).toBe(200);
    const outcome = await h.waitForRun(delivery.id);
    expect(outcome.status, outcome.message).toBe("published");
    const transcriptPath = outcome.report?.transcriptPath;
    expect(transcriptPath).toBeTruthy();
    const transcript = await readFile(transcriptPath!, "utf8");
    // The agent really ran its commands: printenv's output and .git/config are in the transcript.
    expect(transcript).toContain("PATH=");
    expect(transcript).toContain("[core]");
    const tokens = h.github.state.installationTokens.map((t) => t.token);
    expect(tokens.length).toBeGreaterThan(0);
    for (const token of tokens) {
      expect(transcript).not.toContain(token);
      expect(transcript).not.toContain(Buffer.from(`x-access-token:${token}`).toString("base64"));
    }
    expect(transcript).not.toContain(SECRET);
    expect(transcript).not.toContain("not-a-real-key");
    expect(transcript).not.toContain("BEGIN RSA PRIVATE KEY");
    expect(transcript).not.toContain(`APP_ID=${APP_ID}`);
  });

  it("rejects a delivery with a bad signature and enqueues nothing", async () => {
    const full = await newRepository();
    const { delivery } = issueWithComment(full);
    const before = h.enqueued.length;
    const forged = await deliver(delivery, { secret: "not-the-secret" });
    expect([400, 401]).toContain(forged.status);
    const missing = await deliver(delivery, { signature: "sha256=" });
    expect([400, 401]).toContain(missing.status);
    expect(h.enqueued.length).toBe(before);
    expect(h.decisions.some((d) => d.delivery.id === delivery.id)).toBe(false);
    expect(h.github.state.reactions.some((r) => r.repository === full)).toBe(false);
  });

  it("runs a delivery sent twice once, even through a second server sharing the queue", async () => {
    const full = await newRepository();
    const { issue, delivery } = issueWithComment(full);
    const [first, second] = await Promise.all([deliver(delivery), deliver(delivery)]);
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    // A second webhook process (e.g. behind a load balancer) gets the redelivery: the queue dedupes.
    const other = await startAppServer({
      appId: APP_ID,
      privateKey,
      webhookSecret: SECRET,
      port: 0,
      host: "127.0.0.1",
      baseUrl: h.github.url,
      queue: h.queue,
      trigger: DEFAULT_APP_SETTINGS.trigger,
      createGitHub: (token) =>
        createOctokitGitHub({
          token,
          baseUrl: h.github.url,
          throttle: { writeSpacingMs: 0, notificationSpacingMs: 0 },
        }),
      onDecision: (d, decision) => h.decisions.push({ delivery: d, decision }),
      probotLogLevel: "fatal",
    });
    try {
      expect((await deliver(delivery, { url: other.webhookUrl })).status).toBe(200);
    } finally {
      await other.close();
    }
    const actions = h.decisions.filter((d) => d.delivery.id === delivery.id).map((d) => d.decision.action);
    expect(actions.sort()).toEqual(["duplicate", "duplicate", "enqueued"]);
    expect(h.enqueued.filter((j) => j.id === delivery.id)).toHaveLength(1);

    const outcome = await h.waitForRun(delivery.id);
    expect(outcome.status, outcome.message).toBe("published");
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(h.outcomes.get(delivery.id)).toHaveLength(1);
    expect(h.github.pullRequestsOf(full)).toHaveLength(1);
    const tracking = h.github
      .commentsOn(full, issue.number)
      .filter((c) => c.body.startsWith("<!-- acp-warden -->"));
    expect(tracking).toHaveLength(1);
  });

  it("answers a commenter without write access politely and starts nothing", async () => {
    const full = await newRepository();
    const { issue, comment, delivery } = issueWithComment(full, "/agent fix please", "reader");
    const response = await deliver(delivery);
    expect(response.status).toBe(200);
    const decision = h.decisions.find((d) => d.delivery.id === delivery.id)?.decision;
    expect(decision).toMatchObject({ action: "refused", actor: "reader", role: "read" });
    expect(h.enqueued.some((j) => j.id === delivery.id)).toBe(false);
    const reply = h.github.commentsOn(full, issue.number).find((c) => c.id !== comment.id);
    expect(reply?.body).toContain("@reader needs write access");
    expect(reply?.body).toContain("A maintainer can run the command instead.");
    expect(h.github.state.reactions.some((r) => r.repository === full)).toBe(false);
  });

  it("ignores comments that are not commands, and answers GitHub's health probe", async () => {
    const full = await newRepository();
    const { delivery } = issueWithComment(full, "thanks, looks good");
    expect((await deliver(delivery)).status).toBe(200);
    expect(h.decisions.find((d) => d.delivery.id === delivery.id)?.decision.action).toBe("ignored");
    expect(h.enqueued.some((j) => j.id === delivery.id)).toBe(false);
    expect((await fetch(`${h.server.url}/healthz`)).status).toBe(200);
  });

  it("cancels the agent cleanly when the worker shuts down, and publishes the work so far as a draft", async () => {
    const full = await newRepository();
    const { issue, delivery } = issueWithComment(full);
    const script: Script = {
      turns: [
        {
          steps: [FIX_APP_STEP, { hang: true }],
        },
      ],
    };
    const agentLine = commandLine(scriptedAgentCommand(await writeScript(h.dir, script)));
    let finished: RunOutcome | null = null;
    const queue = createInProcessQueue({ attempts: 1 });
    const worker = queue.work(
      h.makeHandler(agentLine, (_job, outcome) => {
        finished = outcome;
      }),
    );
    try {
      const job: RunJob = {
        id: delivery.id,
        installationId: INSTALLATION_ID,
        owner: OWNER,
        repo: full.split("/")[1]!,
        eventName: delivery.name,
        payload: delivery.payload,
        lockKey: `${full}#${issue.number}`,
        enqueuedAt: Date.now(),
      };
      expect((await queue.enqueue(job)).accepted).toBe(true);
      // Wait until the agent has made its edit and hangs.
      const deadline = Date.now() + 20_000;
      while (Date.now() < deadline) {
        const tracking = trackingComment(h.github, full, issue.number);
        if (tracking?.body.includes("Edit src/app.js")) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await worker.close();
    } finally {
      await queue.close();
    }
    const outcome = finished as RunOutcome | null;
    expect(outcome?.status, outcome?.message).toBe("stopped");
    expect(outcome?.report?.session?.cancelCause).toBeTruthy();
    const pr = h.github.pullRequestsOf(full)[0];
    expect(pr?.draft).toBe(true);
    expect(await h.remote.readFile(full, pr!.head.ref, "src/app.js")).toBe(FIXED);
  });
});
