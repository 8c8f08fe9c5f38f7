/**
 * The README's first step on a machine that never ran the project: a clean clone, a fresh HOME
 * (no npmrc, no npm cache, nothing under ~/.cache) and an empty VS Code host cache. `npm run
 * setup` must pass and install a host that runs; then `npm start`, exactly as the README gives it,
 * must open the demo in VS Code with only the gate's notification, and stop on SIGTERM leaving no
 * process behind.
 *
 *   npm run test:fresh      (about 3 minutes: npm ci and code-server's native addons, cold)
 *
 * The clone is of this checkout's HEAD with its uncommitted changes laid over it, so a developer
 * tests what they are about to commit; in CI the two are the same.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { checkNpmStart } from '../helpers/npm-start';
import { REPO, loadScript, type InstallModule, type NpmEnvModule } from '../helpers/workbench';

const SETUP_MS = 30 * 60_000;

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-C', cwd, ...args], { encoding: 'utf8' });

/** A clone of HEAD, plus the working tree's changes (modified, new and deleted files). */
function cleanClone(dest: string): number {
  execFileSync('git', ['clone', '--quiet', '--no-hardlinks', REPO, dest]);
  const list = (...flags: string[]) =>
    git(REPO, 'ls-files', '-z', ...flags)
      .split('\0')
      .filter(Boolean);
  const changed = list('--modified', '--others', '--exclude-standard');
  for (const f of changed) {
    const from = path.join(REPO, f);
    if (!fs.existsSync(from)) continue;
    fs.mkdirSync(path.dirname(path.join(dest, f)), { recursive: true });
    fs.copyFileSync(from, path.join(dest, f));
  }
  for (const f of list('--deleted')) fs.rmSync(path.join(dest, f), { force: true });
  return changed.length;
}

describe('a fresh machine: clean clone, fresh HOME, empty host cache', () => {
  let tmp = '';
  let clone = '';
  let env: NodeJS.ProcessEnv = {};

  before(async () => {
    tmp = fs.mkdtempSync('/tmp/loopx-fresh-');
    clone = path.join(tmp, 'clone');
    const overlaid = cleanClone(clone);
    if (overlaid) console.log(`fresh: ${overlaid} uncommitted file(s) laid over HEAD`);
    const home = path.join(tmp, 'home');
    fs.mkdirSync(home);
    // A person's shell on a new machine: none of this run's npm settings, none of our variables.
    const { nestedNpmEnv } = await loadScript<NpmEnvModule>('scripts/hosts/vscode-host/npm-env.mjs');
    env = Object.fromEntries(
      Object.entries(nestedNpmEnv(process.env)).filter(
        ([k]) => !/^(npm_config_|LOOPX_|XDG_)/i.test(k) && k !== 'PORT',
      ),
    );
    Object.assign(env, { HOME: home, LOOPX_HOST_CACHE: path.join(tmp, 'host-cache') });
  });

  after(() => {
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('`npm run setup` passes and installs a VS Code host that runs', { timeout: SETUP_MS }, async () => {
    const t0 = Date.now();
    const log = path.join(tmp, 'setup.log');
    const fd = fs.openSync(log, 'w');
    const r = spawnSync('npm', ['run', 'setup'], {
      cwd: clone,
      env,
      stdio: ['ignore', fd, fd],
      timeout: SETUP_MS,
    });
    fs.closeSync(fd);
    const out = fs.readFileSync(log, 'utf8');
    assert.equal(
      r.status,
      0,
      `npm run setup failed (${r.status ?? r.signal}):\n${out.split('\n').slice(-40).join('\n')}`,
    );
    console.log(`fresh: npm run setup took ${((Date.now() - t0) / 1000).toFixed(0)} s`);

    // Installed where this run said, from nothing: npm's cache in the fresh HOME, the host in its cache.
    assert.ok(fs.existsSync(path.join(env.HOME!, '.npm')), 'npm used the fresh HOME');
    const install = await loadScript<InstallModule>('scripts/hosts/vscode-host/install.mjs', clone);
    const host = install.hostPaths(env.LOOPX_HOST_CACHE);
    const run24 = (...args: string[]) =>
      execFileSync(host.node24, args, {
        env: { ...env, XDG_CONFIG_HOME: path.join(tmp, 'xdg') },
        encoding: 'utf8',
      });
    assert.equal(run24('--version').trim(), `v${install.NODE_VERSION}`);
    assert.match(
      run24(host.codeServerEntry, '--version'),
      new RegExp(`^${install.CODE_SERVER_VERSION.replace(/\./g, '\\.')} `, 'm'),
    );
  });

  it(
    'then `npm start` opens the demo with only the gate notification, and SIGTERM stops everything',
    { timeout: 600_000 },
    async () => {
      await checkNpmStart({
        cwd: clone,
        env,
        shotFile: path.join(REPO, 'test-results', 'fresh', 'npm-start.png'),
      });
      assert.ok(
        fs.existsSync(path.join(clone, '.loopx-demo', '.loopx')),
        'the demo is the default .loopx-demo/',
      );
    },
  );
});
