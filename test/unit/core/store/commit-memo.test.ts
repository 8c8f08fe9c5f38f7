/**
 * A commit resumes from where this process's last commit left the goal (store/commit.ts) instead of
 * reading the snapshot, and plans get the live state instead of a copy. Neither may change what a
 * commit sees or returns.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { Store } from '../../../../src/core/store/store';
import { invoke } from '../../../../src/core/capabilities/registry';
import { SNAPSHOT_EVERY } from '../../../../src/core/store/snapshot';
import { human, agent, tempDir, removeTempDirs } from '../../../helpers/store';

after(removeTempDirs);

function goal() {
  const ws = tempDir();
  const store = Store.init(ws);
  invoke(store, 'goal.create', { goalId: 'g', title: 'G' }, human);
  return { ws, store };
}

const titles = (s: Store) => s.load('g').state.todos.map((t) => t.title);

describe('commits that resume from memory', () => {
  it('two processes of one clone (one log) each see the events the other appended', () => {
    const { ws, store: a } = goal();
    const b = Store.open(ws);
    for (let i = 0; i < 12; i++) {
      const [me, other] = i % 2 ? [b, a] : [a, b];
      const r = invoke(me, 'todo.add', { goalId: 'g', todoId: `t${i}`, title: `#${i}` }, agent);
      assert.equal(r.state.todos.length, i + 1, `commit ${i} saw every earlier todo`);
      assert.equal(r.revision, i + 2);
      assert.ok(other !== me);
    }
    const replayed = a.replayGoal('g');
    assert.deepEqual(a.load('g').state, replayed.state);
    assert.equal(a.readLog('g').events.length, 13, 'one log, every event, a valid chain');
  });

  it('a state a commit returned is not changed by the commits after it', () => {
    const { store } = goal();
    const r1 = invoke(store, 'todo.add', { goalId: 'g', todoId: 'a', title: 'a' }, agent);
    const r2 = invoke(store, 'todo.add', { goalId: 'g', todoId: 'b', title: 'b' }, agent);
    const r3 = invoke(store, 'todo.update', { goalId: 'g', todoId: 'a', note: 'n' }, agent);
    assert.deepEqual(
      r1.state.todos.map((t) => t.id),
      ['a'],
    );
    assert.deepEqual(
      r2.state.todos.map((t) => t.id),
      ['a', 'b'],
    );
    assert.equal(r2.state.todos[0]!.note, undefined, 'the update did not reach an earlier result');
    assert.equal(r3.state.todos[0]!.note, 'n');
    // Changing a returned state changes nothing the next commit sees.
    r3.state.todos[0]!.title = 'changed by the caller';
    const r4 = invoke(store, 'todo.add', { goalId: 'g', todoId: 'c', title: 'c' }, agent);
    assert.equal(r4.state.todos[0]!.title, 'a');
  });

  it('a refused call leaves the next commit on the same state as a replay', () => {
    const { store } = goal();
    invoke(store, 'todo.add', { goalId: 'g', todoId: 'a', title: 'a' }, agent);
    invoke(store, 'todo.add', { goalId: 'g', todoId: 'b', title: 'b' }, agent);
    assert.throws(() => invoke(store, 'todo.add', { goalId: 'g', todoId: 'a', title: 'again' }, agent));
    assert.throws(
      () =>
        store.commit(
          'g',
          () => {
            throw new Error('refused');
          },
          { actor: agent },
        ),
      /refused/,
    );
    invoke(store, 'todo.add', { goalId: 'g', todoId: 'c', title: 'c' }, agent);
    assert.deepEqual(titles(store), ['a', 'b', 'c']);
    assert.deepEqual(store.load('g').state, store.replayGoal('g').state);
  });

  it('a plan that changes the state it is shown fails the call, and nothing is written', () => {
    const { store } = goal();
    invoke(store, 'todo.add', { goalId: 'g', todoId: 'a', title: 'a' }, agent);
    const before = fs.readFileSync(store.logPath('g'));
    assert.equal(process.env.LOOPX_CHECK_PLANS, '1', 'the test runs check plans');
    assert.throws(
      () =>
        store.commit(
          'g',
          (state) => {
            state!.title = 'changed without an event';
            return [];
          },
          { actor: agent },
        ),
      /a plan changed the state it was shown/,
    );
    assert.deepEqual(fs.readFileSync(store.logPath('g')), before);
    assert.equal(store.load('g').state.title, 'G');
  });

  it('keeps the snapshot at most SNAPSHOT_EVERY events behind, and rewrites a damaged one', () => {
    const { ws, store: a } = goal();
    const b = Store.open(ws);
    for (let i = 0; i < 3 * SNAPSHOT_EVERY + 3; i++) {
      const s = i % 3 ? a : b;
      invoke(s, 'todo.add', { goalId: 'g', todoId: `t${i}`, title: `#${i}` }, agent);
      const snap = a.readSnapshot('g').snap!;
      assert.ok(s.load('g').revision - snap.revision < SNAPSHOT_EVERY, `after commit ${i}`);
    }
    fs.writeFileSync(a.snapshotPath('g'), 'damaged\n');
    invoke(a, 'todo.add', { goalId: 'g', todoId: 'x', title: 'x' }, agent);
    const { snap, problem } = a.readSnapshot('g');
    assert.equal(problem, undefined);
    assert.equal(snap!.revision, a.load('g').revision, 'the next commit wrote a current one');
  });

  it("a process's first commit to a goal leaves the snapshot current; later ones keep to SNAPSHOT_EVERY", () => {
    const { ws, store: writer } = goal();
    for (let i = 0; i < 3; i++)
      invoke(writer, 'todo.add', { goalId: 'g', todoId: `w${i}`, title: `#${i}` }, agent);
    const behind = writer.load('g').revision - writer.readSnapshot('g').snap!.revision;
    assert.ok(behind > 0, 'a long-lived writer leaves the snapshot behind between its snapshots');
    const cli = Store.open(ws); // a `loopx` call: one commit, then the process ends
    invoke(cli, 'todo.add', { goalId: 'g', todoId: 'c', title: 'c' }, agent);
    assert.equal(cli.readSnapshot('g').snap!.revision, cli.load('g').revision, 'the next call has no tail');
    invoke(cli, 'todo.add', { goalId: 'g', todoId: 'c2', title: 'c2' }, agent);
    assert.equal(
      cli.load('g').revision - cli.readSnapshot('g').snap!.revision,
      1,
      'the second commit did not write it',
    );
  });

  it('a one-shot store (a loopx call) leaves the snapshot current after every commit', () => {
    const { ws } = goal();
    // exec commits twice (its claim, then its evidence): the call after it reads no tail.
    const call = Store.open(ws, { oneShot: true });
    for (let i = 0; i < 3; i++) {
      invoke(call, 'todo.add', { goalId: 'g', todoId: `o${i}`, title: `#${i}` }, agent);
      assert.equal(call.readSnapshot('g').snap!.revision, call.load('g').revision, `after commit ${i + 1}`);
    }
    assert.equal(Store.open(ws).load('g').snapshotLag, 0, 'the next call resumes with no tail');
  });

  it("another writer's log (a pull) is read: the memory is not trusted past it", () => {
    const { ws, store } = goal();
    invoke(store, 'todo.add', { goalId: 'g', todoId: 'a', title: 'a' }, agent);
    invoke(store, 'todo.add', { goalId: 'g', todoId: 'b', title: 'b' }, agent);
    // A teammate's clone: the same goal, its own writer id and log.
    const other = tempDir();
    fs.cpSync(`${ws}/.loopx`, `${other}/.loopx`, { recursive: true });
    fs.rmSync(`${other}/.loopx/local`, { recursive: true });
    const mate = Store.open(other);
    invoke(mate, 'todo.add', { goalId: 'g', todoId: 'm', title: 'from a teammate' }, agent);
    const theirs = mate.logPath('g');
    fs.copyFileSync(theirs, theirs.replace(other, ws));
    const r = invoke(store, 'todo.add', { goalId: 'g', todoId: 'c', title: 'c' }, agent);
    assert.deepEqual(r.state.todos.map((t) => t.id).sort(), ['a', 'b', 'c', 'm']);
    assert.deepEqual(store.load('g').state, store.replayGoal('g').state);
  });
});
