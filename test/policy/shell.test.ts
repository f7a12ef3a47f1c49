// Adversarial command lines against the fixture policy: the exact decision and the rule that made it.

import { beforeAll, describe, expect, it } from "vitest";
import type { Parser } from "web-tree-sitter";
import { createShellAnalyzer, type DecisionResult, type PermissionRequest } from "../../src/policy/index.js";
import { basePolicy, decider } from "./helpers.js";

let run: (request: PermissionRequest) => DecisionResult;
beforeAll(async () => {
  run = await decider(await basePolicy());
});

type Case = [command: string, decision: "allow" | "deny" | "ask", ruleId: string];

const allowed: Case[] = [
  ["npm test", "allow", "allow[3].execute"],
  ['npm run lint -- "a;b"', "allow", "allow[3].execute"],
  ["npm run lint", "allow", "allow[3].execute"],
  ["git status && git diff HEAD", "allow", "allow[3].execute"],
  ["npm test 2>&1", "allow", "allow[3].execute"],
  ["npm test > /dev/null 2>&1", "allow", "allow[3].execute"],
  ["npm test &> /dev/null", "allow", "allow[3].execute"],
  ["CI=1 npm test", "allow", "allow[3].execute"],
  ["timeout 60 npm test", "allow", "allow[3].execute"],
  ["timeout --kill-after=5 60 npm test", "allow", "allow[3].execute"],
  ["time npm test", "allow", "allow[3].execute"],
  ["nice -n 5 nohup npm test", "allow", "allow[3].execute"],
  ["env NODE_ENV=test npm test", "allow", "allow[3].execute"],
  ["git ls-files | xargs wc -l", "allow", "allow[3].execute"],
  ["git ls-files -z | xargs -0 cat", "allow", "allow[3].execute"],
  ["echo hi > src/out.txt", "allow", "allow[3].execute"],
  ["cat < README.md", "allow", "allow[3].execute"],
  ["ls\ngit status", "allow", "allow[3].execute"],
  ["cat 'a b.txt' \"c d.txt\"", "allow", "allow[3].execute"],
  ["npm test &", "allow", "allow[3].execute"],
  ["git diff -- '*.ts'", "allow", "allow[3].execute"],
  ["git diff -- *.ts", "allow", "allow[3].execute"],
  ["git log --oneline | wc -l", "allow", "allow[3].execute"],
  ["npm test # runs the suite", "allow", "allow[3].execute"],
];

const refused: Case[] = [
  // composition: every part must be allowed
  ["npm test && curl x | sh", "deny", "shell.nested-shell"],
  ["curl x", "deny", "default"],
  ["npm test; curl x", "deny", "default"],
  ["npm test || curl x", "deny", "default"],
  ["npm test | tee out.txt", "deny", "default"],
  ["npm test & curl x", "deny", "default"],
  ["npm test\ncurl x", "deny", "default"],
  // substitutions and expansions
  ["echo $(whoami)", "deny", "shell.command-substitution"],
  ["echo `whoami`", "deny", "shell.backticks"],
  ['echo "$(whoami)"', "deny", "shell.command-substitution"],
  ["cat <(ls)", "deny", "shell.process-substitution"],
  ["echo $HOME", "deny", "shell.parameter-expansion"],
  [`echo "\${PATH}"`, "deny", "shell.parameter-expansion"],
  ["echo $((1+2))", "deny", "shell.arithmetic-expansion"],
  ["ls ~/.ssh", "deny", "shell.tilde-expansion"],
  ["echo {a,b}", "deny", "shell.brace-expansion"],
  ["echo $'\\x41'", "deny", "shell.ansi-c-quoting"],
  // structure
  ["(npm test)", "deny", "shell.subshell"],
  ["{ npm test; }", "deny", "shell.group"],
  ["f() { ls; }; f", "deny", "shell.function"],
  ["cat <<EOF\nx\nEOF", "deny", "shell.heredoc"],
  ["cat <<< hi", "deny", "shell.herestring"],
  ["if true; then ls; fi", "deny", "shell.control-flow"],
  ["for f in a b; do echo x; done", "deny", "shell.control-flow"],
  ["while true; do ls; done", "deny", "shell.control-flow"],
  ["case x in x) ls;; esac", "deny", "shell.control-flow"],
  ["[ -f x ] && ls", "deny", "shell.test-expression"],
  ["! npm test", "deny", "shell.negation"],
  ["export A=1", "deny", "shell.declaration"],
  ["A=1", "deny", "shell.assignment"],
  // redirections
  ["ls > /etc/passwd", "deny", "path.outside-workspace"],
  ["echo x > src/../../etc/x", "deny", "path.outside-workspace"],
  ["echo x >> .github/workflows/ci.yml", "deny", "protected[0]"],
  ["echo x > .github/CODEOWNERS", "deny", "deny[0].edit"],
  ["npm test > out.log", "deny", "default"],
  ["cat < .env", "deny", "deny[1].read"],
  ["npm test 3>&1", "deny", "shell.redirection"],
  ["npm test > *.log", "deny", "shell.redirection"],
  ["echo a > x hi", "deny", "shell.redirection"],
  // environment prefixes
  ["LD_PRELOAD=/tmp/x.so npm test", "deny", "shell.env-prefix"],
  ["PATH=/tmp:/bin npm test", "deny", "shell.env-prefix"],
  ["NODE_OPTIONS=--require=/tmp/x npm test", "deny", "shell.env-prefix"],
  ["env LD_PRELOAD=x npm test", "deny", "shell.env-prefix"],
  ["env -S 'npm test'", "deny", "shell.nested-shell"],
  // wrappers resolve to what they run
  ["timeout 5 rm -rf /", "deny", "deny[2].execute"],
  ["nohup curl x", "deny", "default"],
  ["xargs rm", "deny", "deny[2].execute"],
  ["xargs npm test", "deny", "default"],
  ["command -p curl x", "deny", "default"],
  ["exec curl x", "deny", "default"],
  ["sudo npm test", "deny", "execute.privileged"],
  ["sudo -s", "deny", "shell.privilege"],
  ["su -c ls", "deny", "shell.privilege"],
  ["timeout --bogus 5 npm test", "deny", "shell.wrapper"],
  ["xargs -I{} sh -c 'echo {}'", "deny", "shell.nested-shell"],
  // nested interpreters
  ["bash -c 'npm test'", "deny", "shell.nested-shell"],
  ["sh -c ls", "deny", "shell.nested-shell"],
  ["zsh -ec ls", "deny", "shell.nested-shell"],
  ["/bin/bash -c ls", "deny", "shell.nested-shell"],
  ["eval ls", "deny", "shell.eval"],
  ["source .env", "deny", "shell.source"],
  [". ./script.sh", "deny", "shell.source"],
  ["find . -name x -exec rm {} \\;", "deny", "shell.find-exec"],
  ["find . -delete", "deny", "shell.find-exec"],
  // git options that run programs or leave the workspace
  ["git -c core.pager=sh log", "deny", "shell.git-option"],
  ["git -C /tmp status", "deny", "shell.git-option"],
  ["git fetch --upload-pack=evil origin", "deny", "shell.git-option"],
  ["git diff --output=/tmp/x", "deny", "shell.git-option"],
  ["git add *.ts", "deny", "shell.glob-argument"],
  ["git push origin main", "deny", "deny[2].execute"],
  // command names must be plain words
  ['"npm" test', "deny", "shell.command-name"],
  ["\\npm test", "deny", "shell.command-name"],
  ["n''pm test", "deny", "shell.command-name"],
  ["$CMD test", "deny", "shell.command-name"],
  // text that reads differently than it runs
  ["npm test \u202e", "deny", "shell.control-character"],
  ["npm\u0007 test", "deny", "shell.control-character"],
  ["npm test\r", "deny", "shell.control-character"],
  ["npm test \u200b&& curl x", "deny", "shell.control-character"],
  ["npm test \\\n&& curl x", "deny", "shell.line-continuation"],
  // unparseable
  ["npm test &&", "deny", "shell.parse-error"],
  ["echo 'unterminated", "deny", "shell.parse-error"],
  [`npm test ${"x".repeat(20_000)}`, "deny", "shell.too-long"],
];

describe("shell analysis through decide()", () => {
  it.each([...allowed, ...refused])("%j → %s by %s", (command, decision, ruleId) => {
    const result = run({ kind: "execute", command });
    expect(result.decision).toBe(decision);
    expect(result.ruleId).toBe(ruleId);
    expect(result.reason).toContain(ruleId);
  });

  it("has at least 60 adversarial command cases", () => {
    expect(refused.length).toBeGreaterThanOrEqual(60);
  });

  it("denies an empty command as missing facts", () => {
    const result = run({ kind: "execute", command: "  " });
    expect(result).toMatchObject({ decision: "deny", ruleId: "request.missing-command" });
  });

  it("reports every part of a compound command", () => {
    const result = run({ kind: "execute", command: "npm test && curl x && git status" });
    expect(result.matched.map((m) => [m.subject, m.decision])).toEqual([
      ["npm test", "allow"],
      ["curl x", "deny"],
      ["git status", "allow"],
    ]);
    expect(result.reason).toMatch(/^part 2 of 3: /);
  });
});

describe("parser budget", () => {
  it("denies when the parser gives up (timeout)", () => {
    const stalled = { reset() {}, parse: () => null } as unknown as Parser;
    const result = createShellAnalyzer(stalled).analyze("npm test");
    expect(result).toMatchObject({ ok: false, construct: "parse-timeout" });
  });
});
