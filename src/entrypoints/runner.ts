// The GitHub Actions runner's conventions, read from an explicit environment: inputs
// (`INPUT_<NAME>`), outputs and the job summary (files named by GITHUB_OUTPUT and
// GITHUB_STEP_SUMMARY), and log commands.
import { randomBytes } from "node:crypto";
import { appendFileSync } from "node:fs";

export type Env = Readonly<Record<string, string | undefined>>;

/** An input as the runner passes it: `INPUT_` + the name upper-cased, spaces as underscores. */
export function getInput(env: Env, name: string): string {
  return (env[`INPUT_${name.replace(/ /g, "_").toUpperCase()}`] ?? "").trim();
}

export function getBooleanInput(env: Env, name: string, fallback: boolean): boolean {
  const value = getInput(env, name).toLowerCase();
  if (value === "") return fallback;
  if (["true", "yes", "on", "1"].includes(value)) return true;
  if (["false", "no", "off", "0"].includes(value)) return false;
  throw new Error(`input ${name} must be true or false, not ${JSON.stringify(value)}`);
}

export function getNumberInput(env: Env, name: string): number | null {
  const value = getInput(env, name);
  if (value === "") return null;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0)
    throw new Error(`input ${name} must be a positive number, not ${JSON.stringify(value)}`);
  return n;
}

/** Appends `name=value` to the GITHUB_OUTPUT file, using a delimiter that cannot occur in the value. */
export function setOutputs(env: Env, outputs: Readonly<Record<string, string>>): void {
  const file = env.GITHUB_OUTPUT;
  if (!file) return;
  let text = "";
  for (const [name, value] of Object.entries(outputs)) {
    const delimiter = `ghadelimiter_${randomBytes(12).toString("hex")}`;
    text += `${name}<<${delimiter}\n${value}\n${delimiter}\n`;
  }
  appendFileSync(file, text);
}

export function appendSummary(env: Env, markdown: string): void {
  const file = env.GITHUB_STEP_SUMMARY;
  if (file) appendFileSync(file, `${markdown}\n`);
}

/** Escapes data for a workflow command (`::notice::…`). */
function escapeData(text: string): string {
  return text.replace(/%/g, "%25").replace(/\r/g, "%0D").replace(/\n/g, "%0A");
}

export function notice(write: (line: string) => void, message: string): void {
  write(`::notice::${escapeData(message)}\n`);
}

export function errorCommand(write: (line: string) => void, message: string): void {
  write(`::error::${escapeData(message)}\n`);
}

/** Tells the runner to hide a value in logs. */
export function maskValue(write: (line: string) => void, value: string): void {
  if (value) write(`::add-mask::${escapeData(value)}\n`);
}
