/**
 * Property tests (fast-check) on the one door every write goes through, `invoke`:
 *
 * 1. Hostile input: every capability, every actor, inputs made of arbitrary JSON (parsed from
 *    text, as they arrive over the wire, so `__proto__` and `constructor` are own keys), lone
 *    surrogates, control characters, huge strings, deep nesting, and the real field names with
 *    junk values. `invoke` returns or throws a LoopxError, nothing else; a refusal writes nothing;
 *    the store stays valid (every log a chain, load == replay, self-repair finds nothing); and no
 *    prototype is ever polluted.
 * 2. Replay: any sequence of capability calls (todo add/claim/complete/cancel/update, gate
 *    request/approve/reject, evidence add, run start/spend/end, quota set/grant, reward add, goal
 *    pause/resume, by people and agents) leaves a log that verifies and replays to exactly the
 *    state `load` gives (through the amortised snapshot, and in a fresh process-like Store).
 *
 * Both are bounded in time as well as in runs. The stores live on tmpfs (/dev/shm) when there is
 * one: these properties are about logic, not the disk (the crash suite uses the real disk).
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { Store } from '../../src/core/store/store';
import { invoke, capabilityIds, listCapabilities } from '../../src/core/capabilities/registry';
import { LoopxError } from '../../src/core/model/errors';
import { replay } from '../../src/core/rules/apply-event';
import { repair } from '../../src/core/setup/repair';
import { canonicalJson } from '../../src/core/store/json-file';
import type { Actor, GoalState } from '../../src/core/model/goal-state';
import { Budget, figure } from '../helpers/reliability';
import { human, signed } from '../helpers/store';

const vscodeHuman: Actor = { kind: 'user', id: 'bob', channel: 'vscode' };
const shellAgent: Actor = { kind: 'agent', id: 'codex', channel: 'cli' };
const toolAgent: Actor = { kind: 'agent', id: 'copilot', channel: 'mcp' };
const system: Actor = { kind: 'system', id: 'self-repair', channel: 'system' };
const ACTORS = [human, vscodeHuman, shellAgent, toolAgent, system];

const SHM = '/dev/shm';
const base = fs.existsSync(SHM) && fs.statSync(SHM).isDirectory() ? SHM : os.tmpdir();
const dirs: string[] = [];
function tempDir(): string {
  const d = fs.mkdtempSync(path.join(base, 'loopx-prop-'));
  dirs.push(d);
  return d;
}
after(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------------------------
// Prototype pollution: a snapshot of the built-in prototypes, compared after every call.

const PROTOS: [string, object][] = [
  ['Object.prototype', Object.prototype],
  ['Array.prototype', Array.prototype],
  ['Function.prototype', Function.prototype],
  ['String.prototype', String.prototype],
];
const protoKeys = new Map(PROTOS.map(([n, p]) => [n, Reflect.ownKeys(p).map(String).sort().join(',')]));
function assertNoPollution(where: string) {
  for (const [name, proto] of PROTOS) {
    assert.equal(
      Reflect.ownKeys(proto).map(String).sort().join(','),
      protoKeys.get(name),
      `${where}: ${name} gained or lost a key`,
    );
  }
  const probe = {} as Record<string, unknown>;
  for (const k of ['polluted', 'isAdmin', 'goalId', 'status', 'kind', 'approved'])
    assert.equal(probe[k], undefined, `${where}: ({}).${k} is set`);
}

// ---------------------------------------------------------------------------------------------
// Store checks

/** Every goal's log verifies and loads to what a replay gives; the index lists every goal. */
function assertStoreValid(store: Store, where: string) {
  const fresh = new Store(store.workspace);
  for (const g of fresh.goalIds()) {
    const log = fresh.readLog(g);
    assert.equal(log.torn, undefined, `${where}: goal ${g} has a torn tail`);
    assert.ok(
      log.events.every((e, i) => e.seq === i + 1 && e.prev === (i === 0 ? null : log.hashes[i - 1])),
      `${where}: goal ${g}'s chain is broken`,
    );
    const loaded = fresh.load(g);
    assert.deepEqual(loaded.warnings, [], `${where}: goal ${g} warns`);
    assert.equal(
      canonicalJson(loaded.state),
      canonicalJson(replay(g, log.events, fresh.trust())),
      `${where}: goal ${g}: load differs from a replay`,
    );
  }
  assert.deepEqual(fresh.listGoals().errors, [], `${where}: a goal cannot be listed`);
}

// ---------------------------------------------------------------------------------------------
// 1. Hostile input

/** JSON as text: objects are written key by key, so `__proto__` arrives as an own key, as from a socket. */
type J = null | boolean | number | string | J[] | { entries: [string, J][] };
function toText(v: J): string {
  if (v === null || typeof v !== 'object')
    return typeof v === 'number' && !Number.isFinite(v) ? 'null' : JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(toText).join(',')}]`;
  return `{${v.entries.map(([k, x]) => `${JSON.stringify(k)}:${toText(x)}`).join(',')}}`;
}

/** The same tree built by assignment: `o.__proto__ = {...}` replaces the prototype instead of adding a key. */
function toObject(v: J): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map(toObject);
  const o: Record<string, unknown> = {};
  for (const [k, x] of v.entries) o[k] = toObject(x);
  return o;
}

const FIELD_NAMES = (() => {
  const names = new Set<string>();
  (function walk(s: unknown) {
    if (!s || typeof s !== 'object') return;
    const props = (s as { properties?: Record<string, unknown> }).properties;
    if (props) for (const k of Object.keys(props)) names.add(k);
    for (const v of Object.values(s)) walk(v);
  })(listCapabilities().map((c) => c.input));
  return [...names];
})();
const HOSTILE_KEYS = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'valueOf',
  'hasOwnProperty',
  '__defineGetter__',
  'then',
];

const HUGE = [
  'x'.repeat(1_000_000),
  '\u0000'.repeat(100_000),
  '😀'.repeat(300_000),
  '\ud800'.repeat(200_000),
  'a\n'.repeat(200_000),
];
const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c));
const hostileString = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.string({ maxLength: 8 }), loneSurrogate, fc.string({ maxLength: 8 }))
      .map(([a, s, b]) => a + s + b),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      'g',
      't1',
      'gate1',
      'run-1',
      '../g',
      'g/../../etc',
      '$(touch pwned)',
      '`id`',
      'a;b',
      'a\nb',
      '\u001b[31m',
      'p\u0430yment',
      'café',
      '',
      ' ',
      'P0',
      'agent',
      'user',
      'life',
      'rolling',
      'note',
      'succeeded',
    ),
  },
  { weight: 1, arbitrary: fc.constantFrom(...HUGE) },
);
const number = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.constantFrom(0, -0, -1, 1e308, -1e308, 2 ** 53, 0.5, Number.NaN, Infinity),
);

const json: fc.Arbitrary<J> = fc.letrec<{ value: J }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    number,
    hostileString,
    fc.array(tie('value'), { maxLength: 5 }),
    fc
      .array(
        fc.tuple(
          fc.oneof(fc.constantFrom(...HOSTILE_KEYS, ...FIELD_NAMES), fc.string({ maxLength: 10 })),
          tie('value'),
        ),
        { maxLength: 6 },
      )
      .map((entries) => ({ entries })),
  ),
})).value;

/** A valid input per capability: junk is then put into it, so that calls get past the schema and reach the plans. */
const VALID: Record<string, Record<string, J>> = {
  'goal.create': { title: 'another goal' },
  'goal.pause': {},
  'goal.resume': {},
  // Later keys win: these two act on a goal of their own, so `g` stays open for the others.
  'goal.close': { goalId: 'victim' },
  'goal.cancel': { goalId: 'victim' },
  'todo.add': { title: 'a todo', action: 'echo hi' },
  'todo.claim': { todoId: 't1' },
  'todo.release': { todoId: 't1' },
  'todo.update': { todoId: 't1', note: 'a note' },
  'todo.complete': { todoId: 't1', summary: 'done' },
  'todo.cancel': { todoId: 't1' },
  'gate.request': { gateId: 'gate2', reason: 'why', guards: ['t1'] },
  'gate.approve': { gateId: 'gate1' },
  'gate.reject': { gateId: 'gate1' },
  'gate.expire': { gateId: 'gate1' },
  'evidence.add': { summary: 'evidence', kind: 'test', exitCode: 0 },
  'run.start': { agent: 'codex' },
  'run.spend': { runId: 'run-1', tokens: 10 },
  'run.end': { runId: 'run-1', outcome: 'succeeded' },
  'reward.add': { runId: 'run-1', score: 0.5 },
  'quota.set': {
    quota: {
      entries: [
        ['budgets', { entries: [['turns', 50]] }],
        ['window', { entries: [['kind', 'life']] }],
        ['cooldownSeconds', 0],
      ],
    },
  },
  'quota.grant': { budgets: { entries: [['turns', 5]] } },
  'contract.issue': { agent: 'codex' },
  'exec.record': {
    runId: 'run-1',
    todoId: 't1',
    command: 'echo hi',
    exitCode: 0,
    durationMs: 5,
    summary: 'ran',
  },
  'run.abandon': { runId: 'run-1' },
};

/** The inputs: pure junk; the real field names with junk values; or a valid input with a few fields made hostile. */
function inputFor(cap: string): fc.Arbitrary<J> {
  const valid = Object.entries(VALID[cap] ?? {});
  return fc.oneof(
    { weight: 1, arbitrary: json },
    {
      weight: 2,
      arbitrary: fc
        .tuple(
          fc.constantFrom('g', 'g', 'g', 'other', '__proto__', 'constructor', '../g'),
          fc.array(fc.tuple(fc.constantFrom(...FIELD_NAMES, ...HOSTILE_KEYS), json), { maxLength: 6 }),
        )
        .map(([goalId, entries]) => ({ entries: [['goalId', goalId] as [string, J], ...entries] })),
    },
    {
      weight: 4,
      arbitrary: fc
        .tuple(
          fc.subarray(valid.map(([k]) => k)),
          fc.array(
            fc.tuple(fc.constantFrom(...valid.map(([k]) => k), ...HOSTILE_KEYS, ...FIELD_NAMES), json),
            { maxLength: 2, size: 'xsmall' },
          ),
        )
        .map(([dropped, junk]) => ({
          entries: [
            ['goalId', 'g'] as [string, J],
            ...valid.filter(([k]) => !dropped.includes(k) || junk.length === 0),
            ...junk,
          ],
        })),
    },
  );
}

describe('properties of invoke', { concurrency: 1 }, () => {
  it(
    'hostile input: only LoopxError, refusals write nothing, the store stays valid, no prototype pollution',
    { timeout: 120_000 },
    (t) => {
      /** A store whose goal `g` has a todo, a pending gate and an open run for the calls to act on. */
      function fixture(): Store {
        const store = Store.init(tempDir());
        invoke(store, 'goal.create', { goalId: 'g', title: 'Target' }, human);
        invoke(store, 'goal.create', { goalId: 'victim', title: 'Closed or cancelled by the calls' }, human);
        invoke(store, 'todo.add', { goalId: 'g', todoId: 't1', title: 'a todo', action: 'echo hi' }, human);
        invoke(store, 'gate.request', { goalId: 'g', gateId: 'gate1', reason: 'why' }, human);
        invoke(store, 'run.start', { goalId: 'g', runId: 'run-1', agent: 'codex' }, shellAgent);
        return store;
      }
      function checkStore(store: Store, where: string) {
        assertStoreValid(store, where);
        assert.deepEqual(
          repair(new Store(store.workspace), { dryRun: true }).findings,
          [],
          `${where}: self-repair finds something`,
        );
      }
      const caps = capabilityIds();
      const stats = { runs: 0, ok: 0, stores: 1, refused: {} as Record<string, number> };
      const started = performance.now();
      let store = fixture();
      const bytesOf = () =>
        store
          .goalIds()
          .map((g) => `${g}:${fs.statSync(store.logPath(g)).size}`)
          .join(',');

      fc.assert(
        fc.property(
          fc.constantFrom(...caps).chain((cap) => fc.tuple(fc.constant(cap), inputFor(cap))),
          fc.constantFrom(...ACTORS),
          fc.boolean(),
          ([cap, tree], actor, asText) => {
            stats.runs++;
            // As parsed from JSON text (own `__proto__` keys, as from a socket), or built by assignment
            // (where `__proto__` swaps the prototype: an in-process caller's odd object).
            const input: unknown = asText ? JSON.parse(toText(tree)) : toObject(tree);
            const before = bytesOf();
            try {
              invoke(store, cap, input, actor);
              stats.ok++;
            } catch (e) {
              if (!(e instanceof LoopxError))
                throw new Error(
                  `${cap} threw a ${(e as Error)?.constructor?.name}, not a LoopxError: ${(e as Error)?.stack ?? String(e)}`,
                );
              assert.ok(
                e.message.length > 0 && e.message.length < 5000,
                `${cap}: an error message of ${e.message.length} characters`,
              );
              stats.refused[e.kind] = (stats.refused[e.kind] ?? 0) + 1;
              assert.equal(bytesOf(), before, `${cap}: a refused call changed a log`);
            }
            assertNoPollution(cap);
            // A closed goal refuses everything after it: start again on a fresh store now and then.
            if (stats.runs % 100 === 0) {
              checkStore(store, `after ${stats.runs} calls`);
              store = fixture();
              stats.stores++;
            }
          },
        ),
        { numRuns: 2000, interruptAfterTimeLimit: 45_000, markInterruptAsFailure: false },
      );
      checkStore(store, 'at the end');
      assertNoPollution('at the end');
      assert.ok(stats.runs >= 150, `only ${stats.runs} runs within the time limit`);
      assert.ok(
        stats.ok >= 20,
        `only ${stats.ok} calls were accepted: the generator does not reach the plans`,
      );
      figure(
        t,
        `properties/hostile input: ${stats.runs} calls on ${stats.stores} stores in ${((performance.now() - started) / 1000).toFixed(1)} s; ${stats.ok} accepted, refused ${JSON.stringify(stats.refused)}; no other error, no pollution`,
      );
    },
  );

  // -------------------------------------------------------------------------------------------
  // 2. Replay

  const OPS = [
    'todo.add',
    'todo.claim',
    'todo.complete',
    'todo.cancel',
    'todo.update',
    'gate.request',
    'gate.approve',
    'gate.reject',
    'evidence.add',
    'run.start',
    'run.spend',
    'run.end',
    'quota.set',
    'quota.grant',
    'reward.add',
    'goal.pause',
    'goal.resume',
  ] as const;
  type OpName = (typeof OPS)[number];
  interface Op {
    op: OpName;
    i: number;
    j: number;
    flag: boolean;
    text: string;
    x: number;
    who: number;
  }
  const opArb: fc.Arbitrary<Op> = fc.record({
    // Adding todos and opening runs more often gives the other calls something to act on.
    op: fc.oneof(
      { weight: 6, arbitrary: fc.constant('todo.add' as const) },
      { weight: 2, arbitrary: fc.constant('run.start' as const) },
      { weight: 17, arbitrary: fc.constantFrom(...OPS) },
    ),
    i: fc.nat(1000),
    j: fc.nat(1000),
    flag: fc.boolean(),
    text: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 24 }),
    x: fc.double({ min: 0, max: 1, noNaN: true }),
    who: fc.nat(ACTORS.length - 1),
  });

  const HUMAN_ONLY = new Set(['gate.approve', 'gate.reject', 'quota.grant', 'reward.add']);
  const at = <T>(xs: readonly T[], i: number): T | undefined => (xs.length ? xs[i % xs.length] : undefined);

  /** Turns an abstract op into a concrete call against the current state. */
  function concrete(s: GoalState, o: Op): { cap: string; input: Record<string, unknown>; actor: Actor } {
    const todo = at(s.todos, o.i)?.id ?? 'none';
    const gate = at(s.gates, o.j)?.id ?? `gate${o.j % 4}`;
    const run = at(s.runs, o.j)?.id ?? 'no-run';
    const openRun = at(
      s.runs.filter((r) => !r.endedAt),
      o.j,
    )?.id;
    const actor = HUMAN_ONLY.has(o.op) ? (o.flag ? human : vscodeHuman) : ACTORS[o.who]!;
    const goalId = 'g';
    switch (o.op) {
      case 'todo.add':
        return {
          cap: o.op,
          actor,
          input: {
            goalId,
            todoId: o.flag ? `t${o.i % 40}` : undefined,
            title: o.text,
            priority: `P${o.i % 4}`,
            owner: o.j % 5 === 0 ? 'user' : 'agent',
            action: o.j % 2 === 0 ? `echo ${o.i}` : undefined,
            gate: o.j % 3 === 0 ? `gate${o.i % 4}` : undefined,
            dependsOn: o.i % 4 === 0 && s.todos.length ? [at(s.todos, o.j)!.id] : [],
          },
        };
      case 'todo.claim':
        return {
          cap: o.op,
          actor,
          input: { goalId, todoId: todo, by: o.flag ? undefined : `agent-${o.j % 3}` },
        };
      case 'todo.complete':
        return {
          cap: o.op,
          actor,
          input: {
            goalId,
            todoId: todo,
            summary: o.flag ? o.text : undefined,
            runId: o.i % 3 === 0 ? openRun : undefined,
          },
        };
      case 'todo.cancel':
        return { cap: o.op, actor, input: { goalId, todoId: todo, reason: o.text } };
      case 'todo.update':
        return {
          cap: o.op,
          actor,
          input: {
            goalId,
            todoId: todo,
            ...(o.flag ? { title: o.text } : { note: o.text }),
            ...(o.j % 2 ? { priority: `P${o.j % 4}` } : {}),
          },
        };
      case 'gate.request':
        return {
          cap: o.op,
          actor,
          input: {
            goalId,
            gateId: `gate${o.i % 5}`,
            reason: o.text,
            guards: o.flag && s.todos.length ? [todo] : [],
          },
        };
      case 'gate.approve':
        return { cap: o.op, actor, input: { goalId, gateId: gate, note: o.flag ? o.text : undefined } };
      case 'gate.reject':
        return { cap: o.op, actor, input: { goalId, gateId: gate, note: o.text } };
      case 'evidence.add':
        return {
          cap: o.op,
          actor,
          input: {
            goalId,
            kind: ['note', 'test', 'command', 'file'][o.i % 4],
            summary: o.text,
            todoId: o.flag ? todo : undefined,
            runId: o.j % 2 ? run : undefined,
            exitCode: o.i % 3 ? o.i % 2 : undefined,
          },
        };
      case 'run.start':
        return {
          cap: o.op,
          actor,
          input: { goalId, agent: `agent-${o.i % 3}`, runId: o.flag ? `run-${o.j % 6}` : undefined },
        };
      case 'run.spend':
        return {
          cap: o.op,
          actor,
          input: { goalId, runId: openRun ?? run, tokens: o.i, costUsd: o.x, wallSeconds: o.j / 10 },
        };
      case 'run.end':
        return {
          cap: o.op,
          actor,
          input: {
            goalId,
            runId: openRun ?? run,
            outcome: ['succeeded', 'failed', 'partial', 'abandoned'][o.i % 4],
            summary: o.text,
            tokens: o.j,
          },
        };
      case 'quota.set':
        return {
          cap: o.op,
          actor,
          input: {
            goalId,
            quota: {
              budgets: { turns: 5 + (o.i % 300), ...(o.flag ? { tokens: o.j * 100 } : {}) },
              window: o.j % 2 ? { kind: 'life' } : { kind: 'rolling', hours: 1 + (o.i % 48) },
              cooldownSeconds: 0,
            },
          },
        };
      case 'quota.grant':
        return {
          cap: o.op,
          actor,
          input: {
            goalId,
            budgets: { turns: 1 + (o.i % 10), ...(o.flag ? { costUsd: o.x } : {}) },
            note: o.text,
          },
        };
      case 'reward.add':
        return {
          cap: o.op,
          actor,
          input: {
            goalId,
            runId: run,
            score: o.x * 2 - 1,
            comment: o.text,
            lesson: o.flag ? o.text : undefined,
          },
        };
      case 'goal.pause':
      case 'goal.resume':
        return { cap: o.op, actor, input: { goalId, reason: o.text } };
    }
  }

  it(
    'replay: any sequence of capability calls replays to exactly the state load gives, and the chain verifies',
    { timeout: 120_000 },
    (t) => {
      const budget = new Budget(45_000);
      const accepted: Record<string, number> = {};
      const refused: Record<string, number> = {};
      let sequences = 0;
      let calls = 0;
      let maxEvents = 0;
      const started = performance.now();
      fc.assert(
        fc.property(fc.array(opArb, { minLength: 5, maxLength: 60, size: 'max' }), (ops) => {
          sequences++;
          let tick = Date.parse('2026-11-30T10:00:00.000Z');
          const store = Store.init(tempDir(), { clock: () => new Date(tick) });
          invoke(
            store,
            'goal.create',
            {
              goalId: 'g',
              title: 'Replay',
              quota: { budgets: { turns: 1000 }, window: { kind: 'life' }, cooldownSeconds: 0 },
            },
            human,
          );
          for (const o of ops) {
            if (budget.over) break;
            tick += 1000 + o.i;
            const state = store.load('g').state;
            const { cap, input, actor } = concrete(state, o);
            const size = fs.statSync(store.logPath('g')).size;
            calls++;
            try {
              // A person's calls are signed with a pinned key, as the CLI and the editor sign them.
              invoke(store, cap, input, actor, actor.kind === 'user' ? signed(store) : {});
              accepted[cap] = (accepted[cap] ?? 0) + 1;
            } catch (e) {
              if (!(e instanceof LoopxError)) throw e;
              refused[cap] = (refused[cap] ?? 0) + 1;
              assert.equal(
                fs.statSync(store.logPath('g')).size,
                size,
                `${cap} was refused (${e.message}) but the log grew`,
              );
            }
          }
          const log = store.readLog('g');
          maxEvents = Math.max(maxEvents, log.events.length);
          assert.equal(log.torn, undefined);
          assert.ok(
            log.events.every((e, i) => e.seq === i + 1 && e.prev === (i === 0 ? null : log.hashes[i - 1])),
            'the chain verifies',
          );
          const replayed = canonicalJson(replay('g', log.events, store.trust()));
          // Through the amortised snapshot (and its tail), in this Store and in a fresh one, and a full replay.
          assert.equal(canonicalJson(store.load('g').state), replayed, 'load equals replay');
          const fresh = new Store(store.workspace, { clock: () => new Date(tick) });
          assert.equal(canonicalJson(fresh.load('g').state), replayed, 'load in a fresh Store equals replay');
          assert.equal(canonicalJson(fresh.replayGoal('g').state), replayed);
          assert.equal(canonicalJson(fresh.rebuildSnapshot('g').state), replayed);
          assert.equal(
            canonicalJson(fresh.load('g').state),
            replayed,
            'load through a rebuilt snapshot equals replay',
          );
          assert.deepEqual(repair(fresh, { dryRun: true }).findings, [], 'self-repair finds nothing');
          assertNoPollution('replay');
        }),
        { numRuns: 150, interruptAfterTimeLimit: 45_000, markInterruptAsFailure: false },
      );
      assert.ok(sequences >= 15, `only ${sequences} sequences within the time limit`);
      // Not vacuous: every kind of call was accepted at least once over the run.
      for (const op of OPS)
        assert.ok(
          (accepted[op] ?? 0) > 0,
          `${op} was never accepted (refused ${refused[op] ?? 0} times): the generator does not reach it`,
        );
      const ok = Object.values(accepted).reduce((a, b) => a + b, 0);
      figure(
        t,
        `properties/replay: ${sequences} sequences, ${calls} calls (${ok} accepted, ${calls - ok} refused and writing nothing), logs up to ${maxEvents} events, in ${((performance.now() - started) / 1000).toFixed(1)} s`,
      );
    },
  );
});
