// Runs every benchmark in bench/ in turn and prints their figures.
//   npm run bench            all of them
//   npm run bench -- policy  only those whose file name contains "policy"
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";

const dir = fileURLToPath(new URL(".", import.meta.url));
const filter = process.argv[2] ?? "";
const benches = readdirSync(dir)
  .filter((f) => f.endsWith(".ts") && f !== "run.ts" && f.includes(filter))
  .sort();
let failed = 0;
for (const file of benches) {
  console.log(`\n== bench/${file}`);
  const result = spawnSync(process.execPath, ["--import", "tsx", `${dir}${file}`], { stdio: "inherit" });
  if (result.status !== 0) failed++;
}
process.exitCode = failed > 0 ? 1 : 0;
