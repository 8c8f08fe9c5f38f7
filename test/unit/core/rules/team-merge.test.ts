/**
 * Team mode in the core: clones of one workspace write their own logs, and replay settles what
 * they did without knowing of each other by written rules (README "Team mode"). Clones here are
 * folders synced by copying logs (helpers/clones.ts); test/team/git.test.ts does it through git.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { invoke } from '../../../../src/core/capabilities/registry';
import { shouldRun } from '../../../../src/core/contract/issue';
import { checkContract } from '../../../../src/core/contract/exec';
import { runOfContract, summaryAll } from '../../../../src/core/contract/summary';
import { stop } from '../../../../src/core/hooks/session-events';
import { nextHlc, maxHlc } from '../../../../src/core/model/hlc';
import { mergeLogs } from '../../../../src/core/rules/merge-order';
import { replayLogs } from '../../../../src/core/store/goal-load';
import { stateHash, verifyGoal } from '../../../../src/core/views/goal-history';
import { quotaUse } from '../../../../src/core/rules/quota-math';
import { canonicalJson } from '../../../../src/core/store/json-file';
import { Store } from '../../../../src/core/store/store';
import { agent, human, manualClock, removeTempDirs, signed, tempDir } from '../../../helpers/store';
import { quota, throwsLoopx } from '../../../helpers/contract-kit';
import { cloneOf, sync } from '../../../helpers/clones';
import type { Clone } from '../../../helpers/clones';
import { rng } from '../../../helpers/rng';

after(removeTempDirs);

const agentA = { ...agent, id: 'agent-a' };
const agentB = { ...agent, id: 'agent-b' };

/** A workspace with goal g and todos t1..t3 on clone A, and clone B made from it. */
function twoClones(opts: { quota?: ReturnType<typeof quota> } = {}): [Clone, Clone] {
  const clock = manualClock();
  const a: Clone = { store: Store.init(tempDir(), { clock: clock.now }), clock };
  invoke(
    a.store,
    'goal.create',
    { goalId: 'g', title: 'G', quota: opts.quota ?? quota({ turns: 100 }) },
    human,
  );
  for (const t of ['t1', 't2', 't3'])
    invoke(a.store, 'todo.add', { goalId: 'g', todoId: t, title: `todo ${t}` }, agent);
  const b = cloneOf(a.store, '2026-11-30T10:00:00.000Z');
  a.clock.advance(1000);
  b.clock.advance(1000);
  return [a, b];
}

/** Every order of reading three writers' logs. */
const EVERY_ORDER = [
  [0, 1, 2],
  [0, 2, 1],
  [1, 0, 2],
  [1, 2, 0],
  [2, 0, 1],
  [2, 1, 0],
];

const state = (c: Clone) => c.store.load('g').state;
const o0reason = (c: Clone) => state(c).overruled![0]!.reason;
const todo = (c: Clone, id: string) => state(c).todos.find((t) => t.id === id)!;

describe('hybrid logical clocks', () => {
  it('a stamp is the wall time when it is ahead, else one tick above what was seen; strings sort as stamps', () => {
    const t = new Date('2026-11-30T10:00:00.000Z');
    assert.equal(nextHlc(undefined, t), '2026-11-30T10:00:00.000Z.0000');
    assert.equal(nextHlc('2026-11-30T09:00:00.000Z.0042', t), '2026-11-30T10:00:00.000Z.0000');
    // A clock behind what was seen (a skewed machine) still stamps after it.
    assert.equal(nextHlc('2026-11-30T11:00:00.000Z.0007', t), '2026-11-30T11:00:00.000Z.0008');
    assert.equal(nextHlc('2026-11-30T10:00:00.000Z.9999', t), '2026-11-30T10:00:00.001Z.0000');
    const stamps: string[] = [];
    let h: string | undefined;
    for (let i = 0; i < 20_050; i++) stamps.push((h = nextHlc(h, t)));
    assert.deepEqual([...stamps].sort(), stamps, 'each stamp sorts after the one before');
    assert.equal(new Set(stamps).size, stamps.length);
    assert.equal(maxHlc(stamps[3], stamps[2]), stamps[3]);
  });
});

describe('team mode: each clone writes its own log', () => {
  it('two clones write different files; after a sync both hold every event and agree on the state', () => {
    const [a, b] = twoClones();
    invoke(a.store, 'todo.add', { goalId: 'g', todoId: 'from-a', title: 'from A' }, agent);
    b.clock.advance(500);
    invoke(b.store, 'todo.add', { goalId: 'g', todoId: 'from-b', title: 'from B' }, agent);
    assert.notEqual(a.store.writerId(), b.store.writerId());
    assert.equal(fs.existsSync(b.store.logPath('g', a.store.writerId())), true, 'A wrote before the clone');
    sync(a, b);
    const [sa, sb] = [state(a), state(b)];
    assert.deepEqual(
      sa.todos.map((t) => t.id),
      ['t1', 't2', 't3', 'from-a', 'from-b'],
      'merged in clock order',
    );
    assert.equal(stateHash(sa), stateHash(sb));
    assert.equal(a.store.load('g').revision, 6);
    // Each writer's chain verifies on its own, and the merged state hash is reported.
    const v = verifyGoal(b.store, 'g');
    assert.equal(v.ok, true, JSON.stringify(v));
    assert.deepEqual(
      v.writers.map((w) => [w.writer, w.events]).sort(),
      [
        [a.store.writerId(), 5],
        [b.store.writerId(), 1],
      ].sort(),
    );
    assert.equal(v.state_hash, stateHash(sa));
    // Each clone named itself once, with its first event, in a file of its own (committed).
    const names = b.store.writerNames();
    assert.deepEqual([...names.keys()].sort(), [a.store.writerId(), b.store.writerId()].sort());
    for (const n of names.values()) assert.match(n, /^\S+@\S+$/, 'user@host');
  });

  it('a clone is named by LOOPX_WRITER_NAME when set; a hand-broken name file shows the id instead', () => {
    const [a] = twoClones();
    const c = cloneOf(a.store);
    process.env.LOOPX_WRITER_NAME = 'ci\u0007 runner';
    try {
      invoke(c.store, 'todo.add', { goalId: 'g', todoId: 'x', title: 'x' }, agent);
    } finally {
      delete process.env.LOOPX_WRITER_NAME;
    }
    assert.equal(c.store.writerNames().get(c.store.writerId()), 'ci runner', 'control characters dropped');
    fs.writeFileSync(
      `${c.store.root}/writers/${a.store.writerId()}.json`,
      '{"v":1,"writer":"someone-else","name":"x"}',
    );
    assert.equal(
      c.store.writerNames().has(a.store.writerId()),
      false,
      'a file naming another writer is ignored',
    );
  });

  it('verify names, per writer, a log that lost lines, was rewritten or is gone since this clone read it', () => {
    const [a, b] = twoClones();
    invoke(a.store, 'todo.add', { goalId: 'g', todoId: 'more', title: 'more' }, agent);
    invoke(b.store, 'todo.add', { goalId: 'g', todoId: 'mine', title: 'mine' }, agent);
    sync(a, b);
    b.store.load('g'); // B reads A's log to its end (its cached snapshot records where)
    const theirs = b.store.logPath('g', a.store.writerId());
    const lines = fs.readFileSync(theirs, 'utf8').split('\n').filter(Boolean);
    const byWriter = () =>
      Object.fromEntries(
        verifyGoal(b.store, 'g').writers.map((w) => [w.writer, { ok: w.ok, error: w.error ?? '' }]),
      );
    // A force push cut A's last line.
    fs.writeFileSync(theirs, lines.slice(0, -1).join('\n') + '\n');
    const v = byWriter();
    assert.deepEqual(v[b.store.writerId()], { ok: true, error: '' });
    assert.equal(v[a.store.writerId()]!.ok, false);
    assert.match(
      v[a.store.writerId()]!.error,
      /shorter than this clone read before \(5 events\): lines were cut/,
    );
    assert.match(b.store.load('g').warnings.join('\n'), /lines were cut .*; state rebuilt from the logs/);
    // Rewritten: same length, another last line (chained anew, so the chain itself is sound).
    fs.writeFileSync(
      theirs,
      [...lines.slice(0, -1), lines.at(-1)!.replace('"more"', '"MORE"')].join('\n') + '\n',
    );
    assert.match(byWriter()[a.store.writerId()]!.error, /line 5 is not the one this clone read before/);
    fs.rmSync(theirs);
    assert.match(
      byWriter()[a.store.writerId()]!.error,
      /is gone, but this clone read 5 events from it before/,
    );
    assert.equal(verifyGoal(b.store, 'g').ok, false);
  });

  it('the state depends only on the set of events: every order of reading the logs replays the same', () => {
    const [a, b] = twoClones();
    const c = cloneOf(a.store);
    c.clock.advance(1000);
    for (const [i, cl] of [a, b, c].entries()) {
      cl.clock.advance(10 * (3 - i));
      invoke(cl.store, 'todo.add', { goalId: 'g', todoId: `x${i}`, title: `x${i}` }, agent);
      invoke(cl.store, 'todo.claim', { goalId: 'g', todoId: 't1', by: `agent-${i}` }, agent);
    }
    sync(a, b, c);
    const logs = a.store.readLogs('g');
    const hashes = EVERY_ORDER.map((o) =>
      stateHash(
        replayLogs(
          'g',
          o.map((i) => logs[i]!),
          [],
          a.store.trust(),
        ).state,
      ),
    );
    assert.equal(new Set(hashes).size, 1, 'one state for every order');
    assert.equal(mergeLogs(logs).length, 3 + 1 + 6, 'goal, three todos from the first clone, and six more');
    assert.equal(stateHash(state(b)), hashes[0]);
    assert.equal(stateHash(state(c)), hashes[0]);
  });
});

describe('team mode: conflicts are decided by rules', () => {
  it('a todo claimed on two machines: the earlier claim holds, the other is overruled and kept in the record', () => {
    const [a, b] = twoClones();
    invoke(a.store, 'todo.claim', { goalId: 'g', todoId: 't1', by: 'agent-a' }, agentA);
    b.clock.advance(2000); // B claims later, not knowing of A's claim
    invoke(b.store, 'todo.claim', { goalId: 'g', todoId: 't1', by: 'agent-b' }, agentB);
    invoke(
      b.store,
      'evidence.add',
      { goalId: 'g', evidenceId: 'ev-b-work', todoId: 't1', kind: 'note', summary: 'B worked on it' },
      agentB,
    );
    sync(a, b);
    for (const c of [a, b]) {
      assert.equal(todo(c, 't1').claimedBy, 'agent-a');
      const o = state(c).overruled!;
      assert.deepEqual(
        o.map((x) => [x.type, x.rule, x.todoId, x.actor.id, x.writer]),
        [['todo.claimed', 'claimed_first', 't1', 'agent-b', b.store.writerId()]],
      );
      assert.match(o[0]!.reason, /claimed first by agent-a/);
      assert.ok(
        state(c).evidence.some((e) => e.id === 'ev-b-work'),
        "B's evidence is kept",
      );
    }
    assert.equal(stateHash(state(a)), stateHash(state(b)));
    // B's agent is told at its next turn, and when it acts on the todo: another agent's now.
    const told = shouldRun(b.store, { goalId: 'g', agent: 'agent-b', preview: true }, agentB);
    assert.deepEqual(
      told.overruled?.map((o) => [o.type, o.reason]),
      [['todo.claimed', o0reason(b)]],
    );
    assert.equal(
      shouldRun(b.store, { goalId: 'g', agent: 'agent-c', preview: true }, agentB).overruled,
      undefined,
    );
    throwsLoopx(
      () => invoke(b.store, 'todo.claim', { goalId: 'g', todoId: 't1', by: 'agent-b' }, agentB),
      'refused',
      /claimed by agent-a/,
    );
  });

  it('a gate decided on two machines: the earlier signed decision stands, the later is shown as overruled', () => {
    const [a, b] = twoClones();
    invoke(
      a.store,
      'gate.request',
      { goalId: 'g', gateId: 'prod', reason: 'deploys', guards: ['t2'] },
      agent,
    );
    sync(a, b);
    invoke(a.store, 'gate.approve', { goalId: 'g', gateId: 'prod', note: 'ship it' }, human, signed(a.store));
    b.clock.advance(5000);
    invoke(b.store, 'gate.reject', { goalId: 'g', gateId: 'prod', note: 'not yet' }, human, signed(b.store));
    assert.equal(todo(b, 't2').status, 'cancelled', 'on B alone, its rejection cancelled the work');
    sync(a, b);
    for (const c of [a, b]) {
      const g = state(c).gates.find((x) => x.id === 'prod')!;
      assert.equal(g.status, 'approved');
      assert.equal(g.note, 'ship it');
      assert.deepEqual(
        state(c).overruled!.map((x) => [x.type, x.rule, x.gateId]),
        [['gate.rejected', 'decided_first', 'prod']],
      );
      assert.equal(todo(c, 't2').status, 'open', 'the overruled rejection cancels nothing');
    }
    assert.equal(stateHash(state(a)), stateHash(state(b)));
    // A decision made knowing of the first one counts: the person can still change course.
    invoke(b.store, 'todo.add', { goalId: 'g', todoId: 't4', title: 'more', gate: 'prod' }, agent);
    invoke(b.store, 'gate.reject', { goalId: 'g', gateId: 'prod' }, human, signed(b.store));
    assert.equal(state(b).gates.find((x) => x.id === 'prod')!.status, 'rejected');
  });

  it('the same todo completed twice: one completion, both evidence records kept', () => {
    const [a, b] = twoClones();
    invoke(a.store, 'todo.complete', { goalId: 'g', todoId: 't3', summary: 'done on A' }, agentA);
    b.clock.advance(100);
    invoke(b.store, 'todo.complete', { goalId: 'g', todoId: 't3', summary: 'done on B' }, agentB);
    sync(a, b);
    for (const c of [a, b]) {
      const t = todo(c, 't3');
      assert.equal(t.status, 'done');
      const ev = state(c).evidence.filter((e) => e.todoId === 't3');
      assert.deepEqual(
        ev.map((e) => e.summary),
        ['done on A', 'done on B'],
      );
      assert.deepEqual(
        t.evidence,
        ev.map((e) => e.id),
      );
      assert.equal(t.updatedAt, ev[0]!.at, 'the first completion is the one that counts');
      assert.equal(state(c).overruled, undefined, 'a second completion is no conflict');
    }
  });

  it('a todo cancelled on one machine and completed on another: the first holds; the evidence stays', () => {
    const [a, b] = twoClones();
    invoke(a.store, 'todo.cancel', { goalId: 'g', todoId: 't2', reason: 'not needed' }, human);
    b.clock.advance(100);
    invoke(b.store, 'todo.complete', { goalId: 'g', todoId: 't2', summary: 'did it anyway' }, agentB);
    sync(a, b);
    assert.equal(todo(a, 't2').status, 'cancelled');
    assert.deepEqual(
      state(a).overruled!.map((x) => [x.type, x.rule]),
      [['todo.completed', 'finished_first']],
    );
    assert.ok(state(a).evidence.some((e) => e.summary === 'did it anyway'));
  });

  it("spend adds up across writers: the quota is the team's, and should-run on any clone sees it", () => {
    const [a, b] = twoClones({ quota: quota({ turns: 100, tokens: 1000 }) });
    const runOn = (c: Clone, name: string) => {
      const out = shouldRun(c.store, { goalId: 'g', agent: name }, { ...agent, id: name });
      assert.equal(out.decision, 'run', JSON.stringify(out));
      return c.store.load('g').state.runs.find((r) => r.agent === name && !r.endedAt)!.id;
    };
    const ra = runOn(a, 'agent-a');
    invoke(a.store, 'run.spend', { goalId: 'g', runId: ra, tokens: 600 }, agentA);
    b.clock.advance(100); // later than A's run: runs are listed in clock order (a tie goes by writer id)
    const rb = runOn(b, 'agent-b');
    invoke(b.store, 'run.spend', { goalId: 'g', runId: rb, tokens: 500 }, agentB);
    assert.equal(quotaUse(state(b), new Date(b.store.now())).tokens!.used, 500, 'B alone sees its own spend');
    sync(a, b);
    for (const c of [a, b]) {
      const s = state(c);
      assert.equal(quotaUse(s, new Date(c.store.now())).tokens!.used, 1100);
      assert.deepEqual(
        s.runs.map((r) => [r.agent, r.writer]),
        [
          ['agent-a', a.store.writerId()],
          ['agent-b', b.store.writerId()],
        ],
      );
    }
    const next = shouldRun(b.store, { goalId: 'g', agent: 'agent-c' }, { ...agent, id: 'agent-c' });
    assert.equal(next.decision, 'stop');
    assert.match(JSON.stringify(next), /tokens/);
  });

  it('a goal closed on one machine stops agent work on every clone after the merge', () => {
    const [a, b] = twoClones();
    invoke(a.store, 'goal.close', { goalId: 'g', reason: 'shipped' }, human);
    assert.equal(
      shouldRun(b.store, { goalId: 'g', agent: 'agent-b' }, agentB).decision,
      'run',
      'before the merge',
    );
    b.clock.advance(100);
    invoke(b.store, 'todo.complete', { goalId: 'g', todoId: 't1', summary: 'finished meanwhile' }, agentB);
    sync(a, b);
    for (const c of [a, b]) {
      assert.equal(state(c).status, 'closed');
      assert.equal(todo(c, 't1').status, 'done', 'work done before the merge is kept');
      const out = shouldRun(c.store, { goalId: 'g', agent: 'agent-b' }, agentB);
      assert.equal(out.decision, 'stop');
    }
  });

  it('a contract binds the clone that issued it: it authorises nothing on another clone', () => {
    const [a, b] = twoClones();
    invoke(a.store, 'todo.add', { goalId: 'g', todoId: 'build', title: 'Build', action: 'true' }, agent);
    const out = shouldRun(a.store, { goalId: 'g', agent: 'agent-a' }, agentA);
    const id = out.interaction_contract!.id!;
    assert.equal(checkContract(a.store, id).contract.writer, a.store.writerId());
    sync(a, b);
    const err = throwsLoopx(() => checkContract(b.store, id), 'refused', /issued on another clone/);
    assert.equal(err.details.reason, 'contract_other_clone');
    // B's own agent of the same name gets a contract of B's instead of reusing A's open run.
    const onB = shouldRun(b.store, { goalId: 'g', agent: 'agent-a' }, agentA);
    assert.equal(onB.decision, 'run');
    assert.notEqual(onB.interaction_contract!.id, id);
    assert.equal(checkContract(b.store, onB.interaction_contract!.id!).contract.writer, b.store.writerId());
  });

  it("ending a turn on one clone never ends another clone's run: not by agent, not by its contract", () => {
    const [a, b] = twoClones();
    invoke(a.store, 'todo.add', { goalId: 'g', todoId: 'build', title: 'Build', action: 'true' }, agent);
    const onA = shouldRun(a.store, { goalId: 'g', agent: 'agent-a' }, agentA);
    const contractId = onA.interaction_contract!.id!;
    sync(a, b);
    // The same agent name ends its turn on B (summary_all --agent, the Stop hook): A's run stays.
    assert.deepEqual(summaryAll(b.store, 'g', agentA, { agent: 'agent-a' }).ended_runs, []);
    assert.deepEqual(stop(b.store, { goalId: 'g', agent: 'agent-a' }, agentA).exitCode, 0);
    const err = throwsLoopx(
      () => runOfContract(b.store, 'g', contractId, 'agent-a'),
      'refused',
      /another clone/,
    );
    assert.equal(err.details.reason, 'contract_other_clone');
    sync(a, b);
    assert.equal(state(a).runs.find((r) => r.id === onA.run_id)!.endedAt, undefined, "A's run is still open");
    // On A, the same calls end it.
    assert.deepEqual(
      summaryAll(a.store, 'g', agentA, {
        runId: runOfContract(a.store, 'g', contractId, 'agent-a'),
      }).ended_runs.map((r) => r.id),
      [onA.run_id],
    );
  });

  it('a goal created on two machines under one id: the earlier creation stands, the work of both is kept', () => {
    const clock = manualClock();
    const a: Clone = { store: Store.init(tempDir(), { clock: clock.now }), clock };
    const b = cloneOf(a.store);
    invoke(a.store, 'goal.create', { goalId: 'g', title: 'From A' }, human);
    invoke(a.store, 'todo.add', { goalId: 'g', todoId: 'ta', title: 'a' }, agent);
    b.clock.advance(50);
    invoke(b.store, 'goal.create', { goalId: 'g', title: 'From B' }, human);
    invoke(b.store, 'todo.add', { goalId: 'g', todoId: 'tb', title: 'b' }, agent);
    sync(a, b);
    const s = state(b);
    assert.equal(s.title, 'From A');
    assert.deepEqual(
      s.todos.map((t) => t.id),
      ['ta', 'tb'],
    );
    assert.deepEqual(
      s.overruled!.map((x) => [x.type, x.rule]),
      [['goal.created', 'created_first']],
    );
    assert.equal(canonicalJson(state(a)), canonicalJson(s));
  });
});

describe('team mode: a store from before it', () => {
  const oldStore = () => {
    const ws = tempDir();
    fs.cpSync(
      path.join(__dirname, '..', '..', '..', 'fixtures', 'store-v1', 'loopx'),
      path.join(ws, '.loopx'),
      {
        recursive: true,
      },
    );
    fs.mkdirSync(path.join(ws, '.loopx', 'local'));
    return new Store(ws);
  };

  it('a goal not migrated yet is vouched for by the index like any other: listing does not read it again', () => {
    const store = oldStore();
    const past = new Date(Date.now() - 10_000);
    for (const g of store.goalIds()) fs.utimesSync(store.goalDir(g), past, past);
    store.listGoals();
    const written = fs.statSync(store.indexPath).ino;
    assert.deepEqual(
      store.listGoals().goals.map((g) => g.id),
      ['ship', 'docs'],
    );
    assert.equal(fs.statSync(store.indexPath).ino, written, 'the second listing wrote no index');
  });

  it("its first write, to any goal, adds the git lines that keep the logs' bytes and drops the old index", () => {
    const store = oldStore();
    invoke(store, 'goal.create', { goalId: 'fresh', title: 'After the upgrade' }, human);
    assert.match(fs.readFileSync(path.join(store.root, '.gitattributes'), 'utf8'), /^\*\.jsonl -text$/m);
    assert.equal(fs.existsSync(path.join(store.root, 'index.json')), false);
    assert.ok(
      fs.existsSync(path.join(store.goalDir('ship'), 'events.jsonl')),
      'the untouched goal is not migrated',
    );
  });
});

describe('team mode: a property', () => {
  it('random work on three clones, synced in random orders, ends in one state on each and in every order of logs', () => {
    const seed = Number(process.env.LOOPX_TEAM_SEED ?? Date.now() % 2 ** 31);
    const random = rng(seed);
    const pick = <T>(xs: T[]): T => xs[Math.floor(random() * xs.length)]!;
    const [a, b] = twoClones();
    const c = cloneOf(a.store);
    c.clock.advance(1000);
    const clones = [a, b, c];
    invoke(
      a.store,
      'gate.request',
      { goalId: 'g', gateId: 'prod', reason: 'deploys', guards: ['t3'] },
      agent,
    );
    let todoNo = 0;
    let applied = 0;
    const attempt = (fn: () => unknown) => {
      try {
        fn();
        applied++;
      } catch {
        /* refused on that clone's state (already claimed, finished...): that is fine */
      }
    };
    for (let round = 0; round < 40; round++) {
      const cl = pick(clones);
      cl.clock.advance(Math.floor(random() * 3000));
      const s = state(cl);
      const open = s.todos.filter((t) => t.status === 'open' || t.status === 'claimed').map((t) => t.id);
      const who = pick(['agent-a', 'agent-b', 'agent-c']);
      const act = { ...agent, id: who };
      switch (pick(['add', 'claim', 'complete', 'cancel', 'decide', 'sync', 'sync'])) {
        case 'add':
          attempt(() =>
            invoke(cl.store, 'todo.add', { goalId: 'g', todoId: `n${todoNo++}`, title: 'new' }, act),
          );
          break;
        case 'claim':
          if (open.length)
            attempt(() => invoke(cl.store, 'todo.claim', { goalId: 'g', todoId: pick(open), by: who }, act));
          break;
        case 'complete':
          if (open.length)
            attempt(() =>
              invoke(
                cl.store,
                'todo.complete',
                { goalId: 'g', todoId: pick(open), summary: `by ${who}` },
                act,
              ),
            );
          break;
        case 'cancel':
          if (open.length)
            attempt(() =>
              invoke(cl.store, 'todo.cancel', { goalId: 'g', todoId: pick(open), reason: 'dropped' }, human),
            );
          break;
        case 'decide':
          attempt(() =>
            invoke(
              cl.store,
              random() < 0.5 ? 'gate.approve' : 'gate.reject',
              { goalId: 'g', gateId: 'prod' },
              human,
              signed(cl.store),
            ),
          );
          break;
        default: {
          const [x, y] = [pick(clones), pick(clones)];
          if (x !== y) sync(x, y);
        }
      }
    }
    // Each clone reads what the others wrote in its own order, loading in between (snapshots).
    for (const cl of clones) {
      for (const other of clones.filter((o) => o !== cl).sort(() => random() - 0.5)) {
        sync(cl, other);
        cl.store.load('g');
      }
    }
    sync(...clones);
    const label = `seed ${seed}, ${applied} calls applied`;
    const hashes = clones.map((cl) => stateHash(state(cl)));
    assert.equal(new Set(hashes).size, 1, `clones disagree (${label})`);
    const full = clones.map((cl) => stateHash(cl.store.replayGoal('g').state));
    assert.deepEqual(full, hashes, `a full replay disagrees with the loaded state (${label})`);
    const logs = a.store.readLogs('g');
    for (const order of EVERY_ORDER) {
      const replayed = replayLogs(
        'g',
        order.filter((i) => logs[i]).map((i) => logs[i]!),
        [],
        a.store.trust(),
      );
      assert.equal(stateHash(replayed.state), hashes[0], `order ${order} (${label})`);
    }
    for (const cl of clones) assert.equal(verifyGoal(cl.store, 'g').ok, true, label);
    assert.ok(applied >= 10, `too little happened (${label})`);
  });
});
