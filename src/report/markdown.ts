// Renderers for GitHub: the live tracking comment, the pull request body and the job summary.
// Pure functions of a RunReport; every piece of agent-provided text is escaped or fenced.
import type { DecisionRecord, ToolCallRecord } from "../acp/types.js";
import { describeRequest, reasonWithoutRule } from "./console.js";
import { allowedDecisions, deniedDecisions, type RunReport } from "./model.js";

export const COMMENT_MARKER = "<!-- acp-warden -->";
/** GitHub rejects comment and PR bodies above 65 536 characters; stay clear of it. */
const BODY_BUDGET = 60_000;
const MAX_TOOL_ROWS = 80;
const MAX_DIFF_CHARS = 20_000;

/** Escapes text for a Markdown table cell or inline use. */
export function inline(text: string, max = 120): string {
  const flat = text.replace(/\s+/g, " ").trim();
  const cut = flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
  return cut.replace(/[\\`*_[\]<>|#@]/g, (c) => `\\${c}`);
}

/** Inline code that survives backticks inside the text. */
export function code(text: string, max = 120): string {
  const flat = text.replace(/\s+/g, " ").trim();
  const cut = flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
  const longest = Math.max(0, ...[...cut.matchAll(/`+/g)].map((m) => m[0].length));
  const ticks = "`".repeat(longest + 1);
  const pad = cut.startsWith("`") || cut.endsWith("`") ? " " : "";
  return `${ticks}${pad}${cut.replace(/\|/g, "\\|")}${pad}${ticks}`;
}

export function fenced(text: string, lang = ""): string {
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const ticks = "`".repeat(Math.max(3, longest + 1));
  return `${ticks}${lang}\n${text}\n${ticks}`;
}

export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${s % 60}s`;
  return `${Math.floor(m / 60)}h ${m % 60}m`;
}

const STATUS_ICON: Record<string, string> = {
  completed: "✅",
  failed: "❌",
  in_progress: "⏳",
  pending: "⏸️",
};

function headline(report: RunReport): string {
  const agent = inline(report.agent, 60);
  const elapsed = formatDuration(report.now - report.startedAt);
  const pr = report.pullRequest;
  const prRef = pr ? `[#${pr.number}](${pr.url})` : "";
  switch (report.status) {
    case "published":
      return `✅ ${agent} ${pr?.created ? "opened" : "updated"} ${pr?.draft ? "draft " : ""}pull request ${prRef} · ${elapsed}`;
    case "no_changes":
      return `ℹ️ ${agent} finished without changing any file · ${elapsed}`;
    case "blocked":
      return `🛑 ${agent}'s changes break the policy (protected paths or edit rules), so nothing was published · ${elapsed}`;
    case "stopped":
      return `⏱️ ${agent} was stopped (${stopCause(report)})${pr ? ` — its work so far is in draft pull request ${prRef}` : ""} · ${elapsed}`;
    case "failed":
      return `❌ The run failed${report.error ? ` while ${inline(report.error.stage, 60)}` : ""}${
        pr ? ` — the work so far is in ${pr.draft ? "draft " : ""}pull request ${prRef}` : ""
      } · ${elapsed}`;
    default:
      return report.phase === "publishing"
        ? `⏳ ${agent} finished; publishing… · ${elapsed}`
        : `⏳ ${agent} is working… · ${elapsed}`;
  }
}

function stopCause(report: RunReport): string {
  switch (report.session?.cancelCause) {
    case "timeout":
      return "time limit reached";
    case "max_tool_calls":
      return "tool-call limit reached";
    case "aborted":
      return "cancelled";
    default:
      return report.session?.stopReason ?? "stopped";
  }
}

function planSection(report: RunReport): string[] {
  const plan = report.session?.plan ?? [];
  if (plan.length === 0) return [];
  const done = plan.filter((e) => e.status === "completed").length;
  const lines = [`**Plan** ${done}/${plan.length}`, ""];
  for (const entry of plan) {
    const box = entry.status === "completed" ? "[x]" : "[ ]";
    const marker = entry.status === "in_progress" ? " ⏳" : "";
    lines.push(`- ${box} ${inline(entry.content, 200)}${marker}`);
  }
  return lines;
}

function currentTool(report: RunReport): string[] {
  if (report.status !== null) return [];
  const calls = report.session?.toolCalls ?? [];
  const active = [...calls].reverse().find((c) => c.status === "in_progress" || c.status === "pending");
  if (!active) return [];
  return [`**Now:** ${inline(active.kind, 20)} ${code(active.title || active.id, 100)}`];
}

function toolRow(call: ToolCallRecord, index: number): string {
  const decision = call.decision
    ? call.decision.outcome === "allow"
      ? "allowed"
      : `**denied**${call.decision.ruleId ? ` (${code(call.decision.ruleId, 60)})` : ""}`
    : "not asked";
  return `| ${index + 1} | ${inline(call.kind, 20)} | ${code(call.title || call.id, 90)} | ${STATUS_ICON[call.status] ?? inline(call.status, 20)} | ${decision} |`;
}

function toolLog(report: RunReport, open = false): string[] {
  const calls = report.session?.toolCalls ?? [];
  if (calls.length === 0) return [];
  const shown = calls.slice(-MAX_TOOL_ROWS);
  const skipped = calls.length - shown.length;
  return [
    `<details${open ? " open" : ""}><summary>Tool calls (${calls.length})</summary>`,
    "",
    "| # | kind | tool | status | policy |",
    "|---|---|---|---|---|",
    ...(skipped > 0 ? [`| … | | ${skipped} earlier calls in the transcript | | |`] : []),
    ...shown.map((call, i) => toolRow(call, i + skipped)),
    "",
    "</details>",
  ];
}

function denialLine(d: DecisionRecord): string[] {
  const reason = reasonWithoutRule(d);
  const rule = d.ruleId ? ` by ${code(d.ruleId, 80)}` : "";
  const lines = [`- ❌ ${code(describeRequest(d.request), 140)} — denied${rule}: ${inline(reason, 300)}`];
  if (d.suggestion) {
    lines.push("", "  To allow it, change the policy:", "", indent(fenced(d.suggestion, "yaml"), "  "), "");
  } else if (d.advice) {
    lines.push("", indent(fenced(d.advice, "text"), "  "), "");
  }
  return lines;
}

function indent(text: string, prefix: string): string {
  return text
    .split("\n")
    .map((l) => prefix + l)
    .join("\n");
}

function decisionsSection(report: RunReport, maxDenials = 20): string[] {
  const denied = deniedDecisions(report);
  const allowed = allowedDecisions(report);
  if (denied.length === 0 && allowed.length === 0) return [];
  const lines = [`**Policy decisions:** ${denied.length} denied · ${allowed.length} allowed`, ""];
  // Denials first: they are what a maintainer has to act on.
  const seen = new Set<string>();
  let shown = 0;
  for (const d of denied) {
    const key = `${describeRequest(d.request)}|${d.ruleId ?? ""}`;
    if (seen.has(key)) continue;
    seen.add(key);
    if (shown++ >= maxDenials) {
      lines.push(`- … and ${denied.length - maxDenials} more denials in the transcript`);
      break;
    }
    lines.push(...denialLine(d));
  }
  if (allowed.length > 0) {
    lines.push("", `<details><summary>Allowed (${allowed.length})</summary>`, "");
    for (const d of allowed.slice(0, 60)) {
      lines.push(`- ${code(describeRequest(d.request), 140)}${d.ruleId ? ` — ${code(d.ruleId, 60)}` : ""}`);
    }
    if (allowed.length > 60) lines.push(`- … ${allowed.length - 60} more`);
    lines.push("", "</details>");
  }
  return lines;
}

function outcomeSection(report: RunReport): string[] {
  const lines: string[] = [];
  if (report.protectedViolations.length > 0) {
    lines.push("**Changes the policy does not allow** (publishing is blocked):", "");
    for (const v of report.protectedViolations.slice(0, 30)) {
      lines.push(`- ${code(v.path)} — ${code(v.rule, 60)}${v.reason ? `: ${inline(v.reason, 200)}` : ""}`);
    }
    lines.push("");
  }
  if (report.error) {
    lines.push(
      `**What failed:** ${inline(report.error.stage, 60)} — ${inline(report.error.message, 500)}`,
      "",
    );
  }
  if (report.kept.length > 0) {
    lines.push("**Kept:**", "", ...report.kept.map((k) => `- ${inline(k, 300)}`), "");
  }
  const warnings = [...report.notes, ...(report.session?.warnings ?? [])];
  if (warnings.length > 0) {
    lines.push(`<details><summary>Warnings (${warnings.length})</summary>`, "");
    for (const w of warnings.slice(0, 30)) lines.push(`- ${inline(w, 300)}`);
    lines.push("", "</details>", "");
  }
  return lines;
}

function footer(report: RunReport): string {
  const parts: string[] = [];
  if (report.runUrl) parts.push(`[workflow run](${report.runUrl})`);
  if (report.branch) parts.push(`branch ${code(report.branch, 100)}`);
  const agentInfo = report.session?.agentInfo;
  if (agentInfo) parts.push(`${inline(agentInfo.name, 60)} ${inline(agentInfo.version, 30)}`);
  const usage = report.session?.usage;
  if (usage?.cost) parts.push(`cost ${usage.cost.amount.toFixed(2)} ${inline(usage.cost.currency, 5)}`);
  return `<sub>acp-warden · ${parts.join(" · ")}</sub>`;
}

/** Shrinks a rendering by dropping optional sections until it fits GitHub's size limit. */
function fitToBudget(sections: string[][], budget = BODY_BUDGET): string {
  let text = sections
    .map((s) => s.join("\n"))
    .filter(Boolean)
    .join("\n\n");
  if (text.length <= budget) return text;
  text = `${text.slice(0, budget - 200)}\n\n… (shortened to fit GitHub's size limit; the full log is in the transcript)`;
  return text;
}

export function renderTrackingComment(report: RunReport): string {
  const lastMessage = report.status !== null ? finalMessage(report) : [];
  return fitToBudget([
    [COMMENT_MARKER, `### ${headline(report)}`],
    planSection(report),
    currentTool(report),
    outcomeSection(report),
    decisionsSection(report),
    toolLog(report),
    lastMessage,
    [footer(report)],
  ]);
}

function finalMessage(report: RunReport): string[] {
  const text = report.session?.agentText.trim() ?? "";
  if (!text) return [];
  const tail = text.length > 3000 ? `…${text.slice(-3000)}` : text;
  return ["<details><summary>The agent's last words</summary>", "", fenced(tail, "text"), "", "</details>"];
}

function diffSection(report: RunReport): string[] {
  const diff = report.diff;
  if (!diff || diff.files.length === 0) return [];
  const add = diff.files.reduce((n, f) => n + f.additions, 0);
  const del = diff.files.reduce((n, f) => n + f.deletions, 0);
  const lines = [`**Changes:** ${diff.files.length} files, +${add} −${del}`, ""];
  for (const f of diff.files.slice(0, 100)) {
    const from = f.previousPath ? `${code(f.previousPath)} → ` : "";
    lines.push(`- ${inline(f.status, 12)} ${from}${code(f.path)} (+${f.additions} −${f.deletions})`);
  }
  const patch =
    diff.patch.length > MAX_DIFF_CHARS
      ? `${diff.patch.slice(0, MAX_DIFF_CHARS)}\n… (diff shortened)`
      : diff.patch;
  lines.push("", "<details><summary>Diff</summary>", "", fenced(patch, "diff"), "", "</details>");
  return lines;
}

export function renderPullRequestTitle(report: RunReport, threadTitle: string | null): string {
  const prefix = report.status === "stopped" ? "[incomplete] " : "";
  if (report.thread && threadTitle)
    return `${prefix}${threadTitle.replace(/\s+/g, " ").trim().slice(0, 200)}`;
  const first = report.trigger.instructions.split("\n")[0]?.trim() ?? "";
  return `${prefix}${first.slice(0, 120) || "Changes by acp-warden"}`;
}

export function renderPullRequestBody(report: RunReport): string {
  const thread = report.thread;
  const summary: string[] = [COMMENT_MARKER];
  if (report.status === "stopped") {
    summary.push(
      `> [!WARNING]\n> Incomplete: the agent was stopped (${stopCause(report)}) before it finished. This draft holds its work so far.`,
    );
  }
  const by = `${inline(report.agent, 60)}, started by @${inline(report.trigger.actor, 40)} (${inline(report.trigger.kind, 40)})`;
  summary.push(
    `Changes made by ${by}${thread ? ` for ${thread.kind === "issue" ? "issue" : "pull request"} #${thread.number}` : ""}.`,
  );
  if (report.trigger.instructions)
    summary.push("", `Instructions: ${inline(report.trigger.instructions, 500)}`);
  const closing = thread?.kind === "issue" && report.status !== "stopped" ? [`Fixes #${thread.number}`] : [];
  const related = thread && closing.length === 0 ? [`Related to #${thread.number}`] : [];
  return fitToBudget([
    summary,
    planSection(report),
    diffSection(report),
    decisionsSection(report, 50),
    toolLog(report),
    outcomeSection(report),
    finalMessage(report),
    [...closing, ...related],
    [footer(report)],
  ]);
}

export function renderJobSummary(report: RunReport): string {
  return fitToBudget(
    [
      [`## acp-warden: ${headline(report)}`],
      planSection(report),
      outcomeSection(report),
      diffSection(report),
      decisionsSection(report, 100),
      toolLog(report, true),
      report.transcriptPath ? [`Transcript: ${code(report.transcriptPath, 300)}`] : [],
      [footer(report)],
    ],
    500_000,
  );
}
