import { generateKeyPairSync, sign } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { GitCli } from "../../src/git/git-cli.js";
import { createOctokitGitHub, type OctokitGitHubOptions } from "../../src/github/octokit.js";
import { GitHubError, type GitHubPort } from "../../src/github/port.js";
import { FakeGitHub } from "../support/fake-github/index.js";
import { GitHttpRemote } from "../support/git-remote.js";

const token = "ghs_actions_token";
const repo = "acme/widgets";
const policy = "version: 1\ndefault: deny\n";

let fake: FakeGitHub;
let remote: GitHttpRemote;
let baseCommit: string;

/** The real client with every delay shrunk: one "second" of retry-after is 10 ms here. */
function client(overrides: Partial<OctokitGitHubOptions> = {}): GitHubPort {
  return createOctokitGitHub({
    token,
    baseUrl: fake.url,
    userAgent: "acp-warden-test",
    retry: { backoffUnitMs: 5 },
    throttle: { secondUnitMs: 10, writeSpacingMs: 0, notificationSpacingMs: 0 },
    ...overrides,
  });
}

/** Publishes `branch` (one commit on main) on the real remote, so a PR's head is a real commit. */
async function pushBranch(scratch: string, branch: string): Promise<string | null> {
  const workspace = await new GitCli().clone({
    remoteUrl: remote.repositoryUrl(repo),
    token,
    directory: join(scratch, "w"),
  });
  await workspace.ensureIdentity({ name: "bot", email: "bot@example.test" });
  await workspace.checkoutNewBranch(branch, "main");
  await writeFile(join(workspace.directory, "fix.txt"), "fixed\n");
  const head = await workspace.commitAll("Fix");
  await workspace.push({ remoteUrl: remote.repositoryUrl(repo), branch, token });
  return head;
}

beforeAll(async () => {
  fake = await FakeGitHub.start({ tokens: { [token]: "github-actions[bot]" } });
  remote = await GitHttpRemote.start({ tokens: [token] });
  baseCommit = await remote.createRepository(repo, {
    files: {
      ".github/agent-policy.yml": policy,
      "README.md": "# Widgets\n",
      "docs/big.txt": "x".repeat(1_200_000),
    },
  });
  fake.addRepository({
    owner: "acme",
    name: "widgets",
    cloneUrl: remote.repositoryUrl(repo),
    content: remote.contentSource(repo),
    collaborators: { alice: "maintain", bob: "triage", root: "admin", wanda: "write" },
    workflows: ["agent.yml"],
  });
  fake.addRepository({ owner: "acme", name: "secret", private: true, files: { "a.txt": "a" } });
});

afterAll(async () => {
  await fake.close();
  await remote.close();
});

beforeEach(() => {
  fake.requests.length = 0;
});

describe("OctokitGitHub reads", () => {
  it("reads a repository", async () => {
    expect(await client().getRepository("acme", "widgets")).toEqual({
      owner: "acme",
      name: "widgets",
      fullName: "acme/widgets",
      defaultBranch: "main",
      cloneUrl: remote.repositoryUrl(repo),
      htmlUrl: "https://github.com/acme/widgets",
      private: false,
      archived: false,
    });
    expect(fake.requests[0]).toMatchObject({
      method: "GET",
      route: "/repos/{owner}/{repo}",
      credential: token,
    });
  });

  it("reports the finest role, and none for strangers on private repositories", async () => {
    const github = client();
    expect(await github.getCollaboratorPermission("acme", "widgets", "root")).toBe("admin");
    expect(await github.getCollaboratorPermission("acme", "widgets", "alice")).toBe("maintain");
    expect(await github.getCollaboratorPermission("acme", "widgets", "wanda")).toBe("write");
    expect(await github.getCollaboratorPermission("acme", "widgets", "bob")).toBe("triage");
    expect(await github.getCollaboratorPermission("acme", "widgets", "stranger")).toBe("read");
    expect(await github.getCollaboratorPermission("acme", "secret", "stranger")).toBe("none");
  });

  it("reads issues, and pull requests with their fork flag", async () => {
    const issue = fake.addIssue(repo, {
      title: "Widget too small",
      body: "/agent fix",
      author: "alice",
      labels: ["bug"],
    });
    const own = fake.addPullRequest(repo, { title: "Own branch", head: "feature", author: "alice" });
    const fork = fake.addPullRequest(repo, {
      title: "From a fork",
      head: "patch-1",
      headRepoFullName: "mallory/widgets",
      author: "mallory",
    });
    const gone = fake.addPullRequest(repo, { title: "Deleted fork", head: "x", headRepoFullName: null });
    const github = client();

    expect(await github.getIssue("acme", "widgets", issue.number)).toEqual({
      number: issue.number,
      title: "Widget too small",
      body: "/agent fix",
      state: "open",
      author: "alice",
      labels: ["bug"],
      isPullRequest: false,
      htmlUrl: `https://github.com/acme/widgets/issues/${issue.number}`,
    });
    expect((await github.getIssue("acme", "widgets", own.number)).isPullRequest).toBe(true);

    const ownPull = await github.getPullRequest("acme", "widgets", own.number);
    expect(ownPull).toMatchObject({
      title: "Own branch",
      fromFork: false,
      head: { ref: "feature", repoFullName: "acme/widgets" },
      base: { ref: "main", repoFullName: "acme/widgets" },
      draft: false,
      merged: false,
    });
    expect(await github.getPullRequest("acme", "widgets", fork.number)).toMatchObject({
      fromFork: true,
      author: "mallory",
      head: { ref: "patch-1", repoFullName: "mallory/widgets" },
    });
    expect((await github.getPullRequest("acme", "widgets", gone.number)).fromFork).toBe(true);
  });

  it("reads committed files from the default branch and other refs, null when missing", async () => {
    const github = client();
    const file = await github.getFileContent("acme", "widgets", ".github/agent-policy.yml", "main");
    expect(file?.text).toBe(policy);
    expect(file?.sha).toMatch(/^[0-9a-f]{40}$/);
    expect((await github.getFileContent("acme", "widgets", "README.md", baseCommit))?.text).toBe(
      "# Widgets\n",
    );
    expect(await github.getFileContent("acme", "widgets", ".github/missing.yml", "main")).toBeNull();
    expect(await github.getFileContent("acme", "widgets", "README.md", "no-such-branch")).toBeNull();
    expect((await github.getFileContent("acme", "widgets", "docs/big.txt", "main"))?.text.length).toBe(
      1_200_000,
    );
    const directory = await github
      .getFileContent("acme", "widgets", ".github", "main")
      .catch((error) => error);
    expect(directory).toBeInstanceOf(GitHubError);
    expect((await github.getFileContent("acme", "secret", "a.txt", "main"))?.text).toBe("a");
  });

  it("maps failures to GitHubError with status, route and a hint", async () => {
    const missing = await client()
      .getIssue("acme", "widgets", 9999)
      .catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(GitHubError);
    expect(missing).toMatchObject({
      kind: "not-found",
      status: 404,
      route: "GET /repos/{owner}/{repo}/issues/{issue_number}",
    });
    expect((missing as Error).message).toMatch(/404 while reading issue #9999 of acme\/widgets/);
    expect((missing as GitHubError).requestId).toMatch(/^[0-9A-F]+$/);

    const unauthorized = await client({ token: "ghs_revoked" })
      .getRepository("acme", "widgets")
      .catch((error: unknown) => error);
    expect(unauthorized).toMatchObject({ kind: "unauthorized", status: 401 });
    expect((unauthorized as Error).message).toContain("Bad credentials");
    expect(fake.requests.filter((request) => request.credential === "ghs_revoked")).toHaveLength(1);

    const offline = await createOctokitGitHub({
      token,
      baseUrl: "http://127.0.0.1:9",
      retry: { maxRetries: 0 },
    })
      .getRepository("acme", "widgets")
      .catch((error: unknown) => error);
    expect(offline).toMatchObject({ kind: "network", status: 0 });
  });
});

describe("OctokitGitHub writes", () => {
  it("creates, edits and lists comments across pages", async () => {
    const issue = fake.addIssue(repo, { title: "Paging" });
    for (let index = 0; index < 120; index++) {
      fake.addComment(repo, issue.number, { body: `old ${index}`, author: "someone" });
    }
    const github = client();
    const created = await github.createComment("acme", "widgets", issue.number, "Working on it…");
    expect(created.author).toBe("github-actions[bot]");
    const edited = await github.updateComment("acme", "widgets", created.id, "Done.");
    expect(edited).toMatchObject({ id: created.id, body: "Done." });

    const listed = await github.listComments("acme", "widgets", issue.number);
    expect(listed).toHaveLength(121);
    expect(listed.at(-1)).toMatchObject({ id: created.id, body: "Done." });
    expect(fake.commentsOn(repo, issue.number).at(-1)?.history).toEqual(["Working on it…", "Done."]);
    expect(
      fake.requests.filter((request) => request.route?.endsWith("/comments") && request.method === "GET"),
    ).toHaveLength(2);
  });

  it("survives a 502 on a comment edit by retrying", async () => {
    const issue = fake.addIssue(repo, { title: "Flaky edit" });
    const github = client();
    const comment = await github.createComment("acme", "widgets", issue.number, "v1");
    fake.injectFault({
      method: "PATCH",
      route: "/repos/{owner}/{repo}/issues/comments/{comment_id}",
      fault: { type: "status", status: 502 },
    });

    await github.updateComment("acme", "widgets", comment.id, "v2");

    const edits = fake.requests.filter((request) => request.method === "PATCH");
    expect(edits.map((request) => request.status)).toEqual([502, 200]);
    expect(fake.commentsOn(repo, issue.number)[0]?.history).toEqual(["v1", "v2"]);
    expect(fake.pendingFaults()).toBe(0);
  });

  it("does not post a comment twice when GitHub stored it but answered 502", async () => {
    const issue = fake.addIssue(repo, { title: "Lost answer" });
    fake.injectFault({
      method: "POST",
      route: "/repos/{owner}/{repo}/issues/{issue_number}/comments",
      fault: { type: "applied-then-status", status: 502 },
    });
    const comment = await client().createComment("acme", "widgets", issue.number, "tracking");
    expect(fake.commentsOn(repo, issue.number).map((c) => c.body)).toEqual(["tracking"]);
    expect(comment.id).toBe(fake.commentsOn(repo, issue.number)[0]?.id);
    // A 502 that did not store the comment is still retried.
    fake.injectFault({
      method: "POST",
      route: "/repos/{owner}/{repo}/issues/{issue_number}/comments",
      fault: { type: "status", status: 502 },
    });
    await client().createComment("acme", "widgets", issue.number, "second");
    expect(fake.commentsOn(repo, issue.number).map((c) => c.body)).toEqual(["tracking", "second"]);
  });

  it("gives up on a server error that outlasts the retries", async () => {
    const issue = fake.addIssue(repo, { title: "Down" });
    fake.injectFault({
      route: "/repos/{owner}/{repo}/issues/{issue_number}",
      times: 10,
      fault: { type: "status", status: 503 },
    });
    const error = await client({ retry: { maxRetries: 2, backoffUnitMs: 1 } })
      .getIssue("acme", "widgets", issue.number)
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({
      kind: "server",
      status: 503,
      route: "GET /repos/{owner}/{repo}/issues/{issue_number}",
    });
    expect(fake.requests).toHaveLength(3);
    expect(fake.pendingFaults()).toBe(7);
    fake.clearFaults();
  });

  it("waits out a 403 secondary rate limit as retry-after says, without duplicating the comment", async () => {
    const issue = fake.addIssue(repo, { title: "Busy" });
    fake.injectFault({
      method: "POST",
      route: "/repos/{owner}/{repo}/issues/{issue_number}/comments",
      fault: { type: "secondary-rate-limit", status: 403, retryAfterSeconds: 5 },
    });
    const warnings: string[] = [];
    const started = Date.now();
    await client({ logger: { debug: () => {}, warn: (message) => warnings.push(message) } }).createComment(
      "acme",
      "widgets",
      issue.number,
      "hello",
    );
    // retry-after 5 s at 10 ms per second.
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
    expect(fake.requests.map((request) => request.status)).toEqual([403, 201]);
    expect(fake.commentsOn(repo, issue.number).map((comment) => comment.body)).toEqual(["hello"]);
    expect(warnings.join("\n")).toMatch(/secondary rate limit .* retrying in 5s/);
  });

  it("waits out a 429 and a primary rate limit too", async () => {
    const issue = fake.addIssue(repo, { title: "Limits" });
    fake.injectFault({
      route: "/repos/{owner}/{repo}/issues/{issue_number}/reactions",
      fault: { type: "secondary-rate-limit", status: 429, retryAfterSeconds: 1 },
    });
    await client().addReaction("acme", "widgets", { kind: "issue", issueNumber: issue.number }, "eyes");
    expect(fake.requests.map((request) => request.status)).toEqual([429, 201]);

    fake.requests.length = 0;
    fake.injectFault({
      route: "/repos/{owner}/{repo}",
      fault: { type: "rate-limit", status: 403, resetInSeconds: 1 },
    });
    await client().getRepository("acme", "widgets");
    expect(fake.requests.map((request) => request.status)).toEqual([403, 200]);
  });

  it("fails fast when GitHub asks for a longer wait than allowed", async () => {
    const issue = fake.addIssue(repo, { title: "Too long" });
    fake.injectFault({
      route: "/repos/{owner}/{repo}/issues/{issue_number}/comments",
      fault: { type: "secondary-rate-limit", retryAfterSeconds: 600 },
    });
    const started = Date.now();
    const error = await client({
      throttle: { secondUnitMs: 1000, maxWaitSeconds: 60, writeSpacingMs: 0, notificationSpacingMs: 0 },
    })
      .createComment("acme", "widgets", issue.number, "x")
      .catch((caught: unknown) => caught);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(error).toMatchObject({ kind: "rate-limited", status: 403 });
    expect(fake.commentsOn(repo, issue.number)).toEqual([]);
  });

  it("spaces content-creating requests when asked to", async () => {
    const issue = fake.addIssue(repo, { title: "Spacing" });
    const github = client({ throttle: { secondUnitMs: 10, writeSpacingMs: 60, notificationSpacingMs: 0 } });
    const started = Date.now();
    await Promise.all([
      github.createComment("acme", "widgets", issue.number, "one"),
      github.createComment("acme", "widgets", issue.number, "two"),
      github.createComment("acme", "widgets", issue.number, "three"),
    ]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(115);
    expect(fake.commentsOn(repo, issue.number)).toHaveLength(3);
  });

  it("reacts to issues, comments and review comments; repeating a reaction is harmless", async () => {
    const issue = fake.addIssue(repo, { title: "React" });
    const comment = fake.addComment(repo, issue.number, { body: "/agent fix", author: "alice" });
    const github = client();
    await github.addReaction("acme", "widgets", { kind: "issue-comment", commentId: comment.id }, "eyes");
    await github.addReaction("acme", "widgets", { kind: "issue-comment", commentId: comment.id }, "eyes");
    await github.addReaction("acme", "widgets", { kind: "issue", issueNumber: issue.number }, "rocket");
    await github.addReaction("acme", "widgets", { kind: "review-comment", commentId: 77 }, "+1");
    const mine = fake.state.reactions.filter(
      (reaction) => reaction.repository === repo && reaction.user === "github-actions[bot]",
    );
    expect(mine.map((reaction) => [reaction.target, reaction.content])).toEqual(
      expect.arrayContaining([
        [{ kind: "issue-comment", commentId: comment.id }, "eyes"],
        [{ kind: "issue", issueNumber: issue.number }, "rocket"],
        [{ kind: "review-comment", commentId: 77 }, "+1"],
      ]),
    );
    expect(
      mine.filter((reaction) => reaction.content === "eyes" && reaction.target.kind === "issue-comment"),
    ).toHaveLength(1);
  });

  it("does not open a pull request twice when GitHub stored it but answered 502", async () => {
    const scratch = await mkdtemp(join(tmpdir(), "acp-warden-pr-"));
    try {
      await pushBranch(scratch, "agent/issue-502");
      fake.injectFault({
        method: "POST",
        route: "/repos/{owner}/{repo}/pulls",
        fault: { type: "applied-then-status", status: 502 },
      });
      const created = await client().createPullRequest({
        owner: "acme",
        repo: "widgets",
        title: "Fix",
        body: "b",
        head: "agent/issue-502",
        base: "main",
      });
      const pulls = fake.pullRequestsOf(repo).filter((p) => p.head.ref === "agent/issue-502");
      expect(pulls).toHaveLength(1);
      expect(created.number).toBe(pulls[0]?.number);
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  });

  it("opens, finds and updates a pull request for a pushed branch", async () => {
    // Publish a branch on the real remote, so the PR's head is a real commit.
    const scratch = await mkdtemp(join(tmpdir(), "acp-warden-pr-"));
    try {
      const head = await pushBranch(scratch, "agent/issue-1");

      const github = client();
      expect(
        await github.findPullRequestByHead({ owner: "acme", repo: "widgets", branch: "agent/issue-1" }),
      ).toBeNull();
      const created = await github.createPullRequest({
        owner: "acme",
        repo: "widgets",
        title: "Fix widget",
        body: "first body",
        head: "agent/issue-1",
        base: "main",
        draft: true,
      });
      expect(created).toMatchObject({
        title: "Fix widget",
        draft: true,
        fromFork: false,
        head: { ref: "agent/issue-1", sha: head },
        base: { ref: "main", sha: baseCommit },
        author: "github-actions[bot]",
      });

      const found = await github.findPullRequestByHead({
        owner: "acme",
        repo: "widgets",
        branch: "agent/issue-1",
      });
      expect(found?.number).toBe(created.number);

      const again = await github
        .createPullRequest({
          owner: "acme",
          repo: "widgets",
          title: "t",
          body: "b",
          head: "agent/issue-1",
          base: "main",
        })
        .catch((error: unknown) => error);
      expect(again).toMatchObject({ kind: "validation", status: 422 });
      expect((again as Error).message).toContain("A pull request already exists for acme:agent/issue-1");

      const updated = await github.updatePullRequest({
        owner: "acme",
        repo: "widgets",
        number: created.number,
        body: "second body",
      });
      expect(updated.body).toBe("second body");
      expect(fake.pullRequestsOf(repo).find((pull) => pull.number === created.number)?.bodyHistory).toEqual([
        "first body",
        "second body",
      ]);

      await github.updatePullRequest({
        owner: "acme",
        repo: "widgets",
        number: created.number,
        state: "closed",
      });
      expect(
        await github.findPullRequestByHead({ owner: "acme", repo: "widgets", branch: "agent/issue-1" }),
      ).toBeNull();
      expect(
        (
          await github.findPullRequestByHead({
            owner: "acme",
            repo: "widgets",
            branch: "agent/issue-1",
            state: "all",
          })
        )?.state,
      ).toBe("closed");

      const unpushed = await github
        .createPullRequest({
          owner: "acme",
          repo: "widgets",
          title: "t",
          body: "b",
          head: "never-pushed",
          base: "main",
        })
        .catch((error: unknown) => error);
      expect(unpushed).toMatchObject({ kind: "validation", status: 422 });
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  });

  it("dispatches a workflow", async () => {
    const github = client();
    await github.createWorkflowDispatch({
      owner: "acme",
      repo: "widgets",
      workflow: "agent.yml",
      ref: "main",
      inputs: { issue: "7", job: "abc" },
    });
    expect(fake.state.dispatches.at(-1)).toEqual({
      repository: repo,
      workflow: "agent.yml",
      ref: "main",
      inputs: { issue: "7", job: "abc" },
      by: "github-actions[bot]",
    });
    const unknown = await github
      .createWorkflowDispatch({ owner: "acme", repo: "widgets", workflow: "nope.yml", ref: "main" })
      .catch((error: unknown) => error);
    expect(unknown).toMatchObject({ kind: "not-found" });
  });
});

describe("fake GitHub App routes", () => {
  it("issues installation tokens to a signed App JWT, scoped to the installation's repositories", async () => {
    const { publicKey, privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const appFake = await FakeGitHub.start({ app: { id: 42, slug: "acp-warden", publicKey } });
    try {
      appFake.addRepository({ owner: "acme", name: "installed", installationId: 7, files: { "a.txt": "a" } });
      appFake.addRepository({ owner: "acme", name: "other", installationId: 8, files: { "b.txt": "b" } });
      const now = Math.floor(Date.now() / 1000);
      const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");
      const unsigned = `${encode({ alg: "RS256", typ: "JWT" })}.${encode({ iat: now - 60, exp: now + 540, iss: 42 })}`;
      const jwt = `${unsigned}.${sign("sha256", Buffer.from(unsigned), privateKey).toString("base64url")}`;

      const installation = await fetch(`${appFake.url}/repos/acme/installed/installation`, {
        headers: { authorization: `Bearer ${jwt}` },
      });
      expect(installation.status).toBe(200);
      expect(await installation.json()).toMatchObject({ id: 7, app_slug: "acp-warden" });
      const refused = await fetch(`${appFake.url}/repos/acme/installed/installation`, {
        headers: { authorization: `Bearer ${unsigned}.AAAA` },
      });
      expect(refused.status).toBe(401);

      const minted = await fetch(`${appFake.url}/app/installations/7/access_tokens`, {
        method: "POST",
        headers: { authorization: `Bearer ${jwt}` },
      });
      expect(minted.status).toBe(201);
      const { token: installationToken } = (await minted.json()) as { token: string };

      const github = createOctokitGitHub({ token: installationToken, baseUrl: appFake.url });
      expect((await github.getFileContent("acme", "installed", "a.txt", "main"))?.text).toBe("a");
      const elsewhere = await github.getRepository("acme", "other").catch((error: unknown) => error);
      expect(elsewhere).toMatchObject({ kind: "not-found" });
    } finally {
      await appFake.close();
    }
  });
});
