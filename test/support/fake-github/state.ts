// The fake's data model: plain records tests can read directly, plus the JSON GitHub would render.

export type FakeRole = "admin" | "maintain" | "write" | "triage" | "read";

export interface FakeUser {
  readonly login: string;
  readonly id: number;
  readonly type: "User" | "Bot";
}

/** Where the fake finds a repository's files; `GitHttpRemote.contentSource()` serves committed ones. */
export interface RepositoryContentSource {
  read(ref: string, path: string): Promise<ContentEntry | null>;
  /** Commit a branch (or any ref) points to; null when it does not exist. */
  resolveRef(ref: string): Promise<string | null>;
}

export type ContentEntry =
  | { readonly kind: "file"; readonly sha: string; readonly content: Buffer }
  | {
      readonly kind: "dir";
      readonly sha: string;
      readonly entries: readonly { name: string; kind: "file" | "dir"; sha: string }[];
    };

export interface FakeRepository {
  readonly id: number;
  readonly owner: string;
  readonly name: string;
  readonly fullName: string;
  defaultBranch: string;
  private: boolean;
  archived: boolean;
  cloneUrl: string;
  /** Lower-cased login → role. */
  readonly collaborators: Map<string, FakeRole>;
  content: RepositoryContentSource | null;
  installationId: number | null;
  /** Known workflow ids/file names; empty means any dispatch is accepted. */
  readonly workflows: Set<string>;
  nextNumber: number;
}

export interface FakeIssue {
  readonly repository: string;
  readonly number: number;
  title: string;
  body: string;
  state: "open" | "closed";
  readonly author: string;
  labels: string[];
  readonly isPullRequest: boolean;
  readonly createdAt: string;
  updatedAt: string;
}

export interface FakePullRequest {
  readonly repository: string;
  readonly number: number;
  title: string;
  body: string;
  state: "open" | "closed";
  readonly draft: boolean;
  merged: boolean;
  readonly author: string;
  readonly head: { ref: string; sha: string; repoFullName: string | null };
  base: { ref: string; sha: string };
  readonly createdAt: string;
  updatedAt: string;
  /** Every body the pull request has had, first one included. */
  readonly bodyHistory: string[];
}

export interface FakeComment {
  readonly id: number;
  readonly repository: string;
  readonly issueNumber: number;
  body: string;
  readonly author: string;
  readonly createdAt: string;
  updatedAt: string;
  /** Every body the comment has had, first one included; `history.length - 1` edits. */
  readonly history: string[];
}

export type FakeReactionTarget =
  | { readonly kind: "issue"; readonly issueNumber: number }
  | { readonly kind: "issue-comment"; readonly commentId: number }
  | { readonly kind: "review-comment"; readonly commentId: number };

export interface FakeReaction {
  readonly id: number;
  readonly repository: string;
  readonly target: FakeReactionTarget;
  readonly content: string;
  readonly user: string;
  readonly createdAt: string;
}

export interface FakeDispatch {
  readonly repository: string;
  readonly workflow: string;
  readonly ref: string;
  readonly inputs: Record<string, unknown>;
  readonly by: string;
}

export interface FakeInstallationToken {
  readonly token: string;
  readonly installationId: number;
  readonly expiresAt: string;
}

export interface RequestRecord {
  readonly method: string;
  /** Path and query as received. */
  readonly url: string;
  /** Matched route template, e.g. "/repos/{owner}/{repo}/issues/comments/{comment_id}"; null when none. */
  readonly route: string | null;
  readonly status: number;
  /** The credential presented (token or JWT), null when none. */
  readonly credential: string | null;
  readonly body: unknown;
  /** Set when an injected fault produced the answer. */
  readonly fault: string | null;
}

export class FakeGitHubState {
  readonly repositories = new Map<string, FakeRepository>();
  readonly issues: FakeIssue[] = [];
  readonly pullRequests: FakePullRequest[] = [];
  readonly comments: FakeComment[] = [];
  readonly reactions: FakeReaction[] = [];
  readonly dispatches: FakeDispatch[] = [];
  readonly installationTokens: FakeInstallationToken[] = [];
  readonly requests: RequestRecord[] = [];
  private readonly users = new Map<string, FakeUser>();
  private lastId = 1000;

  nextId(): number {
    this.lastId += 1;
    return this.lastId;
  }

  user(login: string, type: FakeUser["type"] = login.endsWith("[bot]") ? "Bot" : "User"): FakeUser {
    const key = login.toLowerCase();
    let user = this.users.get(key);
    if (!user) {
      user = { login, id: this.nextId(), type };
      this.users.set(key, user);
    }
    return user;
  }

  repository(owner: string, name: string): FakeRepository | undefined {
    return this.repositories.get(`${owner}/${name}`.toLowerCase());
  }

  issue(repository: string, number: number): FakeIssue | undefined {
    return this.issues.find((issue) => issue.repository === repository && issue.number === number);
  }

  pullRequest(repository: string, number: number): FakePullRequest | undefined {
    return this.pullRequests.find((pull) => pull.repository === repository && pull.number === number);
  }

  comment(repository: string, id: number): FakeComment | undefined {
    return this.comments.find((comment) => comment.repository === repository && comment.id === id);
  }
}

export function timestamp(date = new Date()): string {
  return date.toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** GitHub's JSON renderings, trimmed to the fields clients commonly read. */
export class GitHubJson {
  constructor(
    private readonly state: FakeGitHubState,
    private readonly apiUrl: string,
    private readonly webUrl = "https://github.com",
  ) {}

  user(login: string) {
    const user = this.state.user(login);
    return {
      login: user.login,
      id: user.id,
      node_id: `U_${user.id}`,
      avatar_url: `https://avatars.githubusercontent.com/u/${user.id}`,
      url: `${this.apiUrl}/users/${encodeURIComponent(user.login)}`,
      html_url: `${this.webUrl}/${user.login}`,
      type: user.type,
      site_admin: false,
    };
  }

  repository(repo: FakeRepository) {
    return {
      id: repo.id,
      node_id: `R_${repo.id}`,
      name: repo.name,
      full_name: repo.fullName,
      owner: this.user(repo.owner),
      private: repo.private,
      visibility: repo.private ? "private" : "public",
      html_url: `${this.webUrl}/${repo.fullName}`,
      url: `${this.apiUrl}/repos/${repo.fullName}`,
      clone_url: repo.cloneUrl,
      git_url: repo.cloneUrl.replace(/^https?:/, "git:"),
      ssh_url: `git@github.com:${repo.fullName}.git`,
      default_branch: repo.defaultBranch,
      archived: repo.archived,
      disabled: false,
      fork: false,
      created_at: "2024-01-01T00:00:00Z",
      updated_at: "2024-01-01T00:00:00Z",
      pushed_at: "2024-01-01T00:00:00Z",
    };
  }

  issue(issue: FakeIssue) {
    const base = `${this.apiUrl}/repos/${issue.repository}`;
    return {
      id: issue.number + 500_000,
      node_id: `I_${issue.repository}#${issue.number}`,
      number: issue.number,
      url: `${base}/issues/${issue.number}`,
      html_url: `${this.webUrl}/${issue.repository}/${issue.isPullRequest ? "pull" : "issues"}/${issue.number}`,
      title: issue.title,
      body: issue.body === "" ? null : issue.body,
      state: issue.state,
      user: this.user(issue.author),
      labels: issue.labels.map((name, index) => ({ id: index + 1, name, color: "ededed", default: false })),
      comments: this.state.comments.filter(
        (comment) => comment.repository === issue.repository && comment.issueNumber === issue.number,
      ).length,
      created_at: issue.createdAt,
      updated_at: issue.updatedAt,
      closed_at: null,
      author_association: "OWNER",
      ...(issue.isPullRequest && {
        pull_request: {
          url: `${base}/pulls/${issue.number}`,
          html_url: `${this.webUrl}/${issue.repository}/pull/${issue.number}`,
        },
      }),
    };
  }

  comment(comment: FakeComment) {
    return {
      id: comment.id,
      node_id: `IC_${comment.id}`,
      url: `${this.apiUrl}/repos/${comment.repository}/issues/comments/${comment.id}`,
      html_url: `${this.webUrl}/${comment.repository}/issues/${comment.issueNumber}#issuecomment-${comment.id}`,
      issue_url: `${this.apiUrl}/repos/${comment.repository}/issues/${comment.issueNumber}`,
      body: comment.body,
      user: this.user(comment.author),
      created_at: comment.createdAt,
      updated_at: comment.updatedAt,
      author_association: "NONE",
    };
  }

  pullRequest(pull: FakePullRequest, repo: FakeRepository) {
    const headRepo = pull.head.repoFullName;
    const headRepository = headRepo === null ? null : this.repositoryStub(headRepo, repo);
    return {
      id: pull.number + 900_000,
      node_id: `PR_${pull.repository}#${pull.number}`,
      number: pull.number,
      url: `${this.apiUrl}/repos/${pull.repository}/pulls/${pull.number}`,
      html_url: `${this.webUrl}/${pull.repository}/pull/${pull.number}`,
      title: pull.title,
      body: pull.body === "" ? null : pull.body,
      state: pull.state,
      draft: pull.draft,
      locked: false,
      merged: pull.merged,
      merged_at: pull.merged ? pull.updatedAt : null,
      user: this.user(pull.author),
      head: {
        label: `${headRepo?.split("/")[0] ?? "unknown"}:${pull.head.ref}`,
        ref: pull.head.ref,
        sha: pull.head.sha,
        user: headRepo ? this.user(headRepo.split("/")[0] ?? "") : null,
        repo: headRepository,
      },
      base: {
        label: `${repo.owner}:${pull.base.ref}`,
        ref: pull.base.ref,
        sha: pull.base.sha,
        user: this.user(repo.owner),
        repo: this.repository(repo),
      },
      created_at: pull.createdAt,
      updated_at: pull.updatedAt,
      closed_at: null,
      author_association: "OWNER",
    };
  }

  reaction(reaction: FakeReaction) {
    return {
      id: reaction.id,
      node_id: `REA_${reaction.id}`,
      user: this.user(reaction.user),
      content: reaction.content,
      created_at: reaction.createdAt,
    };
  }

  /** A fork's repository object: same shape, other owner. */
  private repositoryStub(fullName: string, base: FakeRepository) {
    const known = this.state.repositories.get(fullName.toLowerCase());
    if (known) return this.repository(known);
    const [owner = "", name = ""] = fullName.split("/");
    return this.repository({
      ...base,
      id: base.id + 1_000_000,
      owner,
      name,
      fullName,
      cloneUrl: `${this.webUrl}/${fullName}.git`,
    });
  }
}
