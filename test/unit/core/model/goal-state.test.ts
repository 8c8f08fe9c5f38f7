/** The goal model: the status state machine, the derived `completed`, and the schemas' edges. */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { buildSync } from 'esbuild';
import {
  effectiveStatus,
  GoalState,
  Line,
  Text,
  Todo,
  Gate,
  Quota,
  Timestamp,
  Actor,
  GoalStatus,
} from '../../../../src/core/model/goal-state';
import { Policy, DEFAULT_POLICY } from '../../../../src/core/model/policy';
import type {
  GoalState as GoalStateT,
  Todo as TodoT,
  Gate as GateT,
  GoalStatus as GoalStatusT,
} from '../../../../src/core/model/goal-state';
import { GOAL_TRANSITIONS, invoke } from '../../../../src/core/capabilities';
import type { GoalTransition } from '../../../../src/core/capabilities';
import { LoopxError } from '../../../../src/core/model/errors';
import type { Store } from '../../../../src/core/store/store';
import { human, agent, tempStore, removeTempDirs } from '../../../helpers/store';

after(removeTempDirs);

const T0 = '2026-11-30T10:00:00.000Z';

function todo(id: string, status: TodoT['status'], owner: TodoT['owner'] = 'agent'): TodoT {
  return {
    id,
    title: id,
    owner,
    priority: 'P2',
    status,
    dependsOn: [],
    evidence: [],
    createdAt: T0,
    updatedAt: T0,
  };
}
function gate(id: string, status: GateT['status']): GateT {
  return { id, title: id, reason: '', guards: [], status, requestedBy: human, requestedAt: T0 };
}
function goal(parts: Partial<GoalStateT> = {}): GoalStateT {
  const g: GoalStateT = {
    id: 'g',
    title: 'G',
    objective: '',
    status: 'active',
    quota: { budgets: { turns: 10 }, window: { kind: 'life' }, cooldownSeconds: 0 },
    granted: {},
    handoff: [],
    createdAt: T0,
    updatedAt: T0,
    todos: [],
    gates: [],
    evidence: [],
    runs: [],
    rewards: [],
    ...parts,
  };
  assert.equal(GoalState.safeParse(g).success, true, 'the test goal itself is valid');
  return g;
}

describe('effectiveStatus: completed is derived', () => {
  const cases: [string, Partial<GoalStateT>, GoalStatusT][] = [
    ['no todos yet: waiting for a plan, not complete', {}, 'active'],
    ['only todos for a person, all done', { todos: [todo('u', 'done', 'user')] }, 'active'],
    ['an agent todo still open', { todos: [todo('a', 'done'), todo('b', 'open')] }, 'active'],
    ['an agent todo claimed', { todos: [todo('a', 'claimed')] }, 'active'],
    ['every agent todo done', { todos: [todo('a', 'done'), todo('b', 'done')] }, 'completed'],
    ['done and cancelled agent todos', { todos: [todo('a', 'done'), todo('b', 'cancelled')] }, 'completed'],
    ['every agent todo cancelled, none done', { todos: [todo('a', 'cancelled')] }, 'active'],
    [
      'agent todos done, a person’s todo open',
      { todos: [todo('a', 'done'), todo('u', 'open', 'user')] },
      'completed',
    ],
    [
      'agent todos done but a gate pending',
      { todos: [todo('a', 'done')], gates: [gate('x', 'pending')] },
      'active',
    ],
    [
      'agent todos done, gates decided',
      {
        todos: [todo('a', 'done')],
        gates: [gate('x', 'approved'), gate('y', 'rejected'), gate('z', 'expired')],
      },
      'completed',
    ],
    ['paused stays paused even when all is done', { status: 'paused', todos: [todo('a', 'done')] }, 'paused'],
    ['closed stays closed', { status: 'closed', todos: [todo('a', 'open')] }, 'closed'],
    ['cancelled stays cancelled', { status: 'cancelled', todos: [todo('a', 'done')] }, 'cancelled'],
  ];
  for (const [name, parts, expected] of cases) {
    it(`${name} -> ${expected}`, () => assert.equal(effectiveStatus(goal(parts)), expected));
  }

  it('completed is never stored: a snapshot with status completed does not validate', () => {
    const g = { ...goal(), status: 'completed' };
    const r = GoalState.safeParse(g);
    assert.equal(r.success, false);
    assert.deepEqual(r.error!.issues[0]!.path, ['status']);
    assert.equal(GoalStatus.safeParse('completed').success, true, 'but it is a status a reader sees');
  });
});

describe('the goal state machine', () => {
  it('is written down: closed and cancelled are final, completed may only be closed or cancelled', () => {
    assert.deepEqual(GOAL_TRANSITIONS, {
      active: { pause: 'paused', close: 'closed', cancel: 'cancelled' },
      paused: { resume: 'active', close: 'closed', cancel: 'cancelled' },
      completed: { close: 'closed', cancel: 'cancelled' },
      closed: {},
      cancelled: {},
    });
  });

  /** A fresh goal `g` in the given status, reached through capabilities. */
  function goalIn(status: GoalStatusT): Store {
    const store = tempStore();
    invoke(store, 'goal.create', { goalId: 'g', title: 'G' }, human);
    if (status === 'paused') invoke(store, 'goal.pause', { goalId: 'g' }, human);
    if (status === 'completed') {
      invoke(store, 'todo.add', { goalId: 'g', todoId: 't', title: 't' }, agent);
      invoke(store, 'todo.complete', { goalId: 'g', todoId: 't' }, agent);
    }
    if (status === 'closed') invoke(store, 'goal.close', { goalId: 'g' }, human);
    if (status === 'cancelled') invoke(store, 'goal.cancel', { goalId: 'g' }, human);
    assert.equal(effectiveStatus(store.load('g').state), status);
    return store;
  }

  const STATUSES: GoalStatusT[] = ['active', 'paused', 'completed', 'closed', 'cancelled'];
  const MOVES: GoalTransition[] = ['pause', 'resume', 'close', 'cancel'];
  for (const from of STATUSES) {
    for (const move of MOVES) {
      const to = GOAL_TRANSITIONS[from][move];
      it(`${from} --${move}--> ${to ?? 'refused'}`, () => {
        const store = goalIn(from);
        const size = store.load('g').revision;
        const call = () => invoke(store, `goal.${move}`, { goalId: 'g', reason: 'test' }, human);
        if (to) {
          const r = call();
          assert.equal(effectiveStatus(r.state), to);
          assert.equal(effectiveStatus(store.load('g').state), to);
          return;
        }
        let err: unknown;
        try {
          call();
        } catch (e) {
          err = e;
        }
        assert.ok(err instanceof LoopxError, `${from} --${move}--> should be refused`);
        assert.equal(err.kind, 'refused');
        // Closed and cancelled goals are read-only before the state machine is asked.
        if (from === 'closed' || from === 'cancelled') {
          assert.match(
            err.message,
            new RegExp(`goal g is ${from}: a ${from} goal is read-only \\(goal\\.${move} refused\\)`),
          );
        } else {
          assert.match(
            err.message,
            new RegExp(`cannot ${move} goal g: it is ${from}, and an? ${from} goal can only `),
          );
          for (const allowed of Object.keys(GOAL_TRANSITIONS[from]))
            assert.match(err.message, new RegExp(allowed));
          assert.deepEqual(
            { from: err.details.from, transition: err.details.transition },
            { from, transition: move },
          );
        }
        assert.equal(store.load('g').revision, size, 'a refused transition writes nothing');
      });
    }
  }

  it('a completed goal that gets new work is active again', () => {
    const store = goalIn('completed');
    invoke(store, 'todo.add', { goalId: 'g', todoId: 'more', title: 'more work' }, agent);
    assert.equal(effectiveStatus(store.load('g').state), 'active');
  });

  it('a paused goal that is resumed with all its work done is completed', () => {
    // completed cannot be paused, so pause first and finish the work while paused.
    const s2 = goalIn('active');
    invoke(s2, 'todo.add', { goalId: 'g', todoId: 't', title: 't' }, agent);
    invoke(s2, 'goal.pause', { goalId: 'g' }, human);
    invoke(s2, 'todo.complete', { goalId: 'g', todoId: 't' }, agent);
    assert.equal(effectiveStatus(s2.load('g').state), 'paused');
    invoke(s2, 'goal.resume', { goalId: 'g' }, human);
    assert.equal(effectiveStatus(s2.load('g').state), 'completed');
  });
});

describe('schemas', () => {
  it('one-line text refuses empty, too long, line breaks and control characters', () => {
    const L = Line(10);
    assert.equal(L.safeParse('fine').success, true);
    assert.match(L.safeParse('').error!.issues[0]!.message, /must not be empty/);
    assert.match(L.safeParse('x'.repeat(11)).error!.issues[0]!.message, /at most 10/);
    for (const bad of ['a\nb', 'a\rb', 'a\tb', 'a\u001b[2Jb', 'a\u0000', 'a\u2028b', 'a\u009bb', 'a\u007f']) {
      assert.match(L.safeParse(bad).error!.issues[0]!.message, /control characters/, JSON.stringify(bad));
    }
  });

  it('multi-line text keeps newlines and tabs but refuses other control characters', () => {
    const X = Text(100);
    assert.equal(X.safeParse('line one\n\tline two\n').success, true);
    assert.equal(X.safeParse('').success, true);
    for (const bad of ['a\u001b[31m', 'a\u0000', 'a\u0007', 'a\u0085'])
      assert.equal(X.safeParse(bad).success, false, JSON.stringify(bad));
  });

  it('todos and gates refuse unknown statuses, priorities, owners and hostile ids', () => {
    const t = todo('a', 'open');
    assert.equal(Todo.safeParse(t).success, true);
    for (const [field, value] of [
      ['status', 'finished'],
      ['priority', 'P4'],
      ['owner', 'robot'],
      ['id', '../a'],
      ['gate', 'a b'],
    ] as const) {
      const r = Todo.safeParse({ ...t, [field]: value });
      assert.equal(r.success, false, `${field}=${value}`);
      assert.deepEqual(r.error!.issues[0]!.path, [field]);
    }
    assert.equal(Gate.safeParse({ ...gate('x', 'pending'), status: 'maybe' }).success, false);
  });

  it('actors are user, agent or system on a known channel', () => {
    assert.equal(Actor.safeParse(human).success, true);
    assert.equal(Actor.safeParse({ ...human, kind: 'robot' }).success, false);
    assert.equal(Actor.safeParse({ ...human, channel: 'email' }).success, false);
  });

  it('quotas: non-negative budgets, integer turns, a positive rolling window, bounded cooldown', () => {
    const q = {
      budgets: { turns: 5, costUsd: 1.5 },
      window: { kind: 'rolling', hours: 24 },
      cooldownSeconds: 60,
    };
    assert.equal(Quota.safeParse(q).success, true);
    assert.equal(Quota.safeParse({ ...q, budgets: { turns: -1 } }).success, false);
    assert.equal(Quota.safeParse({ ...q, budgets: { turns: 1.5 } }).success, false);
    assert.equal(Quota.safeParse({ ...q, budgets: { costUsd: Infinity } }).success, false);
    assert.equal(Quota.safeParse({ ...q, window: { kind: 'rolling', hours: 0 } }).success, false);
    assert.equal(Quota.safeParse({ ...q, window: { kind: 'forever' } }).success, false);
    assert.equal(Quota.safeParse({ ...q, cooldownSeconds: 8 * 24 * 3600 }).success, false);
  });

  it('timestamps are ISO 8601 with a zone', () => {
    assert.equal(Timestamp.safeParse(T0).success, true);
    assert.equal(Timestamp.safeParse('2026-11-30T10:00:00+02:00').success, true);
    for (const bad of ['2026-11-30', 'yesterday', '2026-11-30 10:00:00', 1764496800000])
      assert.equal(Timestamp.safeParse(bad).success, false, String(bad));
  });

  it('policy.json is strict: the default validates, a typo in a key does not', () => {
    assert.equal(Policy.safeParse(DEFAULT_POLICY).success, true);
    assert.equal(Policy.safeParse({ v: 1 }).success, true);
    assert.equal(Policy.safeParse({ v: 2 }).success, false);
    assert.equal(Policy.safeParse({ v: 1, gatedAction: [] }).success, false);
    assert.equal(
      Policy.safeParse({ v: 1, gatedActions: [{ pattern: 'git push*' }] }).success,
      false,
      'a gated action names its gate',
    );
    assert.equal(
      Policy.safeParse({ v: 1, deniedActions: [{ pattern: 'rm -rf *', gate: 'x' }] }).success,
      false,
    );
  });
});

describe('the model module', () => {
  it('bundles for a browser (the webview imports it): no Node built-ins in its imports', () => {
    const result = buildSync({
      entryPoints: [path.join(__dirname, '..', '..', '..', '..', 'src', 'core', 'model/goal-state.ts')],
      bundle: true,
      platform: 'browser',
      format: 'esm',
      write: false,
      logLevel: 'silent',
      metafile: true,
    });
    assert.deepEqual(result.errors, []);
    const inputs = Object.keys(result.metafile!.inputs);
    assert.ok(inputs.some((i) => i.endsWith('src/core/model/goal-state.ts')));
    assert.deepEqual(
      inputs
        .filter((i) => !i.includes('node_modules/zod/'))
        .map((i) => i.slice(i.indexOf('src/core/') + 'src/core/'.length))
        .sort(),
      [
        'model/errors.ts',
        'model/fields.ts',
        'model/goal-state.ts',
        'model/ids.ts',
        'model/lazy.ts',
        'model/outcomes.ts',
        'model/recurrence.ts',
        'model/text-rules.ts',
      ],
      'the model depends on nothing but zod, the pure id and text rules and lazy schemas',
    );
  });
});
