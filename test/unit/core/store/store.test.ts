/**
 * The `.loopx/` store: layout, replay and snapshots, the hash chain, corrupt files, the index,
 * optimistic concurrency, torn tails and hostile ids.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import { Store } from '../../../../src/core/store/store';
import { LOOPX_DIR } from '../../../../src/core/store/workspace';
import { parseLog } from '../../../../src/core/store/event-log';
import { replay } from '../../../../src/core/rules/apply-event';
import { nextHlc } from '../../../../src/core/model/hlc';
import type { LoopxEvent } from '../../../../src/core/model/events';
import { invoke } from '../../../../src/core/capabilities/registry';
import { LoopxError } from '../../../../src/core/model/errors';
import { Policy } from '../../../../src/core/model/policy';
import {
  human,
  agent,
  system,
  tempDir,
  tempStore,
  removeTempDirs,
  manualClock,
  HOSTILE_IDS,
  settleIndex,
  signed,
} from '../../../helpers/store';
import { listGoalEntries } from '../../../../src/core/store/goal-index';
import { readIndex, removeIndex, writeIndex } from '../../../helpers/goal-index';

after(removeTempDirs);

const sha = (s: string | Buffer) => createHash('sha256').update(s).digest('hex');

/** Asserts that `fn` throws a LoopxError of `kind` whose message matches every pattern. */
function throwsLoopx(fn: () => unknown, kind: LoopxError['kind'], ...patterns: RegExp[]): LoopxError {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  assert.ok(
    caught instanceof LoopxError,
    `expected a LoopxError (${kind}), got ${caught === undefined ? 'no error' : String(caught)}`,
  );
  assert.equal(caught.kind, kind, `kind of: ${caught.message}`);
  for (const p of patterns) assert.match(caught.message, p);
  return caught;
}

/** The complete lines of a goal's log. */
function logLines(store: Store, goalId: string): string[] {
  const text = fs.readFileSync(store.logPath(goalId), 'utf8');
  const lines = text.split('\n');
  assert.equal(lines.pop(), '', 'the log ends with a newline');
  return lines;
}
function writeLogLines(store: Store, goalId: string, lines: string[]) {
  fs.writeFileSync(store.logPath(goalId), lines.map((l) => l + '\n').join(''));
}

/** A goal with a bit of everything in its history. */
function busyGoal(store: Store, goalId = 'busy'): void {
  invoke(
    store,
    'goal.create',
    { goalId, title: 'Busy goal', objective: 'exercise\nevery event', handoff: ['ask alice'] },
    human,
  );
  invoke(
    store,
    'todo.add',
    { goalId, todoId: 'first', title: 'first', priority: 'P1', action: 'npm test' },
    human,
  );
  invoke(
    store,
    'todo.add',
    { goalId, todoId: 'second', title: 'second', dependsOn: ['first'], gate: 'deploy' },
    agent,
  );
  invoke(store, 'todo.add', { goalId, todoId: 'mine', title: 'for a person', owner: 'user' }, human);
  invoke(store, 'todo.claim', { goalId, todoId: 'first' }, agent);
  invoke(store, 'run.start', { goalId, runId: 'run-1', agent: 'codex' }, agent);
  invoke(
    store,
    'evidence.add',
    {
      goalId,
      evidenceId: 'ev-1',
      runId: 'run-1',
      todoId: 'first',
      kind: 'test',
      summary: 'green',
      exitCode: 0,
      durationMs: 12,
    },
    agent,
  );
  invoke(
    store,
    'todo.complete',
    { goalId, todoId: 'first', evidence: ['ev-1'], summary: 'done', runId: 'run-1' },
    agent,
  );
  invoke(store, 'run.spend', { goalId, runId: 'run-1', tokens: 1000, costUsd: 0.25 }, agent);
  invoke(
    store,
    'run.end',
    { goalId, runId: 'run-1', outcome: 'succeeded', summary: 'ok', wallSeconds: 30 },
    agent,
  );
  invoke(store, 'gate.approve', { goalId, gateId: 'deploy', note: 'go' }, human, signed(store));
  invoke(store, 'todo.update', { goalId, todoId: 'second', priority: 'P0', note: 'urgent' }, agent);
  invoke(
    store,
    'reward.add',
    { goalId, runId: 'run-1', rewardId: 'rw-1', score: 0.5, comment: 'good', lesson: 'keep tests green' },
    human,
    signed(store),
  );
  invoke(
    store,
    'quota.set',
    { goalId, quota: { budgets: { turns: 50 }, window: { kind: 'life' }, cooldownSeconds: 10 } },
    agent,
    signed(store),
  );
  invoke(store, 'quota.grant', { goalId, budgets: { turns: 5 } }, human, signed(store));
  invoke(store, 'gate.request', { goalId, gateId: 'later', reason: 'maybe', guards: ['mine'] }, human);
  invoke(store, 'gate.expire', { goalId, gateId: 'later' }, system);
  invoke(store, 'todo.cancel', { goalId, todoId: 'mine', reason: 'not needed' }, human);
  invoke(store, 'goal.pause', { goalId, reason: 'lunch' }, human);
  invoke(store, 'goal.resume', { goalId }, human);
}

describe('store layout', () => {
  it('init creates goals/, local/ with its own .gitignore, git attributes and ignores, a valid policy.json, and is idempotent', () => {
    const ws = tempDir();
    const store = Store.init(ws);
    const root = path.join(ws, LOOPX_DIR);
    assert.ok(fs.statSync(path.join(root, 'goals')).isDirectory());
    assert.match(fs.readFileSync(path.join(root, 'local', '.gitignore'), 'utf8'), /^\*$/m);
    assert.equal(Policy.safeParse(JSON.parse(fs.readFileSync(store.policyPath, 'utf8'))).success, true);
    const lines = (f: string) => fs.readFileSync(path.join(root, f), 'utf8').split('\n');
    for (const l of ['local', '/index.json', 'goals/*/goal.json'])
      assert.ok(lines('.gitignore').includes(l), l);
    assert.ok(lines('.gitattributes').includes('*.jsonl -text'), 'logs are kept byte for byte');
    assert.ok(store.indexPath.startsWith(path.join(root, 'local')), 'the goal index is a local cache');
    fs.writeFileSync(store.policyPath, JSON.stringify({ v: 1, contractTtlMinutes: 5 }));
    const ignore = lines('.gitignore').join('\n');
    Store.init(ws);
    assert.equal(lines('.gitignore').join('\n'), ignore, 'a second init adds no line twice');
    assert.equal(store.policy().contractTtlMinutes, 5, 'a second init keeps the user-edited policy');
  });

  it('open refuses a folder without .loopx and says how to make one; discover finds it from a subfolder', () => {
    const bare = tempDir();
    throwsLoopx(() => Store.open(bare), 'not_found', /no LoopX workspace/, /loopx init/);
    const ws = tempDir();
    Store.init(ws);
    const deep = path.join(ws, 'a', 'b');
    fs.mkdirSync(deep, { recursive: true });
    assert.equal(Store.discover(deep), path.resolve(ws));
    assert.equal(Store.discover(bare), undefined);
  });

  it('the writer id is a valid id, kept in local/ (mode 0600) and the same for every Store on this clone', () => {
    const store = tempStore();
    const id = store.writerId();
    assert.match(id, /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/);
    assert.equal(new Store(store.workspace).writerId(), id);
    assert.equal(fs.statSync(path.join(store.localDir, 'writer-id')).mode & 0o777, 0o600);
    invoke(store, 'goal.create', { goalId: 'g', title: 'G' }, human);
    assert.equal(store.readLog('g').events[0]!.writer, id);
  });

  it('events carry v, hlc, seq, id, ts, writer, actor, type, data and a prev link', () => {
    const clock = manualClock();
    const store = tempStore({ now: clock.now });
    invoke(store, 'goal.create', { goalId: 'g', title: 'G' }, human);
    clock.advance(1000);
    invoke(store, 'todo.add', { goalId: 'g', todoId: 't1', title: 'one' }, agent);
    const lines = logLines(store, 'g');
    const [e1, e2] = store.readLog('g').events;
    assert.equal(e1!.prev, null);
    assert.equal(e2!.prev, sha(lines[0]!));
    assert.deepEqual(
      {
        v: e2!.v,
        hlc: e2!.hlc,
        seq: e2!.seq,
        ts: e2!.ts,
        writer: e2!.writer,
        actor: e2!.actor,
        type: e2!.type,
      },
      {
        v: 2,
        hlc: '2026-11-30T10:00:01.000Z.0000',
        seq: 2,
        ts: '2026-11-30T10:00:01.000Z',
        writer: store.writerId(),
        actor: agent,
        type: 'todo.added',
      },
    );
    assert.equal(e1!.hlc, '2026-11-30T10:00:00.000Z.0000');
    assert.notEqual(e1!.id, e2!.id);
  });

  it('writeArtifact stores the content under artifacts/ with its sha256, and refuses a hostile evidence id', () => {
    const store = tempStore();
    invoke(store, 'goal.create', { goalId: 'g', title: 'G' }, human);
    const art = store.writeArtifact('g', 'ev-1', 'hello\n');
    assert.deepEqual(art, { path: 'artifacts/ev-1.log', sha256: sha('hello\n'), bytes: 6 });
    assert.equal(fs.readFileSync(path.join(store.goalDir('g'), art.path), 'utf8'), 'hello\n');
    throwsLoopx(() => store.writeArtifact('g', '../../escape', 'x'), 'usage', /evidence id/);
    assert.equal(fs.existsSync(path.join(store.root, 'escape.log')), false);
  });
});

describe('replay and snapshots', () => {
  it('replaying the log gives exactly the snapshot, through every kind of event', () => {
    const store = tempStore();
    busyGoal(store);
    const fromSnapshot = store.load('busy');
    assert.deepEqual(fromSnapshot.warnings, []);
    const log = store.readLog('busy');
    const replayed = store.replayGoal('busy');
    assert.deepEqual(replayed.state, fromSnapshot.state);
    assert.equal(replayed.revision, fromSnapshot.revision);
    assert.deepEqual(replayed.heads, fromSnapshot.heads);
    assert.deepEqual(replay('busy', log.events, store.trust()), fromSnapshot.state);
    // The snapshot may lag a few events (SNAPSHOT_EVERY); rebuilt, it says the same as the log
    // and records where the log ended.
    store.rebuildSnapshot('busy');
    const { snap, problem } = store.readSnapshot('busy');
    assert.equal(problem, undefined);
    assert.deepEqual(snap!.state, replayed.state);
    assert.equal(snap!.revision, log.events.length);
    const head = snap!.heads[store.writerId()]!;
    assert.equal(head.bytes, fs.statSync(store.logPath('busy')).size);
    assert.equal(head.lastHash, sha(logLines(store, 'busy').at(-1)!));
    // Spot checks that the replay is not trivially empty.
    const s = replayed.state;
    assert.equal(s.todos.find((t) => t.id === 'first')?.status, 'done');
    assert.equal(s.todos.find((t) => t.id === 'second')?.note, 'urgent');
    assert.deepEqual(s.runs[0]?.spend, { turns: 1, tokens: 1000, costUsd: 0.25, wallSeconds: 30 });
    assert.equal(s.gates.find((g) => g.id === 'later')?.status, 'expired');
    assert.equal(s.granted.turns, 5);
  });

  it('a deleted snapshot is rebuilt from the log without complaint, and the next write restores it', () => {
    const store = tempStore();
    busyGoal(store);
    const before = store.load('busy');
    fs.rmSync(store.snapshotPath('busy'));
    const again = store.load('busy');
    assert.deepEqual(again.state, before.state);
    assert.deepEqual(again.warnings, []);
    invoke(store, 'todo.update', { goalId: 'busy', todoId: 'second', note: 'x' }, agent);
    assert.ok(fs.existsSync(store.snapshotPath('busy')));
  });

  it('a stale snapshot (an older goal.json) is brought up to date from the log', () => {
    const store = tempStore();
    invoke(store, 'goal.create', { goalId: 'g', title: 'G' }, human);
    invoke(store, 'todo.add', { goalId: 'g', todoId: 't1', title: 'one' }, agent);
    const old = fs.readFileSync(store.snapshotPath('g'));
    invoke(store, 'todo.add', { goalId: 'g', todoId: 't2', title: 'two' }, agent);
    invoke(store, 'todo.claim', { goalId: 'g', todoId: 't2' }, agent);
    fs.writeFileSync(store.snapshotPath('g'), old); // e.g. a crash after the append, before the rename
    const loaded = store.load('g');
    assert.equal(loaded.revision, 4);
    assert.deepEqual(loaded.state, store.replayGoal('g').state);
    assert.equal(loaded.state.todos.find((t) => t.id === 't2')?.status, 'claimed');
    // A write on top of it continues the chain where the log (not the snapshot) ended.
    invoke(store, 'todo.add', { goalId: 'g', todoId: 't3', title: 'three' }, agent);
    const log = store.readLog('g');
    assert.deepEqual(
      log.events.map((e) => e.seq),
      [1, 2, 3, 4, 5],
    );
  });

  it('the fast path reads the lines after the snapshot, and notices a same-length edit of the line it ends on', () => {
    const store = tempStore();
    invoke(store, 'goal.create', { goalId: 'g', title: 'Title' }, human);
    invoke(store, 'todo.add', { goalId: 'g', todoId: 't1', title: 'one' }, agent);
    store.rebuildSnapshot('g');
    invoke(store, 'todo.add', { goalId: 'g', todoId: 't2', title: 'two' }, agent);
    const fast = store.load('g');
    assert.equal(fast.revision, 3);
    assert.equal(fast.snapshotLag, 1, 'one line read after the snapshot');
    assert.deepEqual(
      fast.state.todos.map((t) => t.id),
      ['t1', 't2'],
    );
    // Edit line 2 (the snapshot's last line) in place, same length: the hash the snapshot keeps
    // no longer matches, so the fast path is not taken and the full replay names the break.
    const lines = logLines(store, 'g');
    lines[1] = lines[1]!.replace('"one"', '"ONE"');
    writeLogLines(store, 'g', lines);
    throwsLoopx(() => store.load('g'), 'corrupt', /events\/[\w-]+\.jsonl:3: field prev/);
  });

  it('a snapshot of another goal is ignored, one over a log rewritten since is ignored with a warning, and the state replayed', () => {
    const store = tempStore();
    invoke(store, 'goal.create', { goalId: 'g', title: 'G' }, human);
    invoke(store, 'todo.add', { goalId: 'g', todoId: 't1', title: 'one' }, agent);
    invoke(store, 'goal.create', { goalId: 'h', title: 'H' }, human);
    // goal.json of h in g's folder: valid in itself, but about another goal.
    fs.copyFileSync(store.snapshotPath('h'), store.snapshotPath('g'));
    let loaded = store.load('g');
    assert.equal(loaded.state.id, 'g');
    assert.deepEqual(loaded.state, store.replayGoal('g').state);
    assert.deepEqual(loaded.warnings, [], 'a snapshot that does not fit is a stale cache, not a problem');
    assert.equal(store.load('g').snapshotLag, 0, 'the cache is made again from the logs');

    // g's own goal.json from revision 2, over a log that was since rewritten with another history
    // (longer, so the snapshot's end falls inside a line of the new log).
    invoke(store, 'todo.add', { goalId: 'g', todoId: 't2', title: 'two' }, agent);
    const old = fs.readFileSync(store.snapshotPath('g'));
    fs.rmSync(store.goalDir('g'), { recursive: true });
    invoke(store, 'goal.create', { goalId: 'g', title: 'G, second life with a longer title' }, human);
    invoke(store, 'todo.add', { goalId: 'g', todoId: 'x1', title: 'another first todo' }, agent);
    invoke(store, 'todo.add', { goalId: 'g', todoId: 'x2', title: 'another second todo' }, agent);
    fs.writeFileSync(store.snapshotPath('g'), old);
    loaded = store.load('g');
    assert.deepEqual(
      loaded.state.todos.map((t) => t.id),
      ['x1', 'x2'],
    );
    assert.equal(loaded.state.title, 'G, second life with a longer title');
    assert.match(
      loaded.warnings.join('\n'),
      /the log was rewritten up to there; state rebuilt from the logs/,
    );
  });

  it('a broken goal.json is reported naming the file and the line or field, and rebuilt from the log', () => {
    const store = tempStore();
    busyGoal(store);
    const good = store.load('busy').state;
    const file = store.snapshotPath('busy');
    const text = fs.readFileSync(file, 'utf8');
    const nl = text.indexOf('\n');
    const [header, rest] = [text.slice(0, nl), text.slice(nl)];
    const expectRebuilt = (...patterns: RegExp[]) => {
      const loaded = store.load('busy');
      assert.deepEqual(loaded.state, good, 'nothing is lost: the log is the truth');
      assert.equal(loaded.warnings.length, 1, JSON.stringify(loaded.warnings));
      assert.match(loaded.warnings[0]!, /local\/cache\/goals\/busy\.json/);
      assert.match(loaded.warnings[0]!, /state rebuilt from the logs/);
      for (const p of patterns) assert.match(loaded.warnings[0]!, p);
    };

    fs.writeFileSync(file, header.replace(/"revision":\d+/, '"revision":"many"') + rest);
    expectRebuilt(/busy\.json \(line 1\): field revision/);
    fs.writeFileSync(file, header.replace(/,/, ',,') + rest);
    expectRebuilt(/busy\.json \(line 1\)[^:]*: not valid JSON/);
    fs.writeFileSync(file, '');
    expectRebuilt(/busy\.json \(line 1\)/);
    // A hand edit of the state (a todo marked done, say) is not trusted either.
    fs.writeFileSync(file, text.replace('"status":"open"', '"status":"done"'));
    assert.notEqual(fs.readFileSync(file, 'utf8'), text, 'the edit happened');
    expectRebuilt();

    invoke(
      store,
      'todo.update',
      { goalId: 'busy', todoId: 'second', note: 'fixed by the next write' },
      agent,
    );
    assert.deepEqual(store.load('busy').warnings, [], 'the next write rewrites the snapshot');
  });
});

describe('the hash chain', () => {
  function sixEvents(store: Store) {
    invoke(store, 'goal.create', { goalId: 'g', title: 'G' }, human);
    for (const t of ['a', 'b', 'c', 'd', 'e'])
      invoke(store, 'todo.add', { goalId: 'g', todoId: t, title: `todo ${t}` }, agent);
    fs.rmSync(store.snapshotPath('g')); // so that load() reads the log itself
    assert.equal(logLines(store, 'g').length, 6);
  }

  it('an intact log verifies: every prev is the sha256 of the line before', () => {
    const store = tempStore();
    sixEvents(store);
    const lines = logLines(store, 'g');
    const log = store.readLog('g');
    assert.deepEqual(
      log.hashes,
      lines.map((l) => sha(l)),
    );
    assert.deepEqual(
      log.events.map((e) => e.prev),
      [null, ...lines.slice(0, -1).map((l) => sha(l))],
    );
    assert.equal(log.torn, undefined);
  });

  it('an edited line is detected at the next line, naming file, line and field prev', () => {
    const store = tempStore();
    sixEvents(store);
    const lines = logLines(store, 'g');
    lines[2] = lines[2]!.replace('todo b', 'todo B'); // same length, still valid on its own
    writeLogLines(store, 'g', lines);
    const err = throwsLoopx(
      () => store.readLog('g'),
      'corrupt',
      /events\/[\w-]+\.jsonl:4: field prev/,
      /line 3/,
    );
    assert.equal(err.details.line, 4);
    assert.match(String(err.details.file), /goals\/g\/events\/[\w-]+\.jsonl$/);
    throwsLoopx(() => store.load('g'), 'corrupt', /events\/[\w-]+\.jsonl:4/);
    // An edit that changes the length is caught by load() even with a snapshot in place.
    const store2 = tempStore();
    sixEvents(store2);
    store2.rebuildSnapshot('g');
    const l2 = logLines(store2, 'g');
    l2[1] = l2[1]!.replace('todo a', 'todo aaaa');
    writeLogLines(store2, 'g', l2);
    throwsLoopx(() => store2.load('g'), 'corrupt', /events\/[\w-]+\.jsonl:3: field prev/);
  });

  it('a removed line is detected where it was, naming the line and field seq', () => {
    const store = tempStore();
    sixEvents(store);
    const lines = logLines(store, 'g');
    lines.splice(3, 1);
    writeLogLines(store, 'g', lines);
    const err = throwsLoopx(
      () => store.readLog('g'),
      'corrupt',
      /events\/[\w-]+\.jsonl:4: field seq: is 5, expected 4/,
      /removed, inserted or moved/,
    );
    assert.equal(err.details.line, 4);
    // Removing the last line cannot hide either: the snapshot no longer fits and the replay shows it.
    const store2 = tempStore();
    sixEvents(store2);
    store2.rebuildSnapshot('g');
    writeLogLines(store2, 'g', logLines(store2, 'g').slice(0, -1));
    const loaded = store2.load('g');
    assert.equal(loaded.revision, 5);
    assert.match(
      loaded.warnings.join('\n'),
      /is shorter than this clone read before \(6 events\): lines were cut/,
    );
  });

  it('an inserted line is detected: a copied line by the line after it, a forged one by the next prev', () => {
    const store = tempStore();
    sixEvents(store);
    const lines = logLines(store, 'g');
    // Line 4 could be a fork (it continues line 1, and lines 2-3 descend from line 1), but line 5
    // continues line 3, which the copy between them does not descend from: an insertion.
    writeLogLines(store, 'g', [...lines.slice(0, 3), lines[1]!, ...lines.slice(3)]);
    throwsLoopx(() => store.readLog('g'), 'corrupt', /events\/[\w-]+\.jsonl:5: field seq: is 4, expected 3/);

    // A forger who gets seq and prev right for the new line and renumbers the rest still breaks the chain.
    // It stamps its line where line 4 was, and every later line one tick on.
    const forged = JSON.parse(lines[2]!) as LoopxEvent;
    let hlc = (JSON.parse(lines[3]!) as LoopxEvent).hlc;
    const fake = {
      ...forged,
      hlc,
      seq: 4,
      id: 'ev-forged',
      prev: sha(lines[2]!),
      data: { todo: { ...(forged.data as { todo: object }).todo, id: 'zz', title: 'forged' } },
    };
    const renumbered = lines.slice(3).map((l) => {
      const ev = JSON.parse(l) as LoopxEvent;
      hlc = nextHlc(hlc, new Date(0));
      return JSON.stringify({ ...ev, hlc, seq: ev.seq + 1 });
    });
    writeLogLines(store, 'g', [...lines.slice(0, 3), JSON.stringify(fake), ...renumbered]);
    throwsLoopx(
      () => store.readLog('g'),
      'corrupt',
      /events\/[\w-]+\.jsonl:5: field prev: does not match the sha256 of line 4/,
    );
  });

  it('reports the first broken link when there are several', () => {
    const store = tempStore();
    sixEvents(store);
    const lines = logLines(store, 'g');
    lines[1] = lines[1]!.replace('todo a', 'todo A');
    lines[4] = lines[4]!.replace('todo d', 'todo D');
    writeLogLines(store, 'g', lines);
    throwsLoopx(() => store.readLog('g'), 'corrupt', /events\/[\w-]+\.jsonl:3:/);
  });

  it('parseLog checks a continuation against the hash it should follow', () => {
    const store = tempStore();
    sixEvents(store);
    const buf = fs.readFileSync(store.logPath('g'));
    const lines = logLines(store, 'g');
    const offset = Buffer.byteLength(lines.slice(0, 3).join('\n') + '\n');
    const tail = buf.subarray(offset);
    const w = store.writerId();
    assert.equal(parseLog(tail, 'x.jsonl', w, { startLine: 4, prevHash: sha(lines[2]!) }).events.length, 3);
    assert.throws(
      () => parseLog(tail, 'x.jsonl', w, { startLine: 4, prevHash: sha(lines[1]!) }),
      /x\.jsonl:4: field prev/,
    );
    assert.throws(
      () => parseLog(tail, 'x.jsonl', w, { startLine: 3, prevHash: sha(lines[2]!) }),
      /x\.jsonl:3: field seq: is 4, expected 3/,
    );
  });
});

describe('corrupt files', () => {
  it('a line that is not JSON names the file and the line', () => {
    const store = tempStore();
    invoke(store, 'goal.create', { goalId: 'g', title: 'G' }, human);
    invoke(store, 'todo.add', { goalId: 'g', todoId: 't1', title: 'one' }, agent);
    invoke(store, 'todo.add', { goalId: 'g', todoId: 't2', title: 'two' }, agent);
    const lines = logLines(store, 'g');
    lines[1] = '{"v":1,"seq":2,oops}';
    writeLogLines(store, 'g', lines);
    const err = throwsLoopx(() => store.load('g'), 'corrupt', /events\/[\w-]+\.jsonl:2: not valid JSON/);
    assert.equal(err.details.line, 2);
  });

  it('a line with a bad field names the file, the line and the field path', () => {
    const store = tempStore();
    invoke(store, 'goal.create', { goalId: 'g', title: 'G' }, human);
    invoke(store, 'todo.add', { goalId: 'g', todoId: 't1', title: 'one' }, agent);
    const lines = logLines(store, 'g');
    const ev = JSON.parse(lines[1]!);
    ev.data.todo.priority = 'P9';
    writeLogLines(store, 'g', [lines[0]!, JSON.stringify(ev)]);
    fs.rmSync(store.snapshotPath('g'));
    throwsLoopx(
      () => store.load('g'),
      'corrupt',
      /goals\/g\/events\/[\w-]+\.jsonl:2: field data\.todo\.priority/,
    );
    ev.data.todo.priority = 'P1';
    ev.actor.kind = 'robot';
    writeLogLines(store, 'g', [lines[0]!, JSON.stringify(ev)]);
    throwsLoopx(() => store.readLog('g'), 'corrupt', /events\/[\w-]+\.jsonl:2: field actor\.kind/);
  });

  it('an event that points at nothing (valid line, valid chain) is overruled and named; the goal still loads', () => {
    const store = tempStore();
    invoke(store, 'goal.create', { goalId: 'g', title: 'G' }, human);
    const lines = logLines(store, 'g');
    // Craft a perfectly chained line that claims a todo which does not exist.
    const first = JSON.parse(lines[0]!);
    const ev = {
      ...first,
      hlc: nextHlc(first.hlc, new Date()),
      seq: 2,
      id: 'ev-x',
      prev: sha(lines[0]!),
      type: 'todo.claimed',
      data: { todoId: 'ghost', by: 'x' },
    };
    writeLogLines(store, 'g', [lines[0]!, JSON.stringify(ev)]);
    fs.rmSync(store.snapshotPath('g'));
    const s = store.load('g').state;
    assert.deepEqual(
      s.overruled?.map((o) => [o.eventId, o.rule, o.reason]),
      [['ev-x', 'unknown_ref', 'it refers to todo ghost, which this goal does not have']],
    );
    assert.deepEqual(s.todos, []);
  });

  it('an empty log or a goal folder without a log is a clear error, a missing goal is not_found', () => {
    const store = tempStore();
    fs.mkdirSync(store.logsDir('empty'), { recursive: true });
    fs.writeFileSync(store.logPath('empty'), '');
    throwsLoopx(
      () => store.load('empty'),
      'corrupt',
      /goal empty: .*events\/[\w-]+\.jsonl has no complete event/,
    );
    fs.mkdirSync(store.goalDir('nolog'));
    throwsLoopx(() => store.load('nolog'), 'corrupt', /goal nolog: its folder has no event log/);
    throwsLoopx(() => store.load('nothing'), 'not_found', /no goal "nothing"/);
  });

  it('policy.json: a syntax error names the file and the line, a bad value names the field, a typo names the key', () => {
    const store = tempStore();
    fs.writeFileSync(store.policyPath, '{\n  "v": 1,\n  "contractTtlMinutes": 30,\n}\n');
    throwsLoopx(() => store.policy(), 'corrupt', /policy\.json \(line 4\): not valid JSON/);
    fs.writeFileSync(store.policyPath, JSON.stringify({ v: 1, contractTtlMinutes: 'thirty' }, null, 2));
    throwsLoopx(() => store.policy(), 'corrupt', /policy\.json: field contractTtlMinutes/);
    fs.writeFileSync(
      store.policyPath,
      JSON.stringify({ v: 1, gatedActions: [{ pattern: 'git push*' }] }, null, 2),
    );
    throwsLoopx(() => store.policy(), 'corrupt', /policy\.json: field gatedActions\.0\.gate/);
    fs.writeFileSync(store.policyPath, JSON.stringify({ v: 1, contractTTLMinutes: 30 }, null, 2));
    throwsLoopx(() => store.policy(), 'corrupt', /policy\.json: .*contractTTLMinutes/);
    // A write through a capability refuses with the same message rather than guessing a policy.
    throwsLoopx(
      () => invoke(store, 'goal.create', { goalId: 'x', title: 'x' }, human),
      'corrupt',
      /policy\.json: .*contractTTLMinutes/,
    );
    assert.deepEqual(store.goalIds(), []);
  });

  it('a missing policy.json falls back to the default policy', () => {
    const store = tempStore();
    fs.rmSync(store.policyPath);
    assert.equal(store.policy().v, 1);
    invoke(store, 'goal.create', { goalId: 'g', title: 'G' }, human);
    assert.deepEqual(store.load('g').state.quota.budgets, { turns: 200 });
  });
});

describe('the goal list and index.json', () => {
  it('a listing never writes back an entry a commit updated while the listing read the goals', () => {
    const store = tempStore();
    for (const g of ['a', 'b']) invoke(store, 'goal.create', { goalId: g, title: g.toUpperCase() }, human);
    settleIndex(store);
    // b's folder moved on (a pull): the listing reads b, and meanwhile a commit lands on a (an
    // append, which leaves a's folder time as it was, so only its index entry says it changed).
    const past = new Date(Date.now() - 5_000);
    fs.writeFileSync(path.join(store.logsDir('b'), 'w-teammate.jsonl'), '');
    fs.utimesSync(store.logsDir('b'), past, past);
    const list = listGoalEntries({
      indexFile: store.indexPath,
      trust: store.trust().fingerprint,
      goalIds: store.goalIds(),
      logsDir: (id) => store.logsDir(id),
      stateOf: (id) => {
        if (id === 'b')
          invoke(store, 'todo.add', { goalId: 'a', todoId: 'meanwhile', title: 'meanwhile' }, agent);
        return store.load(id).state;
      },
      withIndexLock: (fn) => fn(),
    });
    assert.equal(
      list.goals.find((g) => g.id === 'a')!.todosTotal,
      0,
      'the listing itself saw a before the commit',
    );
    assert.equal(
      store.listGoals().goals.find((g) => g.id === 'a')!.todosTotal,
      1,
      "the index kept the commit's entry for a",
    );
  });

  function threeGoals(store: Store) {
    for (const id of ['a', 'b', 'c'])
      invoke(store, 'goal.create', { goalId: id, title: `Goal ${id}` }, human);
  }

  it('lists every goal with its counts from the index', () => {
    const store = tempStore();
    threeGoals(store);
    invoke(store, 'todo.add', { goalId: 'b', todoId: 't1', title: 'one', gate: 'g1' }, agent);
    invoke(store, 'todo.add', { goalId: 'b', todoId: 't2', title: 'two' }, agent);
    invoke(store, 'todo.complete', { goalId: 'b', todoId: 't2' }, agent);
    const { goals, errors } = store.listGoals();
    assert.deepEqual(errors, []);
    assert.deepEqual(goals.map((g) => g.id).sort(), ['a', 'b', 'c']);
    const b = goals.find((g) => g.id === 'b')!;
    assert.deepEqual(
      { done: b.todosDone, total: b.todosTotal, gates: b.pendingGates, status: b.status },
      { done: 1, total: 2, gates: 1, status: 'active' },
    );
  });

  it('one broken goal does not hide the others: it is listed in errors naming file and line', () => {
    const store = tempStore();
    threeGoals(store);
    const lines = logLines(store, 'b');
    writeLogLines(store, 'b', [lines[0]!, '{broken']);
    removeIndex(store); // the index would otherwise still list b from before
    const { goals, errors } = store.listGoals();
    assert.deepEqual(goals.map((g) => g.id).sort(), ['a', 'c']);
    assert.equal(errors.length, 1);
    assert.equal(errors[0]!.goalId, 'b');
    assert.match(errors[0]!.message, /goals\/b\/events\/[\w-]+\.jsonl:2: not valid JSON/);
    // rebuildIndex does the same, and writes an index with the readable goals.
    const rebuildErrors = store.rebuildIndex();
    assert.deepEqual(
      rebuildErrors.map((e) => e.goalId),
      ['b'],
    );
    const index = readIndex(store);
    assert.deepEqual(index.goals.map((g: { id: string }) => g.id).sort(), ['a', 'c']);
  });

  it('the index is reconciled with the folders: a stale entry is dropped, an unlisted folder is found', () => {
    const store = tempStore();
    threeGoals(store);
    fs.rmSync(store.goalDir('c'), { recursive: true }); // a goal removed by hand or by git
    const index = readIndex(store);
    index.goals = index.goals.filter((g: { id: string }) => g.id !== 'a'); // an index that never heard of a
    writeIndex(store, index);
    const ids = store
      .listGoals()
      .goals.map((g) => g.id)
      .sort();
    assert.deepEqual(ids, ['a', 'b']);
    // A broken index.json does not hide anything either.
    writeIndex(store, '{"v":1,"goals":[{"id":');
    assert.deepEqual(
      store
        .listGoals()
        .goals.map((g) => g.id)
        .sort(),
      ['a', 'b'],
    );
    // Folders whose names are not ids are not goals.
    fs.mkdirSync(path.join(store.root, 'goals', 'not a goal'));
    fs.mkdirSync(path.join(store.root, 'goals', '.hidden'));
    assert.deepEqual(store.goalIds(), ['a', 'b']);
  });

  it('the index follows writes: status and counts change with the goal', () => {
    const store = tempStore();
    invoke(store, 'goal.create', { goalId: 'g', title: 'G' }, human);
    invoke(store, 'todo.add', { goalId: 'g', todoId: 't', title: 't' }, agent);
    invoke(store, 'todo.complete', { goalId: 'g', todoId: 't' }, agent);
    let entry = readIndex(store).goals[0];
    assert.equal(entry?.status, 'completed');
    invoke(store, 'goal.close', { goalId: 'g' }, human);
    entry = readIndex(store).goals[0];
    assert.equal(entry?.status, 'closed');
  });
});

describe('optimistic concurrency', () => {
  it('two writers that read the same revision: the second is refused with a clear conflict and writes nothing', () => {
    const ws = tempDir();
    const one = Store.init(ws);
    const two = new Store(ws);
    invoke(one, 'goal.create', { goalId: 'g', title: 'G' }, human);
    const seenByOne = one.load('g').revision;
    const seenByTwo = two.load('g').revision;
    assert.equal(seenByOne, 1);
    invoke(one, 'todo.add', { goalId: 'g', todoId: 'from-one', title: 'one' }, agent, {
      expectRevision: seenByOne,
    });
    const size = fs.statSync(two.logPath('g')).size;
    const err = throwsLoopx(
      () =>
        invoke(two, 'todo.add', { goalId: 'g', todoId: 'from-two', title: 'two' }, agent, {
          expectRevision: seenByTwo,
        }),
      'conflict',
      /goal g is at revision 2, not 1 as expected/,
      /read it again and retry/,
    );
    assert.deepEqual(
      { revision: err.details.revision, expected: err.details.expected },
      { revision: 2, expected: 1 },
    );
    assert.equal(fs.statSync(two.logPath('g')).size, size, 'the refused write appended nothing');
    // Read again, retry: accepted.
    const r = invoke(two, 'todo.add', { goalId: 'g', todoId: 'from-two', title: 'two' }, agent, {
      expectRevision: two.load('g').revision,
    });
    assert.equal(r.revision, 3);
  });

  it('a write without expectRevision is not checked; a matching one passes; a future one is refused too', () => {
    const store = tempStore();
    invoke(store, 'goal.create', { goalId: 'g', title: 'G' }, human);
    invoke(store, 'todo.add', { goalId: 'g', todoId: 'a', title: 'a' }, agent);
    throwsLoopx(
      () => store.commit('g', () => [], { actor: agent, expectRevision: 9 }),
      'conflict',
      /at revision 2, not 9/,
    );
    assert.equal(store.commit('g', () => [], { actor: agent, expectRevision: 2 }).revision, 2);
  });

  it('creating a goal that exists is a conflict; writing to a missing goal is not_found', () => {
    const store = tempStore();
    invoke(store, 'goal.create', { goalId: 'g', title: 'G' }, human);
    throwsLoopx(
      () => invoke(store, 'goal.create', { goalId: 'g', title: 'again' }, human),
      'conflict',
      /goal g already exists/,
    );
    throwsLoopx(
      () => invoke(store, 'todo.add', { goalId: 'nope', title: 'x' }, agent),
      'not_found',
      /no goal "nope"/,
    );
    assert.equal(fs.existsSync(store.goalDir('nope')), false);
  });

  it('a lock left by a dead process does not block; a live holder makes a writer give up naming the holder', () => {
    const store = new Store(tempStore().workspace, { lockTimeoutMs: 300 });
    invoke(store, 'goal.create', { goalId: 'g', title: 'G' }, human);
    const lock = path.join(store.localDir, 'locks', 'goal-g.lock');
    // pid 2^22+1 is above Linux's pid_max: certainly not running.
    fs.writeFileSync(lock, JSON.stringify({ pid: 4194305, host: hostname(), nonce: 'dead', at: Date.now() }));
    invoke(store, 'todo.add', { goalId: 'g', todoId: 'a', title: 'a' }, agent);
    assert.equal(
      JSON.parse(fs.readFileSync(lock, 'utf8')).pid,
      process.pid,
      'the lock was taken, not judged',
    );
    // A live holder: the kernel lock taken on the file (here by this process, in another call).
    store.withGoalLock('g', () =>
      throwsLoopx(
        () => invoke(store, 'todo.add', { goalId: 'g', todoId: 'b', title: 'b' }, agent),
        'conflict',
        /could not take the lock .*goal-g\.lock/,
        new RegExp(`held by process ${process.pid}`),
      ),
    );
    assert.equal(store.load('g').revision, 2);
  });
});

describe('torn tail', () => {
  const TORN = '{"v":1,"seq":4,"id":"ev-torn","ts":"2026-';

  function tornGoal() {
    const store = tempStore();
    invoke(store, 'goal.create', { goalId: 'g', title: 'G' }, human);
    invoke(store, 'todo.add', { goalId: 'g', todoId: 'a', title: 'a' }, agent);
    invoke(store, 'todo.add', { goalId: 'g', todoId: 'b', title: 'b' }, agent);
    const complete = fs.readFileSync(store.logPath('g'));
    fs.appendFileSync(store.logPath('g'), TORN); // a crash in the middle of the next append
    return { store, complete };
  }

  it('is reported as a warning naming the file and the line, and is not part of the state', () => {
    const { store } = tornGoal();
    for (const snapshot of [true, false]) {
      if (!snapshot) fs.rmSync(store.snapshotPath('g'));
      const loaded = store.load('g');
      assert.equal(loaded.revision, 3);
      assert.deepEqual(
        loaded.state.todos.map((t) => t.id),
        ['a', 'b'],
      );
      assert.equal(loaded.warnings.length, 1, `with${snapshot ? '' : 'out'} a snapshot`);
      assert.match(
        loaded.warnings[0]!,
        /goals\/g\/events\/[\w-]+\.jsonl:4 is an incomplete line \(\d+ bytes without a newline\)/,
      );
    }
    const log = store.readLog('g');
    assert.deepEqual(log.torn, { line: 4, offset: log.completeBytes, bytes: Buffer.byteLength(TORN) });
  });

  it('is moved to a quarantine file (never deleted) by the next write, which records log.quarantined', () => {
    const { store, complete } = tornGoal();
    const r = invoke(store, 'todo.add', { goalId: 'g', todoId: 'c', title: 'c' }, agent);
    assert.deepEqual(
      r.events.map((e) => [e.seq, e.type]),
      [
        [4, 'log.quarantined'],
        [5, 'todo.added'],
      ],
    );
    const q = r.events[0]!;
    assert.equal(q.type, 'log.quarantined');
    if (q.type !== 'log.quarantined') return;
    const kept = fs.readFileSync(path.join(store.goalDir('g'), q.data.file), 'utf8');
    assert.equal(kept, TORN);
    assert.equal(q.data.bytes, Buffer.byteLength(TORN));
    assert.equal(q.data.sha256, sha(TORN));
    const raw = fs.readFileSync(store.logPath('g'));
    assert.ok(raw.subarray(0, complete.length).equals(complete), 'the complete lines are untouched');
    assert.equal(raw.includes(TORN), false);
    const log = store.readLog('g');
    assert.equal(log.torn, undefined);
    assert.deepEqual(
      log.events.map((e) => e.seq),
      [1, 2, 3, 4, 5],
    );
    assert.deepEqual(store.load('g').warnings, []);
    assert.deepEqual(store.load('g').state, store.replayGoal('g').state);
  });

  it('a refused write leaves the torn tail in place, so the write that quarantines it also records it', () => {
    const { store } = tornGoal();
    throwsLoopx(
      () => invoke(store, 'todo.add', { goalId: 'g', todoId: 'a', title: 'again' }, agent),
      'refused',
      /already has a todo a/,
    );
    throwsLoopx(
      () => invoke(store, 'todo.add', { goalId: 'g', todoId: 'z', title: 'z' }, agent, { expectRevision: 1 }),
      'conflict',
    );
    assert.ok(fs.readFileSync(store.logPath('g'), 'utf8').endsWith(TORN), 'refused calls change nothing');
    assert.deepEqual(
      fs.readdirSync(store.goalDir('g')).filter((f) => f.startsWith('events.torn-')),
      [],
    );
    invoke(store, 'todo.add', { goalId: 'g', todoId: 'z', title: 'z' }, agent);
    const files = fs.readdirSync(store.goalDir('g')).filter((f) => f.startsWith('events.torn-'));
    const recorded = store.readLog('g').events.filter((e) => e.type === 'log.quarantined');
    assert.equal(files.length, 1);
    assert.equal(recorded.length, 1);
    assert.equal((recorded[0]!.data as { file: string }).file, files[0]);
  });
});

describe('hostile ids', () => {
  it('the store refuses each of them as a goal id, naming the field, and touches nothing on disk', () => {
    const store = tempStore();
    const before = fs.readdirSync(store.root, { recursive: true }).sort();
    for (const [id, what] of HOSTILE_IDS) {
      for (const call of [
        () => store.load(id),
        () => store.exists(id),
        () => store.logPath(id),
        () => store.commit(id, () => [], { actor: human, create: true }),
      ]) {
        const err = throwsLoopx(call, 'usage', /goal id/);
        assert.equal(err.details.field, 'goal id', what);
        assert.ok(err.message.length < 300, `${what}: the message stays short`);
        assert.doesNotMatch(
          err.message,
          /[\u0000-\u001f]/,
          `${what}: no raw control characters in the message`,
        );
      }
    }
    assert.deepEqual(fs.readdirSync(store.root, { recursive: true }).sort(), before);
    assert.equal(fs.existsSync(path.join(store.root, 'x')), false);
  });

  it('every capability input refuses them, naming the field', () => {
    const store = tempStore();
    invoke(store, 'goal.create', { goalId: 'g', title: 'G' }, human);
    invoke(store, 'todo.add', { goalId: 'g', todoId: 't', title: 't' }, agent);
    for (const [id, what] of HOSTILE_IDS) {
      const cases: [string, Record<string, unknown>, string][] = [
        ['goal.create', { goalId: id, title: 'x' }, 'goalId'],
        ['todo.add', { goalId: id, title: 'x' }, 'goalId'],
        ['todo.add', { goalId: 'g', todoId: id, title: 'x' }, 'todoId'],
        ['todo.add', { goalId: 'g', title: 'x', gate: id }, 'gate'],
        ['todo.add', { goalId: 'g', title: 'x', dependsOn: ['t', id] }, 'dependsOn.1'],
        ['todo.claim', { goalId: 'g', todoId: id }, 'todoId'],
        ['gate.request', { goalId: 'g', gateId: id }, 'gateId'],
        ['evidence.add', { goalId: 'g', evidenceId: id, summary: 's' }, 'evidenceId'],
        ['run.start', { goalId: 'g', runId: id, agent: 'a' }, 'runId'],
      ];
      for (const [cap, input, field] of cases) {
        const err = throwsLoopx(() => invoke(store, cap, input, human), 'usage');
        assert.ok(
          err.message.startsWith(`${cap}: field ${field}: not a valid id`),
          `${what} as ${cap} ${field}: ${err.message}`,
        );
      }
    }
    assert.equal(store.readLog('g').events.length, 2, 'nothing was written');
    assert.deepEqual(store.goalIds(), ['g']);
  });
});
