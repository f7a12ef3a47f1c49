// The Action end to end with REAL agents (Claude's ACP adapter, Gemini CLI) installed by
// interop/install.sh, driven offline by the scripted model server: `/agent fix` → pull request.
import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PresetId } from "../../src/agents/index.js";
import { INTEROP_BIN, interopInstalled } from "../agents/interop-harness.js";
import {
  commentPayload,
  createRepository,
  runAction,
  type Servers,
  startServers,
  TOKEN,
  trackingComment,
} from "../support/action-harness.js";
import { type ModelServer, startModelServer } from "../support/model-server/index.js";

let servers: Servers;
const models: ModelServer[] = [];

beforeAll(async () => {
  servers = await startServers();
});
afterAll(async () => {
  for (const model of models) await model.close();
  await servers?.close();
});

function modelEnv(id: PresetId, model: ModelServer): Record<string, string> {
  return id === "claude"
    ? { ANTHROPIC_BASE_URL: model.baseUrls.anthropic, ANTHROPIC_API_KEY: "test-key" }
    : { GOOGLE_GEMINI_BASE_URL: model.baseUrls.gemini, GEMINI_API_KEY: "test-key" };
}

describe.each(["claude", "gemini"] as const)("the Action with the real %s agent", (id) => {
  const installed = interopInstalled(id);
  it.skipIf(!installed)(
    `reads, edits, runs the allowed command, is denied curl, and opens a pull request${
      installed ? "" : ` (skipped: ${id} is not installed — run interop/install.sh)`
    }`,
    { timeout: 180_000 },
    async () => {
      const full = await createRepository(servers, `real-${id}`);
      const issue = servers.github.addIssue(full, {
        title: "Greeting is misspelled",
        body: "greet() says helo",
      });
      const comment = servers.github.addComment(full, issue.number, { body: "/agent fix", author: "maint" });
      let model: ModelServer | undefined;
      const result = await runAction({
        servers,
        full,
        event: "issue_comment",
        payload: commentPayload(
          { number: issue.number, title: issue.title },
          { id: comment.id, body: comment.body },
        ),
        inputs: { agent: id, "agent-bin-dir": INTEROP_BIN },
        prepare: async (workspace) => {
          model = await startModelServer({
            workspace,
            scenario: [
              { tool: "read", path: "src/app.js" },
              { tool: "edit", path: "src/app.js", old: '"helo"', new: '"hello"' },
              { tool: "shell", command: "echo tests pass" },
              { tool: "shell", command: "curl -s https://example.invalid/x.sh" },
              { text: "Fixed the greeting." },
            ],
          });
          models.push(model);
          return modelEnv(id, model);
        },
      });
      expect(result.exitCode, `${result.stdout}\n${result.stderr}`).toBe(0);
      expect(result.outputs.status).toBe("published");
      const pr = servers.github.pullRequestsOf(full)[0]!;
      expect(await servers.remote.readFile(full, pr.head.ref, "src/app.js")).toBe(
        'export const greet = () => "hello";\n',
      );
      expect(pr.body).toContain(`Fixes #${issue.number}`);
      if (id === "claude") {
        // Claude asks before Bash: the policy answers, and the denial is in the report.
        expect(pr.body).toContain("deny[0].execute");
        expect(Number(result.outputs.denied)).toBeGreaterThanOrEqual(1);
      } else {
        // Gemini refuses it itself: the preset compiled the policy's denial into Gemini's own rules.
        expect(pr.body).toMatch(/\| 4 \| execute \| `[^`]+` \| ❌ \| not asked \|/);
      }
      // Neither the token nor the OIDC request token ever reached the model.
      expect(model!.sawText(TOKEN)).toBe(false);
      expect(model!.sawText("oidc-secret-for-tests")).toBe(false);
      const tracking = trackingComment(servers.github, full, issue.number);
      expect(tracking?.body).toContain("opened pull request");
      if (id === "claude") {
        // The preset's session settings reach session/new: the checkout's own .claude settings stay off.
        const transcript = await readFile(result.outputs.transcript!, "utf8");
        expect(transcript).toContain('"settingSources":["user"]');
      }
    },
  );
});
