// Shared fixtures for the agent preset unit tests.

import type { SetupContext } from "../../src/agents/index.js";
import {
  type EffectiveRules,
  effectiveRules,
  loadPolicy,
  loadShellAnalyzer,
  type Policy,
} from "../../src/policy/index.js";

export const WS = "/work/ws";

export const POLICY = `version: 1
default: deny
allow:
  - read: "**"
  - search: "**"
  - edit: ["src/**", "*.md"]
  - execute: ["npm test", "npm run lint *", "git {status,diff} *"]
  - fetch: { domains: [registry.npmjs.org] }
deny:
  - edit: [".github/**"]
    reason: workflow files are changed by humans only
  - read: [".env*", "**/*.pem"]
  - execute: ["curl *", "rm -rf *"]
protected: [".github/workflows/**", "package-lock.json"]
env: { pass: [NPM_CONFIG_REGISTRY, GITHUB_TOKEN] }
`;

export async function policyOf(text = POLICY): Promise<Policy> {
  const loaded = loadPolicy(text, { file: ".github/agent-policy.yml", shell: await loadShellAnalyzer() });
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.errors));
  return loaded.policy;
}

export async function contextOf(text = POLICY, extra: Partial<SetupContext> = {}): Promise<SetupContext> {
  const policy = await policyOf(text);
  const rules: EffectiveRules = effectiveRules(policy, {});
  return { policy, facts: {}, workspace: WS, homeDir: "/home/agent", env: {}, rules, uid: 1000, ...extra };
}
