// Workspace operations the pipeline needs from git. Tokens are passed per call and only ever
// reach the one git process that talks to the remote.

export interface GitIdentity {
  readonly name: string;
  readonly email: string;
}

export type ChangeStatus = "added" | "modified" | "deleted" | "renamed" | "copied" | "type-changed";

export interface ChangedFile {
  readonly path: string;
  readonly status: ChangeStatus;
  /** Where a renamed or copied file came from. */
  readonly previousPath?: string;
  /** Line counts; null for binary files. */
  readonly additions: number | null;
  readonly deletions: number | null;
}

export interface WorkspaceDiff {
  /** The commit the diff is taken against. */
  readonly base: string;
  readonly files: readonly ChangedFile[];
  /** Unified patch of the same changes (binary files appear as "Binary files … differ"). */
  readonly patch: string;
}

export interface RemoteAccess {
  /** An https (or, in tests, http) URL without credentials. */
  readonly remoteUrl: string;
  /** Sent as Basic `x-access-token:<token>` to that remote only; omitted for public reads. */
  readonly token?: string;
}

export interface PushInput extends RemoteAccess {
  readonly branch: string;
  /** Overwrite the remote branch even when it is not an ancestor (re-runs of the same issue). */
  readonly force?: boolean;
}

export interface FetchInput extends RemoteAccess {
  readonly ref: string;
  readonly depth?: number;
}

export interface CloneInput extends RemoteAccess {
  readonly directory: string;
  readonly branch?: string;
  readonly depth?: number;
}

export interface GitWorkspace {
  readonly directory: string;
  /** Make commits made here carry `identity` (repository-local config). */
  ensureIdentity(identity: GitIdentity): Promise<void>;
  headCommit(): Promise<string>;
  /** Branch checked out, or null on a detached HEAD. */
  currentBranch(): Promise<string | null>;
  /** Create (or reset) `branch` at `base` and check it out; uncommitted changes carry over as with `git checkout -B`. */
  checkoutNewBranch(branch: string, base: string): Promise<void>;
  /** Working tree (tracked, untracked, deleted; ignored files excluded) against `base`. The index is not touched. */
  diff(base: string): Promise<WorkspaceDiff>;
  /** Every path the diff touches, renamed-from paths included, sorted. */
  changedPaths(base: string): Promise<string[]>;
  /** Stage everything and commit; returns the new commit, or null when there was nothing to commit. */
  commitAll(message: string): Promise<string | null>;
  push(input: PushInput): Promise<void>;
  /** Fetch `ref` and return the commit it points to. */
  fetch(input: FetchInput): Promise<string>;
  /** Remove credentials actions/checkout left in the repository config; returns the config keys removed. */
  stripCheckoutCredentials(): Promise<string[]>;
  /**
   * The repository's local config, as git reads it. The agent can write .git/config, and some
   * settings there (e.g. `filter.*.clean`) run programs during `git add`: compare before and after.
   */
  localConfig(): Promise<string>;
}

export interface GitWorkspaces {
  open(directory: string): GitWorkspace;
  clone(input: CloneInput): Promise<GitWorkspace>;
}

export type GitErrorKind = "authentication" | "rejected" | "not-found" | "failed";

/** A git command that did not succeed; carries git's own words. */
export class GitCommandError extends Error {
  override readonly name = "GitCommandError";
  readonly kind: GitErrorKind;
  /** The git subcommand and arguments, with any URL credentials masked. */
  readonly command: readonly string[];
  readonly exitCode: number | null;
  readonly stderr: string;

  constructor(
    message: string,
    details: { kind: GitErrorKind; command: readonly string[]; exitCode: number | null; stderr: string },
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.kind = details.kind;
    this.command = details.command;
    this.exitCode = details.exitCode;
    this.stderr = details.stderr;
  }
}
