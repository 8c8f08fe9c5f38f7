// What the packaging scripts (package.mjs: the .vsix; package-cli.mjs: the CLI tarball) share:
// the checkout's root, running a tool with its output kept for the error, and building dist/.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * Runs `cmd` (in the checkout unless `opts.cwd`); returns its stdout, or stdout and stderr
 * together with `opts.both`. A failure throws with everything the tool printed.
 * @param {string} cmd @param {string[]} args @param {string} what
 * @param {{ cwd?: string, env?: NodeJS.ProcessEnv, both?: boolean }} [opts]
 */
export function run(cmd, args, what, opts = {}) {
  const r = spawnSync(cmd, args, {
    cwd: opts.cwd ?? ROOT,
    env: opts.env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (r.error) throw new Error(`${what}: ${r.error.message}`);
  if (r.status !== 0)
    throw new Error(`${what} failed (exit ${r.status ?? r.signal}):\n${r.stdout}${r.stderr}`);
  return opts.both ? `${r.stdout}${r.stderr}` : r.stdout;
}

/** `npm run build`, unless `build` is false. */
export function buildDist(build, log) {
  if (build === false) return;
  log('building dist/ ...');
  run(process.execPath, [path.join(ROOT, 'scripts', 'build', 'build.mjs')], 'npm run build');
}

/** A path as the person should type it: relative when it is under the current folder. */
export function shownPath(file) {
  const rel = path.relative(process.cwd(), file);
  return rel && !rel.startsWith('..') ? rel : file;
}
