/**
 * Issue 3's "Done when" round trip: a goal with three todos (one gated), should-run, exec every
 * listed action as an executor would `eval` it, a person approves the gate, should-run again
 * until the goal is completed; then summary, reward, close, and the status document shows it all.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { shouldRun, ShouldRunOutput } from '../../../../src/core';
import { invoke } from '../../../../src/core/capabilities/registry';
import { execUnderContract } from '../../../../src/core/contract/exec';
import { summaryAll } from '../../../../src/core/contract/summary';
import { effectiveStatus } from '../../../../src/core/model/goal-state';
import { goalStatus, statusAll } from '../../../../src/core/views/status';
import { GoalStatusDoc } from '../../../../src/core/views/status-doc';
import { goalFixture, parseWrapped, quota, sha256, throwsLoopx } from '../../../helpers/contract-kit';
import { agent, human, removeTempDirs, signed } from '../../../helpers/store';

after(removeTempDirs);

describe('round trip', () => {
  it('plan, run, gate, run, completed, summary, reward, close', async () => {
    const { store, goalId, clock } = goalFixture({ quota: quota({ turns: 10, wallSeconds: 600 }) });
    invoke(
      store,
      'todo.add',
      {
        goalId,
        todoId: 'build',
        title: 'Build',
        priority: 'P0',
        action: 'mkdir -p out && echo bundle > out/app.js',
      },
      agent,
    );
    invoke(
      store,
      'todo.add',
      {
        goalId,
        todoId: 'test',
        title: 'Test',
        priority: 'P1',
        action: "test -f out/app.js && echo 'tests pass'",
        dependsOn: ['build'],
      },
      agent,
    );
    invoke(
      store,
      'todo.add',
      {
        goalId,
        todoId: 'release',
        title: 'Release',
        priority: 'P2',
        action: 'cp out/app.js released.js',
        gate: 'ship',
        dependsOn: ['test'],
      },
      agent,
    );
    assert.equal(store.load(goalId).state.gates[0]?.status, 'pending', 'the gate is asked for at once');

    const answers: ShouldRunOutput[] = [];
    const executed: string[] = [];
    let approved = false;
    for (let turn = 0; turn < 8 && effectiveStatus(store.load(goalId).state) !== 'completed'; turn++) {
      const out = shouldRun(store, { goalId }, agent);
      assert.ok(ShouldRunOutput.safeParse(out).success);
      answers.push(out);
      if (out.decision === 'wait') {
        assert.ok(!approved, `waiting after the approval: ${out.reasons.join('; ')}`);
        assert.match(out.reasons[0]!, /only gated work is left: gate ship is pending/);
        const gate = out.interaction_contract.user_channel.gates[0]!;
        assert.equal(gate.id, 'ship');
        assert.equal(gate.action_required, true);
        throwsLoopx(
          () => invoke(store, 'gate.approve', { goalId, gateId: 'ship' }, agent, signed(store)),
          'refused',
          /human-only/,
        );
        invoke(store, 'gate.approve', { goalId, gateId: 'ship', note: 'ship it' }, human, signed(store));
        approved = true;
        continue;
      }
      assert.equal(out.decision, 'run', out.reasons.join('; '));
      const lines = out.interaction_contract.cli_channel.next_cli_actions;
      assert.ok(lines.length > 0);
      for (const line of lines) {
        const a = parseWrapped(line);
        assert.equal(a.contractId, out.interaction_contract.id);
        const res = await execUnderContract(store, {
          contractId: a.contractId,
          todoId: a.todoId,
          command: a.command,
          actor: agent,
        });
        assert.equal(res.exitCode, 0, `${a.todoId} failed`);
        executed.push(a.todoId);
        clock.advance(1000);
      }
    }
    assert.equal(effectiveStatus(store.load(goalId).state), 'completed');
    assert.deepEqual(executed, ['build', 'test', 'release']);
    assert.deepEqual(
      answers.map((a) => a.decision),
      ['run', 'run', 'wait', 'run'],
    );
    assert.equal(
      fs.readFileSync(path.join(store.workspace, 'released.js'), 'utf8'),
      'bundle\n',
      'the commands really ran, in order',
    );

    const summary = summaryAll(store, goalId, agent);
    assert.equal(summary.status, 'completed');
    assert.equal(summary.ended_runs.length, 1, 'the last run was still open');
    assert.equal(summary.ended_runs[0]!.outcome, 'succeeded');
    assert.deepEqual(
      summary.ended_runs[0]!.evidence.map((e) => [e.todo_id, e.exit_code]),
      [['release', 0]],
    );
    assert.deepEqual(summary.progress, { done: 3, total: 3 });
    assert.equal(summary.gates.approved, 1);
    assert.equal(summary.quota.turns!.used, 3);

    const done = shouldRun(store, { goalId }, agent);
    assert.equal(done.decision, 'done');
    assert.equal(done.status, 'completed');

    const runs = store.load(goalId).state.runs;
    assert.equal(runs.length, 3);
    assert.ok(
      runs.every((r) => r.endedAt && r.outcome === 'succeeded'),
      JSON.stringify(runs.map((r) => r.outcome)),
    );
    const last = runs.at(-1)!;
    throwsLoopx(
      () =>
        invoke(
          store,
          'reward.add',
          { goalId, runId: last.id, score: 1, comment: 'clean' },
          agent,
          signed(store),
        ),
      'refused',
      /human-only/,
    );
    invoke(
      store,
      'reward.add',
      { goalId, runId: runs[0]!.id, score: 0.5, comment: 'slow start' },
      human,
      signed(store),
    );
    invoke(store, 'goal.close', { goalId, reason: 'released' }, human);
    invoke(
      store,
      'reward.add',
      { goalId, runId: last.id, score: 1, comment: 'clean release', lesson: 'ask for the gate early' },
      human,
      signed(store),
    );

    const after = shouldRun(store, { goalId }, agent);
    assert.equal(after.decision, 'stop');

    const doc = goalStatus(store, goalId);
    assert.ok(GoalStatusDoc.safeParse(doc).success);
    assert.equal(doc.status, 'closed');
    assert.deepEqual(doc.progress, { done: 3, total: 3 });
    assert.deepEqual(doc.counts.todos, { open: 0, claimed: 0, done: 3, cancelled: 0 });
    assert.deepEqual(doc.counts.gates, { pending: 0, approved: 1, rejected: 0, expired: 0 });
    assert.equal(doc.gates[0]!.decided_by, 'user:alice');
    assert.equal(doc.gates[0]!.note, 'ship it');
    assert.deepEqual(doc.attention, []);
    assert.equal(doc.quota.spend.turns, 3);
    assert.ok(doc.quota.spend.wallSeconds > 0);
    assert.equal(doc.burn.length, 3);
    assert.equal(doc.burn.at(-1)!.turns, 3);
    assert.deepEqual(
      doc.runs.map((r) => r.id),
      runs.map((r) => r.id).reverse(),
      'newest run first',
    );
    assert.deepEqual(
      doc.runs[0]!.evidence.map((e) => [e.todo_id, e.exit_code]),
      [['release', 0]],
    );
    assert.deepEqual(
      doc.runs[0]!.rewards.map((w) => w.comment),
      ['clean release'],
    );
    assert.deepEqual(
      doc.runs[2]!.evidence.map((e) => e.todo_id),
      ['build'],
    );
    for (const r of doc.runs) {
      for (const e of r.evidence) {
        const ev = store.load(goalId).state.evidence.find((x) => x.id === e.id)!;
        assert.equal(
          sha256(fs.readFileSync(path.join(store.goalDir(goalId), e.artifact!))),
          ev.artifact!.sha256,
        );
      }
    }
    assert.deepEqual(doc.rewards, {
      count: 2,
      mean: 0.75,
      trend: [
        { at: doc.rewards.trend[0]!.at, run_id: runs[0]!.id, score: 0.5 },
        { at: doc.rewards.trend[1]!.at, run_id: last.id, score: 1 },
      ],
    });
    assert.deepEqual(
      doc.todos.map((t) => [t.id, t.status, t.evidence.length]),
      [
        ['build', 'done', 1],
        ['test', 'done', 1],
        ['release', 'done', 1],
      ],
    );

    const all = statusAll(store);
    assert.deepEqual(
      all.goals.map((g) => [g.id, g.status, g.progress.done]),
      [[goalId, 'closed', 3]],
    );
    assert.equal(all.counts.closed, 1);
  });
});
