// One run, in one direction: authorize → policy (default branch) → workspace → agent session →
// audit the diff → publish → report. Every stage updates the report; a failure in any stage still
// ends with a tracking comment that says what failed and what was kept.
import { join } from "node:path";
import type { PromptInput, SessionResult } from "../acp/types.js";
import { auditDiff } from "../agents/index.js";
import type { GitWorkspace } from "../git/port.js";
import type { PullRequest, RepositoryRole } from "../github/port.js";
import type { PermissionLevel, ShellAnalyzer, TriggerFacts } from "../policy/index.js";
import { effectiveLimits, formatPolicyError, loadPolicy, type Policy } from "../policy/index.js";
import {
  COMMENT_MARKER,
  renderPullRequestBody,
  renderPullRequestTitle,
  renderTrackingComment,
} from "../report/markdown.js";
import type { RunReport } from "../report/model.js";
import { CommentUpdater } from "./comment-updater.js";
import { buildPrompt } from "./prompt.js";
import { type RunTrigger, threadNumber } from "./trigger.js";
import type { PipelineDeps, PreparedAgent, RunConfig, RunOutcome } from "./types.js";

const WRITE_ROLES: ReadonlySet<RepositoryRole> = new Set(["write", "maintain", "admin"]);

/** Raised inside a stage to end the run as failed with the stage's name. */
class StageError extends Error {
  constructor(
    readonly stage: string,
    message: string,
  ) {
    super(message);
  }
}

interface ThreadInfo {
  kind: "issue" | "pull request";
  number: number;
  title: string;
  body: string;
  url: string;
  labels: readonly string[];
  pull: PullRequest | null;
}

export async function runPipeline(
  trigger: RunTrigger,
  config: RunConfig,
  deps: PipelineDeps,
): Promise<RunOutcome> {
  const { owner, repo } = config.repository;
  const { github, log } = deps;

  // Only people with write access start an agent.
  const role =
    trigger.kind === "schedule" ? "none" : await github.getCollaboratorPermission(owner, repo, trigger.actor);
  if (trigger.kind !== "schedule" && !WRITE_ROLES.has(role)) return refuse(trigger, role, config, deps);

  // Acknowledge at once, so the person sees the command was heard.
  await acknowledge(trigger, config, deps);

  const number = threadNumber(trigger);
  const report = newReport(trigger, config, deps.now());

  const comments = new CommentUpdater({
    create: async (body) =>
      number === null ? null : (await github.createComment(owner, repo, number, body)).id,
    update: async (id, body) => {
      await github.updateComment(owner, repo, id, body);
    },
    render: () => renderTrackingComment({ ...report, now: deps.now() }),
    intervalMs: deps.commentIntervalMs,
    log,
  });

  let stage = "starting";
  let prepared: PreparedAgent | null = null;
  let session: SessionResult | null = null;
  try {
    await comments.start();

    stage = "reading the issue";
    const repository = await github.getRepository(owner, repo);
    const thread = number === null ? null : await readThread(trigger, number, config, deps);
    if (thread) report.thread = { kind: thread.kind, number: thread.number };

    stage = "loading the policy";
    // The policy always comes from the default branch: a pull request cannot loosen its own rules.
    const shell = await deps.loadShell();
    const policyFile = await github.getFileContent(owner, repo, config.policyPath, repository.defaultBranch);
    const policy = parsePolicy(policyFile?.text, config.policyPath, repository.defaultBranch, shell);
    if (!policyFile)
      report.notes.push(`No ${config.policyPath} on ${repository.defaultBranch}: every request is denied.`);

    const agentName = chooseAgent(trigger, config, policy);
    report.agent = agentName;
    const facts: TriggerFacts = {
      event: trigger.kind,
      actorPermission: role === "none" ? "none" : (role as PermissionLevel),
      fork: thread?.pull?.fromFork ?? false,
      labels: thread?.labels ?? [],
      ...(thread?.pull ? { branch: thread.pull.head.ref } : {}),
    };

    stage = "preparing the workspace";
    const git = deps.git;
    const removed = await git.stripCheckoutCredentials();
    if (removed.length > 0) log(`removed checkout credentials from .git/config: ${removed.join(", ")}`);
    await git.ensureIdentity(config.gitIdentity);
    const { branch, base, baseCommit } = await prepareBranch(
      trigger,
      thread,
      config,
      repository.defaultBranch,
      deps,
    );
    const configBefore = await git.localConfig();
    report.branch = branch;
    report.baseBranch = base;
    comments.touch();

    stage = "starting the agent";
    prepared = await deps.agents.prepare({
      agent: agentName,
      policy,
      facts,
      workspace: config.workspace,
      model: config.model,
      shell,
    });
    report.agent = prepared.name;
    report.notes.push(...prepared.notes);

    stage = "running the agent";
    report.phase = "running";
    const limits = effectiveLimits(policy, facts);
    const minutes = Math.min(config.timeoutMinutes ?? Number.POSITIVE_INFINITY, limits.timeoutMinutes ?? 30);
    const transcriptPath = join(
      config.transcriptDir,
      `acp-warden-${owner}-${repo}-${number ?? "run"}-${Date.now()}.jsonl`,
    );
    report.transcriptPath = transcriptPath;
    session = await deps.runSession({
      ...prepared.session,
      workspace: config.workspace,
      prompt: promptFor(trigger, config, thread, base, branch),
      limits: {
        timeoutMs: minutes * 60_000,
        ...(limits.maxToolCalls === undefined ? {} : { maxToolCalls: limits.maxToolCalls }),
      },
      transcriptPath,
      onUpdate: (state) => {
        report.session = state;
        comments.touch();
      },
    });
    report.session = session.state;
    if (prepared.kind === "command" && session.state.agentInfo) report.agent = session.state.agentInfo.name;
    report.kept.push(`transcript: ${transcriptPath}`);
    if (session.error) {
      // The agent failed; whatever it changed is still audited and published as a draft.
      report.error = { stage: "running the agent", message: session.error.message.split("\n")[0] ?? "" };
      log(session.error.message);
    }

    stage = "auditing the changes";
    report.phase = "publishing";
    comments.touch();
    // Settings such as filter.*.clean run programs whenever git stages files, diffs included:
    // if the agent changed the repository's git config, stop before git touches its work.
    if ((await git.localConfig()) !== configBefore) {
      report.protectedViolations = [
        { path: ".git/config", rule: "the repository's git config changed during the run" },
      ];
      report.status = "blocked";
      return await finish();
    }
    const { diff, violations } = await auditChanges(git, baseCommit, policy, facts, {
      workspace: config.workspace,
      shell,
    });
    report.diff = diff;
    report.protectedViolations = violations;
    const stopped = session.state.cancelCause !== null || session.error !== null;

    if (diff.files.length === 0) {
      report.status = session.error ? "failed" : "no_changes";
    } else if (report.protectedViolations.length > 0) {
      report.status = "blocked";
    } else {
      stage = "publishing";
      const pr = await publish(report, thread, branch, base, stopped || config.draft, config, deps);
      report.pullRequest = pr;
      report.kept.push(`branch ${branch} pushed`);
      report.status = session.error ? "failed" : session.state.cancelCause !== null ? "stopped" : "published";
    }
  } catch (error) {
    report.status = "failed";
    report.error = { stage, message: errorMessage(error) };
    log(`failed while ${stage}: ${errorMessage(error)}`);
    if (session) report.session = session.state;
  } finally {
    report.phase = "done";
    await prepared?.dispose().catch((error: unknown) => log(`cleanup failed: ${errorMessage(error)}`));
  }
  return finish();

  async function finish(): Promise<RunOutcome> {
    report.phase = "done";
    report.now = deps.now();
    await comments.finish();
    return {
      status: report.status ?? "failed",
      message: report.error ? `${report.error.stage}: ${report.error.message}` : (report.status ?? ""),
      report,
      exitCode: report.status === "failed" ? 1 : 0,
    };
  }
}

function newReport(trigger: RunTrigger, config: RunConfig, now: number): RunReport {
  const { owner, repo } = config.repository;
  return {
    repository: `${owner}/${repo}`,
    serverUrl: config.serverUrl,
    thread: null,
    trigger: {
      kind: trigger.kind,
      actor: trigger.actor,
      verb: trigger.verb,
      instructions: trigger.instructions,
    },
    agent: trigger.agentOverride ?? config.agent ?? "agent",
    branch: null,
    baseBranch: null,
    runUrl: config.runUrl,
    phase: "starting",
    startedAt: now,
    now,
    session: null,
    notes: [],
    diff: null,
    protectedViolations: [],
    pullRequest: null,
    status: null,
    error: null,
    kept: [],
    transcriptPath: null,
  };
}

/** The agent's changes as git sees them, and those the policy does not allow (any blocks publishing). */
async function auditChanges(
  git: GitWorkspace,
  baseCommit: string,
  policy: Policy,
  facts: TriggerFacts,
  context: { workspace: string; shell: ShellAnalyzer },
): Promise<{ diff: NonNullable<RunReport["diff"]>; violations: RunReport["protectedViolations"] }> {
  const diff = await git.diff(baseCommit);
  // Most agents write files themselves: the diff is checked against `protected` and the edit rules.
  const violations = auditDiff(await git.changedPaths(baseCommit), policy, facts, context)
    .filter((finding) => finding.blocking)
    .map((finding) => ({ path: finding.path, rule: finding.ruleId, reason: finding.reason }));
  return {
    diff: {
      files: diff.files.map((f) => ({
        path: f.path,
        status: f.status,
        additions: f.additions ?? 0,
        deletions: f.deletions ?? 0,
        ...(f.previousPath ? { previousPath: f.previousPath } : {}),
      })),
      patch: diff.patch,
    },
    violations,
  };
}

function promptFor(
  trigger: RunTrigger,
  config: RunConfig,
  thread: ThreadInfo | null,
  baseBranch: string,
  workBranch: string,
): PromptInput {
  const { owner, repo } = config.repository;
  return buildPrompt({
    repository: `${owner}/${repo}`,
    verb: trigger.verb,
    instructions: trigger.instructions,
    ...(thread
      ? {
          thread: {
            kind: thread.kind,
            number: thread.number,
            title: thread.title,
            body: thread.body,
            url: thread.url,
          },
        }
      : {}),
    ...(trigger.kind === "pull_request_review_comment" && trigger.path
      ? { location: { path: trigger.path, line: trigger.line } }
      : {}),
    baseBranch,
    workBranch,
  });
}

async function refuse(
  trigger: RunTrigger,
  role: RepositoryRole,
  config: RunConfig,
  deps: PipelineDeps,
): Promise<RunOutcome> {
  const { owner, repo } = config.repository;
  const number = threadNumber(trigger);
  const message = `@${trigger.actor} needs write access to ${owner}/${repo} to start the agent (they have ${role}).`;
  deps.log(message);
  if (number !== null) {
    await deps.github
      .createComment(
        owner,
        repo,
        number,
        `${COMMENT_MARKER}\n${message} A maintainer can run the command instead.`,
      )
      .catch((error: unknown) => deps.log(`could not reply: ${errorMessage(error)}`));
  }
  return { status: "unauthorized", message, report: null, exitCode: 0 };
}

async function acknowledge(trigger: RunTrigger, config: RunConfig, deps: PipelineDeps): Promise<void> {
  const { owner, repo } = config.repository;
  try {
    if (trigger.kind === "issue_comment") {
      await deps.github.addReaction(
        owner,
        repo,
        { kind: "issue-comment", commentId: trigger.commentId },
        "eyes",
      );
    } else if (trigger.kind === "pull_request_review_comment") {
      await deps.github.addReaction(
        owner,
        repo,
        { kind: "review-comment", commentId: trigger.commentId },
        "eyes",
      );
    } else if (trigger.kind === "issues") {
      await deps.github.addReaction(owner, repo, { kind: "issue", issueNumber: trigger.issueNumber }, "eyes");
    }
  } catch (error) {
    deps.log(`could not add the 👀 reaction: ${errorMessage(error)}`);
  }
}

async function readThread(
  trigger: RunTrigger,
  number: number,
  config: RunConfig,
  deps: PipelineDeps,
): Promise<ThreadInfo> {
  const { owner, repo } = config.repository;
  const isPull =
    trigger.kind === "pull_request_review_comment" ||
    (trigger.kind === "issue_comment" && trigger.isPullRequest);
  const issue = await deps.github.getIssue(owner, repo, number);
  const pull = isPull ? await deps.github.getPullRequest(owner, repo, number) : null;
  return {
    kind: isPull ? "pull request" : "issue",
    number,
    title: issue.title,
    body: issue.body,
    url: issue.htmlUrl,
    labels: issue.labels,
    pull,
  };
}

function parsePolicy(text: string | undefined, file: string, branch: string, shell: ShellAnalyzer): Policy {
  const loaded = loadPolicy(text, { file, shell });
  if (!loaded.ok) {
    const errors = loaded.errors.map(formatPolicyError).join("\n");
    throw new StageError("loading the policy", `${file} on ${branch} is invalid:\n${errors}`);
  }
  return loaded.policy;
}

function chooseAgent(trigger: RunTrigger, config: RunConfig, policy: Policy): string {
  const requested = trigger.agentOverride;
  if (requested) {
    const allowed = policy.agents.allowed ?? [];
    if (!allowed.includes(requested)) {
      throw new StageError(
        "choosing the agent",
        `--agent ${requested} is not in the policy's agents.allowed (${allowed.join(", ") || "empty"})`,
      );
    }
    return requested;
  }
  const chosen = config.agent || policy.agent;
  if (!chosen)
    throw new StageError(
      "choosing the agent",
      "no agent is configured: set the `agent` input or `agent:` in the policy",
    );
  return chosen;
}

export function branchSlug(text: string): string {
  const slug = text
    .toLowerCase()
    .normalize("NFKD")
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 40)
    .replace(/-+$/g, "");
  return slug || "task";
}

async function prepareBranch(
  trigger: RunTrigger,
  thread: ThreadInfo | null,
  config: RunConfig,
  defaultBranch: string,
  deps: PipelineDeps,
): Promise<{ branch: string; base: string; baseCommit: string }> {
  const access = { remoteUrl: config.remoteUrl, token: config.pushToken };
  const pull = thread?.pull;
  if (pull && !pull.fromFork && pull.state === "open") {
    // A command on a pull request from this repository continues that pull request's branch.
    const headCommit = await deps.git.fetch({ ...access, ref: pull.head.ref });
    await deps.git.checkoutNewBranch(pull.head.ref, headCommit);
    return { branch: pull.head.ref, base: pull.base.ref, baseCommit: headCommit };
  }
  const base = config.baseBranch || (pull ? pull.base.ref : defaultBranch);
  const baseCommit = await deps.git.fetch({ ...access, ref: base });
  const label = thread
    ? `${thread.number}-${branchSlug(thread.title)}`
    : `${trigger.kind}-${branchSlug(trigger.instructions)}`;
  const branch = `${config.branchPrefix}${label}`;
  await deps.git.checkoutNewBranch(branch, baseCommit);
  return { branch, base, baseCommit };
}

async function publish(
  report: RunReport,
  thread: ThreadInfo | null,
  branch: string,
  base: string,
  draft: boolean,
  config: RunConfig,
  deps: PipelineDeps,
): Promise<NonNullable<RunReport["pullRequest"]>> {
  const { owner, repo } = config.repository;
  const subject = thread
    ? `${thread.kind === "issue" ? "Fix" : "Update"} #${thread.number}`
    : "Agent changes";
  const message = `${subject}: changes by ${report.agent}\n\nMade by acp-warden for @${report.trigger.actor} (${report.trigger.kind}).${
    report.session?.cancelCause ? `\nIncomplete: stopped (${report.session.cancelCause}).` : ""
  }`;
  await deps.git.commitAll(message);
  const continuing = thread?.pull && thread.pull.head.ref === branch;
  await deps.git.push({ remoteUrl: config.remoteUrl, token: config.pushToken, branch, force: !continuing });

  // Render the body as it will read once published.
  const status = report.session?.cancelCause ? "stopped" : "published";
  const bodyReport: RunReport = { ...report, status, now: deps.now() };
  const title = renderPullRequestTitle(bodyReport, thread?.title ?? null);
  const existing = continuing
    ? thread?.pull
    : await deps.github.findPullRequestByHead({ owner, repo, branch, state: "open" });
  if (existing) {
    if (continuing)
      return { number: existing.number, url: existing.htmlUrl, draft: existing.draft, created: false };
    const updated = await deps.github.updatePullRequest({
      owner,
      repo,
      number: existing.number,
      title,
      body: renderPullRequestBody({ ...bodyReport, pullRequest: null }),
    });
    return { number: updated.number, url: updated.htmlUrl, draft: updated.draft, created: false };
  }
  const created = await deps.github.createPullRequest({
    owner,
    repo,
    title,
    body: renderPullRequestBody(bodyReport),
    head: branch,
    base,
    draft,
  });
  return { number: created.number, url: created.htmlUrl, draft: created.draft, created: true };
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
