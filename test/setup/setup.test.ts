/**
 * scripts/setup.sh (`npm run setup`, and `npm run test:prepare` for the tests' own tools) as a
 * person meets it, with the real apt: a line per step and the rest in a log file; another apt that
 * holds dpkg's lock (held here as apt holds it: fcntl on /var/lib/dpkg/lock-frontend) is waited
 * for, not failed on; a lock held past LOOPX_APT_LOCK_TIMEOUT fails with the log's last lines; a
 * Node older than package.json's engines.node is refused before anything is installed.
 *
 * The PATH given to setup lacks jq, so setup takes jq for missing and asks apt for it: apt finds
 * it installed and changes nothing, but takes its locks as for any install.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { REPO, need, pathWithout, removeTempDirs, tempDir } from '../helpers/install';

const FRONTEND_LOCK = '/var/lib/dpkg/lock-frontend';
const pkg = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')) as {
  engines: { node: string };
};

/** Holds `file` the way apt does (a POSIX record lock) for `seconds`, from a process of its own. */
async function holdLock(
  file: string,
  seconds: number,
): Promise<{ pid: number; until: number; release(): void }> {
  const holder: ChildProcess = spawn(
    'python3',
    [
      '-c',
      'import fcntl, os, sys, time\n' +
        'fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o640)\n' +
        'fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\n' +
        'print("held", flush=True)\n' +
        'time.sleep(float(sys.argv[2]))\n',
      file,
      String(seconds),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let err = '';
  holder.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  await new Promise<void>((resolve, reject) => {
    holder.stdout!.on('data', (d: Buffer) => d.toString().includes('held') && resolve());
    holder.on('exit', (code) => reject(new Error(`the lock holder exited with ${code}: ${err}`)));
  });
  return {
    pid: holder.pid!,
    until: Date.now() + seconds * 1000,
    release: () => {
      if (holder.exitCode === null) holder.kill();
    },
  };
}

describe('npm run setup: quiet, and patient with another apt', () => {
  let state = '';
  let env: NodeJS.ProcessEnv = {};
  const log = () => path.join(state, 'loopx-vscode', 'test-tools.log');

  before(() => {
    need('python3');
    need('apt-get');
    assert.ok(
      process.getuid?.() === 0 || spawnSync('sudo', ['-n', 'true']).status === 0,
      'apt needs root: run as root, or with sudo that asks no password',
    );
    state = tempDir('loopx-setup-state-');
    // A person's shell (none of an enclosing npm run's settings), its log in a folder of its own.
    env = Object.fromEntries(
      Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k) && k !== 'LOOPX_APT_LOCK_TIMEOUT'),
    );
    Object.assign(env, { XDG_STATE_HOME: state, PATH: pathWithout(['jq']) });
  });
  after(removeTempDirs);

  it('waits for another apt that holds the dpkg lock, says so, then installs; a line per step', async () => {
    const lock = await holdLock(FRONTEND_LOCK, 6);
    try {
      const r = spawnSync('npm', ['run', 'test:prepare'], {
        cwd: REPO,
        env,
        encoding: 'utf8',
        timeout: 300_000,
      });
      const ended = Date.now();
      const out = `${r.stdout}${r.stderr}`;
      assert.equal(r.status, 0, out);
      assert.match(
        r.stdout,
        new RegExp(
          `^setup: {3}waiting for another apt or dpkg to finish: process ${lock.pid} \\(python3\\) holds ${FRONTEND_LOCK} \\(setup waits up to 10 min\\)$`,
          'm',
        ),
      );
      // Less a margin for the pipe that told us the lock was held.
      assert.ok(ended >= lock.until - 500, `setup ended ${lock.until - ended} ms before the lock was free`);
      assert.match(r.stdout, /^setup: system packages for the tests: installing jq \(apt[^)]*\): \d+ s$/m);
      assert.match(r.stdout, /^setup: the tests' tools are ready, in \d+ s$/m);
      const lines = r.stdout.trimEnd().split('\n');
      assert.ok(lines.length <= 12, `${lines.length} lines:\n${r.stdout}`);
      const ours = lines.filter((l) => l.startsWith('setup: '));
      assert.ok(ours.length >= 5, r.stdout);
      assert.match(
        ours[0]!,
        new RegExp(`the full output goes to ${log().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`),
      );
      assert.equal(r.stderr, '');
      // apt's own words went to the log, tagged with the step.
      const written = fs.readFileSync(log(), 'utf8');
      assert.match(written, /^\[apt\] \$ apt-get install .* jq$/m);
      assert.match(
        written,
        new RegExp(`^\\[apt\\] Waiting for cache lock: Could not get lock ${FRONTEND_LOCK}`, 'm'),
      );
      assert.match(written, /^\[agents\] done after \d+ s$/m);
    } finally {
      lock.release();
    }
  });

  it('fails when the lock is held longer than LOOPX_APT_LOCK_TIMEOUT: exit 1, the log named, its last lines shown', async () => {
    const lock = await holdLock(FRONTEND_LOCK, 60);
    try {
      const t0 = Date.now();
      const r = spawnSync('bash', ['scripts/setup.sh', '--test-tools'], {
        cwd: REPO,
        env: { ...env, LOOPX_APT_LOCK_TIMEOUT: '2' },
        encoding: 'utf8',
        timeout: 120_000,
      });
      assert.equal(r.status, 1, `${r.stdout}${r.stderr}`);
      assert.ok(Date.now() - t0 < 30_000, 'it gave up after the timeout, not when the lock was free');
      assert.match(
        r.stdout,
        /^setup: system packages for the tests: installing jq \(apt[^)]*\)(: | \.\.\. )failed after \d+ s$/m,
      );
      assert.match(
        r.stdout,
        new RegExp(
          `^setup: it failed: another apt or dpkg \\(process ${lock.pid}, python3\\) still held ${FRONTEND_LOCK} after 2 s \\(LOOPX_APT_LOCK_TIMEOUT\\)`,
          'm',
        ),
      );
      assert.ok(r.stdout.includes(`setup: its last lines (all of its output is in ${log()}):\n`), r.stdout);
      // apt's words, waiting or giving up.
      const held = `Could not get lock ${FRONTEND_LOCK}\\. It is held by process ${lock.pid} \\(python3\\)`;
      assert.match(r.stdout, new RegExp(`^ {2}\\| (Waiting for cache lock: |E: )${held}`, 'm'));
      assert.match(r.stdout, /^setup: failed after \d+ s$/m);
      assert.match(
        fs.readFileSync(log(), 'utf8'),
        new RegExp(`^\\[apt\\] (Waiting for cache lock: |E: )${held}`, 'm'),
      );
    } finally {
      lock.release();
    }
  });

  it("refuses a Node older than package.json's engines.node, naming both, before it installs anything", () => {
    const floor = /^>=(\d+)\.(\d+)(?:\.\d+)?$/.exec(pkg.engines.node);
    assert.ok(floor, `engines.node is ">=X.Y": ${pkg.engines.node}`);
    const [major, minor] = [Number(floor[1]), Number(floor[2])];
    const older = minor > 0 ? `${major}.${minor - 1}.9` : `${major - 1}.99.0`;
    // A `node` that says it is older, and is the real one for everything else.
    const bin = tempDir('loopx-old-node-');
    fs.writeFileSync(
      path.join(bin, 'node'),
      `#!/bin/sh\n[ "$1" = --version ] && { echo v${older}; exit 0; }\nexec ${JSON.stringify(process.execPath)} "$@"\n`,
      { mode: 0o755 },
    );
    const fresh = tempDir('loopx-setup-state-');
    const r = spawnSync('bash', ['scripts/setup.sh'], {
      cwd: REPO,
      env: { ...env, XDG_STATE_HOME: fresh, PATH: `${bin}:${process.env.PATH}` },
      encoding: 'utf8',
    });
    assert.equal(r.status, 1, r.stdout + r.stderr);
    assert.equal(r.stdout, '');
    assert.equal(
      r.stderr,
      `setup: LoopX needs Node.js ${major}.${minor} or later (package.json engines.node "${pkg.engines.node}"), and this is Node.js ${older} (${path.join(bin, 'node')}): install Node.js ${major}.${minor} or later, then run \`npm run setup\` again\n`,
    );
    assert.deepEqual(fs.readdirSync(fresh), [], 'no log: nothing ran');
  });
});
