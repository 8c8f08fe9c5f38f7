/**
 * Self-repair on stores broken on purpose: a stale snapshot, a torn last line, a broken hash
 * chain, a run open past its contract, a stale claim, a wrong index, an expired gate; and
 * `dryRun` changes no byte of `.loopx/`.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { invoke } from '../../../../src/core/capabilities/registry';
import { shouldRun } from '../../../../src/core/contract/issue';
import { execUnderContract } from '../../../../src/core/contract/exec';
import { repair, SELF_REPAIR_ACTOR } from '../../../../src/core/setup/repair';
import type { FindingKind, RepairReport } from '../../../../src/core/setup/repair';
import { summaryAll } from '../../../../src/core/contract/summary';
import type { Store } from '../../../../src/core/store/store';
import { human, agent, removeTempDirs, signed } from '../../../helpers/store';
import {
  forgeSnapshotState,
  goalFixture,
  hashTree,
  sha256,
  throwsLoopx,
} from '../../../helpers/contract-kit';
import { readIndex, writeIndex, indexBytes } from '../../../helpers/goal-index';

after(removeTempDirs);

const MIN = 60_000;

function kinds(r: RepairReport): [string | null, FindingKind, boolean][] {
  return r.findings.map((f) => [f.goal_id, f.kind, f.fixed]);
}
function finding(r: RepairReport, kind: FindingKind) {
  const f = r.findings.find((x) => x.kind === kind);
  assert.ok(f, `no ${kind} finding in ${JSON.stringify(r.findings)}`);
  return f;
}
function addTodo(store: Store, goalId: string, todoId: string, more: Record<string, unknown> = {}) {
  invoke(
    store,
    'todo.add',
    { goalId, todoId, title: `do ${todoId}`, action: `echo ${todoId}`, ...more },
    agent,
  );
}
function lastEvent(store: Store, goalId: string) {
  return store.readLog(goalId).events.at(-1)!;
}

describe('repair', () => {
  it('a healthy, busy store: nothing found, nothing changed', async () => {
    const { store, goalId, clock } = goalFixture();
    addTodo(store, goalId, 'a');
    addTodo(store, goalId, 'b', { gate: 'g1' });
    invoke(store, 'todo.add', { goalId, todoId: 'u', title: 'for a person', owner: 'user' }, human);
    const out = shouldRun(store, { goalId }, agent);
    await execUnderContract(store, {
      contractId: out.interaction_contract.id!,
      todoId: 'a',
      command: 'echo a',
      actor: agent,
    });
    invoke(store, 'todo.claim', { goalId, todoId: 'u' }, human);
    invoke(store, 'todo.release', { goalId, todoId: 'u' }, human);
    invoke(store, 'gate.approve', { goalId, gateId: 'g1' }, human, signed(store));
    clock.advance(5 * MIN);
    summaryAll(store, goalId, agent);
    invoke(store, 'goal.create', { goalId: 'second', title: 'Second' }, human);
    const before = hashTree(store.root);
    const r = repair(store);
    assert.deepEqual(r.findings, []);
    assert.equal(r.changed, 0);
    assert.equal(r.checked_goals, 2);
    assert.equal(r.schema, 'loopx.repair/1');
    assert.deepEqual(hashTree(store.root), before);
  });

  it('a snapshot that disagrees with its log is rebuilt from the log', () => {
    const { store, goalId } = goalFixture();
    addTodo(store, goalId, 'a');
    const file = store.snapshotPath(goalId);
    forgeSnapshotState(store, goalId, (s) => {
      s.title = 'Forged title';
      s.todos[0]!.status = 'done';
    });
    const loaded = store.load(goalId);
    assert.equal(loaded.state.title, 'A goal', 'a snapshot whose MAC does not verify is not trusted');
    assert.match(loaded.warnings.join('\n'), /goals\/[\w-]+\.json: its MAC does not verify/);

    const r = repair(store, { goalId });
    const f = finding(r, 'snapshot-stale');
    assert.equal(f.fixed, true);
    assert.match(f.message, /goals\/[\w-]+\.json: its MAC does not verify .*: rebuilt from the log/);
    const state = store.load(goalId).state;
    assert.equal(state.title, 'A goal');
    assert.equal(state.todos[0]!.status, 'open');
    assert.deepEqual(
      JSON.parse(fs.readFileSync(file, 'utf8').split('\n')[1]!),
      store.replayGoal(goalId).state,
    );
    assert.deepEqual(repair(store, { goalId }).findings, [], 'fixed for good');
  });

  it('a snapshot over a log cut at a line boundary (a reset) is rebuilt, and loads warn no more', () => {
    const { store, goalId } = goalFixture();
    for (const id of ['a', 'b', 'c']) addTodo(store, goalId, id);
    store.rebuildSnapshot(goalId);
    // git reset drops the last whole line: no torn tail, only a log shorter than the snapshot.
    const log = store.logPath(goalId);
    const lines = fs.readFileSync(log, 'utf8').split('\n').filter(Boolean);
    fs.writeFileSync(log, `${lines.slice(0, -1).join('\n')}\n`);
    assert.match(store.load(goalId).warnings.join('\n'), /shorter than this clone read before/);

    const r = repair(store, { goalId });
    assert.equal(finding(r, 'snapshot-stale').fixed, true);
    assert.deepEqual(store.load(goalId).warnings, [], 'the snapshot fits the log again');
    assert.deepEqual(repair(store, { goalId, dryRun: true }).findings, [], 'fixed for good');
  });

  it('a torn last line is moved to a quarantine file with exactly its bytes, never deleted', () => {
    const { store, goalId } = goalFixture();
    addTodo(store, goalId, 'a');
    const log = store.logPath(goalId);
    const good = fs.readFileSync(log);
    const lines = good.toString().split('\n').length - 1;
    const torn = Buffer.from('{"v":1,"seq":3,"id":"ev-half","ts":"2026-11-30T10:00:00.000Z","wri');
    fs.appendFileSync(log, torn);

    const dry = repair(store, { goalId, dryRun: true });
    assert.deepEqual(kinds(dry), [[goalId, 'torn-tail', false]]);
    const r = repair(store, { goalId });
    const f = finding(r, 'torn-tail');
    assert.equal(f.fixed, true);
    assert.match(
      f.message,
      new RegExp(`events/[\\w-]+\\.jsonl:${lines + 1} is an incomplete line of ${torn.length} bytes`),
    );
    assert.match(f.message, /moved aside to a quarantine file/);

    const dir = store.goalDir(goalId);
    const quarantined = fs.readdirSync(dir).filter((n) => n.startsWith('events.torn-'));
    assert.equal(quarantined.length, 1);
    assert.deepEqual(fs.readFileSync(path.join(dir, quarantined[0]!)), torn);
    const after = fs.readFileSync(log);
    assert.deepEqual(after.subarray(0, good.length), good, 'the acknowledged events are untouched');
    assert.equal(after.at(-1), 10, 'the log ends on a complete line');
    const ev = lastEvent(store, goalId);
    assert.ok(ev.type === 'log.quarantined');
    assert.deepEqual(ev.data, { file: quarantined[0], bytes: torn.length, sha256: sha256(torn) });
    assert.equal(store.readLog(goalId).torn, undefined);
    assert.deepEqual(repair(store, { goalId }).findings, []);
    assert.equal(
      fs.readdirSync(dir).filter((n) => n.startsWith('events.torn-')).length,
      1,
      'the quarantine file stays',
    );
  });

  it('a broken hash chain is reported with its line, and nothing is rewritten', () => {
    const { store, goalId } = goalFixture();
    addTodo(store, goalId, 'a');
    addTodo(store, goalId, 'b');
    const log = store.logPath(goalId);
    const lines = fs.readFileSync(log, 'utf8').split('\n');
    lines[1] = lines[1]!.replace('"do a"', '"do A"'); // same length: a quiet edit of history
    fs.writeFileSync(log, lines.join('\n'));
    const dir = store.goalDir(goalId);
    const before = hashTree(dir);
    const index = indexBytes(store);

    const r = repair(store, { goalId });
    assert.deepEqual(kinds(r), [[goalId, 'corrupt-log', false]]);
    assert.match(
      r.findings[0]!.message,
      /events\/[\w-]+\.jsonl:3: field prev: does not match the sha256 of line 2/,
    );
    assert.match(r.findings[0]!.message, /history is never rewritten/);
    assert.equal(r.changed, 0);
    assert.deepEqual(hashTree(dir), before, 'no byte of the goal changed');
    assert.deepEqual(indexBytes(store), index);
  });

  it('a run open past its contract expiry is closed as abandoned', () => {
    const { store, goalId, clock } = goalFixture();
    addTodo(store, goalId, 'a');
    const out = shouldRun(store, { goalId }, agent);
    clock.advance(29 * MIN);
    assert.deepEqual(repair(store).findings, [], 'not yet expired');
    clock.advance(1 * MIN);
    const r = repair(store);
    const f = finding(r, 'run-abandoned');
    assert.equal(f.fixed, true);
    assert.match(f.message, new RegExp(`run ${out.run_id} is open past its contract's expiry`));
    const runState = store.load(goalId).state.runs[0]!;
    assert.equal(runState.outcome, 'abandoned');
    assert.equal(runState.endedAt, store.now());
    assert.deepEqual(lastEvent(store, goalId).actor, SELF_REPAIR_ACTOR, 'the fix is an event by self-repair');
  });

  it('a claim held past the timeout with no open run is released; a live agent keeps its claim', () => {
    const { store, goalId, clock } = goalFixture({ policy: { claimTimeoutMinutes: 10 } });
    addTodo(store, goalId, 'ghosted');
    addTodo(store, goalId, 'working');
    invoke(store, 'todo.claim', { goalId, todoId: 'ghosted', by: 'vanished-agent' }, agent);
    shouldRun(store, { goalId, ttlMinutes: 60 }, agent);
    invoke(store, 'todo.claim', { goalId, todoId: 'working', by: 'codex' }, agent);
    clock.advance(10 * MIN);
    assert.deepEqual(repair(store).findings, [], 'at the timeout, not past it');
    clock.advance(1000);
    const r = repair(store);
    assert.deepEqual(kinds(r), [[goalId, 'claim-stale', true]]);
    assert.match(
      r.findings[0]!.message,
      /todo ghosted is claimed by vanished-agent for 10 min with no open run: released/,
    );
    const todos = store.load(goalId).state.todos;
    assert.equal(todos.find((t) => t.id === 'ghosted')!.status, 'open');
    assert.equal(todos.find((t) => t.id === 'ghosted')!.claimedBy, undefined);
    assert.equal(todos.find((t) => t.id === 'working')!.claimedBy, 'codex');
  });

  it('the default claim timeout is two hours', () => {
    const { store, goalId, clock } = goalFixture();
    addTodo(store, goalId, 'a');
    invoke(store, 'todo.claim', { goalId, todoId: 'a', by: 'gone' }, agent);
    clock.advance(119 * MIN);
    assert.deepEqual(repair(store).findings, []);
    clock.advance(2 * MIN);
    assert.deepEqual(kinds(repair(store)), [[goalId, 'claim-stale', true]]);
  });

  it('an index that misses or invents goals is rebuilt', () => {
    const { store } = goalFixture({ goalId: 'alpha' });
    invoke(store, 'goal.create', { goalId: 'beta', title: 'Beta' }, human);
    const index = readIndex(store);
    const phantom = { ...index.goals[0]!, id: 'phantom', title: 'Never existed' };
    writeIndex(store, { ...index, goals: [index.goals[0]!, phantom] });

    const r = repair(store);
    assert.deepEqual(kinds(r), [[null, 'index-stale', true]]);
    assert.match(r.findings[0]!.message, /misses beta/);
    assert.match(r.findings[0]!.message, /lists phantom, which has no folder/);
    assert.match(r.findings[0]!.message, /rebuilt/);
    assert.deepEqual(
      readIndex(store).goals.map((g: { id: string }) => g.id),
      ['alpha', 'beta'],
    );
    assert.deepEqual(repair(store).findings, []);
  });

  it('an index entry that is out of date is rebuilt', () => {
    const { store, goalId } = goalFixture();
    const index = readIndex(store);
    index.goals[0]!.status = 'closed';
    writeIndex(store, index);
    const r = repair(store);
    assert.match(finding(r, 'index-stale').message, new RegExp(`out of date for ${goalId}`));
    assert.equal(readIndex(store).goals[0]!.status, 'active');
  });

  it('a gate pending past its expiry is expired', () => {
    const { store, goalId, clock } = goalFixture({ policy: { gateExpiryHours: 1 } });
    addTodo(store, goalId, 'deploy', { gate: 'prod' });
    clock.advance(59 * MIN);
    assert.deepEqual(repair(store).findings, []);
    clock.advance(1 * MIN);
    const r = repair(store);
    assert.deepEqual(kinds(r), [[goalId, 'gate-expired', true]]);
    assert.match(
      r.findings[0]!.message,
      /gate prod is pending past its expiry \(2026-11-30T11:00:00\.000Z\): expired/,
    );
    assert.equal(store.load(goalId).state.gates[0]!.status, 'expired');
  });

  it('a run open past its expiry on a goal closed meanwhile is still closed as abandoned', () => {
    const { store, goalId, clock } = goalFixture();
    addTodo(store, goalId, 'a');
    shouldRun(store, { goalId }, agent);
    invoke(store, 'goal.close', { goalId }, human);
    clock.advance(31 * MIN);
    const r = repair(store);
    assert.deepEqual(kinds(r), [[goalId, 'run-abandoned', true]], JSON.stringify(r.findings));
    assert.equal(store.load(goalId).state.runs[0]!.outcome, 'abandoned');
  });

  it('run.abandon (what self-repair uses) ends only a run past its contract expiry, and not for an agent', () => {
    const { store, goalId, clock } = goalFixture();
    addTodo(store, goalId, 'a');
    const runId = shouldRun(store, { goalId }, agent).run_id!;
    throwsLoopx(
      () => invoke(store, 'run.abandon', { goalId, runId }, SELF_REPAIR_ACTOR),
      'refused',
      /no expired contract/,
    );
    clock.advance(30 * MIN);
    throwsLoopx(
      () => invoke(store, 'run.abandon', { goalId, runId }, agent),
      'refused',
      /run\.abandon may be called by system or user/,
    );
    invoke(store, 'run.abandon', { goalId, runId }, SELF_REPAIR_ACTOR);
    assert.equal(store.load(goalId).state.runs[0]!.outcome, 'abandoned');
    throwsLoopx(
      () => invoke(store, 'run.abandon', { goalId, runId }, SELF_REPAIR_ACTOR),
      'refused',
      /already ended/,
    );
  });

  it('dryRun reports every problem and changes no byte of .loopx/; the real run then fixes them all', () => {
    const { store, goalId, clock } = goalFixture({ policy: { gateExpiryHours: 1, claimTimeoutMinutes: 30 } });
    addTodo(store, goalId, 'a');
    addTodo(store, goalId, 'b', { gate: 'prod' });
    addTodo(store, goalId, 'c');
    invoke(store, 'todo.claim', { goalId, todoId: 'c', by: 'ghost' }, agent);
    shouldRun(store, { goalId }, agent);
    invoke(store, 'goal.create', { goalId: 'other', title: 'Other' }, human);
    clock.advance(2 * 60 * MIN);
    // Break the other goal: stale snapshot and a torn tail; and the index misses it.
    forgeSnapshotState(store, 'other', (s) => (s.objective = 'forged'));
    fs.appendFileSync(store.logPath('other'), '{"v":1,"se');
    const index = readIndex(store);
    writeIndex(
      store,
      JSON.stringify({ v: 1, goals: index.goals.filter((g: { id: string }) => g.id !== 'other') }),
    );

    const before = hashTree(store.root);
    const dry = repair(store, { dryRun: true });
    assert.deepEqual(hashTree(store.root), before, 'dryRun changed nothing');
    assert.equal(dry.dry_run, true);
    assert.equal(dry.changed, 0);
    const expected: [string | null, FindingKind][] = [
      [goalId, 'run-abandoned'],
      [goalId, 'claim-stale'],
      [goalId, 'gate-expired'],
      ['other', 'torn-tail'],
      ['other', 'snapshot-stale'],
      [null, 'index-stale'],
    ];
    assert.deepEqual(
      kinds(dry),
      expected.map(([g, k]) => [g, k, false]),
    );

    const real = repair(store);
    // Quarantining the torn tail is a commit, and a commit writes a fresh snapshot: by the time
    // the snapshot is checked it is already right.
    const fixed = expected.filter(([g, k]) => !(g === 'other' && k === 'snapshot-stale'));
    assert.deepEqual(
      kinds(real),
      fixed.map(([g, k]) => [g, k, true]),
    );
    assert.equal(real.changed, fixed.length);
    const state = store.load(goalId).state;
    assert.equal(state.runs[0]!.outcome, 'abandoned');
    assert.equal(state.todos.find((t) => t.id === 'c')!.status, 'open');
    assert.equal(state.gates[0]!.status, 'expired');
    assert.equal(store.load('other').state.objective, '');
    assert.deepEqual(repair(store).findings, [], 'nothing left to repair');
  });
});
