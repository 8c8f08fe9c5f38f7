/**
 * The interaction contract (`quota should-run`): every branch of the decision order, budgets,
 * grants, rolling windows, cooldown, gates, policy patterns, judgment todos, one open run per
 * agent, preview, expiry, the output schema and size, and the signature over every field.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import {
  contractSignatureValid,
  decide,
  MAX_ACTIONS,
  SHOULD_RUN_SCHEMA,
  shouldRun,
  ShouldRunOutput,
} from '../../../../src/core';
import { invoke } from '../../../../src/core/capabilities/registry';
import { checkJudgment } from '../../../../src/core/contract/exec';
import { summaryAll } from '../../../../src/core/contract/summary';
import type { BudgetName, Contract } from '../../../../src/core/model/goal-state';
import { BUDGET_NAMES } from '../../../../src/core/model/goal-state';
import type { Store } from '../../../../src/core/store/store';
import { goalFixture, parseWrapped, quota, throwsLoopx, writePolicy } from '../../../helpers/contract-kit';
import { agent, human, removeTempDirs, signed } from '../../../helpers/store';

after(removeTempDirs);

const other = { kind: 'agent', id: 'claude', channel: 'hook' } as const;
const MIN = 60_000;

function addTodo(store: Store, goalId: string, todoId: string, more: Record<string, unknown> = {}) {
  return invoke(
    store,
    'todo.add',
    { goalId, todoId, title: `do ${todoId}`, action: `echo ${todoId}`, ...more },
    agent,
  );
}
function runsOf(store: Store, goalId: string) {
  return store.load(goalId).state.runs;
}
function logSize(store: Store, goalId: string) {
  return fs.statSync(store.logPath(goalId)).size;
}
function listed(out: ShouldRunOutput) {
  return out.interaction_contract.cli_channel.next_cli_actions.map((l) => parseWrapped(l).todoId);
}

describe('decision order: first match wins', () => {
  it('a closed or cancelled goal stops, and no run opens', () => {
    for (const [cap, word] of [
      ['goal.close', 'closed'],
      ['goal.cancel', 'cancelled'],
    ] as const) {
      const { store, goalId } = goalFixture();
      addTodo(store, goalId, 'a');
      invoke(store, cap, { goalId }, human);
      const out = shouldRun(store, { goalId }, agent);
      assert.equal(out.decision, 'stop');
      assert.equal(out.status, word);
      assert.match(out.reasons.join(' '), new RegExp(`goal is ${word}`));
      assert.equal(out.interaction_contract.id, null);
      assert.deepEqual(out.interaction_contract.cli_channel.next_cli_actions, []);
      assert.equal(runsOf(store, goalId).length, 0);
    }
  });

  it('closed wins over an exhausted budget; paused wins over an exhausted budget', () => {
    const { store, goalId, clock } = goalFixture({ quota: quota({ turns: 1 }) });
    addTodo(store, goalId, 'a');
    shouldRun(store, { goalId }, agent);
    summaryAll(store, goalId, agent);
    clock.advance(1000);
    assert.match(shouldRun(store, { goalId }, agent).reasons[0]!, /turns budget/);
    invoke(store, 'goal.pause', { goalId }, human);
    const paused = shouldRun(store, { goalId }, agent);
    assert.equal(paused.decision, 'stop');
    assert.match(paused.reasons.join(' '), /paused/);
    assert.doesNotMatch(paused.reasons.join(' '), /budget/);
    invoke(store, 'goal.close', { goalId }, human);
    const closed = shouldRun(store, { goalId }, agent);
    assert.match(closed.reasons.join(' '), /closed/);
    assert.doesNotMatch(closed.reasons.join(' '), /budget|paused/);
  });

  it('a paused goal stops and says how to resume; resuming runs again', () => {
    const { store, goalId } = goalFixture();
    addTodo(store, goalId, 'a');
    invoke(store, 'goal.pause', { goalId, reason: 'holiday' }, human);
    const out = shouldRun(store, { goalId }, agent);
    assert.equal(out.decision, 'stop');
    assert.match(out.reasons.join(' '), /paused.*resume/);
    assert.equal(runsOf(store, goalId).length, 0);
    invoke(store, 'goal.resume', { goalId }, human);
    assert.equal(shouldRun(store, { goalId }, agent).decision, 'run');
  });

  it('an exhausted budget wins over the cooldown, and the cooldown wins over a missing plan', () => {
    const { store, goalId, clock } = goalFixture({ quota: quota({ turns: 1 }, { cooldownSeconds: 600 }) });
    invoke(store, 'run.start', { goalId, runId: 'r-1', agent: 'codex' }, agent);
    invoke(store, 'run.end', { goalId, runId: 'r-1', outcome: 'partial' }, agent);
    clock.advance(1000);
    const stop = shouldRun(store, { goalId }, agent);
    assert.equal(stop.decision, 'stop');
    assert.match(stop.reasons[0]!, /turns budget is used up \(1 of 1\)/);
    invoke(store, 'quota.grant', { goalId, budgets: { turns: 5 } }, human, signed(store));
    const wait = shouldRun(store, { goalId }, agent);
    assert.equal(wait.decision, 'wait');
    assert.match(wait.reasons[0]!, /cooldown/);
    assert.equal(wait.retry_after_seconds, 599);
    clock.advance(600_000);
    const plan = shouldRun(store, { goalId }, agent);
    assert.equal(plan.decision, 'wait');
    assert.match(plan.reasons[0]!, /plan/);
  });
});

describe('budgets, grants, windows and cooldown', () => {
  /** Spends `amount` of `budget` in one ended run. */
  function spend(store: Store, goalId: string, budget: BudgetName, amount: number) {
    const out = shouldRun(store, { goalId }, agent);
    assert.equal(out.decision, 'run', `expected run before spending: ${out.reasons.join('; ')}`);
    const runId = out.run_id!;
    if (budget !== 'turns') invoke(store, 'run.spend', { goalId, runId, [budget]: amount }, agent);
    summaryAll(store, goalId, agent);
  }
  const limits: Record<BudgetName, { limit: number; step: number; label: RegExp }> = {
    turns: { limit: 2, step: 1, label: /the turns budget is used up \(2 of 2\)/ },
    tokens: { limit: 1000, step: 500, label: /the tokens budget is used up \(1000 of 1000\)/ },
    costUsd: { limit: 0.5, step: 0.25, label: /the cost \(USD\) budget is used up \(0\.5 of 0\.5\)/ },
    wallSeconds: { limit: 60, step: 30, label: /the wall time \(s\) budget is used up \(60 of 60\)/ },
  };

  for (const budget of BUDGET_NAMES) {
    it(`${budget}: runs below the limit, stops naming the budget at it, and a person's grant turns it back to run`, () => {
      const { limit, step, label } = limits[budget];
      const { store, goalId } = goalFixture({ quota: quota({ [budget]: limit }) });
      addTodo(store, goalId, 'a');
      spend(store, goalId, budget, step); // half used
      spend(store, goalId, budget, step); // all used (the second `run` is below the limit)
      const runs = runsOf(store, goalId).length;
      const stop = shouldRun(store, { goalId }, agent);
      assert.equal(stop.decision, 'stop');
      assert.match(stop.reasons[0]!, label);
      assert.match(stop.reasons[0]!, /grant/);
      assert.deepEqual(stop.quota[budget], { used: limit, limit, left: 0 });
      assert.equal(stop.interaction_contract.id, null);
      assert.equal(runsOf(store, goalId).length, runs, 'a stop opens no run');

      throwsLoopx(
        () => invoke(store, 'quota.grant', { goalId, budgets: { [budget]: step } }, agent, signed(store)),
        'refused',
        /human-only/,
      );
      invoke(
        store,
        'quota.grant',
        { goalId, budgets: { [budget]: step }, note: 'one more go' },
        human,
        signed(store),
      );
      const again = shouldRun(store, { goalId }, agent);
      assert.equal(again.decision, 'run', again.reasons.join('; '));
      assert.equal(again.quota[budget]!.limit, limit + step);
      assert.ok(again.interaction_contract.id);
    });
  }

  it('the turn of a new or open run never turns its own answer into stop (turns budget of 1)', () => {
    const { store, goalId } = goalFixture({ quota: quota({ turns: 1 }) });
    addTodo(store, goalId, 'a');
    const first = shouldRun(store, { goalId }, agent);
    assert.equal(first.decision, 'run', first.reasons.join('; '));
    assert.ok(first.interaction_contract.id, 'the contract of the run just opened is returned');
    assert.deepEqual(first.quota.turns, { used: 1, limit: 1, left: 0 });
    const poll = shouldRun(store, { goalId }, agent);
    assert.equal(poll.decision, 'run', poll.reasons.join('; '));
    assert.equal(poll.interaction_contract.id, first.interaction_contract.id);
    summaryAll(store, goalId, agent);
    const after = shouldRun(store, { goalId }, agent);
    assert.equal(after.decision, 'stop');
    assert.match(after.reasons[0]!, /turns budget/);
  });

  it('a rolling window: runs older than the window stop counting', () => {
    const { store, goalId, clock } = goalFixture({
      quota: quota({ turns: 1 }, { window: { kind: 'rolling', hours: 1 } }),
    });
    addTodo(store, goalId, 'a');
    assert.equal(shouldRun(store, { goalId }, agent).decision, 'run');
    summaryAll(store, goalId, agent);
    clock.advance(30 * MIN);
    const stop = shouldRun(store, { goalId }, agent);
    assert.equal(stop.decision, 'stop');
    assert.match(stop.reasons[0]!, /turns budget is used up \(1 of 1\)/);
    clock.advance(30 * MIN + 1000); // the run started more than an hour ago now
    const run = shouldRun(store, { goalId }, agent);
    assert.equal(run.decision, 'run', run.reasons.join('; '));
    assert.deepEqual(run.quota.turns, { used: 1, limit: 1, left: 0 }, 'only the new run counts');
    assert.equal(runsOf(store, goalId).length, 2);
  });

  it('the cooldown answers wait with retry_after_seconds counted from the end of the last turn', () => {
    const { store, goalId, clock } = goalFixture({ quota: quota({}, { cooldownSeconds: 60 }) });
    addTodo(store, goalId, 'a');
    assert.equal(shouldRun(store, { goalId }, agent).decision, 'run');
    clock.advance(20_000);
    summaryAll(store, goalId, agent); // the turn ends now
    clock.advance(15_000);
    const wait = shouldRun(store, { goalId }, agent);
    assert.equal(wait.decision, 'wait');
    assert.equal(wait.retry_after_seconds, 45);
    assert.match(wait.reasons[0]!, /cooldown.*45 s left of 60 s/);
    assert.equal(wait.interaction_contract.id, null);
    assert.equal(runsOf(store, goalId).length, 1);
    clock.advance(45_000);
    assert.equal(shouldRun(store, { goalId }, agent).decision, 'run');
  });
});

describe('plan, done, gates, dependencies, claims and order', () => {
  it('no todos: wait for a plan, and the person is asked to add todos', () => {
    const { store, goalId } = goalFixture();
    const out = shouldRun(store, { goalId }, agent);
    assert.equal(out.decision, 'wait');
    assert.match(out.reasons[0]!, /no agent todos yet.*plan/);
    assert.equal(typeof out.retry_after_seconds, 'number');
    assert.equal(out.interaction_contract.user_channel.action_required, true);
    assert.match(out.interaction_contract.user_channel.message!, /loopx todo add --goal-id g/);
    assert.equal(out.interaction_contract.agent_channel.primary, null);
    assert.equal(runsOf(store, goalId).length, 0);
  });

  it('only todos for a person: still waiting for an agent plan, with the person’s todos listed', () => {
    const { store, goalId } = goalFixture();
    invoke(store, 'todo.add', { goalId, todoId: 'u1', title: 'sign the contract', owner: 'user' }, human);
    const out = shouldRun(store, { goalId }, agent);
    assert.equal(out.decision, 'wait');
    assert.deepEqual(out.interaction_contract.user_channel.todos, [{ id: 'u1', title: 'sign the contract' }]);
    assert.equal(out.interaction_contract.user_channel.action_required, true);
  });

  it('every agent todo done: done (an open user todo does not hold it back)', () => {
    const { store, goalId } = goalFixture();
    addTodo(store, goalId, 'a');
    addTodo(store, goalId, 'b', { action: undefined });
    invoke(store, 'todo.add', { goalId, todoId: 'u1', title: 'celebrate', owner: 'user' }, human);
    invoke(store, 'todo.complete', { goalId, todoId: 'a', summary: 'ok' }, agent);
    assert.equal(shouldRun(store, { goalId }, agent).decision, 'run', 'b is still open');
    summaryAll(store, goalId, agent);
    invoke(store, 'todo.complete', { goalId, todoId: 'b', summary: 'ok' }, agent);
    const out = shouldRun(store, { goalId }, agent);
    assert.equal(out.decision, 'done');
    assert.equal(out.status, 'completed');
    assert.match(out.reasons[0]!, /every agent todo is done/);
    assert.equal(out.interaction_contract.id, null);
  });

  it('a pending gate: its todo is skipped, the others run, and the gate is in user_channel', () => {
    const { store, goalId } = goalFixture();
    addTodo(store, goalId, 'a', { priority: 'P2' });
    addTodo(store, goalId, 'deploy-it', { priority: 'P0', action: 'sh deploy.sh', gate: 'deploy' });
    const out = shouldRun(store, { goalId }, agent);
    assert.equal(out.decision, 'run');
    assert.deepEqual(listed(out), ['a'], 'the gated todo is never authorised');
    const contract = runsOf(store, goalId)[0]!.contract!;
    assert.deepEqual(
      contract.actions.map((a) => a.todoId),
      ['a'],
    );
    const uc = out.interaction_contract.user_channel;
    assert.equal(uc.action_required, true);
    assert.equal(uc.gates.length, 1);
    assert.equal(uc.gates[0]!.id, 'deploy');
    assert.equal(uc.gates[0]!.status, 'pending');
    assert.equal(uc.gates[0]!.action_required, true);
    assert.match(uc.gates[0]!.approve, /loopx gate approve --goal-id g --gate-id deploy/);
    assert.match(out.reasons.join(' '), /gate deploy waits for a person/);
  });

  it('only gated work left: wait, with the gate in user_channel; approving it runs the todo', () => {
    const { store, goalId } = goalFixture();
    addTodo(store, goalId, 'a');
    addTodo(store, goalId, 'deploy-it', { action: 'sh deploy.sh', gate: 'deploy' });
    invoke(store, 'todo.complete', { goalId, todoId: 'a', summary: 'ok' }, agent);
    const out = shouldRun(store, { goalId }, agent);
    assert.equal(out.decision, 'wait');
    assert.match(out.reasons[0]!, /only gated work is left: gate deploy is pending/);
    assert.deepEqual(
      out.interaction_contract.user_channel.gates.map((g) => g.id),
      ['deploy'],
    );
    assert.equal(out.interaction_contract.user_channel.action_required, true);
    assert.equal(runsOf(store, goalId).length, 0);
    invoke(store, 'gate.approve', { goalId, gateId: 'deploy' }, human, signed(store));
    const run = shouldRun(store, { goalId }, agent);
    assert.equal(run.decision, 'run');
    assert.deepEqual(listed(run), ['deploy-it']);
    assert.deepEqual(run.interaction_contract.user_channel.gates, []);
  });

  it('a rejected gate cancels the todos it guarded and says so; the rest still runs', () => {
    const { store, goalId } = goalFixture();
    addTodo(store, goalId, 'a');
    addTodo(store, goalId, 'deploy-it', { action: 'sh deploy.sh', gate: 'deploy' });
    addTodo(store, goalId, 'announce', { action: 'sh announce.sh', gate: 'deploy' });
    const res = invoke(
      store,
      'gate.reject',
      { goalId, gateId: 'deploy', note: 'not this week' },
      human,
      signed(store),
    );
    const ev = res.events.find((e) => e.type === 'gate.rejected');
    assert.ok(ev?.type === 'gate.rejected');
    assert.deepEqual(ev.data.cancelled, ['deploy-it', 'announce']);
    for (const id of ['deploy-it', 'announce']) {
      const t = res.state.todos.find((x) => x.id === id)!;
      assert.equal(t.status, 'cancelled');
      assert.match(t.note!, /gate deploy was rejected \(not this week\)/);
    }
    const out = shouldRun(store, { goalId }, agent);
    assert.equal(out.decision, 'run');
    assert.deepEqual(listed(out), ['a']);
    assert.deepEqual(out.interaction_contract.user_channel.gates, [], 'a decided gate asks nothing more');
  });

  it('dependencies: a todo waits for what it depends on, then runs', () => {
    const { store, goalId } = goalFixture();
    addTodo(store, goalId, 'build', { priority: 'P3' });
    addTodo(store, goalId, 'test', { priority: 'P0', dependsOn: ['build'] });
    const out = shouldRun(store, { goalId }, agent);
    assert.deepEqual(listed(out), ['build']);
    invoke(store, 'todo.complete', { goalId, todoId: 'build', summary: 'built' }, agent);
    const next = shouldRun(store, { goalId }, agent);
    assert.equal(next.decision, 'run');
    assert.notEqual(
      next.interaction_contract.id,
      out.interaction_contract.id,
      'the first contract had no work left',
    );
    assert.deepEqual(listed(next), ['test']);
    assert.ok(runsOf(store, goalId)[0]!.endedAt, 'the run with no work left was ended');
  });

  it('dependencies on a person’s todo: wait, naming what it waits for', () => {
    const { store, goalId } = goalFixture();
    invoke(store, 'todo.add', { goalId, todoId: 'creds', title: 'add the API key', owner: 'user' }, human);
    addTodo(store, goalId, 'call-api', { dependsOn: ['creds'] });
    const out = shouldRun(store, { goalId }, agent);
    assert.equal(out.decision, 'wait');
    assert.match(out.reasons[0]!, /call-api waits for creds/);
    assert.deepEqual(
      out.interaction_contract.user_channel.todos.map((t) => t.id),
      ['creds'],
    );
  });

  it('a todo claimed by another agent is skipped; one claimed by this agent is listed', () => {
    const { store, goalId } = goalFixture();
    addTodo(store, goalId, 'theirs', { priority: 'P0' });
    addTodo(store, goalId, 'mine', { priority: 'P1' });
    invoke(store, 'todo.claim', { goalId, todoId: 'theirs', by: 'claude' }, other);
    invoke(store, 'todo.claim', { goalId, todoId: 'mine', by: 'codex' }, agent);
    const out = shouldRun(store, { goalId }, agent);
    assert.deepEqual(listed(out), ['mine']);
    const d = decide(store.load(goalId).state, store.policy(), new Date(store.now()), {
      agent: 'someone-else',
    });
    assert.equal(d.decision, 'wait');
    assert.match(d.reasons[0]!, /theirs is claimed by claude; mine is claimed by codex/);
  });

  it('next_cli_actions: priority order (ties in insertion order), capped at MAX_ACTIONS, each wrapped for exec', () => {
    const { store, goalId } = goalFixture();
    const plan: [string, string][] = [
      ['p3', 'P3'],
      ['p1a', 'P1'],
      ['p0', 'P0'],
      ['p2', 'P2'],
      ['p1b', 'P1'],
      ['p3b', 'P3'],
      ['p1c', 'P1'],
    ];
    for (const [id, priority] of plan)
      addTodo(store, goalId, id, { priority, action: `echo '${id} it' && true` });
    const out = shouldRun(store, { goalId }, agent);
    assert.equal(MAX_ACTIONS, 5);
    const actions = out.interaction_contract.cli_channel.next_cli_actions.map(parseWrapped);
    assert.deepEqual(
      actions.map((a) => a.todoId),
      ['p0', 'p1a', 'p1b', 'p1c', 'p2'],
    );
    for (const a of actions) {
      assert.equal(a.contractId, out.interaction_contract.id);
      assert.equal(a.command, `echo '${a.todoId} it' && true`, 'the shell gets back the exact action');
    }
    assert.equal(out.interaction_contract.agent_channel.primary!.todo_id, 'p0');
    assert.match(
      out.interaction_contract.agent_channel.primary!.command!,
      /^loopx exec --contract c-\S+ --todo p0 -- /,
    );
    assert.match(out.interaction_contract.agent_channel.finish_with!, /summary_all --goal-id g/);
  });

  it('a judgment todo (no action) is primary with complete_with, never in next_cli_actions', () => {
    const { store, goalId } = goalFixture();
    addTodo(store, goalId, 'review', { action: undefined, priority: 'P0', title: 'review the design' });
    addTodo(store, goalId, 'lint', { priority: 'P2' });
    const out = shouldRun(store, { goalId }, agent);
    const cid = out.interaction_contract.id!;
    const primary = out.interaction_contract.agent_channel.primary!;
    assert.equal(primary.todo_id, 'review');
    assert.equal(primary.command, undefined);
    assert.equal(
      primary.complete_with,
      `loopx todo done --goal-id g --todo-id review --contract ${cid} --summary "<what you did>"`,
    );
    assert.deepEqual(listed(out), ['lint']);
    const contract = runsOf(store, goalId)[0]!.contract!;
    assert.deepEqual(contract.judgment, ['review']);
    assert.ok(!contract.actions.some((a) => a.todoId === 'review'));

    // What complete_with does: the contract must list the todo for judgment.
    throwsLoopx(
      () => checkJudgment(store, cid, 'lint'),
      'refused',
      /lint is not a judgment todo of contract/,
    );
    const { run } = checkJudgment(store, cid, 'review');
    invoke(
      store,
      'todo.complete',
      { goalId, todoId: 'review', summary: 'design is sound', runId: run.id },
      agent,
    );
    const next = shouldRun(store, { goalId }, agent);
    assert.equal(next.interaction_contract.id, cid, 'the contract still has lint to do');
    assert.equal(next.interaction_contract.agent_channel.primary!.todo_id, 'lint');
  });

  it('only judgment work: primary is the judgment todo, next_cli_actions is empty; an exec-only agent gets none', () => {
    const { store, goalId } = goalFixture();
    addTodo(store, goalId, 'think', { action: undefined });
    const execOnly = shouldRun(store, { goalId, abilities: ['exec'] }, agent);
    assert.equal(execOnly.decision, 'wait');
    assert.equal(runsOf(store, goalId).length, 0);
    const out = shouldRun(store, { goalId }, agent);
    assert.equal(out.decision, 'run');
    assert.deepEqual(out.interaction_contract.cli_channel.next_cli_actions, []);
    assert.equal(out.interaction_contract.agent_channel.primary!.todo_id, 'think');
    assert.ok(out.interaction_contract.agent_channel.primary!.complete_with);
  });
});

describe('workspace policy', () => {
  it('deniedActions: a matching todo action is refused at add, and never listed when the policy changes later', () => {
    const { store, goalId } = goalFixture({
      policy: { deniedActions: [{ pattern: 'rm -rf *', reason: 'no mass deletes' }] },
    });
    throwsLoopx(
      () => addTodo(store, goalId, 'wipe', { action: 'rm -rf /' }),
      'refused',
      /policy denies actions matching "rm -rf \*"/,
      /no mass deletes/,
    );
    addTodo(store, goalId, 'ok', { action: 'rm -r build' }); // the glob is literal but for `*`
    addTodo(store, goalId, 'push', { action: 'git push --force origin main' });
    writePolicy(store, { deniedActions: [{ pattern: 'git push --force*' }] });
    const out = shouldRun(store, { goalId }, agent);
    assert.deepEqual(listed(out), ['ok']);
    summaryAll(store, goalId, agent);
    invoke(store, 'todo.complete', { goalId, todoId: 'ok', summary: 'ok' }, agent);
    const only = shouldRun(store, { goalId }, agent);
    assert.equal(only.decision, 'wait');
    assert.match(only.reasons[0]!, /push's action is denied by the workspace policy/);
  });

  it('gatedActions: a matching action needs the named gate, requested at once, approved by a person', () => {
    const { store, goalId } = goalFixture({
      policy: { gatedActions: [{ pattern: 'npm publish*', gate: 'release' }] },
    });
    addTodo(store, goalId, 'early', { action: 'npm publish --dry-run' }); // added while the policy already holds
    assert.equal(store.load(goalId).state.gates.find((g) => g.id === 'release')?.status, 'pending');
    addTodo(store, goalId, 'build');
    const out = shouldRun(store, { goalId }, agent);
    assert.deepEqual(listed(out), ['build']);
    assert.deepEqual(
      out.interaction_contract.user_channel.gates.map((g) => g.id),
      ['release'],
    );
    invoke(store, 'gate.approve', { goalId, gateId: 'release' }, human, signed(store));
    summaryAll(store, goalId, agent);
    assert.deepEqual(listed(shouldRun(store, { goalId }, agent)), ['early', 'build']);
  });

  it('gatedActions added after the todo: should-run requests the gate for it and does not list it', () => {
    const { store, goalId } = goalFixture();
    addTodo(store, goalId, 'ship', { action: 'npm publish' });
    addTodo(store, goalId, 'build');
    writePolicy(store, {
      gatedActions: [{ pattern: 'npm publish*', gate: 'release', reason: 'publishing is public' }],
    });
    const preview = shouldRun(store, { goalId, preview: true }, agent);
    assert.equal(preview.interaction_contract.user_channel.gates[0]!.status, 'missing');
    assert.equal(store.load(goalId).state.gates.length, 0, 'preview writes nothing');
    const out = shouldRun(store, { goalId }, agent);
    assert.deepEqual(listed(out), ['build']);
    const gate = store.load(goalId).state.gates.find((g) => g.id === 'release');
    assert.equal(gate?.status, 'pending');
    assert.deepEqual(gate?.guards, ['ship']);
    assert.equal(out.interaction_contract.user_channel.gates[0]!.id, 'release');
    assert.equal(out.interaction_contract.user_channel.gates[0]!.status, 'pending');
  });
});

describe('runs and contracts', () => {
  it('one open run per agent: polling returns the same contract and burns no turn; a second agent gets its own', () => {
    const { store, goalId } = goalFixture();
    addTodo(store, goalId, 'a');
    addTodo(store, goalId, 'b');
    const first = shouldRun(store, { goalId }, agent);
    const size = logSize(store, goalId);
    for (let i = 0; i < 3; i++) {
      const again = shouldRun(store, { goalId }, agent);
      assert.equal(again.interaction_contract.id, first.interaction_contract.id);
      assert.equal(again.run_id, first.run_id);
      assert.deepEqual(again.quota.turns, { used: 1, limit: 100, left: 99 });
      assert.deepEqual(
        again.interaction_contract.cli_channel.next_cli_actions,
        first.interaction_contract.cli_channel.next_cli_actions,
      );
    }
    assert.equal(logSize(store, goalId), size, 'polling appends nothing');
    const theirs = shouldRun(store, { goalId }, other);
    assert.equal(theirs.decision, 'run');
    assert.notEqual(theirs.interaction_contract.id, first.interaction_contract.id);
    assert.notEqual(theirs.run_id, first.run_id);
    const runs = runsOf(store, goalId);
    assert.deepEqual(
      runs.map((r) => r.agent),
      ['codex', 'claude'],
    );
    assert.ok(runs.every((r) => !r.endedAt));
    assert.equal(shouldRun(store, { goalId }, agent).interaction_contract.id, first.interaction_contract.id);
  });

  it('preview answers without opening a run or writing anything', () => {
    const { store, goalId } = goalFixture();
    addTodo(store, goalId, 'a');
    const size = logSize(store, goalId);
    const out = shouldRun(store, { goalId, preview: true }, agent);
    assert.equal(out.preview, true);
    assert.equal(out.decision, 'run');
    assert.equal(out.interaction_contract.id, null);
    assert.equal(out.run_id, null);
    assert.deepEqual(out.interaction_contract.cli_channel.next_cli_actions, []);
    assert.equal(out.interaction_contract.agent_channel.primary!.todo_id, 'a');
    assert.equal(logSize(store, goalId), size);
    assert.equal(runsOf(store, goalId).length, 0);
    assert.ok(!fs.existsSync(path.join(store.localDir, 'contracts')));
  });

  it('a contract expires after the TTL (30 min by default, the policy or a shorter option changes it); the next call ends its run as abandoned', () => {
    const { store, goalId, clock } = goalFixture();
    addTodo(store, goalId, 'a');
    const first = shouldRun(store, { goalId }, agent);
    const ic = first.interaction_contract;
    assert.equal(Date.parse(ic.expires_at!) - Date.parse(ic.issued_at!), 30 * MIN);
    clock.advance(30 * MIN - 1);
    assert.equal(
      shouldRun(store, { goalId }, agent).interaction_contract.id,
      ic.id,
      'still valid a millisecond before',
    );
    clock.advance(1);
    const next = shouldRun(store, { goalId }, agent);
    assert.equal(next.decision, 'run');
    assert.notEqual(next.interaction_contract.id, ic.id);
    const old = runsOf(store, goalId).find((r) => r.id === first.run_id)!;
    assert.equal(old.outcome, 'abandoned');
    assert.match(old.summary!, /expired/);
    assert.equal(old.endedAt, store.now());

    writePolicy(store, { contractTtlMinutes: 5 });
    summaryAll(store, goalId, agent);
    const short = shouldRun(store, { goalId }, agent).interaction_contract;
    assert.equal(Date.parse(short.expires_at!) - Date.parse(short.issued_at!), 5 * MIN);
    summaryAll(store, goalId, agent);
    const opt = shouldRun(store, { goalId, ttlMinutes: 3 }, agent);
    assert.equal(opt.warnings, undefined);
    const ic3 = opt.interaction_contract;
    assert.equal(Date.parse(ic3.expires_at!) - Date.parse(ic3.issued_at!), 3 * MIN);
    // Longer than the policy allows: capped at the policy's TTL, and the answer says so.
    summaryAll(store, goalId, agent);
    const long = shouldRun(store, { goalId, ttlMinutes: 90 }, agent);
    const ic90 = long.interaction_contract;
    assert.equal(Date.parse(ic90.expires_at!) - Date.parse(ic90.issued_at!), 5 * MIN);
    assert.match(
      long.warnings?.join('\n') ?? '',
      /--ttl-minutes 90 is longer than the policy allows: contracts last at most 5 minutes/,
    );
  });

  it('the signing key is created on first use in the config folder (folder 0700, file 0600), never in the workspace', () => {
    const { store, goalId } = goalFixture();
    addTodo(store, goalId, 'a');
    shouldRun(store, { goalId }, agent);
    assert.ok(!store.secretsDir.startsWith(store.workspace + path.sep), store.secretsDir);
    assert.ok(store.secretsDir.startsWith(store.configDir + path.sep), store.secretsDir);
    assert.equal(fs.statSync(store.secretsDir).mode & 0o777, 0o700);
    const st = fs.statSync(path.join(store.secretsDir, 'contract-key'));
    assert.equal(st.mode & 0o777, 0o600);
    assert.ok(!fs.existsSync(path.join(store.localDir, 'contract-key')));
  });

  it('the output validates against ShouldRunOutput and a typical answer is under 2 KB', () => {
    const { store, goalId } = goalFixture({
      quota: quota({ turns: 50, tokens: 2_000_000, costUsd: 25, wallSeconds: 7200 }, { cooldownSeconds: 30 }),
    });
    addTodo(store, goalId, 'build', {
      priority: 'P0',
      title: 'Build the extension bundle',
      action: 'npm run build',
    });
    addTodo(store, goalId, 'tests', {
      priority: 'P1',
      title: 'Run the unit tests',
      action: 'node scripts/test/run-suite.mjs test/unit',
      dependsOn: [],
    });
    addTodo(store, goalId, 'lint', {
      priority: 'P2',
      title: 'Lint the sources',
      action: 'npx eslint src test',
    });
    addTodo(store, goalId, 'review', {
      priority: 'P2',
      title: 'Review the public API for naming',
      action: undefined,
    });
    addTodo(store, goalId, 'publish', {
      priority: 'P3',
      title: 'Publish to the marketplace',
      action: 'npx vsce publish',
      gate: 'release',
    });
    invoke(
      store,
      'todo.add',
      { goalId, todoId: 'changelog', title: 'Write the changelog entry', owner: 'user' },
      human,
    );
    for (const out of [
      shouldRun(store, { goalId }, agent),
      shouldRun(store, { goalId, preview: true }, agent),
      shouldRun(store, { goalId }, agent),
    ]) {
      const parsed = ShouldRunOutput.safeParse(out);
      assert.ok(parsed.success, parsed.success ? '' : JSON.stringify(parsed.error.issues));
      assert.equal(out.schema, SHOULD_RUN_SCHEMA);
      const bytes = Buffer.byteLength(JSON.stringify(out));
      assert.ok(bytes < 2048, `output is ${bytes} bytes`);
    }
    const out = shouldRun(store, { goalId }, agent);
    assert.equal(out.decision, 'run');
    assert.deepEqual(listed(out), ['build', 'tests', 'lint']);
    for (const d of ['wait', 'stop']) assert.ok(ShouldRunOutput.shape.decision.safeParse(d).success);
    assert.ok(!ShouldRunOutput.safeParse({ ...out, decision: 'maybe' }).success, 'the schema can fail');
  });
});

describe('the contract signature', () => {
  it('changing one byte of any field of the contract fails verification', () => {
    const { store, goalId } = goalFixture();
    addTodo(store, goalId, 'a', { action: 'npm test' });
    addTodo(store, goalId, 'b', { action: undefined });
    shouldRun(store, { goalId }, agent);
    const c = runsOf(store, goalId)[0]!.contract!;
    assert.equal(contractSignatureValid(store, c), true);
    assert.equal(c.actions.length, 1);
    assert.equal(c.judgment.length, 1);

    const flip = (s: string, at = s.length - 1) =>
      s.slice(0, at) + String.fromCharCode(s.charCodeAt(at) ^ 1) + s.slice(at + 1);
    const mutations: [string, (x: Contract) => void][] = [
      ['v', (x) => ((x as { v: number }).v = 2)],
      ['id', (x) => (x.id = flip(x.id))],
      ['goalId', (x) => (x.goalId = flip(x.goalId))],
      ['runId', (x) => (x.runId = flip(x.runId))],
      ['agent', (x) => (x.agent = flip(x.agent))],
      ['issuedAt', (x) => (x.issuedAt = flip(x.issuedAt, 3))],
      ['expiresAt', (x) => (x.expiresAt = flip(x.expiresAt, 3))],
      ['actions[0].todoId', (x) => (x.actions[0]!.todoId = flip(x.actions[0]!.todoId))],
      ['actions[0].command', (x) => (x.actions[0]!.command = flip(x.actions[0]!.command))],
      ['actions[0].command (trailing space)', (x) => (x.actions[0]!.command += ' ')],
      ['actions (one more)', (x) => x.actions.push({ todoId: 'b', command: 'npm test' })],
      ['actions (none)', (x) => (x.actions = [])],
      ['judgment[0]', (x) => (x.judgment[0] = flip(x.judgment[0]!))],
      ['judgment (one more)', (x) => x.judgment.push('a')],
      ['sig', (x) => (x.sig = (x.sig[0] === '0' ? '1' : '0') + x.sig.slice(1))],
      ['extra field', (x) => ((x as Record<string, unknown>).admin = true)],
    ];
    for (const [field, mutate] of mutations) {
      const copy = structuredClone(c);
      mutate(copy);
      assert.notDeepEqual(copy, c, field);
      assert.equal(contractSignatureValid(store, copy), false, `a change to ${field} must fail verification`);
    }
    assert.equal(
      contractSignatureValid(store, structuredClone(c)),
      true,
      'the unchanged copy still verifies',
    );
    const reordered = Object.fromEntries(Object.entries(c).reverse()) as Contract;
    assert.equal(contractSignatureValid(store, reordered), true, 'key order is not part of the signature');
  });

  it('a contract signed in another workspace (another key) does not verify here', () => {
    const a = goalFixture();
    const b = goalFixture();
    addTodo(a.store, a.goalId, 'x');
    shouldRun(a.store, { goalId: a.goalId }, agent);
    const c = runsOf(a.store, a.goalId)[0]!.contract!;
    assert.equal(contractSignatureValid(a.store, c), true);
    assert.equal(contractSignatureValid(b.store, c), false);
  });
});
