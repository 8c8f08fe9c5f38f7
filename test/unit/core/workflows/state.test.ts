/**
 * workflow.run in the goal's state: one commit with the todos, the gates and the instance; the
 * quota rule (a workflow not started that declares more than is left may not start, in
 * `workflow.run` and in should-run alike); the event replayed, and merged across clones.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { decide, shouldRun } from '../../../../src/core';
import { invoke, listCapabilities } from '../../../../src/core/capabilities/registry';
import type { Budgets } from '../../../../src/core/model/goal-state';
import { replay } from '../../../../src/core/rules/apply-event';
import { replayLogs } from '../../../../src/core/store/goal-load';
import { canonicalJson } from '../../../../src/core/store/json-file';
import { Store } from '../../../../src/core/store/store';
import { eventWords } from '../../../../src/core/views/event-sentences';
import { readHistory, stateHash } from '../../../../src/core/views/goal-history';
import type { PreparedWorkflowRun } from '../../../../src/core/workflows/index';
import { blockedWorkflows, overBudget } from '../../../../src/core/workflows/index';
import { cloneOf, sync } from '../../../helpers/clones';
import { goalFixture, quota, throwsLoopx } from '../../../helpers/contract-kit';
import { agent, human, manualClock, removeTempDirs, tempDir, toolAgent } from '../../../helpers/store';

after(removeTempDirs);

const run = (
  store: Store,
  params: Record<string, string> = { issue: '17' },
  who = human,
  name = 'issue-fix',
) => invoke<PreparedWorkflowRun>(store, 'workflow.run', { goalId: 'g', name, params }, who);

describe('workflow.run', () => {
  it('is a registered capability agents and people may call, listed with the core ones', () => {
    const d = listCapabilities().find((c) => c.id === 'workflow.run')!;
    assert.ok(d, 'listed');
    assert.equal(d.kind, 'core');
    assert.deepEqual(d.actors, ['user', 'agent']);
    assert.deepEqual(d.touches, ['todos', 'gates', 'workflows']);
  });

  it('adds the todos, the gate and the instance in one commit, and the log reads well', () => {
    const { store } = goalFixture();
    const before = store.load('g').revision;
    const res = run(store);
    assert.equal(res.revision, before + res.events.length);
    assert.deepEqual(
      res.events.map((e) => e.type),
      [...Array(6).fill('todo.added'), 'gate.requested', 'workflow.started'],
    );
    const x = res.input.expanded;
    const s = res.state;
    assert.deepEqual(
      s.todos.map((t) => t.id),
      x.todos.map((t) => t.id),
    );
    const merge = s.todos.find((t) => t.id === x.todos.find((y) => y.key === 'merge')!.id)!;
    assert.equal(merge.gate, x.gates[0]!.id);
    assert.equal(s.gates[0]!.status, 'pending');
    assert.equal(s.gates[0]!.title, 'Merge the fix for issue #17');
    assert.deepEqual(s.workflows, [
      {
        instanceId: x.instanceId,
        name: 'issue-fix',
        title: 'Fix issue #17',
        params: { issue: '17', base: 'main' },
        quota: { turns: 12, tokens: 400000, costUsd: 5 },
        todoIds: x.todos.map((t) => t.id),
        gateIds: [x.gates[0]!.id],
        source: 'builtin',
        startedBy: human,
        startedAt: s.workflows![0]!.startedAt,
      },
    ]);
    const words = eventWords(res.events.at(-1)!, 300);
    assert.match(
      words,
      new RegExp(
        `started workflow issue-fix \\(${x.instanceId}\\) with issue=17 base=main: 6 todos, 1 gate, declares turns 12`,
      ),
    );
  });

  it('an agent through a tool gets the review gates todo.add gives its commands', () => {
    const { store } = goalFixture();
    const res = run(store, { issue: '17' }, toolAgent);
    const reviews = res.state.gates.filter((g) => g.id.startsWith('review-'));
    assert.equal(reviews.length, res.state.todos.filter((t) => t.action).length);
  });

  it('the workspace policy still denies and gates the actions a workflow adds', () => {
    const { store } = goalFixture({
      policy: { deniedActions: [{ pattern: 'gh pr merge *', reason: 'no merging' }] },
    });
    throwsLoopx(() => run(store), 'refused', /policy denies actions matching "gh pr merge \*"/);
    assert.equal(store.load('g').state.todos.length, 0, 'nothing was added');
  });

  it('replays to the same state, and an old snapshot without workflows still loads', () => {
    const { store } = goalFixture();
    run(store);
    const loaded = store.load('g');
    const replayed = replayLogs('g', store.readLogs('g'), [], store.trust());
    assert.equal(canonicalJson(replayed.state), canonicalJson(loaded.state));
    const events = readHistory(store, 'g').events.map((m) => m.ev);
    const again = replay('g', events)!;
    assert.equal(again.workflows!.length, 1);
    const old = replay(
      'g',
      events.filter((e) => e.type !== 'workflow.started'),
    )!;
    assert.equal(old.workflows, undefined);
  });
});

describe('the quota rule', () => {
  const goal = (budgets: Budgets) => goalFixture({ quota: quota(budgets) });

  it('refuses to start a workflow that declares more than is left, naming each budget and the fix', () => {
    const { store } = goal({ turns: 5, costUsd: 100 });
    const e = throwsLoopx(
      () => run(store),
      'refused',
      /turns: 12 declared, 5 left/,
      /loopx quota grant --goal-id g --turns 7/,
      /smaller workflow/,
    );
    assert.equal(e.reason, 'workflow_over_budget');
    assert.doesNotMatch(e.message, /cost/, 'a budget within what is left is not named');
    assert.equal(store.load('g').state.todos.length, 0);
  });

  it('budgets the goal does not set are no limit', () => {
    const { store } = goal({});
    assert.equal(run(store).state.workflows!.length, 1);
    assert.deepEqual(overBudget({ turns: 1e9, tokens: 1e12, costUsd: 1e6 }, {}), []);
  });

  it('should-run leaves the todos of an instance over budget out and, with nothing else to do, refuses with the reason', () => {
    const { store, clock } = goal({ turns: 20 });
    run(store);
    // A person tightens the quota after the workflow was added: it has not started, so it waits.
    invoke(store, 'quota.set', { goalId: 'g', quota: quota({ turns: 5 }) }, human);
    const state = store.load('g').state;
    assert.equal(blockedWorkflows(state, new Date(clock.now())).length, 1);
    const out = shouldRun(store, { goalId: 'g' }, agent);
    assert.equal(out.decision, 'stop');
    assert.equal(out.run_id, null);
    assert.equal(out.refusal?.reason, 'workflow_over_budget');
    assert.match(out.refusal!.message, /turns: 12 declared, 5 left/);
    assert.deepEqual(out.over_budget_workflows![0]!.todo_ids, state.workflows![0]!.todoIds);
    // Other work is offered; the workflow's todos are not.
    invoke(store, 'todo.add', { goalId: 'g', todoId: 'other', title: 'Other', action: 'echo other' }, human);
    const d = decide(store.load('g').state, store.policy(), new Date(clock.now()), { agent: 'codex' });
    assert.equal(d.decision, 'run');
    assert.deepEqual(
      d.actions.map((a) => a.todo.id),
      ['other'],
    );
  });

  it('an instance already started is not blocked, whatever is left', () => {
    const { store, clock } = goal({ turns: 20 });
    const x = run(store).input.expanded;
    invoke(store, 'todo.claim', { goalId: 'g', todoId: x.todos[0]!.id, by: 'codex' }, agent);
    invoke(store, 'quota.set', { goalId: 'g', quota: quota({ turns: 5 }) }, human);
    assert.deepEqual(blockedWorkflows(store.load('g').state, new Date(clock.now())), []);
    const d = decide(store.load('g').state, store.policy(), new Date(clock.now()), { agent: 'codex' });
    assert.equal(d.decision, 'run');
    assert.equal(d.refusal, undefined);
  });
});

describe('workflow events across clones', () => {
  it('two clones each run a workflow; merged, both instances are there, in the same state on both', () => {
    const clock = manualClock();
    const a = { store: Store.init(tempDir(), { clock: clock.now }), clock };
    invoke(a.store, 'goal.create', { goalId: 'g', title: 'G', quota: quota({ turns: 100 }) }, human);
    const b = cloneOf(a.store, '2026-11-30T10:00:00.000Z');
    a.clock.advance(1000);
    b.clock.advance(2000);
    const ra = run(a.store, { issue: '1' });
    const rb = run(b.store, { version: '2.0.0' }, agent, 'release');
    sync(a, b);
    // Every order of reading the two logs gives one state.
    const logs = a.store.readLogs('g');
    const hashes = [logs, [...logs].reverse()].map((l) =>
      stateHash(replayLogs('g', l, [], a.store.trust()).state),
    );
    assert.equal(hashes[0], hashes[1]);
    const sa = a.store.load('g').state;
    const sb = b.store.load('g').state;
    assert.equal(stateHash(sa), stateHash(sb));
    assert.deepEqual(
      sa.workflows!.map((w) => w.instanceId).sort(),
      [ra.input.expanded.instanceId, rb.input.expanded.instanceId].sort(),
    );
    assert.equal(sa.todos.length, 6 + 5);
    assert.equal(sa.overruled, undefined);
  });

  it('a copied workflow.started (same instance id) is overruled as a duplicate, not applied twice', () => {
    const { store } = goalFixture();
    run(store);
    const events = readHistory(store, 'g').events.map((m) => m.ev);
    const started = events.find((e) => e.type === 'workflow.started')!;
    const s = replay('g', [...events, { ...started, id: 'ev-copy', seq: started.seq + 100 }])!;
    assert.equal(s.workflows!.length, 1);
    assert.equal(s.overruled![0]!.rule, 'duplicate_id');
  });
});
