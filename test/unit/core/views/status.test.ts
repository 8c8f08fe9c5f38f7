/**
 * The read-only status projection: attention order, quota warnings, cumulative burn, rewards,
 * last runs with their evidence and rewards, and `statusAll` served from the index.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { invoke } from '../../../../src/core/capabilities/registry';
import { goalStatus, statusAll, QUOTA_WARNING_RATIO } from '../../../../src/core/views/status';
import { GoalStatusDoc, StatusDoc } from '../../../../src/core/views/status-doc';
import { summaryAll } from '../../../../src/core/contract/summary';
import type { Store } from '../../../../src/core/store/store';
import { human, agent, removeTempDirs, settleIndex, signed } from '../../../helpers/store';
import { goalFixture, quota, throwsLoopx } from '../../../helpers/contract-kit';
import { writeIndex } from '../../../helpers/goal-index';

after(removeTempDirs);

/** One ended run with the given spend; returns its id. */
function run(
  store: Store,
  goalId: string,
  runId: string,
  spend: { tokens?: number; costUsd?: number; wallSeconds?: number } = {},
) {
  invoke(store, 'run.start', { goalId, runId, agent: 'codex' }, agent);
  invoke(store, 'run.end', { goalId, runId, outcome: 'succeeded', ...spend }, agent);
  return runId;
}

describe('goal status', () => {
  it('attention: pending gates first, then user todos, then quota warnings from 80%', () => {
    const { store, goalId } = goalFixture({ quota: quota({ turns: 5, tokens: 1000, costUsd: 1 }) });
    // Created in the "wrong" order on purpose: user todo, gate, user todo, gate.
    invoke(
      store,
      'todo.add',
      { goalId, todoId: 'u1', title: 'pick a name', owner: 'user', priority: 'P1' },
      human,
    );
    invoke(
      store,
      'todo.add',
      { goalId, todoId: 'a1', title: 'deploy', action: 'sh deploy.sh', gate: 'deploy' },
      agent,
    );
    invoke(store, 'todo.add', { goalId, todoId: 'u2', title: 'pay the bill', owner: 'user' }, human);
    invoke(
      store,
      'gate.request',
      { goalId, gateId: 'budget', title: 'More budget', reason: 'costly step' },
      agent,
    );
    run(store, goalId, 'r1', { tokens: 790, costUsd: 0.5 });
    run(store, goalId, 'r2', { costUsd: 0.5 });
    run(store, goalId, 'r3');
    let doc = goalStatus(store, goalId);
    // turns 3/5 = 60%, tokens 79%: no warning yet; cost 1/1: used up.
    assert.deepEqual(
      doc.attention.map((a) => [a.kind, a.id]),
      [
        ['gate', 'deploy'],
        ['gate', 'budget'],
        ['user-todo', 'u1'],
        ['user-todo', 'u2'],
        ['quota', 'costUsd'],
      ],
    );
    assert.match(doc.attention.at(-1)!.title, /costUsd budget used up/);
    assert.equal(doc.attention.at(-1)!.detail, '1 of 1 used');
    assert.equal(doc.attention[1]!.detail, 'costly step');
    run(store, goalId, 'r4', { tokens: 10 }); // turns 4/5 = 80%, tokens 800/1000 = 80%
    doc = goalStatus(store, goalId);
    assert.equal(QUOTA_WARNING_RATIO, 0.8);
    assert.deepEqual(
      doc.attention.filter((a) => a.kind === 'quota').map((a) => [a.id, a.title]),
      [
        ['turns', 'turns budget nearly used up'],
        ['tokens', 'tokens budget nearly used up'],
        ['costUsd', 'costUsd budget used up'],
      ],
    );
    assert.deepEqual([...new Set(doc.attention.map((a) => a.kind))], ['gate', 'user-todo', 'quota']);
    assert.ok(GoalStatusDoc.safeParse(doc).success);

    invoke(store, 'goal.close', { goalId }, human);
    assert.deepEqual(goalStatus(store, goalId).attention, [], 'a closed goal asks nothing of anyone');
  });

  it('attention: a goal without agent todos needs a plan', () => {
    const { store, goalId } = goalFixture();
    assert.deepEqual(
      goalStatus(store, goalId).attention.map((a) => a.kind),
      ['plan'],
    );
    invoke(store, 'todo.add', { goalId, todoId: 'a', title: 'a', action: 'true' }, agent);
    assert.deepEqual(goalStatus(store, goalId).attention, []);
  });

  it('burn is cumulative, oldest first; spend is the sum of the runs', () => {
    const { store, goalId, clock } = goalFixture({ quota: quota({}) });
    const spends = [
      { tokens: 100, costUsd: 0.1, wallSeconds: 10 },
      { tokens: 200, costUsd: 0.2, wallSeconds: 20 },
      { tokens: 300, costUsd: 0.3, wallSeconds: 30.5 },
    ];
    spends.forEach((s, i) => {
      clock.advance(60_000);
      run(store, goalId, `r${i + 1}`, s);
    });
    const doc = goalStatus(store, goalId);
    assert.deepEqual(
      doc.burn.map(({ run_id, turns, tokens, costUsd, wallSeconds }) => ({
        run_id,
        turns,
        tokens,
        costUsd,
        wallSeconds,
      })),
      [
        { run_id: 'r1', turns: 1, tokens: 100, costUsd: 0.1, wallSeconds: 10 },
        { run_id: 'r2', turns: 2, tokens: 300, costUsd: 0.3, wallSeconds: 30 },
        { run_id: 'r3', turns: 3, tokens: 600, costUsd: 0.6, wallSeconds: 60.5 },
      ],
    );
    const ended = store.load(goalId).state.runs.map((r) => r.endedAt);
    assert.deepEqual(
      doc.burn.map((b) => b.at),
      ended,
    );
    assert.deepEqual(doc.quota.spend, { turns: 3, tokens: 600, costUsd: 0.6, wallSeconds: 60.5 });
    assert.equal(doc.quota.window, 'life');
  });

  it('rewards: count, mean and trend in the order given', () => {
    const { store, goalId, clock } = goalFixture();
    for (const id of ['r1', 'r2', 'r3']) run(store, goalId, id);
    assert.deepEqual(goalStatus(store, goalId).rewards, { count: 0, mean: null, trend: [] });
    const scores: [string, number][] = [
      ['r1', 1],
      ['r2', 0],
      ['r3', 0],
      ['r3', -0.5],
    ];
    for (const [runId, score] of scores) {
      clock.advance(1000);
      invoke(store, 'reward.add', { goalId, runId, score, comment: `score ${score}` }, human, signed(store));
    }
    const doc = goalStatus(store, goalId);
    assert.equal(doc.rewards.count, 4);
    assert.equal(doc.rewards.mean, 0.125);
    assert.deepEqual(
      doc.rewards.trend.map((t) => [t.run_id, t.score]),
      scores,
    );
    assert.ok(doc.rewards.trend.every((t, i, a) => i === 0 || t.at > a[i - 1]!.at));
    invoke(store, 'reward.add', { goalId, runId: 'r1', score: 0, comment: 'meh' }, human, signed(store));
    assert.equal(goalStatus(store, goalId).rewards.mean, 0.1);
  });

  it('the last runs, newest first, each with its evidence and rewards', () => {
    const { store, goalId } = goalFixture();
    invoke(store, 'todo.add', { goalId, todoId: 't', title: 't', action: 'true' }, agent);
    for (let i = 1; i <= 12; i++) run(store, goalId, `r${i}`);
    invoke(
      store,
      'evidence.add',
      {
        goalId,
        evidenceId: 'ev-a',
        runId: 'r12',
        todoId: 't',
        kind: 'test',
        summary: 'green\nall 40 tests',
        exitCode: 0,
      },
      agent,
    );
    invoke(
      store,
      'evidence.add',
      { goalId, evidenceId: 'ev-b', runId: 'r11', kind: 'note', summary: 'looked at logs' },
      agent,
    );
    invoke(
      store,
      'reward.add',
      { goalId, runId: 'r12', rewardId: 'rw-1', score: 0.5, comment: 'good' },
      human,
      signed(store),
    );
    const doc = goalStatus(store, goalId);
    assert.equal(doc.runs.length, 10);
    assert.deepEqual(
      doc.runs.map((r) => r.id),
      ['r12', 'r11', 'r10', 'r9', 'r8', 'r7', 'r6', 'r5', 'r4', 'r3'],
    );
    assert.deepEqual(doc.runs[0]!.evidence, [
      { id: 'ev-a', kind: 'test', summary: 'green', exit_code: 0, todo_id: 't' },
    ]);
    assert.deepEqual(doc.runs[0]!.rewards, [{ id: 'rw-1', score: 0.5, comment: 'good' }]);
    assert.deepEqual(
      doc.runs[1]!.evidence.map((e) => e.id),
      ['ev-b'],
    );
    assert.deepEqual(doc.runs[1]!.rewards, []);
    assert.equal(doc.runs[0]!.outcome, 'succeeded');
    assert.equal(doc.burn.length, 12, 'the burn chart covers every run');
  });
});

describe('summaryAll', () => {
  it('ends the open runs with an outcome from their evidence; with an agent, only that agent’s run', () => {
    const { store, goalId } = goalFixture();
    invoke(store, 'todo.add', { goalId, todoId: 't', title: 't', action: 'true' }, agent);
    invoke(store, 'run.start', { goalId, runId: 'mine', agent: 'codex' }, agent);
    invoke(store, 'run.start', { goalId, runId: 'theirs', agent: 'claude' }, agent);
    invoke(store, 'run.start', { goalId, runId: 'third', agent: 'gemini' }, agent);
    invoke(
      store,
      'evidence.add',
      { goalId, runId: 'mine', todoId: 't', kind: 'command', summary: 'exit 1', exitCode: 1 },
      agent,
    );
    const one = summaryAll(store, goalId, agent, { agent: 'codex' });
    assert.deepEqual(
      one.ended_runs.map((r) => [r.id, r.outcome]),
      [['mine', 'failed']],
    );
    const runs = () =>
      Object.fromEntries(store.load(goalId).state.runs.map((r) => [r.id, r.outcome ?? 'open']));
    assert.deepEqual(runs(), { mine: 'failed', theirs: 'open', third: 'open' });
    const rest = summaryAll(store, goalId, human);
    assert.deepEqual(
      rest.ended_runs.map((r) => [r.id, r.outcome]),
      [
        ['theirs', 'partial'],
        ['third', 'partial'],
      ],
    );
    assert.deepEqual(runs(), { mine: 'failed', theirs: 'partial', third: 'partial' });
    assert.deepEqual(rest.progress, { done: 0, total: 1 });
    assert.equal(rest.quota.turns!.used, 3);
  });
});

describe('statusAll', () => {
  it('reads the index, not the goal logs: a goal whose files turned to garbage is still listed', () => {
    const { store } = goalFixture({ goalId: 'alpha' });
    invoke(store, 'goal.create', { goalId: 'beta', title: 'Beta goal' }, human);
    invoke(store, 'todo.add', { goalId: 'beta', todoId: 'x', title: 'x', action: 'true', gate: 'ok' }, agent);
    invoke(store, 'todo.add', { goalId: 'beta', todoId: 'y', title: 'y', action: 'true' }, agent);
    invoke(store, 'todo.complete', { goalId: 'beta', todoId: 'y', summary: 'done' }, agent);
    settleIndex(store);
    const before = statusAll(store);

    fs.writeFileSync(store.logPath('beta'), 'this is not a log\n\u0000\u0001 garbage');
    fs.writeFileSync(store.snapshotPath('beta'), '{ broken');
    throwsLoopx(() => goalStatus(store, 'beta'), 'corrupt', /events\/[\w-]+\.jsonl:1/);

    const doc = statusAll(store);
    assert.ok(StatusDoc.safeParse(doc).success);
    assert.deepEqual(doc.errors, []);
    assert.deepEqual(doc.goals, before.goals);
    const beta = doc.goals.find((g) => g.id === 'beta')!;
    assert.equal(beta.title, 'Beta goal');
    assert.deepEqual(beta.progress, { done: 1, total: 2 });
    assert.equal(beta.pending_gates, 1);
    assert.deepEqual(doc.counts, { active: 2, paused: 0, completed: 0, closed: 0, cancelled: 0 });
    assert.deepEqual(
      doc.attention.map((a) => [a.kind, a.goal_id]),
      [
        ['plan', 'alpha'],
        ['gate', 'beta'],
      ],
    );
  });

  it('a goal folder the index misses is read and listed; one that cannot be read is an error, not a crash', () => {
    const { store } = goalFixture({ goalId: 'alpha' });
    invoke(store, 'goal.create', { goalId: 'beta', title: 'Beta goal' }, human);
    invoke(store, 'goal.create', { goalId: 'gamma', title: 'Gamma goal' }, human);
    writeIndex(store, JSON.stringify({ v: 1, goals: [] }));
    fs.writeFileSync(store.logPath('gamma'), 'garbage\n');
    const doc = statusAll(store);
    assert.deepEqual(
      doc.goals.map((g) => g.id),
      ['alpha', 'beta'],
    );
    assert.equal(doc.errors.length, 1);
    assert.equal(doc.errors[0]!.goal_id, 'gamma');
    assert.match(doc.errors[0]!.message, /events\/[\w-]+\.jsonl:1: not valid JSON/);
  });
});
