// Shared setup for the policy tests: the real tree-sitter analyzer and the fixture policy.
import { readFileSync } from "node:fs";
import {
  type DecisionResult,
  decide,
  formatPolicyError,
  loadPolicy,
  loadShellAnalyzer,
  type PathInspector,
  type PermissionRequest,
  type Policy,
  type ShellAnalyzer,
  type TriggerFacts,
} from "../../src/policy/index.js";

export const WORKSPACE = "/w/repo";
export const fixture = (name: string): string => new URL(`./fixtures/${name}`, import.meta.url).pathname;

export async function shell(): Promise<ShellAnalyzer> {
  return loadShellAnalyzer();
}

export async function policyFrom(text: string, file = "agent-policy.yml"): Promise<Policy> {
  const loaded = loadPolicy(text, { file, shell: await shell() });
  if (!loaded.ok) throw new Error(loaded.errors.map(formatPolicyError).join("\n"));
  return loaded.policy;
}

export async function basePolicy(): Promise<Policy> {
  return policyFrom(readFileSync(fixture("base-policy.yml"), "utf8"), "base-policy.yml");
}

export async function decider(policy: Policy, options: { workspace?: string; paths?: PathInspector } = {}) {
  const analyzer = await shell();
  return (request: PermissionRequest, facts: TriggerFacts = {}): DecisionResult =>
    decide(policy, facts, request, {
      workspace: options.workspace ?? WORKSPACE,
      shell: analyzer,
      ...(options.paths ? { paths: options.paths } : {}),
    });
}
