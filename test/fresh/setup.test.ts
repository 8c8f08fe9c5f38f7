/**
 * The README's first step on a machine that never ran the project: a clean clone, a fresh HOME
 * (no npmrc, no npm cache, nothing under ~/.cache) and an empty VS Code host cache. `npm run
 * setup` must pass, quietly (a line per step, its time, the total; the rest in its log file), and
 * install a host that runs and nothing only the tests need (no agent CLI); then `npm start`,
 * exactly as the README gives it, must open the demo in VS Code with only the gate's
 * notification, and stop on SIGTERM leaving no process behind. It prints how long setup took.
 *
 *   npm run test:fresh      (about 5 minutes: setup cold, then npm start)
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
/** What `npm run setup` may print when all goes well (npm's own header included). */
const SETUP_LINES = 30;

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
    Object.assign(env, {
      HOME: home,
      LOOPX_HOST_CACHE: path.join(tmp, 'host-cache'),
      LOOPX_AGENT_CACHE: path.join(tmp, 'agent-cache'),
    });
  });

  after(() => {
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it(
    '`npm run setup` passes quietly, says how long it took, and installs a VS Code host that runs',
    { timeout: SETUP_MS },
    async () => {
      const t0 = Date.now();
      const logFile = path.join(tmp, 'setup-output.txt');
      const fd = fs.openSync(logFile, 'w');
      const r = spawnSync('npm', ['run', 'setup'], {
        cwd: clone,
        env,
        stdio: ['ignore', fd, fd],
        timeout: SETUP_MS,
      });
      fs.closeSync(fd);
      const out = fs.readFileSync(logFile, 'utf8');
      assert.equal(
        r.status,
        0,
        `npm run setup failed (${r.status ?? r.signal}):\n${out.split('\n').slice(-40).join('\n')}`,
      );
      const lines = out.trimEnd().split('\n');
      console.log(
        `fresh: npm run setup took ${((Date.now() - t0) / 1000).toFixed(0)} s and printed ${lines.length} lines:`,
      );
      console.log(out.trimEnd().replace(/^/gm, '  '));

      // Quiet: a line per step with its time, then the total; the full output in the log it names.
      assert.ok(lines.length <= SETUP_LINES, `${lines.length} lines, more than ${SETUP_LINES}:\n${out}`);
      const log = path.join(env.HOME!, '.local', 'state', 'loopx-vscode', 'setup.log');
      assert.match(
        out,
        new RegExp(`^setup: .*; the full output goes to ${log.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'),
      );
      assert.match(out, /^setup: npm dependencies \(npm ci\).*( \.\.\. |: )(\d+ min )?\d+ s$/m);
      assert.match(out, /^setup: VS Code host: .*( \.\.\. |: )(\d+ min )?\d+ s$/m);
      assert.match(out, /^setup: done in (\d+ min )?\d+ s\. /m);
      assert.doesNotMatch(out, /EBADENGINE|not yet covered|npm warn/i);
      const written = fs.readFileSync(log, 'utf8');
      assert.match(written, /^\[npm ci\] added \d+ packages/m);
      assert.match(written, /^\[vscode-host\] \{$/m, "the host installer's report");
      assert.doesNotMatch(
        written,
        /EBADENGINE|install scripts not yet covered/,
        'npm had nothing to warn about',
      );
      // What only the tests need is theirs to install (npm test runs `npm run test:prepare`).
      assert.doesNotMatch(out, /chromium|claude|codex/i);
      assert.ok(!fs.existsSync(env.LOOPX_AGENT_CACHE!), 'setup installed no agent CLI');

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
    },
  );

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
