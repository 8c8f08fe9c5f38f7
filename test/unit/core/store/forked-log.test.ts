/**
 * A forked log (issue 35): two processes that held a goal at once (an older LoopX's lock, or the
 * exclusive-file stand-in fooled) both appended after the same line, so two lines share a seq.
 * Before, every command on the goal then failed ("field seq: is 3, expected 4") and self-repair
 * refused to rewrite history. Now every line is kept, each event applies once, the goal reads and
 * writes on, and every clone (any config folder, from the snapshot or a full replay) agrees.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { invoke } from '../../../../src/core/capabilities/registry';
import { repair } from '../../../../src/core/setup/repair';
import { parseLog } from '../../../../src/core/store/event-log';
import { canonicalJson } from '../../../../src/core/store/json-file';
import { Store } from '../../../../src/core/store/store';
import { agent, human, removeTempDirs, tempDir, tempStore } from '../../../helpers/store';

after(removeTempDirs);

const lines = (buf: Buffer) => buf.toString('utf8').split('\n').filter(Boolean);

/**
 * A goal whose log forked: todo b appended by one process, todo c by another that planned from
 * the same head (a copy of the store as it was before b), its line appended after b's.
 */
function forkedGoal(): Store {
  const store = tempStore();
  invoke(store, 'goal.create', { goalId: 'g', title: 'G' }, human);
  invoke(store, 'todo.add', { goalId: 'g', todoId: 'a', title: 'a' }, agent);
  const twin = path.join(tempDir(), 'twin');
  fs.cpSync(store.workspace, twin, { recursive: true });
  invoke(store, 'todo.add', { goalId: 'g', todoId: 'b', title: 'b' }, agent);
  const other = new Store(twin, { configDir: store.configDir });
  fs.cpSync(store.secretsDir, other.secretsDir, { recursive: true });
  invoke(other, 'todo.add', { goalId: 'g', todoId: 'c', title: 'c' }, agent);
  const forkLine = lines(fs.readFileSync(other.logPath('g'))).at(-1)!;
  fs.appendFileSync(store.logPath('g'), `${forkLine}\n`);
  return store;
}

const todoIds = (store: Store) =>
  store
    .load('g')
    .state.todos.map((t) => t.id)
    .sort();

describe('a forked log', () => {
  it('parses: both lines kept, the fork reported, the head after the last line', () => {
    const store = forkedGoal();
    const parsed = parseLog(fs.readFileSync(store.logPath('g')), 'log', store.writerId());
    assert.deepEqual(
      parsed.events.map((e) => e.seq),
      [1, 2, 3, 3],
    );
    assert.deepEqual(parsed.forks, [{ line: 4, continues: 2 }]);
  });

  it('loads with a warning, every event once, and equals a full replay', () => {
    const store = forkedGoal();
    const loaded = store.load('g');
    assert.deepEqual(todoIds(store), ['a', 'b', 'c']);
    assert.ok(
      loaded.warnings.some((w) => /forked \(line 4 continues line 2\)/.test(w)),
      loaded.warnings.join('\n'),
    );
    assert.equal(canonicalJson(store.replayGoal('g').state), canonicalJson(loaded.state));
  });

  it('takes the next write after the last line, and reads the same from every config folder', () => {
    const store = forkedGoal();
    invoke(store, 'todo.add', { goalId: 'g', todoId: 'd', title: 'd' }, agent);
    const parsed = parseLog(fs.readFileSync(store.logPath('g')), 'log', store.writerId());
    assert.deepEqual(
      parsed.events.map((e) => e.seq),
      [1, 2, 3, 3, 4],
    );
    assert.deepEqual(todoIds(store), ['a', 'b', 'c', 'd']);
    // Another clone's view: a config folder of its own (no snapshot, its own pins).
    const elsewhere = new Store(store.workspace, { configDir: path.join(tempDir(), 'config') });
    assert.deepEqual(todoIds(elsewhere), ['a', 'b', 'c', 'd']);
    assert.equal(canonicalJson(elsewhere.load('g').state), canonicalJson(store.load('g').state));
  });

  it('self-repair has nothing to rewrite, and the same line appended twice counts once', () => {
    const store = forkedGoal();
    const report = repair(store);
    assert.deepEqual(
      report.findings.filter((f) => f.goal_id === 'g' && !f.fixed),
      [],
      JSON.stringify(report.findings),
    );
    const last = lines(fs.readFileSync(store.logPath('g'))).at(-1)!;
    fs.appendFileSync(store.logPath('g'), `${last}\n`);
    assert.deepEqual(todoIds(store), ['a', 'b', 'c']);
  });

  it('a line that continues no line of the log is still an edit', () => {
    const store = forkedGoal();
    const all = lines(fs.readFileSync(store.logPath('g')));
    const edited = JSON.parse(all[3]!) as { prev: string };
    edited.prev = '0'.repeat(64);
    fs.writeFileSync(store.logPath('g'), [...all.slice(0, 3), JSON.stringify(edited)].join('\n') + '\n');
    assert.throws(
      () => parseLog(fs.readFileSync(store.logPath('g')), 'log', store.writerId()),
      /log:4: field (seq|prev)/,
    );
  });

  it('a fork line moved into the middle of the log is an edit: the line after it continues a line it does not descend from', () => {
    const store = forkedGoal();
    invoke(store, 'todo.add', { goalId: 'g', todoId: 'd', title: 'd' }, agent);
    invoke(store, 'todo.add', { goalId: 'g', todoId: 'e', title: 'e' }, agent);
    // Lines: 1 goal, 2 a, 3 b, 4 c (the fork, continues 2), 5 d, 6 e. d moved before c, which it continues.
    const all = lines(fs.readFileSync(store.logPath('g')));
    const moved = [all[0]!, all[1]!, all[2]!, all[4]!, all[3]!, all[5]!];
    fs.writeFileSync(store.logPath('g'), moved.join('\n') + '\n');
    assert.throws(
      () => parseLog(fs.readFileSync(store.logPath('g')), 'log', store.writerId()),
      /log:4: field (seq|prev)/,
    );
  });
});
