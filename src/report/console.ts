// Live progress for a terminal: prints the plan when it changes, each tool call as it starts and
// when it settles, each policy decision, and a closing summary. Writes through an injected sink.
import type { SessionResult, SessionState, StateChange } from "../acp/types.js";

const STATUS_MARK: Record<string, string> = { completed: "✓", failed: "✗", in_progress: "…", pending: "·" };

export class ConsoleProgress {
  private lastPlan = "";
  private readonly toolStatus = new Map<string, string>();
  private decisionsPrinted = 0;
  private warningsPrinted = 0;

  constructor(private readonly write: (text: string) => void) {}

  update(state: SessionState, change: StateChange): void {
    if (change === "plan") this.printPlan(state);
    else if (change === "tool_call") this.printToolCalls(state);
    else if (change === "decision") this.printDecisions(state);
    else if (change === "warning") this.printWarnings(state);
  }

  finish(result: SessionResult): void {
    const { state } = result;
    this.printToolCalls(state);
    this.printDecisions(state);
    this.printWarnings(state);
    const text = state.agentText.trim();
    if (text) this.write(`\n${text}\n`);
    const denied = state.decisions.filter((d) => d.outcome === "deny").length;
    const seconds = (((state.endedAt ?? Date.now()) - state.startedAt) / 1000).toFixed(1);
    const stop = state.stopReason ?? "none";
    const cause = state.cancelCause ? ` (${state.cancelCause})` : "";
    this.write(
      `\nstop reason: ${stop}${cause} · ${state.toolCalls.length} tool calls · ${state.decisions.length - denied} allowed, ${denied} denied · ${seconds}s\n`,
    );
    if (result.transcriptPath) this.write(`transcript: ${result.transcriptPath}\n`);
  }

  private printPlan(state: SessionState): void {
    const done = state.plan.filter((e) => e.status === "completed").length;
    const lines = state.plan.map(
      (e) =>
        `  ${e.status === "completed" ? "[x]" : e.status === "in_progress" ? "[~]" : "[ ]"} ${e.content}`,
    );
    const text = `plan ${done}/${state.plan.length}\n${lines.join("\n")}\n`;
    if (text === this.lastPlan) return;
    this.lastPlan = text;
    this.write(text);
  }

  private printToolCalls(state: SessionState): void {
    for (const call of state.toolCalls) {
      const before = this.toolStatus.get(call.id);
      if (before === call.status) continue;
      this.toolStatus.set(call.id, call.status);
      const settled = call.status === "completed" || call.status === "failed";
      if (before !== undefined && !settled) continue;
      this.write(
        `${STATUS_MARK[call.status] ?? "?"} [${call.kind}] ${call.title || call.id}${settled ? ` — ${call.status}` : ""}\n`,
      );
    }
  }

  private printDecisions(state: SessionState): void {
    for (const d of state.decisions.slice(this.decisionsPrinted)) {
      const what = describeRequest(d.request);
      const rule = d.ruleId ? ` [${d.ruleId}]` : "";
      this.write(
        `  ${d.outcome === "allow" ? "allowed" : "DENIED"} ${what}${rule}: ${reasonWithoutRule(d)}\n`,
      );
    }
    this.decisionsPrinted = state.decisions.length;
  }

  private printWarnings(state: SessionState): void {
    for (const w of state.warnings.slice(this.warningsPrinted)) this.write(`  warning: ${w}\n`);
    this.warningsPrinted = state.warnings.length;
  }
}

/** Policy reasons usually start with the rule's id, which is shown next to them already. */
export function reasonWithoutRule(d: { reason: string; ruleId?: string }): string {
  return d.ruleId && d.reason.startsWith(`${d.ruleId}:`)
    ? d.reason.slice(d.ruleId.length + 1).trim()
    : d.reason;
}

export function describeRequest(request: SessionState["decisions"][number]["request"]): string {
  switch (request.type) {
    case "permission":
      return `${request.kind ?? "tool"} ${request.title ?? request.toolCallId}`;
    case "fs_read":
      return `read ${request.path}`;
    case "fs_write":
      return `write ${request.path}`;
    case "terminal":
      return `run ${request.commandLine}`;
  }
}
