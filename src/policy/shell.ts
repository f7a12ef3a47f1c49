// Shell command analysis: proves what a command line runs, or refuses.
//
// The model is an allow-list of tree-sitter-bash node kinds. A command line is accepted only if it
// is a list of simple commands joined by `&& || ; | |& &` or newlines, whose words are literal
// (plain words, quoted strings, numbers, concatenations of those), with redirections limited to
// /dev/null, 1/2 duplication and literal file paths (the policy then checks those paths). Every
// other node kind — substitutions, expansions, subshells, groups, functions, heredocs, control
// flow, test expressions — is refused, and so is anything that fails to parse in time.
import type { Node, Parser } from "web-tree-sitter";
import type { ArgvToken } from "./command-pattern.js";
import { type Invocation, resolveInvocations, SAFE_ENV_PREFIXES } from "./wrappers.js";

export type UnsafeConstruct =
  | "empty"
  | "too-long"
  | "control-character"
  | "line-continuation"
  | "parse-timeout"
  | "parse-error"
  | "command-substitution"
  | "backticks"
  | "process-substitution"
  | "parameter-expansion"
  | "arithmetic-expansion"
  | "subshell"
  | "group"
  | "function"
  | "heredoc"
  | "herestring"
  | "control-flow"
  | "test-expression"
  | "negation"
  | "declaration"
  | "redirection"
  | "assignment"
  | "env-prefix"
  | "command-name"
  | "tilde-expansion"
  | "brace-expansion"
  | "ansi-c-quoting"
  | "glob-argument"
  | "nested-shell"
  | "eval"
  | "source"
  | "find-exec"
  | "git-option"
  | "wrapper"
  | "privilege"
  | "syntax";

export type Redirect =
  | { type: "discard"; operator: string }
  | { type: "duplicate"; operator: string }
  | { type: "write"; operator: string; path: string }
  | { type: "read"; operator: string; path: string };

export interface SimpleCommand {
  /** The command's own source text, for messages. */
  text: string;
  /** argv as written, wrappers included. */
  argv: readonly ArgvToken[];
  /** From the outermost wrapper to the command that finally runs. */
  invocations: readonly Invocation[];
  redirects: readonly Redirect[];
}

export type ShellAnalysis =
  | { ok: true; commands: readonly SimpleCommand[] }
  | { ok: false; construct: UnsafeConstruct; message: string };

export interface ShellAnalyzer {
  /** Synchronous once loaded. The same text always gives the same answer. */
  analyze(command: string): ShellAnalysis;
}

export const MAX_COMMAND_LENGTH = 16_384;
const PARSE_BUDGET_MS = 50;
const CACHE_SIZE = 4096;

// C0 controls except tab and newline, DEL, C1 controls, bidi overrides/isolates/marks,
// zero-width characters and the BOM: all of them make the text read differently than it runs.
function isInvisible(code: number): boolean {
  return (
    (code <= 0x1f && code !== 0x09 && code !== 0x0a) ||
    (code >= 0x7f && code <= 0x9f) ||
    code === 0x061c ||
    (code >= 0x200b && code <= 0x200f) ||
    (code >= 0x202a && code <= 0x202e) ||
    (code >= 0x2066 && code <= 0x2069) ||
    code === 0xfeff
  );
}

function findInvisible(text: string): number {
  for (let i = 0; i < text.length; i++) if (isInvisible(text.charCodeAt(i))) return i;
  return -1;
}

class Refusal extends Error {
  constructor(
    readonly construct: UnsafeConstruct,
    message: string,
  ) {
    super(message);
  }
}

function refuse(construct: UnsafeConstruct, message: string): never {
  throw new Refusal(construct, message);
}

const REFUSED_NODES: Record<string, [UnsafeConstruct, string]> = {
  command_substitution: ["command-substitution", "command substitution $(…)"],
  process_substitution: ["process-substitution", "process substitution <(…) / >(…)"],
  simple_expansion: ["parameter-expansion", "parameter expansion $VAR"],
  expansion: ["parameter-expansion", "braced parameter expansion"],
  arithmetic_expansion: ["arithmetic-expansion", "arithmetic expansion $((…))"],
  subshell: ["subshell", "subshell (…)"],
  compound_statement: ["group", "command group { …; }"],
  function_definition: ["function", "function definition"],
  heredoc_redirect: ["heredoc", "heredoc <<"],
  herestring_redirect: ["herestring", "here-string <<<"],
  if_statement: ["control-flow", "if statement"],
  while_statement: ["control-flow", "while/until loop"],
  for_statement: ["control-flow", "for loop"],
  c_style_for_statement: ["control-flow", "for loop"],
  case_statement: ["control-flow", "case statement"],
  test_command: ["test-expression", "test expression [ ] / [[ ]]"],
  negated_command: ["negation", "negated command !"],
  declaration_command: ["declaration", "declaration (export/declare/local/readonly)"],
  unset_command: ["declaration", "unset"],
  variable_assignment: ["assignment", "variable assignment"],
  ansi_c_string: ["ansi-c-quoting", "ANSI-C quoting $'…'"],
  translated_string: ["ansi-c-quoting", 'locale quoting $"…"'],
  brace_expression: ["brace-expansion", "brace expansion {a..b}"],
};

function refuseNode(node: Node): never {
  const known = REFUSED_NODES[node.type];
  if (known) {
    const [construct, label] = known;
    if (construct === "command-substitution" && node.text.startsWith("`"))
      refuse("backticks", `backtick command substitution: ${excerpt(node.text)}`);
    refuse(construct, `${label} cannot be proven safe: ${excerpt(node.text)}`);
  }
  if (node.type === "ERROR" || node.isMissing)
    refuse("parse-error", `cannot parse near ${excerpt(node.text)}`);
  refuse("syntax", `shell construct '${node.type}' is not accepted: ${excerpt(node.text)}`);
}

export function excerpt(text: string, max = 60): string {
  const oneLine = text.replace(/\s+/g, " ").trim();
  return JSON.stringify(oneLine.length > max ? `${oneLine.slice(0, max - 1)}…` : oneLine);
}

// ---- words ----

/** Literal text of an unquoted word; glob characters make it dynamic. */
function decodeBareWord(raw: string): ArgvToken {
  let text = "";
  let dynamic = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (c === "\\") {
      const next = raw[i + 1];
      if (next === undefined) refuse("syntax", "a word ends with a lone backslash");
      text += next;
      i++;
    } else if (c === "$" || c === "`") {
      refuse("parameter-expansion", `'${c}' in ${excerpt(raw)} cannot be proven literal`);
    } else {
      if (c === "*" || c === "?" || c === "[") dynamic = true;
      text += c;
    }
  }
  return { text, dynamic };
}

function decodeDoubleQuoted(node: Node): string {
  let text = "";
  for (const child of node.children) {
    if (child.type === '"') continue;
    if (child.type !== "string_content") refuseNode(child);
    const raw = child.text;
    for (let i = 0; i < raw.length; i++) {
      const c = raw[i]!;
      if (c === "$" || c === "`") refuse("parameter-expansion", `'${c}' inside "…" cannot be proven literal`);
      if (c === "\\") {
        const next = raw[i + 1];
        if (next !== undefined && '$`"\\'.includes(next)) {
          text += next;
          i++;
          continue;
        }
      }
      text += c;
    }
  }
  return text;
}

function wordPart(node: Node, bare: { text: string }): ArgvToken {
  switch (node.type) {
    case "word":
    case "number": {
      bare.text += node.text;
      return decodeBareWord(node.text);
    }
    case "raw_string":
      return { text: node.text.slice(1, -1), dynamic: false };
    case "string":
      return { text: decodeDoubleQuoted(node), dynamic: false };
    default:
      refuseNode(node);
  }
}

/** One shell word → one argv token, or a refusal when the shell would not keep it literal. */
export function literalWord(node: Node): ArgvToken {
  const bare = { text: "" };
  const parts = node.type === "concatenation" ? node.children : [node];
  let text = "";
  let dynamic = false;
  for (const part of parts) {
    const token = wordPart(part, bare);
    text += token.text;
    dynamic ||= token.dynamic;
  }
  const first = parts[0];
  if (first && (first.type === "word" || first.type === "number") && first.text.startsWith("~"))
    refuse("tilde-expansion", `tilde expansion in ${excerpt(node.text)}`);
  // Brace expansion splits one word into many: {a,b} or {1..3} in the unquoted parts.
  if (/\{[^{}]*(,|\.\.)[^{}]*\}/.test(bare.text) && /\{/.test(node.text))
    refuse("brace-expansion", `brace expansion in ${excerpt(node.text)}`);
  return { text, dynamic };
}

// ---- statements ----

const SEPARATORS: ReadonlySet<string> = new Set(["&&", "||", ";", "|", "|&", "&", "\n"]);

interface RawCommand {
  node: Node;
  redirects: Node[];
}

function collectStatements(node: Node, out: RawCommand[]): void {
  switch (node.type) {
    case "program":
    case "list":
    case "pipeline":
      for (const child of node.children) {
        if (!child.isNamed) {
          if (SEPARATORS.has(child.type)) continue;
          refuseNode(child);
        }
        if (child.type === "comment") continue;
        collectStatements(child, out);
      }
      return;
    case "redirected_statement": {
      const body = node.childForFieldName("body");
      const redirects = node.children.filter((c) => c.isNamed && c.id !== body?.id);
      if (!body) refuse("redirection", `a redirection without a command: ${excerpt(node.text)}`);
      if (body.type === "command") {
        out.push({ node: body, redirects });
        return;
      }
      // `a | b > f` parses as redirect(pipeline): the redirection belongs to the last command.
      if (body.type === "pipeline" || body.type === "list") {
        const before = out.length;
        collectStatements(body, out);
        const last = out[out.length - 1];
        if (out.length === before || !last) refuse("redirection", `cannot attribute ${excerpt(node.text)}`);
        last.redirects.push(...redirects);
        return;
      }
      refuseNode(body);
      return;
    }
    case "command":
      out.push({ node, redirects: [] });
      return;
    default:
      refuseNode(node);
  }
}

function analyzeRedirect(node: Node): Redirect {
  if (node.type !== "file_redirect") refuseNode(node);
  let descriptor: string | undefined;
  let operator = "";
  const destinations: Node[] = [];
  for (const child of node.children) {
    if (child.type === "file_descriptor") descriptor = child.text;
    else if (!child.isNamed) operator = child.type;
    else destinations.push(child);
  }
  const shown = `${descriptor ?? ""}${operator}`;
  const [destination, ...extra] = destinations;
  if (!destination) refuse("redirection", `redirection ${shown} without a target`);
  // `cmd > f more args`: bash appends the extra words to argv; we don't guess, we refuse.
  if (extra.length > 0) refuse("redirection", `words after a redirection target: ${excerpt(node.text)}`);
  if (descriptor !== undefined && descriptor !== "1" && descriptor !== "2")
    refuse("redirection", `redirection of file descriptor ${descriptor}`);
  if (operator === ">&" || operator === "<&") {
    const target = destination.text;
    if (operator === ">&" && (target === "1" || target === "2") && target !== (descriptor ?? "1"))
      return { type: "duplicate", operator: `${shown}${target}` };
    if (operator === ">&" && descriptor === undefined && destination.type !== "number") {
      // `>& file` is bash's old spelling of `&> file`.
      return fileTarget(">&", destination);
    }
    refuse("redirection", `descriptor duplication ${shown}${target}`);
  }
  if (![">", ">>", "&>", "&>>", ">|", "<"].includes(operator))
    refuse("redirection", `redirection operator ${shown} is not accepted`);
  if (operator === "<" && descriptor !== undefined) refuse("redirection", `input redirection ${shown}`);
  return fileTarget(shown, destination);
}

function fileTarget(operator: string, destination: Node): Redirect {
  const target = literalWord(destination);
  if (target.dynamic) refuse("redirection", `redirection target ${excerpt(destination.text)} is a glob`);
  if (target.text === "") refuse("redirection", "empty redirection target");
  if (target.text === "/dev/null") return { type: "discard", operator };
  return operator.endsWith("<")
    ? { type: "read", operator, path: target.text }
    : { type: "write", operator, path: target.text };
}

const COMMAND_NAME = /^[A-Za-z0-9_.+@%:/-]+$/;

function analyzeCommand(raw: RawCommand): SimpleCommand {
  const { node } = raw;
  const argv: ArgvToken[] = [];
  const assignments: { name: string; value: string }[] = [];
  const redirects: Redirect[] = raw.redirects.map(analyzeRedirect);
  for (const child of node.children) {
    switch (child.type) {
      case "variable_assignment": {
        if (argv.length > 0) refuseNode(child);
        const name = child.childForFieldName("name")?.text ?? "";
        const valueNode = child.childForFieldName("value");
        if (!SAFE_ENV_PREFIXES.has(name))
          refuse(
            "env-prefix",
            `environment prefix ${name}= is not in the safe list (${[...SAFE_ENV_PREFIXES].join(", ")})`,
          );
        const value = valueNode ? literalWord(valueNode) : { text: "", dynamic: false };
        if (value.dynamic) refuse("env-prefix", `environment prefix ${name}= has a glob value`);
        assignments.push({ name, value: value.text });
        break;
      }
      case "command_name": {
        const word = child.firstChild;
        if (
          child.childCount !== 1 ||
          !word ||
          word.type !== "word" ||
          !COMMAND_NAME.test(word.text) ||
          word.text.startsWith("-")
        )
          refuse("command-name", `command name ${excerpt(child.text)} is not a plain literal word`);
        argv.push({ text: word.text, dynamic: false });
        break;
      }
      case "file_redirect":
        redirects.push(analyzeRedirect(child));
        break;
      case "comment":
        break;
      default:
        if (argv.length === 0) refuseNode(child);
        argv.push(literalWord(child));
    }
  }
  if (argv.length === 0) refuse("assignment", `variable assignment without a command: ${excerpt(node.text)}`);
  const resolved = resolveInvocations(argv);
  if (!resolved.ok) refuse(resolved.construct, resolved.message);
  return { text: node.text, argv, invocations: resolved.invocations, redirects };
}

export function createShellAnalyzer(parser: Parser): ShellAnalyzer {
  const cache = new Map<string, ShellAnalysis>();

  function analyzeUncached(command: string): ShellAnalysis {
    if (command.trim() === "") return { ok: false, construct: "empty", message: "empty command" };
    if (command.length > MAX_COMMAND_LENGTH)
      return {
        ok: false,
        construct: "too-long",
        message: `command longer than ${MAX_COMMAND_LENGTH} characters`,
      };
    const invisible = findInvisible(command);
    if (invisible >= 0) {
      const code = command.charCodeAt(invisible).toString(16).toUpperCase().padStart(4, "0");
      return {
        ok: false,
        construct: "control-character",
        message: `control or bidi character U+${code} at offset ${invisible}`,
      };
    }
    if (/\\\n/.test(command))
      return { ok: false, construct: "line-continuation", message: "backslash-newline line continuation" };

    const deadline = performance.now() + PARSE_BUDGET_MS;
    parser.reset();
    const tree = parser.parse(command, null, { progressCallback: () => performance.now() > deadline });
    if (!tree) {
      parser.reset();
      return {
        ok: false,
        construct: "parse-timeout",
        message: `parsing took longer than ${PARSE_BUDGET_MS} ms`,
      };
    }
    try {
      const root = tree.rootNode;
      if (root.hasError) {
        const bad = findError(root);
        return {
          ok: false,
          construct: "parse-error",
          message: `cannot parse the command${bad ? ` near ${excerpt(bad.text)}` : ""}`,
        };
      }
      const raw: RawCommand[] = [];
      collectStatements(root, raw);
      if (raw.length === 0) return { ok: false, construct: "empty", message: "no command to run" };
      return { ok: true, commands: raw.map(analyzeCommand) };
    } catch (error) {
      if (error instanceof Refusal) return { ok: false, construct: error.construct, message: error.message };
      throw error;
    } finally {
      tree.delete();
    }
  }

  return {
    analyze(command: string): ShellAnalysis {
      const cached = cache.get(command);
      if (cached) return cached;
      const analysis = analyzeUncached(command);
      if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value as string);
      cache.set(command, analysis);
      return analysis;
    },
  };
}

function findError(node: Node): Node | undefined {
  if (node.type === "ERROR" || node.isMissing) return node;
  for (const child of node.children) {
    if (child.hasError || child.isMissing) {
      const found = findError(child);
      if (found) return found;
    }
  }
  return undefined;
}
