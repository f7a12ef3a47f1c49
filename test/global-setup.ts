// Runs once before the test files: bundles the scripted test agent so subprocess tests start fast.
import { buildScriptedAgent } from "./support/scripted-agent.js";

export default async function setup(): Promise<void> {
  await buildScriptedAgent();
}
