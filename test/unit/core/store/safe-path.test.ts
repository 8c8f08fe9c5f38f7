/**
 * The folder checks one call shares (src/core/store/safe-path.ts): fewer lstat calls within a call, and
 * no link followed that a check before the open would have found: not the file itself, not a
 * folder swapped while the call slept, not one swapped after the call.
 */
import { describe, it, after, mock } from 'node:test';
import { createRequire } from 'node:module';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { readStoreFile, withFolderChecksShared } from '../../../../src/core/store/safe-path';
import { sleepMs } from '../../../../src/core/store/sleep';
import { LoopxError } from '../../../../src/core/model/errors';

const made: string[] = [];
after(() => made.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

/** A workspace with `.loopx/goals/g/events/log.jsonl`, and a folder outside with the same tree. */
function tree() {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-safe-path-')));
  made.push(root);
  const events = path.join(root, 'ws', '.loopx', 'goals', 'g', 'events');
  const outside = path.join(root, 'outside');
  for (const d of [events, outside]) {
    fs.mkdirSync(d, { recursive: true });
    fs.writeFileSync(path.join(d, 'log.jsonl'), d === outside ? 'outside\n' : 'inside\n');
  }
  return { root, events, outside, log: path.join(events, 'log.jsonl') };
}

/** Replaces the folder `dir` by a link to `to`. */
function swapForLink(dir: string, to: string) {
  fs.renameSync(dir, `${dir}.moved`);
  fs.symlinkSync(to, dir);
}

const refusedAsLink = (e: unknown) =>
  e instanceof LoopxError && (e.details as { reason?: string } | undefined)?.reason === 'store_symlink';

/** How many lstat calls `fn` makes (counted on the module object the store's code calls). */
function lstats(fn: () => void): number {
  const nodeFs = createRequire(__filename)('node:fs') as typeof fs;
  const spy = mock.method(nodeFs, 'lstatSync');
  try {
    fn();
    return spy.mock.callCount();
  } finally {
    spy.mock.restore();
  }
}

describe('folder checks shared within one call', () => {
  it('a second read under the same folders checks only the file; outside a call, every folder again', () => {
    const { log } = tree();
    // .loopx, goals, g, events, log.jsonl
    assert.equal(
      lstats(() => readStoreFile(log)),
      5,
    );
    assert.equal(
      lstats(() => readStoreFile(log)),
      5,
    );
    assert.equal(
      lstats(() =>
        withFolderChecksShared(() => [readStoreFile(log), readStoreFile(log), readStoreFile(log)]),
      ),
      5 + 1 + 1,
    );
  });

  it('the file itself is checked every time: a link put in its place is refused within the call', () => {
    const { log, outside } = tree();
    withFolderChecksShared(() => {
      assert.equal(readStoreFile(log, 'utf8'), 'inside\n');
      fs.rmSync(log);
      fs.symlinkSync(path.join(outside, 'log.jsonl'), log);
      assert.throws(() => readStoreFile(log), refusedAsLink);
    });
  });

  it('a folder swapped for a link while the call slept is refused', () => {
    const { log, events, outside } = tree();
    withFolderChecksShared(() => {
      assert.equal(readStoreFile(log, 'utf8'), 'inside\n');
      sleepMs(1);
      swapForLink(path.dirname(events), outside);
      assert.throws(() => readStoreFile(log), refusedAsLink);
    });
  });

  it('a folder swapped for a link after a call is refused by the next', () => {
    const { log, events, outside } = tree();
    assert.equal(
      withFolderChecksShared(() => readStoreFile(log, 'utf8')),
      'inside\n',
    );
    swapForLink(events, outside);
    assert.throws(() => withFolderChecksShared(() => readStoreFile(log)), refusedAsLink);
  });
});
