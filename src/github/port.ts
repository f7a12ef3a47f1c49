// The GitHub operations the pipeline needs, in its own words. Implementations (Octokit today)
// translate to REST; nothing from Octokit's types crosses this boundary.

export interface RepositoryRef {
  readonly owner: string;
  readonly repo: string;
}

/** Finest role GitHub reports for a user on a repository; "none" when they have no access. */
export type RepositoryRole = "admin" | "maintain" | "write" | "triage" | "read" | "none";

export interface Repository {
  readonly owner: string;
  readonly name: string;
  readonly fullName: string;
  readonly defaultBranch: string;
  readonly cloneUrl: string;
  readonly htmlUrl: string;
  readonly private: boolean;
  readonly archived: boolean;
}

export interface Issue {
  readonly number: number;
  readonly title: string;
  /** Empty string when the issue has no body. */
  readonly body: string;
  readonly state: "open" | "closed";
  readonly author: string | null;
  readonly labels: readonly string[];
  /** GitHub serves pull requests through the issues API too; this tells them apart. */
  readonly isPullRequest: boolean;
  readonly htmlUrl: string;
}

export interface PullRequest {
  readonly number: number;
  readonly title: string;
  readonly body: string;
  readonly state: "open" | "closed";
  readonly draft: boolean;
  readonly merged: boolean;
  readonly author: string | null;
  readonly htmlUrl: string;
  readonly head: PullRequestBranch;
  readonly base: PullRequestBranch;
  /** True when the head lives in another repository (or that repository was deleted). */
  readonly fromFork: boolean;
}

export interface PullRequestBranch {
  readonly ref: string;
  readonly sha: string;
  /** "owner/name"; null when the head repository has been deleted. */
  readonly repoFullName: string | null;
}

export interface FileContent {
  readonly path: string;
  /** Git blob id of the file at that ref. */
  readonly sha: string;
  readonly text: string;
}

export interface Comment {
  readonly id: number;
  readonly body: string;
  readonly author: string | null;
  readonly htmlUrl: string;
  readonly createdAt: string;
  readonly updatedAt: string;
}

export type ReactionContent = "+1" | "-1" | "laugh" | "confused" | "heart" | "hooray" | "rocket" | "eyes";

/** What a reaction is attached to: an issue or PR itself, a conversation comment, or a review comment. */
export type ReactionTarget =
  | { readonly kind: "issue"; readonly issueNumber: number }
  | { readonly kind: "issue-comment"; readonly commentId: number }
  | { readonly kind: "review-comment"; readonly commentId: number };

export interface CreatePullRequestInput extends RepositoryRef {
  readonly title: string;
  readonly body: string;
  /** Branch name in this repository. */
  readonly head: string;
  readonly base: string;
  readonly draft?: boolean;
}

export interface UpdatePullRequestInput extends RepositoryRef {
  readonly number: number;
  readonly title?: string;
  readonly body?: string;
  readonly state?: "open" | "closed";
  readonly base?: string;
}

export interface FindPullRequestInput extends RepositoryRef {
  readonly branch: string;
  /** Owner of the head branch; defaults to `owner` (same-repository branch). */
  readonly headOwner?: string;
  /** Which pull requests to consider; defaults to "open". */
  readonly state?: "open" | "closed" | "all";
}

export interface WorkflowDispatchInput extends RepositoryRef {
  /** Workflow file name (e.g. "agent.yml") or numeric id. */
  readonly workflow: string | number;
  readonly ref: string;
  readonly inputs?: Readonly<Record<string, string>>;
}

export interface GitHubPort {
  getCollaboratorPermission(owner: string, repo: string, user: string): Promise<RepositoryRole>;
  getRepository(owner: string, repo: string): Promise<Repository>;
  getIssue(owner: string, repo: string, issueNumber: number): Promise<Issue>;
  getPullRequest(owner: string, repo: string, pullNumber: number): Promise<PullRequest>;
  /** Text of a file at `ref`; null when the path does not exist there. */
  getFileContent(owner: string, repo: string, path: string, ref: string): Promise<FileContent | null>;
  listComments(owner: string, repo: string, issueNumber: number): Promise<Comment[]>;
  createComment(owner: string, repo: string, issueNumber: number, body: string): Promise<Comment>;
  updateComment(owner: string, repo: string, commentId: number, body: string): Promise<Comment>;
  addReaction(owner: string, repo: string, target: ReactionTarget, content: ReactionContent): Promise<void>;
  findPullRequestByHead(input: FindPullRequestInput): Promise<PullRequest | null>;
  createPullRequest(input: CreatePullRequestInput): Promise<PullRequest>;
  updatePullRequest(input: UpdatePullRequestInput): Promise<PullRequest>;
  createWorkflowDispatch(input: WorkflowDispatchInput): Promise<void>;
}

export type GitHubErrorKind =
  | "unauthorized"
  | "forbidden"
  | "not-found"
  | "validation"
  | "rate-limited"
  | "server"
  | "network"
  | "unexpected";

/** Any failure of a GitHubPort call, after retries. `route` is the REST route template. */
export class GitHubError extends Error {
  override readonly name = "GitHubError";
  readonly kind: GitHubErrorKind;
  /** HTTP status; 0 when no response arrived. */
  readonly status: number;
  readonly route: string;
  readonly requestId: string | null;

  constructor(
    message: string,
    details: { kind: GitHubErrorKind; status: number; route: string; requestId?: string | null },
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.kind = details.kind;
    this.status = details.status;
    this.route = details.route;
    this.requestId = details.requestId ?? null;
  }
}

export function isGitHubError(error: unknown): error is GitHubError {
  return error instanceof GitHubError;
}
