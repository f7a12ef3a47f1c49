// Agent presets: join the ACP client and the policy engine per agent.
export type { PolicyDecideOptions } from "./decide.js";
export { createPolicyDecide, requestFacts, toDecision } from "./decide.js";
export type { DiffFinding } from "./enforcement.js";
export { auditDiff, enforcementReport } from "./enforcement.js";
export type { AgentEnv, AgentEnvInput } from "./env.js";
export { buildAgentEnv, isForbiddenEnvName } from "./env.js";
export type { ExtractOptions } from "./extract.js";
export { commandText, extractFacts, pathsInPatch } from "./extract.js";
export { launchCommand, prepareAgent, presetSetup } from "./prepare.js";
export type { ResolveOptions } from "./resolve.js";
export { allPresets, isPresetId, presetFor, resolveAgent, splitCommandLine } from "./resolve.js";
export * from "./types.js";
