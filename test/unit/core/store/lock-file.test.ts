/**
 * The exclusive-file lock (store/lock-file.ts), the stand-in where the kernel lock cannot be
 * loaded: released on return and on throw, never removing a lock that is no longer its own, and a
 * holder killed while it holds the lock does not block a waiter for long.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { hostname } from 'node:os';
import { acquireLock, breakLock } from '../../../../src/core/store/lock-file';
import { LoopxError } from '../../../../src/core/model/errors';
import { tempDir, removeTempDirs } from '../../../helpers/store';

after(removeTempDirs);

const ROOT = path.join(__dirname, '..', '..', '..', '..');

function lockIn(dir: string) {
  const locks = path.join(dir, '.loopx', 'local', 'locks');
  fs.mkdirSync(locks, { recursive: true });
  return path.join(locks, 'goal-g.lock');
}

/** The pid of a process that has exited. */
function deadPid(): number {
  return Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout);
}

function withLock<T>(lock: string, fn: () => T, opts: { timeoutMs?: number } = {}): T {
  const release = acquireLock(lock, opts.timeoutMs);
  try {
    return fn();
  } finally {
    release();
  }
}

/** A lock file as a holder writes it. */
const planted = (pid: number, nonce = 'other') =>
  JSON.stringify({ pid, host: hostname(), nonce, at: Date.now() });

describe('the exclusive-file lock (the stand-in)', () => {
  it('is held while fn runs and released after it returns or throws', () => {
    const lock = lockIn(tempDir());
    const seen = withLock(lock, () => fs.readFileSync(lock, 'utf8'));
    assert.equal(JSON.parse(seen).pid, process.pid);
    assert.equal(fs.existsSync(lock), false);
    assert.throws(
      () =>
        withLock(lock, () => {
          throw new Error('boom');
        }),
      /boom/,
    );
    assert.equal(fs.existsSync(lock), false, 'released after a throw too');
  });

  it('leaves alone a lock that was broken and taken by another while it was held', () => {
    const lock = lockIn(tempDir());
    withLock(lock, () => {
      // What a breaker does (renamed aside, removed), then another holder creates its own.
      fs.renameSync(lock, `${lock}.aside`);
      fs.rmSync(`${lock}.aside`);
      fs.writeFileSync(lock, planted(process.pid, 'theirs'));
    });
    assert.equal(JSON.parse(fs.readFileSync(lock, 'utf8')).nonce, 'theirs', "the other holder's lock stays");
  });

  it('a waiter gives up after its timeout while a live holder keeps the lock', () => {
    const lock = lockIn(tempDir());
    fs.writeFileSync(lock, planted(process.pid));
    const t = Date.now();
    assert.throws(
      () => withLock(lock, () => 1, { timeoutMs: 200 }),
      (e: unknown) => e instanceof LoopxError && e.reason === 'lock_busy',
    );
    const waited = Date.now() - t;
    assert.ok(waited >= 200 && waited < 2000, `gave up after ${waited} ms`);
  });

  it('a holder killed while holding the lock is broken as stale within a bounded wait', async () => {
    const dir = tempDir();
    const lock = lockIn(dir);
    // A live holder: a process that sleeps; its pid is in the lock file.
    const holder = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
    await new Promise((r) => holder.once('spawn', r));
    fs.writeFileSync(lock, planted(holder.pid!));
    // The waiter is another process (this one cannot kill the holder while it waits).
    const waiterSrc = `
      const { acquireLock } = require(${JSON.stringify(path.join(ROOT, 'src/core/store/lock-file.ts'))});
      process.stdout.write('waiting\\n');
      const t = Date.now();
      acquireLock(${JSON.stringify(lock)}, 20000)();
      process.stdout.write(String(Date.now() - t));`;
    const waiter = spawn(process.execPath, ['--import', 'tsx', '-e', waiterSrc], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    waiter.stdout.on('data', (c: Buffer) => (out += c));
    waiter.stderr.on('data', (c: Buffer) => (err += c));
    const exited = new Promise<number | null>((r) => waiter.on('close', r));
    while (!out.includes('waiting\n') && waiter.exitCode === null)
      await new Promise((r) => setTimeout(r, 20));
    // Long enough for the waiter to be waiting on the live holder.
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(out, 'waiting\n', `the waiter did not take a live holder’s lock ${err}`);
    const killedAt = Date.now();
    holder.kill('SIGKILL');
    const code = await exited;
    const afterKill = Date.now() - killedAt;
    assert.equal(code, 0, err);
    const waited = Number(out.split('\n')[1]);
    assert.ok(waited >= 500, `the waiter waited for the holder (${waited} ms)`);
    assert.ok(afterKill < 3000, `taken ${afterKill} ms after the holder was killed`);
    assert.equal(fs.existsSync(lock), false);
  });

  it('a dead holder found at the first attempt costs no wait', () => {
    const lock = lockIn(tempDir());
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
    fs.writeFileSync(lock, planted(Number(dead.stdout)));
    const t = Date.now();
    assert.equal(
      withLock(lock, () => 7),
      7,
    );
    assert.ok(Date.now() - t < 500);
  });

  it('a waiter that found a lock stale leaves the fresh lock another waiter took in its place', () => {
    const lock = lockIn(tempDir());
    // A dead holder's lock, judged stale by two waiters; the first broke it and took the lock
    // (this process, alive) before the second acts on what it saw.
    fs.writeFileSync(lock, planted(deadPid()));
    fs.writeFileSync(lock, planted(process.pid, 'fresh'));
    breakLock(lock);
    assert.equal(JSON.parse(fs.readFileSync(lock, 'utf8')).nonce, 'fresh', 'the live lock was removed');
    // The stale one is removed, and the guard is gone either way.
    fs.writeFileSync(lock, planted(deadPid()));
    breakLock(lock);
    assert.equal(fs.existsSync(lock), false);
    assert.deepEqual(fs.readdirSync(path.dirname(lock)), []);
  });

  it('breaks nothing while another breaker is at work, and removes the guard a dead breaker left', () => {
    const lock = lockIn(tempDir());
    fs.writeFileSync(lock, planted(deadPid()));
    const guard = `${lock}.breaking`;
    fs.writeFileSync(guard, '');
    breakLock(lock);
    assert.equal(fs.existsSync(lock), true, 'broken while another breaker held the guard');
    const old = new Date(Date.now() - 10_000);
    fs.utimesSync(guard, old, old);
    breakLock(lock);
    assert.equal(fs.existsSync(guard), false, 'a dead breaker’s guard was kept');
    breakLock(lock);
    assert.equal(fs.existsSync(lock), false);
  });
});
