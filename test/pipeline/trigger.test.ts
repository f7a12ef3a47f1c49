import { describe, expect, it } from "vitest";
import { parseCommand, parseTrigger } from "../../src/pipeline/trigger.js";
import { COMMENT_MARKER } from "../../src/report/markdown.js";

const settings = { trigger: "/agent", label: "agent" };
const user = { login: "maint", type: "User" };

function commentEvent(body: string, extra: { pr?: boolean; user?: { login: string; type: string } } = {}) {
  return {
    action: "created",
    issue: { number: 7, title: "Bug", ...(extra.pr ? { pull_request: { url: "x" } } : {}) },
    comment: { id: 99, body, user: extra.user ?? user },
    sender: extra.user ?? user,
  };
}

describe("parseCommand", () => {
  it.each([
    ["/agent fix", { verb: "fix", instructions: "" }],
    ["/agent", { verb: "fix", instructions: "" }],
    [
      "/agent fix --agent gemini use the new parser",
      { verb: "fix", agent: "gemini", instructions: "use the new parser" },
    ],
    ["/agent --agent=codex please look", { verb: "fix", agent: "codex", instructions: "please look" }],
    ["/agent review\nsecond line", { verb: "review", instructions: "second line" }],
    ["  /agent fix the bug", { verb: "fix", instructions: "the bug" }],
  ])("reads %j", (body, expected) => {
    expect(parseCommand(body, "/agent")).toEqual(expected);
  });

  it.each(["/agentfix", "please /agent fix", "/age", ""])("ignores %j", (body) => {
    expect(parseCommand(body, "/agent")).toBeNull();
  });
});

describe("parseTrigger", () => {
  it("starts a run from an issue comment with the trigger", () => {
    const result = parseTrigger("issue_comment", commentEvent("/agent fix --agent gemini quickly"), settings);
    expect(result).toEqual({
      run: {
        kind: "issue_comment",
        issueNumber: 7,
        isPullRequest: false,
        commentId: 99,
        actor: "maint",
        verb: "fix",
        agentOverride: "gemini",
        instructions: "quickly",
      },
    });
  });

  it("knows a comment on a pull request", () => {
    const result = parseTrigger("issue_comment", commentEvent("/agent fix", { pr: true }), settings);
    expect("run" in result && result.run.kind === "issue_comment" && result.run.isPullRequest).toBe(true);
  });

  it.each([
    ["a comment without the trigger", "issue_comment", commentEvent("thanks!"), "does not start with /agent"],
    [
      "its own tracking comment",
      "issue_comment",
      commentEvent(`${COMMENT_MARKER}\n/agent fix`),
      "written by acp-warden",
    ],
    [
      "a bot's comment",
      "issue_comment",
      commentEvent("/agent fix", { user: { login: "acp-warden[bot]", type: "Bot" } }),
      "bots never start a run",
    ],
    [
      "an edited comment",
      "issue_comment",
      { ...commentEvent("/agent fix"), action: "edited" },
      "ignoring issue_comment.edited",
    ],
    ["a push", "push", {}, "does not run on push"],
    ["a schedule without a prompt", "schedule", {}, "needs the `prompt` input"],
  ])("skips %s", (_label, event, payload, reason) => {
    const result = parseTrigger(event, payload, settings);
    expect(result).toHaveProperty("skip");
    expect((result as { skip: string }).skip).toContain(reason);
  });

  it("starts on a labeled issue", () => {
    const payload = {
      action: "labeled",
      label: { name: "agent" },
      issue: { number: 3, labels: [{ name: "agent" }] },
      sender: user,
    };
    expect(parseTrigger("issues", payload, settings)).toMatchObject({
      run: { kind: "issues", issueNumber: 3 },
    });
    const other = { ...payload, label: { name: "bug" } };
    expect(parseTrigger("issues", other, settings)).toHaveProperty("skip");
  });

  it("starts a review-comment run with its file and line", () => {
    const payload = {
      action: "created",
      pull_request: { number: 12 },
      comment: { id: 5, body: "/agent fix rename this", path: "src/a.ts", line: 4, user },
      sender: user,
    };
    expect(parseTrigger("pull_request_review_comment", payload, settings)).toMatchObject({
      run: {
        kind: "pull_request_review_comment",
        pullNumber: 12,
        commentId: 5,
        path: "src/a.ts",
        line: 4,
        instructions: "rename this",
      },
    });
  });

  it("takes the prompt for schedule and workflow_dispatch", () => {
    expect(parseTrigger("schedule", {}, { ...settings, prompt: "tidy up" })).toMatchObject({
      run: { kind: "schedule", instructions: "tidy up" },
    });
    expect(
      parseTrigger(
        "workflow_dispatch",
        { inputs: { prompt: "do x", agent: "gemini" }, sender: user },
        settings,
      ),
    ).toMatchObject({
      run: { kind: "workflow_dispatch", instructions: "do x", agentOverride: "gemini", actor: "maint" },
    });
  });
});
