/**
 * Spend stays finite and bounded (security finding 8): one report is refused above its ceiling
 * (`spend_too_large`, naming the field and the limit), sums saturate instead of overflowing to
 * Infinity (a log holding huge values replays finite), and a grant leaves room above what is
 * already spent, even over an overspent or saturated budget.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { invoke } from '../../../../src/core/capabilities/registry';
import { shouldRun } from '../../../../src/core/contract/issue';
import { replay } from '../../../../src/core/rules/apply-event';
import type { LoopxEvent } from '../../../../src/core/model/events';
import {
  GRANT_TOTAL_MAX,
  SPEND_REPORT_MAX,
  SPEND_TOTAL_MAX,
  addCapped,
  checkSpendReport,
  grantedAfter,
  quotaUse,
  quotaUseAfterGrant,
  spendOf,
} from '../../../../src/core/rules/quota-math';
import { GoalState } from '../../../../src/core/model/goal-state';
import { agent, human, removeTempDirs, signed } from '../../../helpers/store';
import { goalFixture, quota, throwsLoopx } from '../../../helpers/contract-kit';

after(removeTempDirs);

describe('one spend report', () => {
  it('is refused above SPEND_REPORT_MAX or when not finite, naming the field and the limit', () => {
    assert.deepEqual(SPEND_REPORT_MAX, { tokens: 1e9, costUsd: 1e5, wallSeconds: 1e6 });
    for (const [k, v] of [
      ['tokens', 1e9 + 1],
      ['costUsd', 1e308],
      ['costUsd', Infinity],
      ['wallSeconds', 1e6 + 0.5],
      ['wallSeconds', NaN],
    ] as const) {
      const e = throwsLoopx(
        () => checkSpendReport({ [k]: v }),
        'refused',
        new RegExp(`^${k} .* is too large: one spend report adds at most ${SPEND_REPORT_MAX[k]} `),
      );
      assert.equal(e.reason, 'spend_too_large');
      assert.deepEqual([e.details.field, e.details.limit], [k, SPEND_REPORT_MAX[k]]);
    }
    checkSpendReport({ tokens: 1e9, costUsd: 1e5, wallSeconds: 1e6 });
    checkSpendReport({});
  });

  it('run.spend and run.end refuse it, and write nothing', () => {
    const { store, goalId } = goalFixture();
    invoke(store, 'run.start', { goalId, runId: 'r1', agent: 'codex' }, agent);
    const before = store.readLog(goalId).events.length;
    for (const [cap, extra] of [
      ['run.spend', {}],
      ['run.end', { outcome: 'succeeded' }],
    ] as const) {
      const e = throwsLoopx(
        () => invoke(store, cap, { goalId, runId: 'r1', costUsd: 1e308, ...extra }, agent),
        'refused',
        /costUsd 1e\+308 is too large/,
      );
      assert.equal(e.reason, 'spend_too_large', cap);
    }
    assert.equal(store.readLog(goalId).events.length, before);
  });
});

describe('totals', () => {
  it('saturate at SPEND_TOTAL_MAX instead of overflowing', () => {
    assert.equal(addCapped(1e308, 1e308), SPEND_TOTAL_MAX);
    assert.equal(addCapped(SPEND_TOTAL_MAX, 1), SPEND_TOTAL_MAX);
    assert.equal(addCapped(1, 2), 3);
    assert.equal(addCapped(Infinity, -Infinity), SPEND_TOTAL_MAX);
    assert.ok(SPEND_TOTAL_MAX < Number.MAX_SAFE_INTEGER && GRANT_TOTAL_MAX < Number.MAX_SAFE_INTEGER);
  });

  it('a log holding huge spend (written by hand) replays finite and valid', () => {
    const { store, goalId } = goalFixture();
    invoke(store, 'run.start', { goalId, runId: 'r1', agent: 'codex' }, agent);
    const events = store.readLog(goalId).events;
    const last = events.at(-1)!;
    const huge = (n: number): LoopxEvent =>
      ({
        ...last,
        seq: last.seq + n,
        id: `ev-huge${n}`,
        type: 'run.spend',
        data: { runId: 'r1', spend: { tokens: 9e15, costUsd: 1.7e308, wallSeconds: 1e308 } },
      }) as LoopxEvent;
    const state = replay(goalId, [...events, huge(1), huge(2), huge(3)])!;
    const run = state.runs.find((r) => r.id === 'r1')!;
    assert.deepEqual(run.spend, {
      turns: 1,
      tokens: SPEND_TOTAL_MAX,
      costUsd: SPEND_TOTAL_MAX,
      wallSeconds: SPEND_TOTAL_MAX,
    });
    GoalState.parse(state);
    // Two such runs still sum to the ceiling.
    const total = spendOf([run, { ...run, id: 'r2' }]);
    assert.deepEqual(total, { turns: 2, tokens: 1e15, costUsd: 1e15, wallSeconds: 1e15 });
    const use = quotaUse({ ...state, quota: quota({ turns: 100, costUsd: 1e308 }) }, new Date());
    for (const u of Object.values(use))
      for (const n of [u.used, u.limit, u.left]) assert.ok(Number.isFinite(n), JSON.stringify(use));
    assert.ok(JSON.stringify(use).indexOf('null') === -1);
  });
});

describe('a grant leaves room to run', () => {
  it('over an overspent budget: the limit becomes what is spent plus the grant', () => {
    const { store, goalId } = goalFixture({ quota: quota({ turns: 100, tokens: 1000 }) });
    invoke(store, 'todo.add', { goalId, todoId: 'a', title: 'a', action: 'echo a' }, human);
    invoke(store, 'run.start', { goalId, runId: 'r1', agent: 'codex' }, agent);
    invoke(store, 'run.end', { goalId, runId: 'r1', outcome: 'partial', tokens: 1500 }, agent);
    assert.equal(shouldRun(store, { goalId, agent: 'codex', preview: true }, agent).decision, 'stop');
    // What the editor shows before the grant is what the grant does.
    const shown = quotaUseAfterGrant(store.load(goalId).state, { tokens: 500 }, new Date(store.now()));
    assert.deepEqual(shown, { tokens: { used: 1500, limit: 2000, left: 500 } });
    invoke(store, 'quota.grant', { goalId, budgets: { tokens: 500 } }, human, signed(store));
    const state = store.load(goalId).state;
    assert.equal(state.granted.tokens, 1000, '500 over the budget, plus the 500 granted');
    const use = quotaUse(state, new Date(store.now())).tokens!;
    assert.deepEqual(use, { used: 1500, limit: 2000, left: 500 });
    assert.equal(shouldRun(store, { goalId, agent: 'codex', preview: true }, agent).decision, 'run');
  });

  it('under the limit, a grant adds to it as before', () => {
    const { store, goalId } = goalFixture({ quota: quota({ turns: 100, tokens: 1000 }) });
    invoke(store, 'run.start', { goalId, runId: 'r1', agent: 'codex' }, agent);
    invoke(store, 'run.spend', { goalId, runId: 'r1', tokens: 400 }, agent);
    const shown = quotaUseAfterGrant(
      store.load(goalId).state,
      { tokens: 500, costUsd: 1 },
      new Date(store.now()),
    );
    assert.deepEqual(
      shown,
      { tokens: { used: 400, limit: 1500, left: 1100 } },
      'a budget the goal lacks is left out',
    );
    invoke(store, 'quota.grant', { goalId, budgets: { tokens: 500 } }, human, signed(store));
    const use = quotaUse(store.load(goalId).state, new Date(store.now())).tokens!;
    assert.deepEqual(use, { used: 400, limit: 1500, left: 1100 });
  });

  it('over a spend saturated at the ceiling, and saturating itself below 2^53', () => {
    const { store, goalId } = goalFixture({ quota: quota({ turns: 100, costUsd: 5 }) });
    const state = store.load(goalId).state;
    const grant = grantedAfter(state, 'costUsd', 10, SPEND_TOTAL_MAX);
    assert.equal(5 + grant - SPEND_TOTAL_MAX, 10, 'ten dollars of room above the ceiling');
    assert.equal(grantedAfter(state, 'costUsd', 1e308, SPEND_TOTAL_MAX), GRANT_TOTAL_MAX);
    // A budget that is not set: the grant only adds.
    assert.equal(grantedAfter(state, 'tokens', 7, SPEND_TOTAL_MAX), 7);
  });
});
