/**
 * The drive lock: a peeker (`loopx drive status`, the queue of every workspace) takes it for an
 * instant to learn whether a driver runs; a driver starting in that instant waits for it rather
 * than refusing, and a driver that really holds it still refuses a second one.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { Driver, LoopxError, lockFile, runningDriver, Store, tryLock } from '../../../../src/core/index';
import { removeTempDirs, tempDir } from '../../../helpers/store';

after(removeTempDirs);

describe('the drive lock', () => {
  it('a driver starting while a peeker holds the lock for an instant takes it once it is let go', async () => {
    const store = Store.init(tempDir('loopx-drive-lock-'), {
      configDir: tempDir('loopx-drive-lock-config-'),
    });
    store.ensureLocalDir();
    const release = tryLock(lockFile(store.localDir, 'drive'))!;
    assert.ok(release, 'the test holds the lock, as runningDriver does for an instant');
    setTimeout(release, 150);
    await new Driver({ store, untilIdle: true }).run();
    assert.equal(runningDriver(store), undefined, 'let go when it returned');
  });

  it('a lock held on past the driver’s patience is another driver: refused with drive_running', async () => {
    const store = Store.init(tempDir('loopx-drive-lock-'), {
      configDir: tempDir('loopx-drive-lock-config-'),
    });
    store.ensureLocalDir();
    const release = tryLock(lockFile(store.localDir, 'drive'))!;
    try {
      await assert.rejects(
        new Driver({ store, untilIdle: true }).run(),
        (e: unknown) => e instanceof LoopxError && e.reason === 'drive_running',
      );
    } finally {
      release();
    }
  });
});
