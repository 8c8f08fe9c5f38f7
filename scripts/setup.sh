#!/usr/bin/env bash
# Installs what the build and the tests need on a fresh Debian machine with Node 20+:
# system packages (only when missing) and the npm dependencies. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v jq >/dev/null || need+=(jq)          # the product brief's scripts pipe JSON through jq
command -v script >/dev/null || need+=(bsdutils) # `script` gives tests an interactive terminal
command -v unzip >/dev/null || need+=(unzip)     # the package tests read the .vsix; install.sh reads one with it
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  echo "setup: installing ${need[*]}" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}"
fi

if [ -f package-lock.json ]; then npm ci --no-audit --no-fund; else npm install --no-audit --no-fund; fi

# The real VS Code for the integration tests and the UI checks: code-server and Node 24 from npm,
# Debian's Chromium (cached under ~/.cache/loopx-vscode-host; a few minutes the first time).
node scripts/hosts/vscode-host/install.mjs >/dev/null

# The real Claude Code and Codex CLIs (pinned) for the end-to-end agent tests (~/.cache/loopx-agents).
node scripts/hosts/agents/install.mjs >/dev/null
