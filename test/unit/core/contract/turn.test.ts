/**
 * `takeTurn` (`loopx turn`): should-run, the contract's commands through exec in its order,
 * summary_all, in one process; the same checks as the three calls, nothing run that the contract
 * does not list.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { invoke } from '../../../../src/core/capabilities/registry';
import { takeTurn } from '../../../../src/core/contract/turn';
import type { Store } from '../../../../src/core/store/store';
import { human, agent, removeTempDirs } from '../../../helpers/store';
import { goalFixture } from '../../../helpers/contract-kit';

after(removeTempDirs);

const trace = (store: Store, name: string) => path.join(store.workspace, `ran-${name}`);

/** A goal whose person's todos run `touch ran-<id>` (or `action`), in the order given (by priority). */
function goalWith(todos: { id: string; action?: string | null; gate?: string; owner?: 'agent' | 'user' }[]) {
  const f = goalFixture();
  todos.forEach((t, i) =>
    invoke(
      f.store,
      'todo.add',
      {
        goalId: f.goalId,
        todoId: t.id,
        title: `todo ${t.id}`,
        // null: a todo without a command, done by an agent's judgment.
        action: t.action === null ? undefined : (t.action ?? `touch ran-${t.id}`),
        priority: (['P0', 'P1', 'P2', 'P3'] as const)[Math.min(i, 3)],
        owner: t.owner ?? 'agent',
        gate: t.gate,
      },
      human,
    ),
  );
  return f;
}

describe('takeTurn', () => {
  it('runs every command the contract lists, in its order, records each, and ends the run', async () => {
    const { store, goalId } = goalWith([{ id: 'a' }, { id: 'b' }]);
    const { doc, exitCode } = await takeTurn(store, goalId, agent, { agent: 'codex' });
    assert.equal(exitCode, 0);
    assert.equal(doc.decision, 'run');
    assert.deepEqual(
      doc.ran.map((s) => [s.todo_id, s.exit_code, s.todo_done]),
      [
        ['a', 0, true],
        ['b', 0, true],
      ],
    );
    assert.ok(fs.existsSync(trace(store, 'a')) && fs.existsSync(trace(store, 'b')));
    assert.deepEqual(doc.not_run, []);
    const state = store.load(goalId).state;
    const run = state.runs.find((r) => r.contract?.id === doc.contract_id)!;
    assert.equal(run.outcome, 'succeeded', 'the run was ended by the turn');
    assert.deepEqual(
      doc.summary?.ended_runs.map((r) => r.id),
      [run.id],
    );
    assert.equal(state.evidence.filter((e) => e.runId === run.id).length, 2);
  });

  it('stops at the first command that fails: its exit code, the rest not run, the run failed or partial', async () => {
    const { store, goalId } = goalWith([{ id: 'ok' }, { id: 'bad', action: 'exit 3' }, { id: 'after' }]);
    const { doc, exitCode } = await takeTurn(store, goalId, agent, { agent: 'codex' });
    assert.equal(exitCode, 3);
    assert.deepEqual(
      doc.ran.map((s) => [s.todo_id, s.exit_code]),
      [
        ['ok', 0],
        ['bad', 3],
      ],
    );
    assert.deepEqual(
      doc.not_run.map((n) => n.todo_id),
      ['after'],
    );
    assert.equal(fs.existsSync(trace(store, 'after')), false, 'nothing ran after the failure');
    assert.equal(doc.summary?.ended_runs[0]?.outcome, 'partial');
  });

  it('with max, runs that many and lists the others as not run', async () => {
    const { store, goalId } = goalWith([{ id: 'a' }, { id: 'b' }, { id: 'c' }]);
    const { doc } = await takeTurn(store, goalId, agent, { agent: 'codex', max: 1 });
    assert.deepEqual(
      doc.ran.map((s) => s.todo_id),
      ['a'],
    );
    assert.deepEqual(
      doc.not_run.map((n) => n.todo_id),
      ['b', 'c'],
    );
    assert.equal(fs.existsSync(trace(store, 'b')), false);
  });

  it('runs nothing and opens no run when should-run says wait: a gate nobody approved holds its command back', async () => {
    const { store, goalId } = goalWith([{ id: 'deploy', gate: 'prod' }]);
    const { doc, exitCode } = await takeTurn(store, goalId, agent, { agent: 'codex' });
    assert.equal(exitCode, 0);
    assert.notEqual(doc.decision, 'run');
    assert.deepEqual(doc.ran, []);
    assert.equal(doc.contract_id, null);
    assert.equal(doc.summary, null);
    assert.equal(fs.existsSync(trace(store, 'deploy')), false);
    assert.equal(store.load(goalId).state.runs.filter((r) => !r.endedAt).length, 0);
  });

  it('leaves judgment todos (no command) to an agent: they are not in its contract and stay open', async () => {
    const { store, goalId } = goalWith([{ id: 'think', action: null }, { id: 'build' }]);
    const { doc } = await takeTurn(store, goalId, agent, { agent: 'codex' });
    assert.deepEqual(
      doc.ran.map((s) => s.todo_id),
      ['build'],
    );
    const think = store.load(goalId).state.todos.find((t) => t.id === 'think')!;
    assert.notEqual(think.status, 'done');
  });
});
