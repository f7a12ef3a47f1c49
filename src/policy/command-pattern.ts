// Command patterns: `npm test`, `npm run lint *`, `git {status,diff,log} *`, `"my tool" --flag`.
// A pattern names one simple command; it is compared token by token with the argv the shell
// analyser proved, never with the raw command text.
import type { CommandPattern, PatternToken } from "./types.js";

/** One argv token; `dynamic` when the shell would expand it (an unquoted glob) to unknown words. */
export interface ArgvToken {
  text: string;
  dynamic: boolean;
}

export type PatternParse = { ok: true; pattern: CommandPattern } | { ok: false; message: string };

const SHELL_OPERATORS = /[;&|<>`$()\n]/;

export function parseCommandPattern(source: string): PatternParse {
  const words: { text: string; quoted: boolean }[] = [];
  let current = "";
  let quoted = false;
  let inWord = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (c === "'" || c === '"') {
      const end = source.indexOf(c, i + 1);
      if (end < 0) return { ok: false, message: `unbalanced ${c} quote` };
      current += source.slice(i + 1, end);
      quoted = true;
      inWord = true;
      i = end;
    } else if (c === " " || c === "\t") {
      if (inWord) words.push({ text: current, quoted });
      current = "";
      quoted = false;
      inWord = false;
    } else if (SHELL_OPERATORS.test(c)) {
      return {
        ok: false,
        message: `'${c}' is shell syntax: a pattern names one simple command (quote it if it is a literal argument)`,
      };
    } else {
      current += c;
      inWord = true;
    }
  }
  if (inWord) words.push({ text: current, quoted });
  if (words.length === 0) return { ok: false, message: "a command pattern cannot be empty" };

  const tokens: PatternToken[] = [];
  let rest = false;
  for (const [index, word] of words.entries()) {
    if (!word.quoted && word.text === "*") {
      if (index !== words.length - 1)
        return { ok: false, message: "'*' stands for the remaining arguments and must be the last token" };
      rest = true;
      continue;
    }
    if (!word.quoted && /^\{.*\}$/.test(word.text) && word.text.includes(",")) {
      const values = word.text.slice(1, -1).split(",");
      if (values.some((v) => v.length === 0))
        return { ok: false, message: `empty alternative in ${word.text}` };
      tokens.push({ type: "alternatives", values });
      continue;
    }
    if (!word.quoted && /[*?[\]{}]/.test(word.text))
      return {
        ok: false,
        message: `'${word.text}': only a final '*' and whole-token {a,b} alternatives are patterns (quote a literal)`,
      };
    tokens.push({ type: "literal", value: word.text });
  }
  return { ok: true, pattern: { source, tokens, rest } };
}

function tokenAccepts(token: PatternToken, arg: ArgvToken, conservative: boolean): boolean {
  // An expanding token could become any word: an allow rule cannot vouch for it, a deny rule must assume it.
  if (arg.dynamic) return conservative;
  return token.type === "literal" ? token.value === arg.text : token.values.includes(arg.text);
}

/**
 * Does the pattern match this argv? `conservative` is for deny and ask rules: unknown words are
 * assumed to match. `unknownTail` marks argv that an `xargs` will extend with unknown arguments.
 */
export function commandMatches(
  pattern: CommandPattern,
  argv: readonly ArgvToken[],
  conservative: boolean,
  unknownTail = false,
): boolean {
  const { tokens, rest } = pattern;
  if (argv.length < tokens.length) {
    // Missing words can come from the unknown tail only, and only a deny rule may assume so.
    if (!(unknownTail && conservative)) return false;
  }
  const compared = Math.min(tokens.length, argv.length);
  for (let i = 0; i < compared; i++) if (!tokenAccepts(tokens[i]!, argv[i]!, conservative)) return false;
  if (argv.length > tokens.length && !rest) return false;
  if (unknownTail && !rest && !conservative) return false;
  return true;
}

/** Quotes argv so that `parseCommandPattern` reads it back as exactly these literal tokens. */
export function argvToPattern(argv: readonly string[]): string {
  return argv.map((word) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : quoteWord(word))).join(" ");
}

function quoteWord(word: string): string {
  return word.includes("'") ? `"${word}"` : `'${word}'`;
}
