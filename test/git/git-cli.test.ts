import { execFile } from "node:child_process";
import { cp, mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { GitCli } from "../../src/git/git-cli.js";
import { GitCommandError, type GitWorkspace } from "../../src/git/port.js";
import { GitHttpRemote } from "../support/git-remote.js";

const run = promisify(execFile);
const token = "ghs_push_token_1234567890";
const repo = "acme/widgets";
const identity = { name: "acp-warden[bot]", email: "acp-warden@users.noreply.example" };

let remote: GitHttpRemote;
let baseCommit: string;
let scratch: string;
let templateRoot: string;
let template: string;
const git = new GitCli();

beforeAll(async () => {
  remote = await GitHttpRemote.start({ tokens: [token] });
  baseCommit = await remote.createRepository(repo, {
    files: {
      "README.md": "# Widgets\n",
      "src/widget.ts": "export const size = 1;\n",
      "src/old-name.ts": "export const moved = true;\n// a line that keeps the rename recognisable\n",
      ".gitignore": "ignored/\n",
    },
  });
  templateRoot = await mkdtemp(join(tmpdir(), "acp-warden-git-template-"));
  template = join(templateRoot, "clone");
  const cloned = await git.clone({ remoteUrl: remote.repositoryUrl(repo), token, directory: template });
  await cloned.ensureIdentity(identity);
});

afterAll(async () => {
  await remote.close();
  await rm(templateRoot, { recursive: true, force: true });
});

beforeEach(async () => {
  scratch = await mkdtemp(join(tmpdir(), "acp-warden-git-test-"));
  remote.requests.length = 0;
});

afterEach(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** A fresh working copy of the remote's main branch, copied from one clone to keep the suite fast. */
async function cloneWorkspace(name = "work"): Promise<GitWorkspace> {
  const directory = join(scratch, name);
  await cp(template, directory, { recursive: true });
  return git.open(directory);
}

async function rawGit(directory: string, ...args: string[]): Promise<string> {
  const { stdout } = await run("git", args, {
    cwd: directory,
    env: { PATH: process.env.PATH ?? "", GIT_CONFIG_GLOBAL: "/dev/null" },
  });
  return stdout;
}

describe("GitCli against a real HTTP remote", () => {
  it("clones with a token that never lands in .git/config", async () => {
    const workspace = await git.clone({
      remoteUrl: remote.repositoryUrl(repo),
      token,
      directory: join(scratch, "c"),
    });
    expect(await workspace.headCommit()).toBe(baseCommit);
    expect(await workspace.currentBranch()).toBe("main");
    const config = await readFile(join(workspace.directory, ".git", "config"), "utf8");
    expect(config).not.toContain(token);
    expect(config).not.toContain(Buffer.from(`x-access-token:${token}`).toString("base64"));
    expect(config.toLowerCase()).not.toContain("extraheader");
    expect(remote.requests.some((request) => request.authorized)).toBe(true);
    expect(remote.requests.flatMap((request) => request.credentials)).toContainEqual({
      username: "x-access-token",
      password: token,
    });
  });

  it("refuses to clone without a token", async () => {
    const error = await git
      .clone({ remoteUrl: remote.repositoryUrl(repo), directory: join(scratch, "anonymous") })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(GitCommandError);
    expect((error as GitCommandError).kind).toBe("authentication");
    expect((error as GitCommandError).stderr).toMatch(/could not read Username|Authentication failed/);
  });

  it("diffs the working tree against a base, untracked files included, without touching the index", async () => {
    const workspace = await cloneWorkspace();
    await workspace.checkoutNewBranch("agent/issue-7", "main");
    expect(await workspace.currentBranch()).toBe("agent/issue-7");
    const dir = workspace.directory;
    await writeFile(join(dir, "src/widget.ts"), "export const size = 2;\nexport const colour = 'red';\n");
    await writeFile(join(dir, "src/fresh.ts"), "export const fresh = 1;\n");
    await rm(join(dir, "README.md"));
    await rm(join(dir, "src/old-name.ts"));
    await writeFile(
      join(dir, "src/new-name.ts"),
      "export const moved = true;\n// a line that keeps the rename recognisable\n",
    );
    await mkdir(join(dir, "ignored"));
    await writeFile(join(dir, "ignored/cache.txt"), "not part of any diff\n");
    await writeFile(join(dir, "logo.bin"), Buffer.from([0, 1, 2, 3, 0, 255]));

    const diff = await workspace.diff("main");
    expect(diff.base).toBe(baseCommit);
    const byPath = Object.fromEntries(diff.files.map((file) => [file.path, file]));
    expect(byPath["src/widget.ts"]).toMatchObject({ status: "modified", additions: 2, deletions: 1 });
    expect(byPath["src/fresh.ts"]).toMatchObject({ status: "added", additions: 1, deletions: 0 });
    expect(byPath["README.md"]).toMatchObject({ status: "deleted", additions: 0, deletions: 1 });
    expect(byPath["src/new-name.ts"]).toMatchObject({ status: "renamed", previousPath: "src/old-name.ts" });
    expect(byPath["logo.bin"]).toMatchObject({ status: "added", additions: null, deletions: null });
    expect(byPath["ignored/cache.txt"]).toBeUndefined();
    expect(diff.patch).toContain("+++ b/src/fresh.ts");
    expect(diff.patch).toContain("+export const colour = 'red';");
    expect(diff.patch).toContain("rename from src/old-name.ts");

    expect(await workspace.changedPaths("main")).toEqual([
      "README.md",
      "logo.bin",
      "src/fresh.ts",
      "src/new-name.ts",
      "src/old-name.ts",
      "src/widget.ts",
    ]);
    // What the user staged is untouched: untracked files stay untracked.
    expect(await rawGit(dir, "diff", "--cached", "--name-only")).toBe("");
    expect(await rawGit(dir, "status", "--porcelain")).toContain("?? src/fresh.ts");
  });

  it("commits everything, pushes with a token, and the remote has the commit", async () => {
    const workspace = await cloneWorkspace();
    await workspace.checkoutNewBranch("agent/issue-8", baseCommit);
    expect(await workspace.commitAll("nothing yet")).toBeNull();
    await writeFile(join(workspace.directory, "src/widget.ts"), "export const size = 3;\n");
    await writeFile(join(workspace.directory, "NOTES.md"), "new file\n");
    const commit = await workspace.commitAll("Grow the widget\n\nFixes #8");
    expect(commit).toMatch(/^[0-9a-f]{40}$/);
    remote.requests.length = 0;

    await workspace.push({ remoteUrl: remote.repositoryUrl(repo), branch: "agent/issue-8", token });

    expect(await remote.resolveRef(repo, "agent/issue-8")).toBe(commit);
    expect(await remote.readFile(repo, "agent/issue-8", "src/widget.ts")).toBe("export const size = 3;\n");
    expect(await remote.readFile(repo, "agent/issue-8", "NOTES.md")).toBe("new file\n");
    const [latest] = await remote.log(repo, "agent/issue-8");
    expect(latest).toMatchObject({
      sha: commit,
      subject: "Grow the widget",
      body: "Fixes #8",
      authorName: identity.name,
      authorEmail: identity.email,
    });
    const receivePack = remote.requests.filter((request) => request.service === "receive-pack");
    expect(receivePack.length).toBeGreaterThan(0);
    for (const request of receivePack) {
      expect(request.credentials).toEqual([{ username: "x-access-token", password: token }]);
    }
    const config = await readFile(join(workspace.directory, ".git", "config"), "utf8");
    expect(config).not.toContain(token);
    expect(config.toLowerCase()).not.toContain("extraheader");
  });

  it("rejects a push without a token or with a revoked one, leaving the remote unchanged", async () => {
    const workspace = await cloneWorkspace();
    await workspace.checkoutNewBranch("agent/issue-9", "main");
    await writeFile(join(workspace.directory, "x.txt"), "x\n");
    await workspace.commitAll("x");

    const anonymous = await workspace
      .push({ remoteUrl: remote.repositoryUrl(repo), branch: "agent/issue-9" })
      .catch((caught: unknown) => caught);
    expect(anonymous).toBeInstanceOf(GitCommandError);
    expect((anonymous as GitCommandError).kind).toBe("authentication");

    const wrong = await workspace
      .push({ remoteUrl: remote.repositoryUrl(repo), branch: "agent/issue-9", token: "ghs_wrong" })
      .catch((caught: unknown) => caught);
    expect((wrong as GitCommandError).kind).toBe("authentication");
    expect((wrong as GitCommandError).message).not.toContain("ghs_wrong");

    expect(await remote.resolveRef(repo, "agent/issue-9")).toBeNull();
    expect(
      remote.requests.filter((request) => request.service === "receive-pack").every((r) => !r.authorized),
    ).toBe(true);
  });

  it("refuses URLs that embed credentials", async () => {
    const workspace = await cloneWorkspace();
    const url = remote.repositoryUrl(repo).replace("http://", `http://x-access-token:${token}@`);
    const error = await workspace.push({ remoteUrl: url, branch: "main" }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(GitCommandError);
    expect((error as Error).message).not.toContain(token);
  });

  it("reports a non-fast-forward push as rejected and overwrites with force", async () => {
    const first = await cloneWorkspace("first");
    await first.checkoutNewBranch("agent/issue-10", "main");
    await writeFile(join(first.directory, "a.txt"), "first\n");
    await first.commitAll("first attempt");
    await first.push({ remoteUrl: remote.repositoryUrl(repo), branch: "agent/issue-10", token });

    const second = await cloneWorkspace("second");
    await second.checkoutNewBranch("agent/issue-10", "main");
    await writeFile(join(second.directory, "a.txt"), "second\n");
    const secondCommit = await second.commitAll("second attempt");
    const rejected = await second
      .push({ remoteUrl: remote.repositoryUrl(repo), branch: "agent/issue-10", token })
      .catch((caught: unknown) => caught);
    expect((rejected as GitCommandError).kind).toBe("rejected");

    await second.push({
      remoteUrl: remote.repositoryUrl(repo),
      branch: "agent/issue-10",
      token,
      force: true,
    });
    expect(await remote.resolveRef(repo, "agent/issue-10")).toBe(secondCommit);
  });

  it("fetches a ref and returns its commit", async () => {
    const other = await cloneWorkspace("other");
    await other.checkoutNewBranch("feature/fetch-me", "main");
    await writeFile(join(other.directory, "f.txt"), "f\n");
    const pushed = await other.commitAll("feature");
    await other.push({ remoteUrl: remote.repositoryUrl(repo), branch: "feature/fetch-me", token });

    const workspace = await cloneWorkspace();
    const fetched = await workspace.fetch({
      remoteUrl: remote.repositoryUrl(repo),
      ref: "feature/fetch-me",
      token,
    });
    expect(fetched).toBe(pushed);
    const missing = await workspace
      .fetch({ remoteUrl: remote.repositoryUrl(repo), ref: "no-such-branch", token })
      .catch((caught: unknown) => caught);
    expect((missing as GitCommandError).kind).toBe("not-found");
  });

  it("strips the credentials actions/checkout leaves behind (v4 inline and v6 includeIf)", async () => {
    const workspace = await cloneWorkspace();
    const dir = workspace.directory;
    const leaked = Buffer.from("x-access-token:ghs_checkout_token").toString("base64");
    const credentialsFile = join(scratch, "git-credentials-0d9c.config");
    await writeFile(
      credentialsFile,
      `[http "https://github.com/"]\n\textraheader = AUTHORIZATION: basic ${leaked}\n`,
    );
    await rawGit(
      dir,
      "config",
      "--local",
      "http.https://github.com/.extraheader",
      `AUTHORIZATION: basic ${leaked}`,
    );
    await rawGit(dir, "config", "--local", "http.extraheader", `AUTHORIZATION: basic ${leaked}`);
    await rawGit(dir, "config", "--local", `includeIf.gitdir:${dir}/.git.path`, credentialsFile);
    await rawGit(dir, "config", "--local", "includeIf.gitdir:/elsewhere/.path", "/elsewhere/settings.config");

    const removed = await workspace.stripCheckoutCredentials();
    expect(removed).toEqual(
      expect.arrayContaining([
        "http.https://github.com/.extraheader",
        "http.extraheader",
        `includeif.gitdir:${dir}/.git.path`,
      ]),
    );
    const config = await readFile(join(dir, ".git", "config"), "utf8");
    expect(config).not.toContain(leaked);
    expect(config.toLowerCase()).not.toContain("extraheader");
    expect(config).not.toContain(credentialsFile);
    expect(config).toContain("/elsewhere/settings.config");
    expect(await rawGit(dir, "config", "--list")).not.toContain(leaked);
    expect(await workspace.stripCheckoutCredentials()).toEqual([]);

    // Pushing still works with a token given for the push alone.
    await workspace.checkoutNewBranch("agent/after-strip", "main");
    await writeFile(join(dir, "s.txt"), "s\n");
    await workspace.commitAll("after strip");
    await workspace.push({ remoteUrl: remote.repositoryUrl(repo), branch: "agent/after-strip", token });
    expect(await remote.resolveRef(repo, "agent/after-strip")).not.toBeNull();
  });

  it("sends only its own header even if the workspace config adds one", async () => {
    const workspace = await cloneWorkspace();
    const dir = workspace.directory;
    const planted = Buffer.from("x-access-token:ghs_planted").toString("base64");
    await rawGit(
      dir,
      "config",
      "--local",
      `http.${remote.url}/.extraheader`,
      `AUTHORIZATION: basic ${planted}`,
    );
    await workspace.checkoutNewBranch("agent/one-header", "main");
    await writeFile(join(dir, "h.txt"), "h\n");
    await workspace.commitAll("one header");
    remote.requests.length = 0;
    await workspace.push({ remoteUrl: remote.repositoryUrl(repo), branch: "agent/one-header", token });
    for (const request of remote.requests) {
      expect(request.credentials).toEqual([{ username: "x-access-token", password: token }]);
    }
  });

  it("never runs hooks planted in the workspace, so nothing else sees the token", async () => {
    const workspace = await cloneWorkspace();
    const dir = workspace.directory;
    const witness = join(scratch, "hook-ran");
    for (const hook of ["pre-commit", "commit-msg", "post-commit", "pre-push", "reference-transaction"]) {
      await writeFile(join(dir, ".git", "hooks", hook), `#!/bin/sh\nenv >> "${witness}"\n`, { mode: 0o755 });
    }
    await rawGit(dir, "config", "--local", "core.hooksPath", join(dir, ".git", "hooks"));
    await workspace.checkoutNewBranch("agent/hooks", "main");
    await writeFile(join(dir, "k.txt"), "k\n");
    await workspace.commitAll("hooks stay quiet");
    await workspace.push({ remoteUrl: remote.repositoryUrl(repo), branch: "agent/hooks", token });
    await expect(stat(witness)).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("does not hand the token to a host an insteadOf rewrite points at", async () => {
    const impostor = await GitHttpRemote.start({ tokens: [] });
    try {
      await impostor.createRepository(repo, { files: { "x.txt": "x\n" } });
      const workspace = await cloneWorkspace();
      const dir = workspace.directory;
      await rawGit(dir, "config", "--local", `url.${impostor.url}/.insteadOf`, `${remote.url}/`);
      await writeFile(join(dir, "i.txt"), "i\n");
      await workspace.commitAll("redirected");
      const error = await workspace
        .push({ remoteUrl: remote.repositoryUrl(repo), branch: "agent/redirected", token })
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(GitCommandError);
      expect(impostor.requests.length).toBeGreaterThan(0);
      expect(impostor.requests.flatMap((request) => request.credentials)).toEqual([]);
    } finally {
      await impostor.close();
    }
  });

  it("ignores GIT_* variables of the parent process", async () => {
    const workspace = await cloneWorkspace();
    const saved = { ...process.env };
    process.env.GIT_DIR = "/nonexistent";
    process.env.GIT_WORK_TREE = "/nonexistent";
    process.env.GIT_INDEX_FILE = "/nonexistent/index";
    try {
      expect(await workspace.headCommit()).toBe(baseCommit);
      await writeFile(join(workspace.directory, "e.txt"), "e\n");
      expect((await workspace.diff("HEAD")).files.map((file) => file.path)).toEqual(["e.txt"]);
    } finally {
      process.env = saved;
    }
  });

  it("reports a detached HEAD and unknown revisions clearly", async () => {
    const workspace = await cloneWorkspace();
    await rawGit(workspace.directory, "checkout", "--quiet", "--detach", "HEAD");
    expect(await workspace.currentBranch()).toBeNull();
    const error = await workspace.diff("no-such-ref").catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(GitCommandError);
    expect((error as GitCommandError).kind).toBe("not-found");
    expect((error as Error).message).toContain("no-such-ref");
    await expect(workspace.checkoutNewBranch("--force", "main")).rejects.toBeInstanceOf(GitCommandError);
  });
});
