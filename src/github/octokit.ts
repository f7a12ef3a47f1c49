import { retry } from "@octokit/plugin-retry";
import { type ThrottlingOptions, throttling } from "@octokit/plugin-throttling";
import { Octokit } from "@octokit/rest";
import {
  type Comment,
  type CreatePullRequestInput,
  type FileContent,
  type FindPullRequestInput,
  GitHubError,
  type GitHubErrorKind,
  type GitHubPort,
  type Issue,
  type PullRequest,
  type ReactionContent,
  type ReactionTarget,
  type Repository,
  type RepositoryRole,
  type UpdatePullRequestInput,
  type WorkflowDispatchInput,
} from "./port.js";

export interface GitHubLogger {
  debug(message: string): void;
  warn(message: string): void;
}

export interface OctokitGitHubOptions {
  /** An Actions `GITHUB_TOKEN`, a PAT or an App installation token: all are sent the same way. */
  readonly token: string;
  /** REST API root, e.g. `GITHUB_API_URL`; defaults to https://api.github.com. */
  readonly baseUrl?: string;
  readonly userAgent?: string;
  readonly fetch?: typeof fetch;
  /** Abort a single HTTP request after this long (retries get their own budget). Default 30 s. */
  readonly requestTimeoutMs?: number;
  /** Retries of 5xx and network failures, with quadratic backoff (1, 4, 9 … units). */
  readonly retry?: {
    readonly maxRetries?: number;
    /** Length of one backoff unit; default 1000. Tests shrink it. */
    readonly backoffUnitMs?: number;
  };
  /** Rate limits: 403/429 with `retry-after` (secondary) or `x-ratelimit-remaining: 0` (primary). */
  readonly throttle?: {
    readonly maxRetries?: number;
    /** Waits GitHub asks for beyond this are not worth it: the call fails instead. Default 120. */
    readonly maxWaitSeconds?: number;
    /** What one second of `retry-after` means here; default 1000. Tests shrink it. */
    readonly secondUnitMs?: number;
    /** Spacing between content-creating requests, as GitHub recommends; default 1000. */
    readonly writeSpacingMs?: number;
    /** Spacing between requests that notify people (comments, PRs); default 3000. */
    readonly notificationSpacingMs?: number;
  };
  readonly logger?: GitHubLogger;
}

const GitHubOctokit = Octokit.plugin(retry, throttling);
type GitHubOctokitClient = InstanceType<typeof GitHubOctokit>;

const silentLogger: GitHubLogger = { debug: () => {}, warn: () => {} };

export function createOctokitGitHub(options: OctokitGitHubOptions): GitHubPort {
  return new OctokitGitHub(options);
}

export class OctokitGitHub implements GitHubPort {
  private readonly octokit: GitHubOctokitClient;

  constructor(options: OctokitGitHubOptions) {
    const logger = options.logger ?? silentLogger;
    const throttle = options.throttle ?? {};
    const maxThrottleRetries = throttle.maxRetries ?? 3;
    const maxWaitSeconds = throttle.maxWaitSeconds ?? 120;
    const onLimit =
      (label: string) =>
      (
        retryAfterSeconds: number,
        request: { method: string; url: string },
        _client: unknown,
        retryCount: number,
      ) => {
        const where = `${request.method} ${request.url}`;
        if (retryCount >= maxThrottleRetries || retryAfterSeconds > maxWaitSeconds) {
          logger.warn(`GitHub ${label} on ${where}: giving up after ${retryCount} retries`);
          return false;
        }
        logger.warn(`GitHub ${label} on ${where}: retrying in ${retryAfterSeconds}s`);
        return true;
      };
    const throttleOptions: ThrottlingOptions = {
      onRateLimit: onLimit("rate limit"),
      onSecondaryRateLimit: onLimit("secondary rate limit"),
      retryAfterBaseValue: throttle.secondUnitMs ?? 1000,
      fallbackSecondaryRateRetryAfter: 60,
      write: spacedGroup(throttle.writeSpacingMs ?? 1000),
      notifications: spacedGroup(throttle.notificationSpacingMs ?? 3000),
    };
    this.octokit = new GitHubOctokit({
      auth: options.token,
      baseUrl: (options.baseUrl ?? "https://api.github.com").replace(/\/+$/, ""),
      userAgent: options.userAgent ?? "acp-warden",
      request: { fetch: withTimeout(options.fetch ?? fetch, options.requestTimeoutMs ?? 30_000) },
      retry: {
        retries: options.retry?.maxRetries ?? 3,
        retryAfterBaseValue: options.retry?.backoffUnitMs ?? 1000,
        // Rate limits belong to the throttling plugin; 4xx other than those are final.
        doNotRetry: [400, 401, 403, 404, 409, 410, 422, 429, 451],
      },
      throttle: throttleOptions,
      log: {
        debug: (message: string) => logger.debug(message),
        info: (message: string) => logger.debug(message),
        warn: (message: string) => logger.warn(message),
        error: (message: string) => logger.warn(message),
      },
    });
  }

  async getCollaboratorPermission(owner: string, repo: string, user: string): Promise<RepositoryRole> {
    const route = "GET /repos/{owner}/{repo}/collaborators/{username}/permission";
    try {
      const { data } = await this.octokit.request(route, { owner, repo, username: user });
      return toRole(data.role_name) ?? toRole(data.permission) ?? "none";
    } catch (error) {
      // GitHub answers 404 for users it does not know: they have no access.
      if (statusOf(error) === 404) return "none";
      throw toGitHubError(error, route, `reading ${user}'s permission on ${owner}/${repo}`);
    }
  }

  async getRepository(owner: string, repo: string): Promise<Repository> {
    const route = "GET /repos/{owner}/{repo}";
    const { data } = await this.call(route, `reading repository ${owner}/${repo}`, () =>
      this.octokit.request(route, { owner, repo }),
    );
    return {
      owner: data.owner.login,
      name: data.name,
      fullName: data.full_name,
      defaultBranch: data.default_branch,
      cloneUrl: data.clone_url,
      htmlUrl: data.html_url,
      private: data.private,
      archived: data.archived,
    };
  }

  async getIssue(owner: string, repo: string, issueNumber: number): Promise<Issue> {
    const route = "GET /repos/{owner}/{repo}/issues/{issue_number}";
    const { data } = await this.call(route, `reading issue #${issueNumber} of ${owner}/${repo}`, () =>
      this.octokit.request(route, { owner, repo, issue_number: issueNumber }),
    );
    return {
      number: data.number,
      title: data.title,
      body: data.body ?? "",
      state: data.state === "closed" ? "closed" : "open",
      author: data.user?.login ?? null,
      labels: data.labels
        .map((label) => (typeof label === "string" ? label : (label.name ?? "")))
        .filter(Boolean),
      isPullRequest: data.pull_request != null,
      htmlUrl: data.html_url,
    };
  }

  async getPullRequest(owner: string, repo: string, pullNumber: number): Promise<PullRequest> {
    const route = "GET /repos/{owner}/{repo}/pulls/{pull_number}";
    const { data } = await this.call(route, `reading pull request #${pullNumber} of ${owner}/${repo}`, () =>
      this.octokit.request(route, { owner, repo, pull_number: pullNumber }),
    );
    return toPullRequest(data);
  }

  async getFileContent(owner: string, repo: string, path: string, ref: string): Promise<FileContent | null> {
    const route = "GET /repos/{owner}/{repo}/contents/{path}";
    const what = `reading ${path} at ${ref} in ${owner}/${repo}`;
    let data: unknown;
    try {
      ({ data } = await this.octokit.request(route, { owner, repo, path, ref }));
    } catch (error) {
      if (statusOf(error) === 404) return null;
      throw toGitHubError(error, route, what);
    }
    if (Array.isArray(data) || !isRecord(data) || data.type !== "file") {
      throw new GitHubError(`${what}: the path is not a file`, { kind: "unexpected", status: 200, route });
    }
    const sha = String(data.sha);
    if (data.encoding === "base64" && typeof data.content === "string") {
      return { path, sha, text: Buffer.from(data.content, "base64").toString("utf8") };
    }
    // Files over 1 MB come without inline content; the raw media type still serves them.
    const raw = await this.call(route, what, () =>
      this.octokit.request(route, { owner, repo, path, ref, mediaType: { format: "raw" } }),
    );
    return { path, sha, text: rawText(raw.data) };
  }

  async listComments(owner: string, repo: string, issueNumber: number): Promise<Comment[]> {
    const route = "GET /repos/{owner}/{repo}/issues/{issue_number}/comments";
    const comments = await this.call(route, `listing comments of #${issueNumber} in ${owner}/${repo}`, () =>
      this.octokit.paginate(route, { owner, repo, issue_number: issueNumber, per_page: 100 }),
    );
    return comments.map(toComment);
  }

  async createComment(owner: string, repo: string, issueNumber: number, body: string): Promise<Comment> {
    const route = "POST /repos/{owner}/{repo}/issues/{issue_number}/comments";
    return this.createOnce(
      route,
      `commenting on #${issueNumber} in ${owner}/${repo}`,
      async (retries) =>
        toComment(
          (
            await this.octokit.request(route, {
              owner,
              repo,
              issue_number: issueNumber,
              body,
              request: { retries },
            })
          ).data,
        ),
      async () => (await this.listComments(owner, repo, issueNumber)).find((c) => c.body === body) ?? null,
    );
  }

  async updateComment(owner: string, repo: string, commentId: number, body: string): Promise<Comment> {
    const route = "PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}";
    const { data } = await this.call(route, `editing comment ${commentId} in ${owner}/${repo}`, () =>
      this.octokit.request(route, { owner, repo, comment_id: commentId, body }),
    );
    return toComment(data);
  }

  async addReaction(
    owner: string,
    repo: string,
    target: ReactionTarget,
    content: ReactionContent,
  ): Promise<void> {
    switch (target.kind) {
      case "issue": {
        const route = "POST /repos/{owner}/{repo}/issues/{issue_number}/reactions";
        await this.call(route, `reacting to #${target.issueNumber} in ${owner}/${repo}`, () =>
          this.octokit.request(route, { owner, repo, issue_number: target.issueNumber, content }),
        );
        return;
      }
      case "issue-comment": {
        const route = "POST /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions";
        await this.call(route, `reacting to comment ${target.commentId} in ${owner}/${repo}`, () =>
          this.octokit.request(route, { owner, repo, comment_id: target.commentId, content }),
        );
        return;
      }
      case "review-comment": {
        const route = "POST /repos/{owner}/{repo}/pulls/comments/{comment_id}/reactions";
        await this.call(route, `reacting to review comment ${target.commentId} in ${owner}/${repo}`, () =>
          this.octokit.request(route, { owner, repo, comment_id: target.commentId, content }),
        );
        return;
      }
    }
  }

  async findPullRequestByHead(input: FindPullRequestInput): Promise<PullRequest | null> {
    const { owner, repo, branch } = input;
    const route = "GET /repos/{owner}/{repo}/pulls";
    const { data } = await this.call(
      route,
      `looking for a pull request from ${branch} in ${owner}/${repo}`,
      () =>
        this.octokit.request(route, {
          owner,
          repo,
          head: `${input.headOwner ?? owner}:${branch}`,
          state: input.state ?? "open",
          per_page: 10,
        }),
    );
    const first = data[0];
    // The list shape lacks `merged`; a second read gives the full pull request.
    return first ? this.getPullRequest(owner, repo, first.number) : null;
  }

  async createPullRequest(input: CreatePullRequestInput): Promise<PullRequest> {
    const { owner, repo } = input;
    const route = "POST /repos/{owner}/{repo}/pulls";
    return this.createOnce(
      route,
      `opening a pull request from ${input.head} into ${input.base} in ${owner}/${repo}`,
      async (retries) =>
        toPullRequest(
          (
            await this.octokit.request(route, {
              owner,
              repo,
              title: input.title,
              body: input.body,
              head: input.head,
              base: input.base,
              draft: input.draft ?? false,
              request: { retries },
            })
          ).data,
        ),
      // The same head and base, open: ours, stored before the error was answered.
      async () => {
        const open = await this.findPullRequestByHead({ owner, repo, branch: input.head, state: "open" });
        return open && open.base.ref === input.base ? open : null;
      },
    );
  }

  async updatePullRequest(input: UpdatePullRequestInput): Promise<PullRequest> {
    const { owner, repo } = input;
    const route = "PATCH /repos/{owner}/{repo}/pulls/{pull_number}";
    const { data } = await this.call(
      route,
      `updating pull request #${input.number} in ${owner}/${repo}`,
      () =>
        this.octokit.request(route, {
          owner,
          repo,
          pull_number: input.number,
          ...(input.title !== undefined && { title: input.title }),
          ...(input.body !== undefined && { body: input.body }),
          ...(input.state !== undefined && { state: input.state }),
          ...(input.base !== undefined && { base: input.base }),
        }),
    );
    return toPullRequest(data);
  }

  async createWorkflowDispatch(input: WorkflowDispatchInput): Promise<void> {
    const { owner, repo } = input;
    const route = "POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches";
    await this.call(route, `dispatching workflow ${input.workflow} on ${input.ref} in ${owner}/${repo}`, () =>
      this.octokit.request(route, {
        owner,
        repo,
        workflow_id: input.workflow,
        ref: input.ref,
        ...(input.inputs && { inputs: { ...input.inputs } }),
      }),
    );
  }

  /**
   * Creates something at most once. A write GitHub stored before it failed with a 5xx (or before
   * the connection dropped) would be duplicated by a blind retry, so after such a failure we look
   * for it before writing again.
   */
  private async createOnce<T>(
    route: string,
    what: string,
    send: (retries: number | undefined) => Promise<T>,
    findExisting: () => Promise<T | null>,
  ): Promise<T> {
    try {
      return await send(0);
    } catch (error) {
      const status = (error as { status?: unknown }).status;
      const ambiguous = typeof status !== "number" || status >= 500;
      if (!ambiguous) throw toGitHubError(error, route, what);
      const existing = await findExisting().catch(() => null);
      if (existing) return existing;
      return this.call(route, what, () => send(undefined));
    }
  }

  private async call<T>(route: string, what: string, send: () => Promise<T>): Promise<T> {
    try {
      return await send();
    } catch (error) {
      throw toGitHubError(error, route, what);
    }
  }
}

/** Shape shared by the pull request objects of the get, list, create and update endpoints. */
interface PullRequestData {
  number: number;
  title: string;
  body: string | null;
  state: string;
  draft?: boolean;
  merged?: boolean;
  merged_at?: string | null;
  user: { login: string } | null;
  html_url: string;
  head: { ref: string; sha: string; repo: { full_name: string } | null };
  base: { ref: string; sha: string; repo: { full_name: string } | null };
}

function toPullRequest(data: PullRequestData): PullRequest {
  const headRepo = data.head.repo?.full_name ?? null;
  const baseRepo = data.base.repo?.full_name ?? null;
  return {
    number: data.number,
    title: data.title,
    body: data.body ?? "",
    state: data.state === "closed" ? "closed" : "open",
    draft: data.draft ?? false,
    merged: data.merged ?? data.merged_at != null,
    author: data.user?.login ?? null,
    htmlUrl: data.html_url,
    head: { ref: data.head.ref, sha: data.head.sha, repoFullName: headRepo },
    base: { ref: data.base.ref, sha: data.base.sha, repoFullName: baseRepo },
    fromFork: headRepo === null || headRepo.toLowerCase() !== baseRepo?.toLowerCase(),
  };
}

interface CommentData {
  // Typed as possibly bigint upstream; comment ids fit comfortably in a double.
  id: number | bigint;
  body?: string;
  user: { login: string } | null;
  html_url: string;
  created_at: string;
  updated_at: string;
}

function toComment(data: CommentData): Comment {
  return {
    id: Number(data.id),
    body: data.body ?? "",
    author: data.user?.login ?? null,
    htmlUrl: data.html_url,
    createdAt: data.created_at,
    updatedAt: data.updated_at,
  };
}

const roles: readonly RepositoryRole[] = ["admin", "maintain", "write", "triage", "read", "none"];

function toRole(value: unknown): RepositoryRole | undefined {
  return roles.find((role) => role === value);
}

/** Octokit hands raw bodies over as text or as an ArrayBuffer, depending on the content type. */
function rawText(data: unknown): string {
  if (typeof data === "string") return data;
  if (data instanceof ArrayBuffer) return Buffer.from(data).toString("utf8");
  if (ArrayBuffer.isView(data))
    return Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString("utf8");
  throw new TypeError("unexpected raw file content");
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

function statusOf(error: unknown): number | undefined {
  return isRecord(error) && typeof error.status === "number" ? error.status : undefined;
}

/** Octokit's RequestError, read structurally so its class never becomes part of our surface. */
function toGitHubError(error: unknown, route: string, what: string): GitHubError {
  if (error instanceof GitHubError) return error;
  const response = isRecord(error) && isRecord(error.response) ? error.response : undefined;
  const status = response ? (statusOf(error) ?? 0) : 0;
  const headers = response && isRecord(response.headers) ? response.headers : {};
  const requestId =
    typeof headers["x-github-request-id"] === "string" ? headers["x-github-request-id"] : null;
  const data = response && isRecord(response.data) ? response.data : {};
  const githubMessage =
    typeof data.message === "string" ? data.message : error instanceof Error ? error.message : String(error);
  const kind = classify(status, githubMessage, headers);
  const details = isRecord(data) && Array.isArray(data.errors) ? describeValidation(data.errors) : "";
  const hint = hints[kind];
  const message =
    status === 0
      ? `GitHub request failed while ${what} (${route}): ${githubMessage}`
      : `GitHub answered ${status} while ${what} (${route}): ${githubMessage}${details}${hint ? `. ${hint}` : ""}`;
  return new GitHubError(message, { kind, status, route, requestId }, { cause: error });
}

function classify(status: number, message: string, headers: Record<string, unknown>): GitHubErrorKind {
  if (status === 0) return "network";
  if (status === 401) return "unauthorized";
  const limited = /rate limit/i.test(message) || headers["x-ratelimit-remaining"] === "0";
  if (status === 429 || (status === 403 && limited)) return "rate-limited";
  if (status === 403) return "forbidden";
  if (status === 404) return "not-found";
  if (status === 422) return "validation";
  if (status >= 500) return "server";
  return "unexpected";
}

const hints: Partial<Record<GitHubErrorKind, string>> = {
  unauthorized: "The token is missing, expired or revoked",
  forbidden: "The token lacks a permission this needs (check the workflow's `permissions:` or the App's)",
  "not-found": "Either it does not exist or the token cannot see it",
  "rate-limited": "GitHub's rate limit held after the allowed retries",
};

function describeValidation(errors: unknown[]): string {
  const parts = errors.map((item) => {
    if (!isRecord(item)) return String(item);
    if (typeof item.message === "string") return item.message;
    return [item.resource, item.field, item.code].filter((part) => typeof part === "string").join(" ");
  });
  return parts.length > 0 ? ` (${parts.join("; ")})` : "";
}

function withTimeout(fetchImpl: typeof fetch, timeoutMs: number): typeof fetch {
  return (input, init) => {
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = init?.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
    return fetchImpl(input, { ...init, signal });
  };
}

type LimiterGroup = NonNullable<ThrottlingOptions["write"]>;

/**
 * The throttling plugin's own groups are process-wide with fixed spacing; ours keep GitHub's
 * recommended spacing by default but let a test (or a busy App) choose it per client.
 * The plugin only calls `group.key(id).schedule(jobOptions, task, ...args)`.
 */
function spacedGroup(spacingMs: number): LimiterGroup {
  const lanes = new Map<string, SpacedLane>();
  const group = {
    key(id = "") {
      let lane = lanes.get(id);
      if (!lane) {
        lane = new SpacedLane(spacingMs);
        lanes.set(id, lane);
      }
      return lane;
    },
  };
  return group as unknown as LimiterGroup;
}

class SpacedLane {
  private tail: Promise<unknown> = Promise.resolve();
  private lastStart = Number.NEGATIVE_INFINITY;

  constructor(private readonly spacingMs: number) {}

  schedule<T>(
    _jobOptions: unknown,
    task: (...args: unknown[]) => Promise<T>,
    ...args: unknown[]
  ): Promise<T> {
    const run = async (): Promise<T> => {
      const wait = this.lastStart + this.spacingMs - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      this.lastStart = Date.now();
      return task(...args);
    };
    const result = this.tail.then(run, run);
    this.tail = result.catch(() => undefined);
    return result;
  }
}
