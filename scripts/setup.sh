#!/usr/bin/env bash
# `npm run setup`: what `npm start` needs on a fresh Debian machine: the system packages the VS
# Code host builds with (only when missing), the npm dependencies and the VS Code host. With
# --test-tools (`npm run test:prepare`, which `npm test` runs first): what only the tests need.
# Quiet: one line per step; everything else goes to a log file (scripts/setup/setup.mjs).
set -euo pipefail
cd "$(dirname "$0")/.."

# The one Node version the project requires is package.json's engines.node (">=X.Y"); the README
# names the same. Checked here, in shell, because an older Node may not even parse setup.mjs.
wanted="$(node -p 'require("./package.json").engines.node')"
floor="${wanted#>=}"
if [[ ! "$floor" =~ ^[0-9]+(\.[0-9]+){0,2}$ ]]; then
  echo "setup: package.json engines.node is \"$wanted\"; setup reads only the form \">=X.Y\" (or \">=X.Y.Z\")" >&2
  exit 2
fi
have="$(node --version)"
have="${have#v}"

# Whether version $1 is at least $2 (dotted numbers; a missing part counts as 0).
at_least() {
  local -a a b
  IFS=. read -r -a a <<<"$1"
  IFS=. read -r -a b <<<"$2"
  local i
  for i in 0 1 2; do
    if ((10#${a[i]:-0} != 10#${b[i]:-0})); then
      ((10#${a[i]:-0} > 10#${b[i]:-0}))
      return
    fi
  done
}

if ! at_least "$have" "$floor"; then
  echo "setup: LoopX needs Node.js $floor or later (package.json engines.node \"$wanted\"), and this is Node.js $have ($(command -v node)): install Node.js $floor or later, then run \`npm run setup\` again" >&2
  exit 1
fi

exec node scripts/setup/setup.mjs "$@"
