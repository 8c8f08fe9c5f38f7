/**
 * What a contract issued to a lane of `loopx drive` means on the goal: it takes at most the lane's
 * share of todos, claims them as leases (renewed while the turn lives, lapsed when it dies, then
 * free for another), runs its commands in the lane's worktree, and recurring todos come back when
 * due, once per due slot however long nobody looked.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { openTurn } from '../../../../src/core/contract/issue';
import { execUnderContract } from '../../../../src/core/contract/exec';
import { invoke } from '../../../../src/core/capabilities/registry';
import { effectiveStatus } from '../../../../src/core/model/goal-state';
import { parseRecurrence } from '../../../../src/core/rules/recurrence';
import type { Store } from '../../../../src/core/store/store';
import { goalFixture, throwsLoopx } from '../../../helpers/contract-kit';
import { human, removeTempDirs, tempDir } from '../../../helpers/store';

after(removeTempDirs);

const HOUR = 3600_000;
const DRIVER = { kind: 'system', id: 'loopx-drive', channel: 'system' } as const;
const actor = (id: string) => ({ kind: 'agent', id, channel: 'cli' }) as const;

function addTodo(store: Store, goalId: string, todoId: string, more: Record<string, unknown> = {}) {
  invoke(
    store,
    'todo.add',
    { goalId, todoId, title: `do ${todoId}`, action: `echo ${todoId}`, ...more },
    human,
  );
}

function laneTurn(
  store: Store,
  goalId: string,
  lane: string,
  more: { cwd?: string; leaseSeconds?: number } = {},
) {
  const agent = `lane:${lane}`;
  return openTurn(
    store,
    {
      goalId,
      agent,
      lane: { name: lane, leaseSeconds: more.leaseSeconds ?? 600, cwd: more.cwd, todosPerTurn: 1 },
    },
    actor(agent),
  );
}

describe('a lane’s contract', () => {
  it('lists one todo, claims it as a lease, names the lane, and leaves the next todo to another lane', () => {
    const { store, goalId, clock } = goalFixture();
    for (const id of ['t1', 't2', 't3']) addTodo(store, goalId, id);
    const a = laneTurn(store, goalId, 'a');
    const b = laneTurn(store, goalId, 'b');
    assert.deepEqual(
      a.contract?.actions.map((x) => x.todoId),
      ['t1'],
    );
    assert.deepEqual(
      b.contract?.actions.map((x) => x.todoId),
      ['t2'],
      'the claimed todo goes to nobody else',
    );
    assert.equal(a.contract?.lane, 'a');
    assert.equal(a.contract?.lease, 600);
    const t1 = store.load(goalId).state.todos.find((t) => t.id === 't1')!;
    assert.equal(t1.status, 'claimed');
    assert.equal(t1.claimedBy, 'lane:a');
    assert.equal(t1.leaseUntil, new Date(clock.now().getTime() + 600_000).toISOString());
  });

  it('a lapsed lease frees the todo for another lane; a live one never does', () => {
    const { store, goalId, clock } = goalFixture();
    addTodo(store, goalId, 't1');
    const a = laneTurn(store, goalId, 'a', { leaseSeconds: 60 });
    assert.deepEqual(
      a.contract?.actions.map((x) => x.todoId),
      ['t1'],
    );
    clock.advance(30_000);
    assert.equal(laneTurn(store, goalId, 'b').contract, undefined, 'a live lease holds the todo');
    invoke(store, 'todo.renew', { goalId, todoId: 't1', by: 'lane:a', leaseSeconds: 60 }, DRIVER);
    clock.advance(45_000);
    assert.equal(
      laneTurn(store, goalId, 'b').contract,
      undefined,
      'renewed: still held 75 s after the claim',
    );
    clock.advance(16_000);
    const b = laneTurn(store, goalId, 'b');
    assert.deepEqual(
      b.contract?.actions.map((x) => x.todoId),
      ['t1'],
      'lapsed: lane b takes it',
    );
    const state = store.load(goalId).state;
    assert.equal(state.todos[0]!.claimedBy, 'lane:b');
    assert.deepEqual(state.overruled ?? [], [], 'the takeover is not overruled on replay');
    // The lane that lost it can no longer renew it.
    throwsLoopx(
      () => invoke(store, 'todo.renew', { goalId, todoId: 't1', by: 'lane:a', leaseSeconds: 60 }, DRIVER),
      'refused',
      /not claimed by lane:a/,
    );
  });

  it('runs its command in the lane’s worktree, and claims with a lease when exec claims', async () => {
    const { store, goalId } = goalFixture();
    const cwd = tempDir();
    addTodo(store, goalId, 't1', { action: 'pwd > where.txt' });
    const { contract } = laneTurn(store, goalId, 'a', { cwd });
    assert.equal(contract?.cwd, cwd);
    const r = await execUnderContract(store, {
      contractId: contract!.id,
      todoId: 't1',
      command: 'pwd > where.txt',
      actor: actor('lane:a'),
      agent: 'lane:a',
    });
    assert.equal(r.exitCode, 0);
    assert.equal(fs.readFileSync(path.join(cwd, 'where.txt'), 'utf8').trim(), fs.realpathSync(cwd));
    assert.ok(!fs.existsSync(path.join(store.workspace, 'where.txt')), 'not in the workspace');
  });
});

describe('a recurring todo', () => {
  it('comes back when due, once per slot, and the goal is never completed meanwhile', () => {
    const { store, goalId, clock } = goalFixture();
    const recur = parseRecurrence({ every: '1h', tz: 'UTC' }, clock.now());
    addTodo(store, goalId, 'watch', { recur });
    const first = openTurn(store, { goalId, agent: 'w' }, actor('w'));
    assert.equal(first.out.decision, 'run');
    invoke(
      store,
      'todo.complete',
      { goalId, todoId: 'watch', runId: first.contract!.runId, summary: 'ok' },
      actor('w'),
    );
    invoke(store, 'run.end', { goalId, runId: first.contract!.runId, outcome: 'succeeded' }, actor('w'));
    let state = store.load(goalId).state;
    assert.equal(effectiveStatus(state), 'active', 'a goal that keeps watch is not completed');
    const idle = openTurn(store, { goalId, agent: 'w' }, actor('w')).out;
    assert.equal(idle.decision, 'wait');
    assert.equal(idle.retry_after_seconds, 3600);
    assert.match(idle.reasons[0]!, /recurring todo watch is next due at 2026-11-30T11:00:00.000Z/);

    clock.advance(7 * 24 * HOUR);
    const due = openTurn(store, { goalId, agent: 'w' }, actor('w'));
    assert.equal(due.out.decision, 'run');
    state = store.load(goalId).state;
    const reopened = store.readLog(goalId).events.filter((e) => e.type === 'todo.reopened');
    assert.equal(reopened.length, 1, 'a week off reopens it once');
    assert.equal(
      reopened[0]!.type === 'todo.reopened' && reopened[0]!.data.due,
      new Date(clock.now().getTime()).toISOString().replace(/:\d\d:\d\d\.\d+Z$/, ':00:00.000Z'),
      'for the latest slot',
    );
    assert.equal(state.todos[0]!.status, 'open');
    // Asking again before it is done reopens nothing more.
    openTurn(store, { goalId, agent: 'w' }, actor('w'));
    assert.equal(store.readLog(goalId).events.filter((e) => e.type === 'todo.reopened').length, 1);
  });
});
