// Builds the pipeline's AgentRuntime from the agent presets: a throwaway HOME per run, the
// preset's settings written into it, and the policy's `decide` for every request.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createPolicyDecide, prepareAgent, resolveAgent } from "../agents/index.js";
import type { AgentRuntime } from "../pipeline/types.js";
import { createPathInspector } from "../policy/index.js";

export interface AgentRuntimeOptions {
  /** Directory of already installed agent binaries; otherwise presets run through `npx`. */
  binDir?: string;
  /** Where throwaway HOME directories are made (e.g. RUNNER_TEMP). */
  tempDir?: string;
}

export function createAgentRuntime(
  env: Readonly<Record<string, string | undefined>>,
  options: AgentRuntimeOptions = {},
): AgentRuntime {
  return {
    async prepare({ agent, policy, facts, workspace, model, shell }) {
      const resolved = resolveAgent(agent, options.binDir ? { binDir: options.binDir } : {});
      const homeDir = await mkdtemp(join(options.tempDir ?? tmpdir(), "acp-warden-home-"));
      try {
        const prepared = await prepareAgent(resolved, {
          policy,
          facts,
          workspace,
          homeDir,
          env,
          ...(model ? { model } : {}),
        });
        const decide = createPolicyDecide(policy, facts, resolved, {
          workspace,
          shell,
          paths: createPathInspector(),
        });
        return {
          name: resolved.type === "preset" ? resolved.id : (resolved.command.split("/").pop() ?? "agent"),
          kind: resolved.type,
          session: {
            launch: prepared.launch,
            decide,
            quirks: prepared.quirks,
            ...(prepared.mode ? { mode: prepared.mode } : {}),
            ...(prepared.config ? { config: prepared.config } : {}),
            ...(prepared.authMethodId ? { authMethodId: prepared.authMethodId } : {}),
            // e.g. Claude's settingSources: the checkout's own agent settings must not load.
            ...(prepared.sessionMeta ? { sessionMeta: prepared.sessionMeta } : {}),
          },
          notes: [...new Set([...prepared.warnings, ...prepared.enforcement.gaps])],
          dispose: () => rm(homeDir, { recursive: true, force: true }),
        };
      } catch (error) {
        await rm(homeDir, { recursive: true, force: true });
        throw error;
      }
    },
  };
}
