// The policy engine: pure decisions over a typed policy. See docs/policy.md.
export type { ArgvToken } from "./command-pattern.js";
export { argvToPattern, commandMatches, parseCommandPattern } from "./command-pattern.js";
export type { DecideContext, EffectiveRules } from "./decide.js";
export {
  decide,
  domainMatches,
  effectiveLimits,
  effectiveRules,
  profileApplies,
  protectedEntryFor,
  requestProblem,
} from "./decide.js";
export { escapeGlob, globMatches, validateGlob } from "./glob.js";
export type { LoadOptions, PolicyError, PolicyLoad, TestOutcome } from "./load.js";
export {
  DEFAULT_POLICY_PATH,
  denyAllPolicy,
  formatPolicyError,
  loadPolicy,
  runPolicyTests,
  TEST_WORKSPACE,
} from "./load.js";
export type { FileFacts, FileStat } from "./path-inspector.js";
export { createPathInspector, nodeFileFacts } from "./path-inspector.js";
export type { PathInspection, PathInspector, ResolvedPath } from "./paths.js";
export { relativeInside, resolveWorkspacePath } from "./paths.js";
export type { Redirect, ShellAnalysis, ShellAnalyzer, SimpleCommand, UnsafeConstruct } from "./shell.js";
export { createShellAnalyzer, MAX_COMMAND_LENGTH } from "./shell.js";
export type { LoadedShellAnalyzer, ShellParserLoadOptions } from "./shell-parser.js";
export { loadShellAnalyzer, wasmCandidates } from "./shell-parser.js";
export type { PolicySuggestion } from "./suggest.js";
export { suggestPolicyChange } from "./suggest.js";
export { describePolicy } from "./summary.js";
export * from "./types.js";
export type { Invocation } from "./wrappers.js";
export { SAFE_ENV_PREFIXES } from "./wrappers.js";
