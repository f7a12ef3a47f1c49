// docs/agents.md is generated from the presets and the recorded interop results: it must be current.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  DOC_PATH,
  README_PATH,
  readResults,
  renderAgentsTable,
  renderReadmeTable,
  withReadmeTable,
} from "../../scripts/agents-table.js";
import { allPresets } from "../../src/agents/index.js";

describe("docs/agents.md", () => {
  it("matches what the presets and the interop results say (regenerate: node --import tsx scripts/agents-table.ts)", () => {
    const results = readResults();
    expect(results.map((r) => r.agent).sort()).toEqual(["claude", "codex", "copilot", "gemini", "opencode"]);
    for (const r of results) {
      expect(r.deniedCommandExecuted, r.agent).toBe(false);
      expect(r.secretReachedModel, r.agent).toBe(false);
    }
    expect(readFileSync(DOC_PATH, "utf8")).toBe(renderAgentsTable(allPresets(), results));
    const readme = readFileSync(README_PATH, "utf8");
    expect(readme).toBe(withReadmeTable(readme, renderReadmeTable(allPresets(), results)));
  });
});
