// Bundles the entrypoints into dist/ (committed: the Action runs dist/index.js as is).
// `--check` builds into a temporary folder and fails when dist/ differs from it.
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { build } from "esbuild";

const require = createRequire(import.meta.url);
const root = resolve(import.meta.dirname, "..");
const check = process.argv.includes("--check");
const outdir = check ? mkdtempSync(join(tmpdir(), "acp-warden-dist-")) : join(root, "dist");

const entryPoints = {
  index: "src/entrypoints/action-main.ts",
  cli: "src/entrypoints/cli-bin.ts",
};

// Tree-sitter's wasm files are loaded at run time; bundlers don't copy them.
const wasmFiles = [
  require.resolve("web-tree-sitter/web-tree-sitter.wasm"),
  require.resolve("tree-sitter-bash/tree-sitter-bash.wasm"),
];

if (!check) rmSync(outdir, { recursive: true, force: true });
mkdirSync(outdir, { recursive: true });
await build({
  absWorkingDir: root,
  entryPoints: Object.fromEntries(
    Object.entries(entryPoints).filter(([, file]) => {
      try {
        readFileSync(join(root, file));
        return true;
      } catch {
        return false;
      }
    }),
  ),
  outdir,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  splitting: true,
  chunkNames: "chunks/[name]-[hash]",
  sourcemap: false,
  legalComments: "none",
  logLevel: "warning",
  // ESM bundles of CommonJS dependencies still call require().
  banner: {
    js: "import { createRequire as __acpWardenCreateRequire } from 'node:module'; const require = __acpWardenCreateRequire(import.meta.url);",
  },
});
for (const file of wasmFiles) copyFileSync(file, join(outdir, file.split("/").pop()));

if (check) {
  const list = (dir, prefix = "") =>
    readdirSync(join(dir, prefix), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? list(dir, join(prefix, e.name)) : [join(prefix, e.name)],
    );
  const built = list(outdir).sort();
  const committed = list(join(root, "dist")).sort();
  const problems = [];
  for (const f of new Set([...built, ...committed])) {
    if (!built.includes(f)) problems.push(`dist/${f} is committed but no longer built`);
    else if (!committed.includes(f)) problems.push(`dist/${f} is built but missing from dist/`);
    else if (!readFileSync(join(outdir, f)).equals(readFileSync(join(root, "dist", f))))
      problems.push(`dist/${f} differs from a fresh build`);
  }
  rmSync(outdir, { recursive: true, force: true });
  if (problems.length > 0) {
    console.error(`dist/ is stale — run \`npm run build\` and commit dist/:\n  ${problems.join("\n  ")}`);
    process.exit(1);
  }
  console.log("dist/ matches src/");
}
