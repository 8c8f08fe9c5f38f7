/**
 * Idempotency keys (issue 35): a commit named with a call key carries it on its events; the same
 * call again appends nothing and is answered with the events written then (`replayed`), the ids
 * its input generated included; a key found nowhere in the log is a new call.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { invoke } from '../../../../src/core/capabilities/registry';
import { Store } from '../../../../src/core/store/store';
import { agent, human, removeTempDirs, tempStore } from '../../../helpers/store';

after(removeTempDirs);

describe('a call named with an idempotency key', () => {
  it('is written once: the same call again answers with the first events, ids and all', () => {
    const store = tempStore();
    invoke(store, 'goal.create', { goalId: 'g', title: 'G' }, human);
    const plan = () => [
      {
        type: 'todo.added' as const,
        data: {
          todo: { id: 't1', title: 'T', owner: 'agent' as const, priority: 'P2' as const, dependsOn: [] },
        },
      },
    ];
    const first = store.commit('g', plan, { actor: agent, call: 'job-1#1' });
    assert.equal(first.events[0]!.call, 'job-1#1');
    assert.equal(first.replayed, undefined);
    const log = fs.readFileSync(store.logPath('g'));
    const again = store.commit('g', plan, { actor: agent, call: 'job-1#1' });
    assert.equal(again.replayed, true);
    assert.deepEqual(again.events, first.events);
    assert.deepEqual(fs.readFileSync(store.logPath('g')), log, 'the retry appended');
    // Another key is another call (refused here: the todo exists).
    assert.throws(() => store.commit('g', plan, { actor: agent, call: 'job-2#1' }), /t1/);
  });

  it('through invoke and a store key: the n-th commit is <key>#n, and a retry reports the ids generated the first time', () => {
    const ws = tempStore().workspace;
    const person = new Store(ws);
    invoke(person, 'goal.create', { goalId: 'g', title: 'G' }, human);
    const first = invoke(
      new Store(ws, { callKey: 'run-a' }),
      'todo.add',
      { goalId: 'g', title: 'Generated id' },
      agent,
    );
    assert.match(first.events[0]!.call!, /^run-a#\d+$/);
    const n = Number(first.events[0]!.call!.split('#')[1]);
    // (This process counts on from n: a retry is a new process, simulated below by naming the call.)
    const retry = invoke(new Store(ws), 'todo.add', { goalId: 'g', title: 'Generated id' }, agent, {});
    assert.notEqual(retry.input.todoId, first.input.todoId, 'without a key it is a new call');
    const store = new Store(ws);
    const again = store.commit('g', () => [], { actor: agent, call: `run-a#${n}` });
    assert.equal(again.replayed, true);
    assert.equal((again.events[0]!.data as { todo: { id: string } }).todo.id, first.input.todoId);
    assert.throws(
      () => new Store(ws, { callKey: 'no spaces' }),
      /idempotency key "no spaces" is not a valid id/,
    );
  });

  it('a retried goal creation finds its goal instead of being refused as a duplicate', () => {
    const store = tempStore();
    const created = invoke(store, 'goal.create', { goalId: 'g', title: 'G' }, human);
    const plan = () => created.events.map((e) => ({ type: e.type, data: e.data }) as never);
    assert.throws(() => store.commit('g', plan, { actor: human, create: true }), /goal g already exists/);
    const log = fs.readFileSync(store.logPath('g'));
    // As if the creation had been named job-9#1: a copy of its log with the call on the event.
    const line = JSON.parse(log.toString().trim()) as Record<string, unknown>;
    fs.writeFileSync(store.logPath('g'), JSON.stringify({ ...line, call: 'job-9#1' }) + '\n');
    const again = store.commit('g', plan, { actor: human, create: true, call: 'job-9#1' });
    assert.equal(again.replayed, true);
    assert.equal(again.state.title, 'G');
  });
});
