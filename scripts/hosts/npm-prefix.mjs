// What the installers of the test tools share (scripts/hosts/vscode-host/install.mjs for the VS Code
// host, scripts/hosts/agents/install.mjs for the agent CLIs): running a command with its output on
// stderr, and one npm package per prefix, marked complete only once it is whole.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const MARKER = '.loopx-install-complete';

/** A `run(cmd, args, opts)` that logs with `tag` and throws on failure. */
export function runner(tag) {
  const log = (msg) => process.stderr.write(`[${tag}] ${msg}\n`);
  const run = (cmd, args, opts = {}) => {
    log(`$ ${cmd} ${args.join(' ')}`);
    // stdout goes to stderr too, so that stdout of the installer stays pure JSON.
    const r = spawnSync(cmd, args, { stdio: ['ignore', 2, 2], ...opts });
    if (r.error) throw r.error;
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited with ${r.status ?? r.signal}`);
  };
  return { log, run };
}

/** Whether `prefix` holds a complete install of `spec`. */
export const installed = (prefix, spec) => {
  const marker = path.join(prefix, MARKER);
  return fs.existsSync(marker) && fs.readFileSync(marker, 'utf8').trim() === spec;
};

/** Forgets that `prefix` is complete, so the next ensureNpmPrefix installs it again. */
export const forget = (prefix) => fs.rmSync(path.join(prefix, MARKER), { force: true });

/**
 * Installs one npm package into its own prefix; the marker is written only once `mustExist` is
 * there and `verify` passed, and an unmarked prefix (a half-done install) is wiped and redone.
 * `allowScripts` names the packages whose install scripts were reviewed and must run (npm 11
 * warns about any other). Returns whether it installed.
 */
export function ensureNpmPrefix(
  run,
  prefix,
  spec,
  env,
  mustExist,
  { verify = () => {}, allowScripts = [] } = {},
) {
  if (installed(prefix, spec)) return false;
  fs.rmSync(prefix, { recursive: true, force: true });
  fs.mkdirSync(prefix, { recursive: true });
  // The prefix's own manifest. npm trusts a package's name for allowScripts from the dependency
  // that asks for it (a lock without registry URLs, which some npmrc files ask for, gives no
  // other), so the package is a dependency here rather than an argument. And allowScripts is
  // read from here, not from an npmrc, which npm would hand on to install scripts that run npm
  // themselves (code-server's), whose npm then refuses it as a command-line flag (EALLOWSCRIPTS).
  const at = spec.lastIndexOf('@');
  const manifest = { private: true, dependencies: { [spec.slice(0, at)]: spec.slice(at + 1) } };
  if (allowScripts.length)
    manifest.allowScripts = Object.fromEntries(allowScripts.map((name) => [name, true]));
  fs.writeFileSync(path.join(prefix, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  run('npm', ['install', '--prefix', prefix, '--no-audit', '--no-fund', '--no-update-notifier'], {
    cwd: prefix,
    env,
  });
  if (!fs.existsSync(mustExist)) throw new Error(`npm install ${spec} did not produce ${mustExist}`);
  verify();
  fs.writeFileSync(path.join(prefix, MARKER), `${spec}\n`);
  return true;
}
