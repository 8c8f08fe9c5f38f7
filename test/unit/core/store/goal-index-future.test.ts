/**
 * An index entry stamped "in the future" (issue 35: written by a process whose clock was ahead, or
 * an index restored from elsewhere) vouches for nothing: the goal is read, so a log changed without
 * its folder's time moving (edited in place) still lists with the right counts.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { invoke } from '../../../../src/core/capabilities/registry';
import { stampSettled } from '../../../../src/core/store/file-stamp';
import { agent, human, removeTempDirs, settleIndex, tempStore } from '../../../helpers/store';

after(removeTempDirs);

describe('an index entry from the future', () => {
  it('is not trusted: the listing reads the goal', () => {
    const store = tempStore();
    invoke(store, 'goal.create', { goalId: 'g', title: 'G' }, human);
    invoke(store, 'todo.add', { goalId: 'g', todoId: 'a', title: 'a' }, agent);
    settleIndex(store);
    assert.equal(store.listGoals().goals[0]!.todosTotal, 1);
    // The index as a clock an hour ahead would have written it, its counts now wrong: the log
    // gained a todo in place (its folder's time kept), and the entry says 5.
    const index = JSON.parse(fs.readFileSync(store.indexPath, 'utf8')) as {
      goals: { id: string; logs: string; todosTotal: number }[];
    };
    const entry = index.goals.find((g) => g.id === 'g')!;
    entry.logs = entry.logs.replace(/@\d+$/, `@${Date.now() + 3_600_000}`);
    entry.todosTotal = 5;
    fs.writeFileSync(store.indexPath, JSON.stringify(index));
    assert.equal(store.listGoals().goals[0]!.todosTotal, 1, 'the entry from the future was trusted');
  });

  it('stampSettled: settled only when taken 2 s or more after the change, and not later than now', () => {
    const now = 1_800_000_000_000;
    const stamp = (mtimeMs: number, at: number) => `${BigInt(mtimeMs) * 1_000_000n}@${at}`;
    assert.equal(stampSettled(stamp(now - 10_000, now - 5_000), now), true);
    assert.equal(stampSettled(stamp(now - 1_000, now), now), false);
    assert.equal(stampSettled(stamp(now - 10_000, now + 60_000), now), false);
  });
});
