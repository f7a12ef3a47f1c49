#!/usr/bin/env bash
# Installs the real ACP agents used by acp-warden's interop tests into interop/node_modules,
# separately from the main install (about 1.2 GB: native Copilot, Codex and opencode binaries).
#
# npm 11 runs unreviewed dependency install scripts with only a warning; --strict-allow-scripts
# makes any script not listed in package.json "allowScripts" a hard error. Only opencode-ai's
# postinstall is approved (it links the platform binary to bin/opencode.exe, which is the
# package's bin). Gemini CLI's optional native addons (@github/keytar, node-pty) are denied:
# Gemini falls back to the prebuilt @lydell/node-pty and needs no keychain offline.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# `npm ci` would refuse this lockfile when the registry lacks some other-platform optional packages
# (this machine's mirror has no opencode-darwin-*), so install from the lockfile without saving.
npm install --prefix "$here" --no-save --no-audit --no-fund --strict-allow-scripts "$@"
# Smoke check: every launcher resolves and prints a version, offline.
bin="$here/node_modules/.bin"
for b in claude-agent-acp gemini copilot codex-acp opencode; do
  [ -x "$bin/$b" ] || { echo "missing $bin/$b" >&2; exit 1; }
done
"$bin/opencode" --version >/dev/null
echo "interop agents installed in $here/node_modules"
