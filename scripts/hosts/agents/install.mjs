#!/usr/bin/env node
// Idempotent installer for the real agent CLIs that the end-to-end agent tests drive (against
// scripted local model APIs): Claude Code and Codex, pinned, each in its own npm prefix so that
// neither's dependencies can shadow the other's.
//
//   node scripts/hosts/agents/install.mjs   -> installs if needed, prints the binaries' paths as JSON
//
// Cache: $LOOPX_AGENT_CACHE or ~/.cache/loopx-agents, one folder per package@version.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { nestedNpmEnv } from '../vscode-host/npm-env.mjs';
import { ensureNode24 } from '../vscode-host/install.mjs';
import { ensureNpmPrefix, runner } from '../npm-prefix.mjs';

export const CLAUDE_CODE_VERSION = '2.1.332';
export const CODEX_VERSION = '0.171.0';

// What each pinned package is, where its binary lands, what `--version` must print, and the
// packages whose install scripts must run: Claude Code's postinstall copies its native binary
// over the placeholder bin/claude.exe (without it `claude` cannot run); Codex has none.
const AGENTS = {
  claude: {
    pkg: '@anthropic-ai/claude-code',
    version: CLAUDE_CODE_VERSION,
    bin: 'claude',
    allowScripts: ['@anthropic-ai/claude-code'],
  },
  codex: { pkg: '@openai/codex', version: CODEX_VERSION, bin: 'codex', allowScripts: [] },
};

export function cacheDir() {
  return process.env.LOOPX_AGENT_CACHE || path.join(os.homedir(), '.cache', 'loopx-agents');
}

const spec = (a) => `${a.pkg}@${a.version}`;
// A scoped name has a slash: the folder keeps the scope readable without nesting.
const prefixOf = (cache, a) => path.join(cache, spec(a).replace('/', '+'));
const binOf = (cache, a) => path.join(prefixOf(cache, a), 'node_modules', '.bin', a.bin);

/** The absolute paths of the pinned binaries (whether or not they are installed yet). */
export function agentPaths(cache = cacheDir()) {
  return { claude: binOf(cache, AGENTS.claude), codex: binOf(cache, AGENTS.codex) };
}

const { log, run } = runner('agents');

// Proves the binary runs. A throwaway HOME: neither CLI may touch the user's own settings.
function checkVersion(bin, a) {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-agent-version-'));
  try {
    const r = spawnSync(bin, ['--version'], { encoding: 'utf8', env: { ...process.env, HOME: home } });
    if (r.error) throw r.error;
    if (r.status !== 0 || !r.stdout.includes(a.version)) {
      throw new Error(`${bin} --version exited ${r.status ?? r.signal}: ${r.stdout}${r.stderr}`);
    }
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
}

export function ensureAgents() {
  const cache = cacheDir();
  const started = Date.now();
  // The same install from a shell, from `npm run setup` and from CI: see npm-env.mjs. Run by the
  // host's Node 24: Claude Code asks for Node 22 or later (its engines field), and its postinstall
  // runs on the Node that runs npm.
  const { node24 } = ensureNode24();
  const shellEnv = nestedNpmEnv(process.env);
  const env = { ...shellEnv, PATH: `${path.dirname(node24)}${path.delimiter}${shellEnv.PATH}` };
  let fresh = false;
  for (const a of Object.values(AGENTS)) {
    const bin = binOf(cache, a);
    fresh =
      ensureNpmPrefix(run, prefixOf(cache, a), spec(a), env, bin, {
        verify: () => checkVersion(bin, a),
        allowScripts: a.allowScripts,
      }) || fresh;
  }
  if (fresh) log(`agents ready in ${((Date.now() - started) / 1000).toFixed(1)}s`);
  return agentPaths(cache);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    console.log(JSON.stringify(ensureAgents(), null, 2));
  } catch (err) {
    log(`install failed: ${err.message}`);
    process.exit(1);
  }
}
