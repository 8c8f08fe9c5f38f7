/**
 * The goal index's journal: a commit appends its goal's entry (one line) instead of rewriting the
 * whole index, so a write costs the same at 10,000 goals as at one (issue 18).
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { invoke } from '../../../../src/core/capabilities/registry';
import { JOURNAL_MAX, indexJournal, upsertIndexEntry } from '../../../../src/core/store/goal-index';
import type { StoredEntry } from '../../../../src/core/store/goal-index';
import { human, removeTempDirs, tempStore } from '../../../helpers/store';
import { readIndex } from '../../../helpers/goal-index';

after(removeTempDirs);

const lines = (file: string) => fs.readFileSync(file, 'utf8').split('\n').filter(Boolean);

function twoGoals() {
  const store = tempStore();
  invoke(store, 'goal.create', { goalId: 'a', title: 'A' }, human);
  invoke(store, 'goal.create', { goalId: 'b', title: 'B' }, human);
  store.rebuildIndex();
  return { store, journal: indexJournal(store.indexPath) };
}

describe('the goal index journal', () => {
  it('a commit appends one line and leaves index.json as it was', () => {
    const { store, journal } = twoGoals();
    const before = fs.readFileSync(store.indexPath, 'utf8');
    assert.equal(fs.existsSync(journal), false, 'a rebuild folds the journal in');
    invoke(store, 'todo.add', { goalId: 'a', todoId: 't1', title: 'one' }, human);
    invoke(store, 'todo.add', { goalId: 'a', todoId: 't2', title: 'two' }, human);
    assert.equal(fs.readFileSync(store.indexPath, 'utf8'), before, 'index.json is not rewritten');
    assert.equal(lines(journal).length, 2);
    const a = readIndex(store).goals.find((g) => g.id === 'a')!;
    assert.equal(a.todosTotal, 2, 'the last line of a goal wins');
    assert.equal(readIndex(store).trust, store.trust().fingerprint);
    assert.deepEqual(
      store.listGoals().goals.map((g) => [g.id, g.todosTotal]),
      [
        ['a', 2],
        ['b', 0],
      ],
    );
  });

  it('a damaged line (torn by a crash) leaves the index untrusted: the next listing rebuilds it', () => {
    const { store, journal } = twoGoals();
    invoke(store, 'todo.add', { goalId: 'a', todoId: 't1', title: 'one' }, human);
    fs.appendFileSync(journal, '{"trust":"x","entry":{"id":"a","ti');
    // Appended after the torn line, this entry is lost with it: nothing may trust what is left.
    invoke(store, 'todo.add', { goalId: 'a', todoId: 't2', title: 'two' }, human);
    invoke(store, 'todo.add', { goalId: 'b', todoId: 't1', title: 'one' }, human);
    assert.equal(readIndex(store).trust, undefined);
    assert.deepEqual(
      store.listGoals().goals.map((g) => [g.id, g.todosTotal]),
      [
        ['a', 2],
        ['b', 1],
      ],
    );
    assert.equal(readIndex(store).trust, store.trust().fingerprint, 'rebuilt');
    assert.equal(fs.existsSync(journal), false);
  });

  it('an entry made under other keys leaves the index without trust, so listing rebuilds it', () => {
    const { store } = twoGoals();
    const entry = readIndex(store).goals[0]!;
    upsertIndexEntry(store.indexPath, { ...entry, title: 'made elsewhere' }, 'other-keys');
    assert.equal(readIndex(store).trust, undefined);
    assert.deepEqual(
      store.listGoals().goals.map((g) => g.title),
      ['A', 'B'],
    );
    assert.equal(readIndex(store).trust, store.trust().fingerprint);
  });

  it('once the journal passes JOURNAL_MAX, the write that passed it folds it into index.json', () => {
    const { store, journal } = twoGoals();
    const entry: StoredEntry = { ...readIndex(store).goals[0]!, title: 'x'.repeat(4000) };
    const trust = store.trust().fingerprint;
    const perLine = JSON.stringify({ trust, entry }).length + 1;
    let calls = 0;
    do {
      upsertIndexEntry(store.indexPath, entry, trust);
      calls++;
      if (fs.existsSync(journal)) assert.ok(fs.statSync(journal).size <= JOURNAL_MAX);
    } while (fs.existsSync(journal));
    assert.equal(calls, Math.floor(JOURNAL_MAX / perLine) + 1, 'folded by the line that passed the limit');
    const stored = JSON.parse(fs.readFileSync(store.indexPath, 'utf8'));
    assert.equal(stored.trust, trust);
    assert.deepEqual(
      stored.goals.map((g: StoredEntry) => [g.id, g.title.length]),
      [
        ['a', 4000],
        ['b', 1],
      ],
    );
    invoke(store, 'todo.add', { goalId: 'b', todoId: 't1', title: 'one' }, human);
    assert.equal(lines(journal).length, 1, 'the next commit starts a new journal');
  });
});
