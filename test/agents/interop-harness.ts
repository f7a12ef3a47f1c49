// The interop scenario: one real agent, driven by the scripted model server, through our client
// (runAgentSession + preset + policy), in a fresh git workspace. Shared by the interop suite and
// bench/agents.ts.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  type ActionRequest,
  type Decision,
  runAgentSession,
  type SessionResult,
} from "../../src/acp/index.js";
import {
  createPolicyDecide,
  type PreparedAgent,
  type PresetId,
  prepareAgent,
  presetFor,
} from "../../src/agents/index.js";
import {
  loadPolicy,
  loadShellAnalyzer,
  type PermissionRequest,
  type Policy,
} from "../../src/policy/index.js";
import { type ModelServer, type ScenarioStep, startModelServer } from "../support/model-server/index.js";

export const INTEROP_BIN = fileURLToPath(new URL("../../interop/node_modules/.bin", import.meta.url));

export function interopInstalled(id: PresetId): boolean {
  return existsSync(join(INTEROP_BIN, presetFor(id).package.bin));
}

export const SECRET = "TOKEN-7f3a9c-must-never-reach-the-model";
export const ALLOWED_OUTPUT = "inter-op";

export const POLICY_YAML = `version: 1
default: deny
allow:
  - read: "**"
  - search: "**"
  - edit: ["README.md", "src/**"]
  - execute: ["printf *", "cat README.md", "git status", "git diff *"]
deny:
  - id: no-secrets
    read: ["secrets/**"]
    reason: secrets stay out of the model's context
  - id: no-network
    execute: ["curl *", "wget *"]
    reason: no network from the agent
  - edit: [".github/**"]
protected: [".github/workflows/**"]
`;

export function scenario(leakUrl: string): ScenarioStep[] {
  return [
    { tool: "read", path: "README.md" },
    { tool: "edit", path: "README.md", old: "Hello world.", new: "Hello interop." },
    { tool: "shell", command: "printf '%s-%s\\n' inter op" },
    { tool: "shell", command: `curl -s ${leakUrl}` },
    { tool: "read", path: "secrets/token.txt" },
    { text: "All steps finished." },
  ];
}

/** What each agent needs from the parent environment to talk to the model server. */
export function parentEnv(id: PresetId, server: ModelServer): Record<string, string> {
  const base: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
    // Never passed to an agent: the suite checks the launch environment.
    GITHUB_TOKEN: "ghs_not_for_agents",
    ACTIONS_ID_TOKEN_REQUEST_TOKEN: "not_for_agents",
  };
  switch (id) {
    case "claude":
      return { ...base, ANTHROPIC_BASE_URL: server.baseUrls.anthropic, ANTHROPIC_API_KEY: "x" };
    case "gemini":
      return { ...base, GOOGLE_GEMINI_BASE_URL: server.baseUrls.gemini, GEMINI_API_KEY: "x" };
    case "copilot":
      return {
        ...base,
        COPILOT_OFFLINE: "true",
        COPILOT_PROVIDER_BASE_URL: server.baseUrls.openai,
        COPILOT_PROVIDER_API_KEY: "x",
      };
    case "codex":
    case "opencode":
      return { ...base, OPENAI_BASE_URL: server.baseUrls.openai, OPENAI_API_KEY: "x" };
  }
}

let policyPromise: Promise<Policy> | undefined;
export function scenarioPolicy(): Promise<Policy> {
  policyPromise ??= loadShellAnalyzer().then((shell) => {
    const loaded = loadPolicy(POLICY_YAML, { file: ".github/agent-policy.yml", shell });
    if (!loaded.ok) throw new Error(JSON.stringify(loaded.errors));
    return loaded.policy;
  });
  return policyPromise;
}

export async function makeWorkspace(root: string): Promise<string> {
  const workspace = join(root, "repo");
  await mkdir(join(workspace, "secrets"), { recursive: true });
  await writeFile(join(workspace, "README.md"), "# Demo\n\nHello world.\n");
  await writeFile(join(workspace, "secrets", "token.txt"), `${SECRET}\n`);
  const git = (...args: string[]) => execFileSync("git", args, { cwd: workspace, stdio: "ignore" });
  git("init", "-q", "-b", "main");
  git("-c", "user.name=t", "-c", "user.email=t@example.invalid", "add", ".");
  git("-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "init");
  return realpath(workspace);
}

export interface DecisionSeen {
  type: ActionRequest["type"];
  kind: string | null;
  facts: PermissionRequest;
  outcome: Decision["outcome"];
  ruleId: string | undefined;
}

export interface InteropRun {
  agent: PresetId;
  result: SessionResult;
  prepared: PreparedAgent;
  decisions: DecisionSeen[];
  readme: string;
  leakRequests: number;
  secretReachedModel: boolean;
  allowedCommandRan: boolean;
  modelRequests: number;
  wallMs: number;
  workspace: string;
  root: string;
}

export async function runInterop(
  id: PresetId,
  options: { keep?: boolean; log?: boolean; timeoutMs?: number } = {},
): Promise<InteropRun> {
  const root = await realpath(await mkdtemp(join(tmpdir(), `warden-${id}-`)));
  const workspace = await makeWorkspace(root);
  const homeDir = join(root, "home");
  await mkdir(homeDir, { recursive: true });
  const server = await startModelServer({
    workspace,
    finalText: "All steps finished.",
    ...(options.log ? { log: (line: string) => console.error(line) } : {}),
  });
  const leakUrl = `${server.url}/leak`;
  server.setScenario(scenario(leakUrl));
  try {
    const policy = await scenarioPolicy();
    const shell = await loadShellAnalyzer();
    const preset = presetFor(id, { binDir: INTEROP_BIN });
    const facts = { event: "cli" };
    const prepared = await prepareAgent(preset, {
      policy,
      facts,
      workspace,
      homeDir,
      env: parentEnv(id, server),
    });
    const decisions: DecisionSeen[] = [];
    const decide = createPolicyDecide(policy, facts, preset, {
      workspace,
      shell,
      onDecision: ({ request, facts: extracted, decision }) => {
        decisions.push({
          type: request.type,
          kind: request.type === "permission" ? (request.toolCall.kind ?? null) : null,
          facts: extracted,
          outcome: decision.outcome,
          ruleId: decision.ruleId,
        });
        if (options.log)
          console.error(
            `[decide] ${request.type} ${JSON.stringify(extracted)} -> ${decision.outcome} ${decision.ruleId}`,
          );
      },
    });
    const started = performance.now();
    const result = await runAgentSession({
      launch: prepared.launch,
      workspace,
      prompt: { text: "Follow the scripted steps." },
      decide,
      quirks: prepared.quirks,
      ...(prepared.mode !== undefined ? { mode: prepared.mode } : {}),
      ...(prepared.config !== undefined ? { config: prepared.config } : {}),
      ...(prepared.authMethodId !== undefined ? { authMethodId: prepared.authMethodId } : {}),
      ...(prepared.sessionMeta !== undefined ? { sessionMeta: prepared.sessionMeta } : {}),
      transcriptPath: join(root, "transcript.jsonl"),
      limits: { startupTimeoutMs: 90_000, timeoutMs: options.timeoutMs ?? 100_000, cancelGraceMs: 5_000 },
    });
    const wallMs = performance.now() - started;
    return {
      agent: id,
      result,
      prepared,
      decisions,
      readme: await readFile(join(workspace, "README.md"), "utf8"),
      leakRequests: server.requests.filter((r) => r.pathname === "/leak").length,
      secretReachedModel: server.sawText(SECRET),
      allowedCommandRan: server.sawText(ALLOWED_OUTPUT),
      modelRequests: server.modelRequests().length,
      wallMs,
      workspace,
      root,
    };
  } finally {
    await server.close();
    if (!options.keep) await rm(root, { recursive: true, force: true }).catch(() => undefined);
  }
}
