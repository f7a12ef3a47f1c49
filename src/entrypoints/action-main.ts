// Executable wrapper of the Action (dist/index.js): binds it to the real process.
import { runAction } from "./action.js";

process.exitCode = await runAction(process.env, {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
});
