/**
 * The goal lock (store/lock.ts): a lock the kernel keeps on an open file. Held while fn runs
 * (another descriptor, another process cannot take it), released on return, on throw and when
 * its holder dies, never judged by a clock or a pid, and a holder notices when its lock file was
 * replaced under it.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { assertHeld, lockKind, tryLock, withLock } from '../../../../src/core/store/lock';
import { LoopxError } from '../../../../src/core/model/errors';
import { tempDir, removeTempDirs } from '../../../helpers/store';

after(removeTempDirs);

const ROOT = path.join(__dirname, '..', '..', '..', '..');

function lockIn(dir: string) {
  return path.join(dir, '.loopx', 'local', 'locks', 'goal-g.lock');
}

const reason = (r: string) => (e: unknown) => e instanceof LoopxError && e.reason === r;

/** A process that takes the lock and holds it until killed; resolves once it holds it. */
async function holderProcess(lock: string) {
  const src = `
    const { withLock } = require(${JSON.stringify(path.join(ROOT, 'src/core/store/lock.ts'))});
    withLock(${JSON.stringify(lock)}, () => { process.stdout.write('held\\n'); Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60000); });`;
  const child = spawn(process.execPath, ['--import', 'tsx', '-e', src], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c));
  const exited = new Promise<void>((r) => child.once('close', () => r()));
  while (!out.includes('held\n')) {
    if (child.exitCode !== null) throw new Error('the holder exited before it held the lock');
    await new Promise((r) => setTimeout(r, 20));
  }
  return { child, exited };
}

describe('the goal lock', () => {
  it('is the kernel lock on this platform', () => {
    assert.deepEqual(lockKind(), { kind: 'kernel' });
  });

  it('is held while fn runs (not even this process takes it twice) and released after a return or a throw', () => {
    const lock = lockIn(tempDir());
    withLock(lock, () => {
      assert.equal(tryLock(lock), undefined, 'taken twice');
      assert.equal(JSON.parse(fs.readFileSync(lock, 'utf8')).pid, process.pid, 'names its holder');
      assertHeld(lock);
    });
    const again = tryLock(lock);
    assert.ok(again, 'not released after a return');
    again();
    assert.throws(
      () =>
        withLock(lock, () => {
          throw new Error('boom');
        }),
      /boom/,
    );
    const third = tryLock(lock);
    assert.ok(third, 'not released after a throw');
    third();
    assert.equal(fs.existsSync(lock), true, 'the lock file stays: a new one could be locked beside the old');
  });

  it('another process waits while it is held, gives up with lock_busy naming the holder, and takes it the moment the holder dies', async () => {
    const lock = lockIn(tempDir());
    const { child, exited } = await holderProcess(lock);
    try {
      const t = Date.now();
      assert.throws(
        () => withLock(lock, () => 1, { timeoutMs: 300 }),
        (e: unknown) => reason('lock_busy')(e) && (e as Error).message.includes(`process ${child.pid}`),
      );
      assert.ok(Date.now() - t >= 300, 'gave up before its timeout');
    } finally {
      child.kill('SIGKILL');
      await exited;
    }
    // No stale lock to judge: the kernel released it with the holder.
    const t = Date.now();
    assert.equal(
      withLock(lock, () => 7, { timeoutMs: 5000 }),
      7,
    );
    assert.ok(Date.now() - t < 200, `took ${Date.now() - t} ms after the holder died`);
  });

  it('a holder stopped with SIGSTOP keeps its lock, however old its time or however far the clocks differ', async () => {
    const lock = lockIn(tempDir());
    const { child, exited } = await holderProcess(lock);
    try {
      child.kill('SIGSTOP');
      // What the exclusive file judged by: a holder's time an hour old, a pid nobody can see.
      const body = {
        pid: 999_999_999,
        host: 'elsewhere',
        at: new Date(Date.now() - 3_600_000).toISOString(),
      };
      fs.writeFileSync(lock, JSON.stringify(body));
      assert.throws(() => withLock(lock, () => 1, { timeoutMs: 200 }), reason('lock_busy'));
    } finally {
      child.kill('SIGKILL');
      await exited;
    }
  });

  it('a holder whose lock file was removed or replaced meanwhile is told before it writes', () => {
    const dir = tempDir();
    const lock = lockIn(dir);
    assert.throws(
      () =>
        withLock(lock, () => {
          fs.rmSync(lock);
          fs.writeFileSync(lock, '');
          assertHeld(lock);
        }),
      reason('lock_lost'),
    );
    withLock(lock, () => {
      assert.throws(
        () => assertHeld(path.join(path.dirname(lock), 'other.lock')),
        /not held by this process/,
      );
    });
  });

  it('a link or a folder in the lock’s place is removed, never followed', () => {
    const dir = tempDir();
    const lock = lockIn(dir);
    fs.mkdirSync(path.dirname(lock), { recursive: true });
    const target = path.join(dir, 'elsewhere');
    fs.writeFileSync(target, 'keep');
    fs.symlinkSync(target, lock);
    assert.equal(
      withLock(lock, () => 1),
      1,
    );
    assert.equal(fs.readFileSync(target, 'utf8'), 'keep');
    assert.equal(fs.lstatSync(lock).isFile(), true);
    fs.rmSync(lock);
    fs.mkdirSync(lock);
    assert.equal(
      withLock(lock, () => 2),
      2,
    );
  });
});
