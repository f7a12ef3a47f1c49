import { createHash, type KeyObject, randomBytes, verify } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import {
  type ContentEntry,
  type FakeComment,
  FakeGitHubState,
  type FakeIssue,
  type FakePullRequest,
  type FakeReactionTarget,
  type FakeRepository,
  type FakeRole,
  GitHubJson,
  type RepositoryContentSource,
  timestamp,
} from "./state.js";

export interface FakeGitHubOptions {
  /** Accepted tokens and the login each acts as, e.g. `{ "ghs_actions": "github-actions[bot]" }`. */
  readonly tokens?: Readonly<Record<string, string>>;
  /** Enables App routes: JWTs signed (RS256) with the private half of `publicKey`, `iss` = `id`. */
  readonly app?: { readonly id: number; readonly slug: string; readonly publicKey: string | KeyObject };
  /** Root of `html_url` links (GITHUB_SERVER_URL); default https://github.com. */
  readonly webUrl?: string;
}

export interface AddRepositoryInput {
  readonly owner: string;
  readonly name: string;
  readonly defaultBranch?: string;
  readonly private?: boolean;
  readonly cloneUrl?: string;
  readonly collaborators?: Readonly<Record<string, FakeRole>>;
  /** Files served by the contents API: a live source (e.g. a bare repo) or a fixed set on the default branch. */
  readonly content?: RepositoryContentSource;
  readonly files?: Readonly<Record<string, string>>;
  readonly installationId?: number;
  readonly workflows?: readonly string[];
}

/** What an injected fault answers with. */
export type Fault =
  | { readonly type: "status"; readonly status: number; readonly message?: string }
  | {
      readonly type: "secondary-rate-limit";
      readonly status?: 403 | 429;
      readonly retryAfterSeconds?: number;
    }
  | { readonly type: "rate-limit"; readonly status?: 403 | 429; readonly resetInSeconds?: number }
  /** The request takes effect, but the answer is lost: a 5xx after the write (what makes retries duplicate). */
  | { readonly type: "applied-then-status"; readonly status: number };

export interface FaultSpec {
  /** Route template as in GitHub's docs, e.g. "/repos/{owner}/{repo}/issues/comments/{comment_id}". */
  readonly route: string;
  /** Only this method; any method when omitted. */
  readonly method?: string;
  /** How many matching requests fail before the route answers normally again; default 1. */
  readonly times?: number;
  readonly fault: Fault;
}

interface PendingFault {
  readonly route: string;
  readonly method: string | undefined;
  remaining: number;
  readonly fault: Fault;
}

interface Caller {
  readonly login: string;
  readonly credential: string;
  /** Set for installation tokens: they only reach that installation's repositories. */
  readonly installationId: number | null;
  readonly isAppJwt: boolean;
}

interface RequestContext {
  readonly method: string;
  readonly url: URL;
  readonly params: Record<string, string>;
  readonly body: Record<string, unknown>;
  readonly caller: Caller;
  readonly accept: string;
}

interface Reply {
  readonly status: number;
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
  /** Sent as-is instead of JSON. */
  readonly raw?: Buffer;
}

type Handler = (context: RequestContext) => Promise<Reply> | Reply;

interface Route {
  readonly method: string;
  readonly template: string;
  readonly pattern: RegExp;
  readonly names: readonly string[];
  readonly auth: "token" | "app-jwt";
  readonly handle: Handler;
}

const docs = "https://docs.github.com/rest";
const reactionContents = new Set(["+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"]);

/**
 * A stateful stand-in for GitHub's REST API on 127.0.0.1, for driving real Octokit clients.
 * Start it with `FakeGitHub.start()`, point the client's `baseUrl` at `fake.url`, close it after.
 */
export class FakeGitHub {
  readonly state = new FakeGitHubState();
  private readonly tokens = new Map<string, { login: string; installationId: number | null }>();
  private readonly faults: PendingFault[] = [];
  private readonly routes: Route[] = [];
  private json!: GitHubJson;
  private baseUrl = "";

  private constructor(
    private readonly server: Server,
    private readonly options: FakeGitHubOptions,
  ) {
    for (const [token, login] of Object.entries(options.tokens ?? {})) this.addToken(token, login);
    this.defineRoutes();
  }

  static async start(options: FakeGitHubOptions = {}): Promise<FakeGitHub> {
    const server = createServer();
    const fake = new FakeGitHub(server, options);
    server.on("request", (request, response) => {
      fake.handle(request, response).catch(() => response.destroy());
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    fake.baseUrl = `http://127.0.0.1:${port}`;
    fake.json = new GitHubJson(fake.state, fake.baseUrl, options.webUrl);
    return fake;
  }

  /** The REST API root to give clients as `baseUrl` (GITHUB_API_URL). */
  get url(): string {
    return this.baseUrl;
  }

  get requests() {
    return this.state.requests;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  addToken(token: string, login: string): void {
    this.tokens.set(token, { login, installationId: null });
  }

  revokeToken(token: string): void {
    this.tokens.delete(token);
  }

  addRepository(input: AddRepositoryInput): FakeRepository {
    const fullName = `${input.owner}/${input.name}`;
    const defaultBranch = input.defaultBranch ?? "main";
    const repository: FakeRepository = {
      id: this.state.nextId(),
      owner: input.owner,
      name: input.name,
      fullName,
      defaultBranch,
      private: input.private ?? false,
      archived: false,
      cloneUrl: input.cloneUrl ?? `https://github.com/${fullName}.git`,
      collaborators: new Map(
        Object.entries(input.collaborators ?? {}).map(([login, role]) => [login.toLowerCase(), role]),
      ),
      content: input.content ?? (input.files ? staticContent(input.files, defaultBranch) : null),
      installationId: input.installationId ?? null,
      workflows: new Set(input.workflows ?? []),
      nextNumber: 1,
    };
    this.state.user(input.owner);
    this.state.repositories.set(fullName.toLowerCase(), repository);
    return repository;
  }

  addIssue(
    fullName: string,
    input: { title: string; body?: string; author?: string; labels?: string[] },
  ): FakeIssue {
    const repository = this.requireRepository(fullName);
    const now = timestamp();
    const issue: FakeIssue = {
      repository: repository.fullName,
      number: repository.nextNumber++,
      title: input.title,
      body: input.body ?? "",
      state: "open",
      author: input.author ?? repository.owner,
      labels: [...(input.labels ?? [])],
      isPullRequest: false,
      createdAt: now,
      updatedAt: now,
    };
    this.state.issues.push(issue);
    return issue;
  }

  /** A pull request opened by someone else, e.g. from a fork (`headRepoFullName` other than this repo). */
  addPullRequest(
    fullName: string,
    input: {
      title: string;
      head: string;
      body?: string;
      author?: string;
      base?: string;
      headSha?: string;
      headRepoFullName?: string | null;
      draft?: boolean;
    },
  ): FakePullRequest {
    const repository = this.requireRepository(fullName);
    return this.openPullRequest(repository, {
      title: input.title,
      body: input.body ?? "",
      author: input.author ?? repository.owner,
      head: {
        ref: input.head,
        sha: input.headSha ?? fakeSha(`${fullName}:${input.head}`),
        repoFullName: input.headRepoFullName === undefined ? repository.fullName : input.headRepoFullName,
      },
      base: { ref: input.base ?? repository.defaultBranch, sha: fakeSha(`${fullName}:base`) },
      draft: input.draft ?? false,
    });
  }

  addComment(fullName: string, issueNumber: number, input: { body: string; author: string }): FakeComment {
    const repository = this.requireRepository(fullName);
    return this.createComment(repository.fullName, issueNumber, input.body, input.author);
  }

  commentsOn(fullName: string, issueNumber: number): FakeComment[] {
    const repository = this.requireRepository(fullName);
    return this.state.comments.filter(
      (comment) => comment.repository === repository.fullName && comment.issueNumber === issueNumber,
    );
  }

  pullRequestsOf(fullName: string): FakePullRequest[] {
    const repository = this.requireRepository(fullName);
    return this.state.pullRequests.filter((pull) => pull.repository === repository.fullName);
  }

  /** The next `times` requests matching `route` (and `method`) get `fault` instead of an answer. */
  injectFault(spec: FaultSpec): void {
    this.faults.push({
      route: spec.route,
      method: spec.method?.toUpperCase(),
      remaining: spec.times ?? 1,
      fault: spec.fault,
    });
  }

  /** Drops every fault not yet served. */
  clearFaults(): void {
    this.faults.length = 0;
  }

  /** Faults injected but not yet served. */
  pendingFaults(): number {
    return this.faults.reduce((sum, fault) => sum + fault.remaining, 0);
  }

  private requireRepository(fullName: string): FakeRepository {
    const [owner = "", name = ""] = fullName.split("/");
    const repository = this.state.repository(owner, name);
    if (!repository) throw new Error(`fake GitHub has no repository ${fullName}`);
    return repository;
  }

  private createComment(repository: string, issueNumber: number, body: string, author: string): FakeComment {
    const now = timestamp();
    const comment: FakeComment = {
      id: this.state.nextId(),
      repository,
      issueNumber,
      body,
      author,
      createdAt: now,
      updatedAt: now,
      history: [body],
    };
    this.state.comments.push(comment);
    return comment;
  }

  private openPullRequest(
    repository: FakeRepository,
    input: Pick<FakePullRequest, "title" | "body" | "author" | "head" | "base" | "draft">,
  ): FakePullRequest {
    const now = timestamp();
    const number = repository.nextNumber++;
    const pull: FakePullRequest = {
      ...input,
      repository: repository.fullName,
      number,
      state: "open",
      merged: false,
      createdAt: now,
      updatedAt: now,
      bodyHistory: [input.body],
    };
    this.state.pullRequests.push(pull);
    // A pull request is also an issue: comments and reactions go through the issues API.
    this.state.issues.push({
      repository: repository.fullName,
      number,
      title: input.title,
      body: input.body,
      state: "open",
      author: input.author,
      labels: [],
      isPullRequest: true,
      createdAt: now,
      updatedAt: now,
    });
    return pull;
  }

  // ---- HTTP plumbing -------------------------------------------------------------------------

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const method = (request.method ?? "GET").toUpperCase();
    const url = new URL(request.url ?? "/", this.baseUrl);
    const rawBody = await readBody(request);
    let body: Record<string, unknown> = {};
    let parsedBody: unknown = null;
    const record = (status: number, route: string | null, credential: string | null, fault: string | null) =>
      this.state.requests.push({
        method,
        url: `${url.pathname}${url.search}`,
        route,
        status,
        credential,
        body: parsedBody,
        fault,
      });

    if (rawBody.length > 0) {
      try {
        parsedBody = JSON.parse(rawBody.toString("utf8"));
      } catch {
        record(400, null, null, null);
        return send(response, {
          status: 400,
          body: { message: "Problems parsing JSON", documentation_url: docs },
        });
      }
      if (typeof parsedBody === "object" && parsedBody !== null && !Array.isArray(parsedBody)) {
        body = parsedBody as Record<string, unknown>;
      }
    }

    const match = this.match(method, url.pathname);
    if (!match) {
      record(404, null, null, null);
      return send(response, notFound());
    }
    const { route, params } = match;

    const credential = readCredential(request.headers.authorization);
    const caller = credential ? this.authenticate(credential, route.auth) : null;
    if (!caller) {
      record(401, route.template, credential, null);
      return send(response, {
        status: 401,
        body: {
          message: route.auth === "app-jwt" ? "A JSON web token could not be decoded" : "Bad credentials",
          documentation_url: docs,
          status: "401",
        },
      });
    }

    const fault = this.takeFault(method, route.template);
    if (fault && fault.type !== "applied-then-status") {
      const reply = faultReply(fault);
      record(reply.status, route.template, credential, fault.type);
      return send(response, reply);
    }

    let reply: Reply;
    try {
      reply = await route.handle({
        method,
        url,
        params,
        body,
        caller,
        accept: String(request.headers.accept ?? ""),
      });
    } catch (error) {
      reply = { status: 500, body: { message: `fake GitHub failed: ${String(error)}` } };
    }
    if (fault?.type === "applied-then-status") {
      record(fault.status, route.template, credential, fault.type);
      return send(response, { status: fault.status, body: { message: "Server Error" } });
    }
    record(reply.status, route.template, credential, null);
    send(response, reply);
  }

  private match(method: string, pathname: string): { route: Route; params: Record<string, string> } | null {
    for (const route of this.routes) {
      if (route.method !== method) continue;
      const found = route.pattern.exec(pathname);
      if (!found) continue;
      const params: Record<string, string> = {};
      route.names.forEach((name, index) => {
        params[name] = decodeURIComponent(found[index + 1] ?? "");
      });
      return { route, params };
    }
    return null;
  }

  private authenticate(credential: string, auth: Route["auth"]): Caller | null {
    if (auth === "app-jwt") return this.verifyAppJwt(credential);
    const known = this.tokens.get(credential);
    if (!known) return null;
    return { login: known.login, credential, installationId: known.installationId, isAppJwt: false };
  }

  private verifyAppJwt(jwt: string): Caller | null {
    const app = this.options.app;
    const [header, payload, signature] = jwt.split(".");
    if (!app || !header || !payload || !signature) return null;
    const valid = verify(
      "sha256",
      Buffer.from(`${header}.${payload}`),
      app.publicKey,
      Buffer.from(signature, "base64url"),
    );
    if (!valid) return null;
    const claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as Record<string, unknown>;
    const now = Math.floor(Date.now() / 1000);
    if (String(claims.iss) !== String(app.id) || typeof claims.exp !== "number" || claims.exp < now)
      return null;
    return { login: `${app.slug}[bot]`, credential: jwt, installationId: null, isAppJwt: true };
  }

  private takeFault(method: string, template: string): Fault | null {
    const pending = this.faults.find(
      (fault) =>
        fault.remaining > 0 && fault.route === template && (!fault.method || fault.method === method),
    );
    if (!pending) return null;
    pending.remaining -= 1;
    if (pending.remaining === 0) this.faults.splice(this.faults.indexOf(pending), 1);
    return pending.fault;
  }

  private on(method: string, template: string, handle: Handler, auth: Route["auth"] = "token"): void {
    const names: string[] = [];
    const source = template.replace(/\{(\w+)\}/g, (_whole, name: string) => {
      names.push(name);
      // A contents path spans segments; every other parameter is one segment.
      return name === "path" ? "(.+)" : "([^/]+)";
    });
    this.routes.push({ method, template, pattern: new RegExp(`^${source}/?$`), names, auth, handle });
  }

  /** Resolves {owner}/{repo}, hiding repositories an installation token may not see. */
  private repositoryFor(context: RequestContext): FakeRepository | null {
    const repository = this.state.repository(context.params.owner ?? "", context.params.repo ?? "");
    if (!repository) return null;
    const { installationId } = context.caller;
    if (installationId !== null && repository.installationId !== installationId) return null;
    return repository;
  }

  // ---- routes --------------------------------------------------------------------------------

  private defineRoutes(): void {
    this.on("GET", "/repos/{owner}/{repo}", (context) => {
      const repository = this.repositoryFor(context);
      return repository ? { status: 200, body: this.json.repository(repository) } : notFound();
    });

    this.on("GET", "/repos/{owner}/{repo}/collaborators/{username}/permission", (context) => {
      const repository = this.repositoryFor(context);
      if (!repository) return notFound();
      const login = context.params.username ?? "";
      const role = repository.collaborators.get(login.toLowerCase());
      // GitHub's `permission` folds maintain into write and triage into read; `role_name` keeps them.
      const effective = role ?? (repository.private ? "none" : "read");
      const permission =
        effective === "maintain" ? "write" : effective === "triage" ? "read" : (effective satisfies string);
      return {
        status: 200,
        body: { permission, role_name: effective, user: { ...this.json.user(login), role_name: effective } },
      };
    });

    this.on("GET", "/repos/{owner}/{repo}/issues/{issue_number}", (context) => {
      const repository = this.repositoryFor(context);
      const issue = repository && this.state.issue(repository.fullName, Number(context.params.issue_number));
      return issue ? { status: 200, body: this.json.issue(issue) } : notFound();
    });

    this.on("GET", "/repos/{owner}/{repo}/issues/{issue_number}/comments", (context) => {
      const repository = this.repositoryFor(context);
      const issueNumber = Number(context.params.issue_number);
      if (!repository || !this.state.issue(repository.fullName, issueNumber)) return notFound();
      const all = this.state.comments.filter(
        (comment) => comment.repository === repository.fullName && comment.issueNumber === issueNumber,
      );
      return paginate(context.url, all, (comment) => this.json.comment(comment));
    });

    this.on("POST", "/repos/{owner}/{repo}/issues/{issue_number}/comments", (context) => {
      const repository = this.repositoryFor(context);
      const issueNumber = Number(context.params.issue_number);
      if (!repository || !this.state.issue(repository.fullName, issueNumber)) return notFound();
      const { body } = context.body;
      if (typeof body !== "string" || body.length === 0)
        return invalid("IssueComment", "body", "missing_field");
      if (body.length > 65_536) return invalid("IssueComment", "body", "too_long");
      const comment = this.createComment(repository.fullName, issueNumber, body, context.caller.login);
      return { status: 201, body: this.json.comment(comment) };
    });

    this.on("GET", "/repos/{owner}/{repo}/issues/comments/{comment_id}", (context) => {
      const repository = this.repositoryFor(context);
      const comment =
        repository && this.state.comment(repository.fullName, Number(context.params.comment_id));
      return comment ? { status: 200, body: this.json.comment(comment) } : notFound();
    });

    this.on("PATCH", "/repos/{owner}/{repo}/issues/comments/{comment_id}", (context) => {
      const repository = this.repositoryFor(context);
      const comment =
        repository && this.state.comment(repository.fullName, Number(context.params.comment_id));
      if (!comment) return notFound();
      const { body } = context.body;
      if (typeof body !== "string" || body.length === 0)
        return invalid("IssueComment", "body", "missing_field");
      if (body.length > 65_536) return invalid("IssueComment", "body", "too_long");
      comment.body = body;
      comment.updatedAt = timestamp();
      comment.history.push(body);
      return { status: 200, body: this.json.comment(comment) };
    });

    const react = (context: RequestContext, target: FakeReactionTarget): Reply => {
      const repository = this.repositoryFor(context);
      if (!repository) return notFound();
      const exists =
        target.kind === "issue"
          ? this.state.issue(repository.fullName, target.issueNumber)
          : target.kind === "issue-comment"
            ? this.state.comment(repository.fullName, target.commentId)
            : undefined;
      if (!exists && target.kind !== "review-comment") return notFound();
      const content = String(context.body.content ?? "");
      if (!reactionContents.has(content)) return invalid("Reaction", "content", "invalid");
      const same = this.state.reactions.find(
        (reaction) =>
          reaction.repository === repository.fullName &&
          JSON.stringify(reaction.target) === JSON.stringify(target) &&
          reaction.content === content &&
          reaction.user === context.caller.login,
      );
      if (same) return { status: 200, body: this.json.reaction(same) };
      const reaction = {
        id: this.state.nextId(),
        repository: repository.fullName,
        target,
        content,
        user: context.caller.login,
        createdAt: timestamp(),
      };
      this.state.reactions.push(reaction);
      return { status: 201, body: this.json.reaction(reaction) };
    };
    this.on("POST", "/repos/{owner}/{repo}/issues/{issue_number}/reactions", (context) =>
      react(context, { kind: "issue", issueNumber: Number(context.params.issue_number) }),
    );
    this.on("POST", "/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions", (context) =>
      react(context, { kind: "issue-comment", commentId: Number(context.params.comment_id) }),
    );
    this.on("POST", "/repos/{owner}/{repo}/pulls/comments/{comment_id}/reactions", (context) =>
      react(context, { kind: "review-comment", commentId: Number(context.params.comment_id) }),
    );

    this.on("GET", "/repos/{owner}/{repo}/pulls", (context) => {
      const repository = this.repositoryFor(context);
      if (!repository) return notFound();
      const query = context.url.searchParams;
      const state = query.get("state") ?? "open";
      const head = query.get("head");
      const base = query.get("base");
      const pulls = this.pullRequestsOf(repository.fullName)
        .filter((pull) => state === "all" || pull.state === state)
        .filter((pull) => !base || pull.base.ref === base)
        .filter((pull) => {
          if (!head) return true;
          const [headOwner = "", headRef] = head.includes(":") ? head.split(":", 2) : [head, undefined];
          const pullOwner = pull.head.repoFullName?.split("/")[0] ?? "";
          return (
            pullOwner.toLowerCase() === headOwner.toLowerCase() && (!headRef || pull.head.ref === headRef)
          );
        })
        .reverse();
      return paginate(context.url, pulls, (pull) => this.json.pullRequest(pull, repository));
    });

    this.on("POST", "/repos/{owner}/{repo}/pulls", async (context) => {
      const repository = this.repositoryFor(context);
      if (!repository) return notFound();
      const { title, body, head, base, draft } = context.body;
      if (typeof title !== "string" || title.trim() === "")
        return invalid("PullRequest", "title", "missing_field");
      if (typeof head !== "string" || head === "") return invalid("PullRequest", "head", "missing_field");
      if (typeof base !== "string" || base === "") return invalid("PullRequest", "base", "missing_field");
      const [headOwner, headRef] = head.includes(":") ? head.split(":", 2) : [repository.owner, head];
      const headRepoFullName = `${headOwner}/${repository.name}`;
      const sameRepository = headRepoFullName.toLowerCase() === repository.fullName.toLowerCase();
      const baseSha = await repository.content?.resolveRef(base);
      const headSha = sameRepository ? await repository.content?.resolveRef(headRef ?? "") : undefined;
      if (baseSha === null) return invalid("PullRequest", "base", "invalid");
      if (headSha === null) return invalid("PullRequest", "head", "invalid");
      if (headSha !== undefined && headSha === baseSha) {
        return validationFailed(`No commits between ${base} and ${headRef}`);
      }
      const existing = this.pullRequestsOf(repository.fullName).find(
        (pull) =>
          pull.state === "open" &&
          pull.head.ref === headRef &&
          pull.base.ref === base &&
          (pull.head.repoFullName ?? "").toLowerCase() === headRepoFullName.toLowerCase(),
      );
      if (existing) return validationFailed(`A pull request already exists for ${headOwner}:${headRef}.`);
      const pull = this.openPullRequest(repository, {
        title,
        body: typeof body === "string" ? body : "",
        author: context.caller.login,
        head: {
          ref: headRef ?? "",
          sha: headSha ?? fakeSha(`${headRepoFullName}:${headRef}`),
          repoFullName: sameRepository ? repository.fullName : headRepoFullName,
        },
        base: { ref: base, sha: baseSha ?? fakeSha(`${repository.fullName}:${base}`) },
        draft: draft === true,
      });
      return { status: 201, body: this.json.pullRequest(pull, repository) };
    });

    this.on("GET", "/repos/{owner}/{repo}/pulls/{pull_number}", (context) => {
      const repository = this.repositoryFor(context);
      const pull =
        repository && this.state.pullRequest(repository.fullName, Number(context.params.pull_number));
      return pull && repository ? { status: 200, body: this.json.pullRequest(pull, repository) } : notFound();
    });

    this.on("PATCH", "/repos/{owner}/{repo}/pulls/{pull_number}", (context) => {
      const repository = this.repositoryFor(context);
      const pull =
        repository && this.state.pullRequest(repository.fullName, Number(context.params.pull_number));
      if (!pull || !repository) return notFound();
      const { title, body, state, base } = context.body;
      if (state !== undefined && state !== "open" && state !== "closed") {
        return invalid("PullRequest", "state", "invalid");
      }
      if (typeof title === "string") pull.title = title;
      if (typeof body === "string") {
        pull.body = body;
        pull.bodyHistory.push(body);
      }
      if (state === "open" || state === "closed") pull.state = state;
      if (typeof base === "string") pull.base = { ...pull.base, ref: base };
      pull.updatedAt = timestamp();
      const issue = this.state.issue(repository.fullName, pull.number);
      if (issue) Object.assign(issue, { title: pull.title, body: pull.body, state: pull.state });
      return { status: 200, body: this.json.pullRequest(pull, repository) };
    });

    this.on("GET", "/repos/{owner}/{repo}/contents/{path}", async (context) => {
      const repository = this.repositoryFor(context);
      if (!repository?.content) return notFound();
      const ref = context.url.searchParams.get("ref") ?? repository.defaultBranch;
      const path = (context.params.path ?? "").replace(/\/+$/, "");
      const entry = await repository.content.read(ref, path);
      if (!entry) return notFound();
      return contentsReply(repository, ref, path, entry, context.accept, this.baseUrl);
    });

    this.on("POST", "/repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches", (context) => {
      const repository = this.repositoryFor(context);
      if (!repository) return notFound();
      const workflow = context.params.workflow_id ?? "";
      if (repository.workflows.size > 0 && !repository.workflows.has(workflow)) return notFound();
      const { ref, inputs } = context.body;
      if (typeof ref !== "string" || ref === "") return invalid("Workflow", "ref", "missing_field");
      this.state.dispatches.push({
        repository: repository.fullName,
        workflow,
        ref,
        inputs: typeof inputs === "object" && inputs !== null ? (inputs as Record<string, unknown>) : {},
        by: context.caller.login,
      });
      return { status: 204 };
    });

    this.on(
      "GET",
      "/repos/{owner}/{repo}/installation",
      (context) => {
        const repository = this.state.repository(context.params.owner ?? "", context.params.repo ?? "");
        if (!repository || repository.installationId === null || !this.options.app) return notFound();
        return { status: 200, body: this.installationJson(repository.installationId, repository.owner) };
      },
      "app-jwt",
    );

    this.on(
      "POST",
      "/app/installations/{installation_id}/access_tokens",
      (context) => {
        const installationId = Number(context.params.installation_id);
        const repositories = [...this.state.repositories.values()].filter(
          (repository) => repository.installationId === installationId,
        );
        if (repositories.length === 0) return notFound();
        const token = `ghs_${randomBytes(18).toString("base64url")}`;
        const expiresAt = timestamp(new Date(Date.now() + 3_600_000));
        this.tokens.set(token, { login: `${this.options.app?.slug ?? "app"}[bot]`, installationId });
        this.state.installationTokens.push({ token, installationId, expiresAt });
        return {
          status: 201,
          body: {
            token,
            expires_at: expiresAt,
            permissions: { contents: "write", issues: "write", pull_requests: "write", metadata: "read" },
            repository_selection: "selected",
            repositories: repositories.map((repository) => this.json.repository(repository)),
          },
        };
      },
      "app-jwt",
    );
  }

  private installationJson(id: number, account: string) {
    const app = this.options.app;
    return {
      id,
      account: this.json.user(account),
      app_id: app?.id,
      app_slug: app?.slug,
      target_type: "Organization",
      repository_selection: "selected",
      permissions: { contents: "write", issues: "write", pull_requests: "write", metadata: "read" },
      access_tokens_url: `${this.baseUrl}/app/installations/${id}/access_tokens`,
      events: ["issue_comment", "issues", "pull_request_review_comment"],
      created_at: "2024-01-01T00:00:00Z",
      updated_at: "2024-01-01T00:00:00Z",
    };
  }
}

// ---- helpers -----------------------------------------------------------------------------------

function readCredential(header: string | undefined): string | null {
  const found = /^(?:token|bearer)\s+(\S+)$/i.exec(header ?? "");
  return found?.[1] ?? null;
}

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function send(response: ServerResponse, reply: Reply): void {
  const headers: Record<string, string> = {
    "x-github-request-id": randomBytes(8).toString("hex").toUpperCase(),
    "x-github-media-type": "github.v3; format=json",
    "x-ratelimit-limit": "5000",
    "x-ratelimit-remaining": "4999",
    "x-ratelimit-used": "1",
    "x-ratelimit-resource": "core",
    "x-ratelimit-reset": String(Math.floor(Date.now() / 1000) + 3600),
    ...reply.headers,
  };
  if (reply.raw) {
    response.writeHead(reply.status, { "content-type": "application/vnd.github.raw", ...headers });
    response.end(reply.raw);
    return;
  }
  if (reply.body === undefined) {
    response.writeHead(reply.status, headers);
    response.end();
    return;
  }
  response.writeHead(reply.status, { "content-type": "application/json; charset=utf-8", ...headers });
  response.end(JSON.stringify(reply.body));
}

function notFound(): Reply {
  return { status: 404, body: { message: "Not Found", documentation_url: docs, status: "404" } };
}

function invalid(resource: string, field: string, code: string): Reply {
  return {
    status: 422,
    body: {
      message: "Validation Failed",
      errors: [{ resource, field, code }],
      documentation_url: docs,
      status: "422",
    },
  };
}

function validationFailed(message: string): Reply {
  return {
    status: 422,
    body: {
      message: "Validation Failed",
      errors: [{ resource: "PullRequest", code: "custom", message }],
      documentation_url: docs,
      status: "422",
    },
  };
}

function faultReply(fault: Exclude<Fault, { type: "applied-then-status" }>): Reply {
  switch (fault.type) {
    case "status":
      return {
        status: fault.status,
        body: { message: fault.message ?? (fault.status >= 500 ? "Server Error" : "Injected fault") },
      };
    case "secondary-rate-limit":
      return {
        status: fault.status ?? 403,
        headers: { "retry-after": String(fault.retryAfterSeconds ?? 1) },
        body: {
          message:
            "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID.",
          documentation_url:
            "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits",
        },
      };
    case "rate-limit":
      return {
        status: fault.status ?? 403,
        headers: {
          "x-ratelimit-remaining": "0",
          "x-ratelimit-reset": String(Math.floor(Date.now() / 1000) + (fault.resetInSeconds ?? 1)),
        },
        body: {
          message: "API rate limit exceeded for installation.",
          documentation_url: "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api",
        },
      };
  }
}

function paginate<T>(url: URL, items: readonly T[], render: (item: T) => unknown): Reply {
  const perPage = Math.min(Math.max(Number(url.searchParams.get("per_page") ?? 30) || 30, 1), 100);
  const page = Math.max(Number(url.searchParams.get("page") ?? 1) || 1, 1);
  const lastPage = Math.max(Math.ceil(items.length / perPage), 1);
  const pageUrl = (number: number) => {
    const next = new URL(url);
    next.searchParams.set("per_page", String(perPage));
    next.searchParams.set("page", String(number));
    return next.toString();
  };
  const links: string[] = [];
  if (page < lastPage) links.push(`<${pageUrl(page + 1)}>; rel="next"`, `<${pageUrl(lastPage)}>; rel="last"`);
  if (page > 1) links.push(`<${pageUrl(1)}>; rel="first"`, `<${pageUrl(page - 1)}>; rel="prev"`);
  return {
    status: 200,
    body: items.slice((page - 1) * perPage, page * perPage).map(render),
    ...(links.length > 0 && { headers: { link: links.join(", ") } }),
  };
}

function contentsReply(
  repository: FakeRepository,
  ref: string,
  path: string,
  entry: ContentEntry,
  accept: string,
  apiUrl: string,
): Reply {
  const links = (entryPath: string, kind: "file" | "dir", sha: string) => ({
    url: `${apiUrl}/repos/${repository.fullName}/contents/${entryPath}?ref=${encodeURIComponent(ref)}`,
    html_url: `https://github.com/${repository.fullName}/${kind === "dir" ? "tree" : "blob"}/${ref}/${entryPath}`,
    git_url: `${apiUrl}/repos/${repository.fullName}/git/${kind === "dir" ? "trees" : "blobs"}/${sha}`,
  });
  if (entry.kind === "dir") {
    return {
      status: 200,
      body: entry.entries.map((child) => {
        const childPath = path ? `${path}/${child.name}` : child.name;
        return {
          type: child.kind,
          name: child.name,
          path: childPath,
          sha: child.sha,
          size: 0,
          ...links(childPath, child.kind, child.sha),
        };
      }),
    };
  }
  if (/\.raw/.test(accept)) return { status: 200, raw: entry.content };
  // Like GitHub: files over 1 MB come without inline content.
  const large = entry.content.length > 1_000_000;
  return {
    status: 200,
    body: {
      type: "file",
      encoding: large ? "none" : "base64",
      size: entry.content.length,
      name: path.split("/").pop() ?? path,
      path,
      content: large ? "" : (entry.content.toString("base64").match(/.{1,60}/g) ?? []).join("\n"),
      sha: entry.sha,
      ...links(path, "file", entry.sha),
    },
  };
}

/** Serves a fixed set of files on the default branch only. */
function staticContent(files: Readonly<Record<string, string>>, branch: string): RepositoryContentSource {
  const commit = fakeSha(JSON.stringify(files));
  return {
    async resolveRef(ref) {
      return ref === branch || ref === commit ? commit : null;
    },
    async read(ref, path) {
      if (ref !== branch && ref !== commit) return null;
      const text = files[path];
      if (text !== undefined) {
        const content = Buffer.from(text);
        return { kind: "file", content, sha: gitBlobSha(content) };
      }
      const prefix = path === "" ? "" : `${path}/`;
      const children = new Map<string, "file" | "dir">();
      for (const name of Object.keys(files)) {
        if (!name.startsWith(prefix)) continue;
        const [first = "", ...rest] = name.slice(prefix.length).split("/");
        children.set(first, rest.length > 0 ? "dir" : "file");
      }
      if (children.size === 0) return null;
      return {
        kind: "dir",
        sha: fakeSha(path),
        entries: [...children].map(([name, kind]) => ({ name, kind, sha: fakeSha(`${prefix}${name}`) })),
      };
    },
  };
}

function gitBlobSha(content: Buffer): string {
  return createHash("sha1").update(`blob ${content.length}\0`).update(content).digest("hex");
}

function fakeSha(seed: string): string {
  return createHash("sha1").update(seed).digest("hex");
}
