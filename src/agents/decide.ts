// The `decide` function handed to the ACP client: every action request becomes the policy facts
// the agent's preset extracts, and the policy answers. `ask` is a denial: nobody can answer.
import type { ActionRequest, DecideFn, Decision } from "../acp/index.js";
import {
  type DecideContext,
  type DecisionResult,
  decide,
  type PermissionRequest,
  type Policy,
  suggestPolicyChange,
  type TriggerFacts,
} from "../policy/index.js";
import { extractFacts } from "./extract.js";
import type { ResolvedAgent } from "./types.js";

/** The policy facts of one ACP action request, as this agent sends them. */
export function requestFacts(
  agent: ResolvedAgent,
  request: ActionRequest,
  workspace: string,
): PermissionRequest {
  switch (request.type) {
    case "permission":
      return agent.type === "preset"
        ? agent.extract({ toolCall: request.toolCall, workspace })
        : extractFacts(request.toolCall, { workspace });
    case "fs_read":
      return { kind: "read", paths: [request.relativePath || "."] };
    case "fs_write":
      return { kind: "edit", paths: [request.relativePath] };
    case "terminal":
      return { kind: "execute", command: request.commandLine, cwd: request.cwd };
  }
}

export function toDecision(policy: Policy, facts: TriggerFacts, result: DecisionResult): Decision {
  if (result.decision === "allow") return { outcome: "allow", reason: result.reason, ruleId: result.ruleId };
  const suggestion = suggestPolicyChange(policy, facts, result);
  const reason =
    result.decision === "ask"
      ? `${result.reason} (the policy says ask, and nobody can answer in a headless run, so it is denied)`
      : result.reason;
  return {
    outcome: "deny",
    reason,
    ruleId: result.ruleId,
    ...(suggestion?.possible ? { suggestion: suggestion.text } : {}),
    ...(suggestion && !suggestion.possible ? { advice: suggestion.text } : {}),
  };
}

export interface PolicyDecideOptions extends DecideContext {
  /** Sees each request with its facts and the decision (for tests and the report). */
  onDecision?: (record: { request: ActionRequest; facts: PermissionRequest; decision: Decision }) => void;
}

export function createPolicyDecide(
  policy: Policy,
  facts: TriggerFacts,
  agent: ResolvedAgent,
  options: PolicyDecideOptions,
): DecideFn {
  const { onDecision, ...context } = options;
  return (request) => {
    const extracted = requestFacts(agent, request, context.workspace);
    const decision = toDecision(policy, facts, decide(policy, facts, extracted, context));
    onDecision?.({ request, facts: extracted, decision });
    return decision;
  };
}
