// Loads tree-sitter-bash (WASM) once. This is the policy module's only I/O: it reads the two
// .wasm files when first asked to, never at import time.
//
// Where the files are: next to the running module first (esbuild bundles into dist/ and
// scripts/build.mjs copies both .wasm files there; code split into dist/chunks/ looks one level
// up), then resolved from node_modules (tests and `tsx` runs).
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { Language, Parser } from "web-tree-sitter";
import { createShellAnalyzer, type ShellAnalyzer } from "./shell.js";

const RUNTIME_WASM = "web-tree-sitter.wasm";
const BASH_WASM = "tree-sitter-bash.wasm";
const PACKAGE_PATHS: Record<string, string> = {
  [RUNTIME_WASM]: "web-tree-sitter/web-tree-sitter.wasm",
  [BASH_WASM]: "tree-sitter-bash/tree-sitter-bash.wasm",
};

export interface ShellParserLoadOptions {
  /** Look here before anything else (a directory path or file: URL). */
  wasmDirectory?: string | URL;
  /** Skip the node_modules fallback: proves the files next to the module are used. */
  bundledOnly?: boolean;
}

export interface LoadedShellAnalyzer extends ShellAnalyzer {
  /** Wall time of the one-time load, in milliseconds. */
  readonly loadMilliseconds: number;
  /** Where the two .wasm files were found. */
  readonly wasmFiles: { runtime: string; bash: string };
}

export function wasmCandidates(file: string, options: ShellParserLoadOptions = {}): string[] {
  const candidates: string[] = [];
  if (options.wasmDirectory !== undefined) {
    const dir =
      options.wasmDirectory instanceof URL ? fileURLToPath(options.wasmDirectory) : options.wasmDirectory;
    candidates.push(`${dir.replace(/\/+$/, "")}/${file}`);
  }
  candidates.push(fileURLToPath(new URL(`./${file}`, import.meta.url)));
  candidates.push(fileURLToPath(new URL(`../${file}`, import.meta.url)));
  if (!options.bundledOnly) {
    try {
      candidates.push(createRequire(import.meta.url).resolve(PACKAGE_PATHS[file]!));
    } catch {
      // Not installed next to us: the bundled copies are the only option.
    }
  }
  return candidates;
}

async function readFirst(
  file: string,
  options: ShellParserLoadOptions,
): Promise<{ path: string; bytes: Uint8Array }> {
  const tried = wasmCandidates(file, options);
  for (const path of tried) {
    try {
      return { path, bytes: new Uint8Array(await readFile(path)) };
    } catch {
      // Try the next location.
    }
  }
  throw new Error(`cannot find ${file}; looked in:\n  ${tried.join("\n  ")}`);
}

let runtimeReady: Promise<string> | undefined;
let defaultAnalyzer: Promise<LoadedShellAnalyzer> | undefined;

async function load(options: ShellParserLoadOptions): Promise<LoadedShellAnalyzer> {
  const started = performance.now();
  // Emscripten's runtime is global: initialise it once, whatever the later options.
  runtimeReady ??= readFirst(RUNTIME_WASM, options).then(async ({ path, bytes }) => {
    await Parser.init({ wasmBinary: bytes });
    return path;
  });
  let runtimePath: string;
  try {
    runtimePath = await runtimeReady;
  } catch (error) {
    runtimeReady = undefined;
    throw error;
  }
  const bash = await readFirst(BASH_WASM, options);
  const language = await Language.load(bash.bytes);
  const parser = new Parser();
  parser.setLanguage(language);
  const analyzer = createShellAnalyzer(parser);
  return {
    analyze: analyzer.analyze,
    loadMilliseconds: performance.now() - started,
    wasmFiles: { runtime: runtimePath, bash: bash.path },
  };
}

/**
 * The shared analyzer: the parser is loaded on the first call and reused afterwards.
 * Pass options to load a separate instance (tests of the bundled layout do).
 */
export function loadShellAnalyzer(options?: ShellParserLoadOptions): Promise<LoadedShellAnalyzer> {
  if (options) return load(options);
  defaultAnalyzer ??= load({}).catch((error: unknown) => {
    defaultAnalyzer = undefined;
    throw error;
  });
  return defaultAnalyzer;
}
