/**
 * Group commit (store/group-commit.ts, store/group-queue.ts): calls queued while another process holds a
 * goal's lock are committed by the holder, each checked as its caller's own, answered only once
 * written; a holder that dies mid-batch leaves nothing lost and nothing written twice. The calls
 * "of another process" are queued here with GroupQueue, exactly the file another process writes.
 */
import { describe, it, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { invoke } from '../../../../src/core/capabilities/registry';
import { GroupQueue } from '../../../../src/core/store/group-queue';
import type { GroupAnswer, GroupRequest } from '../../../../src/core/store/group-queue';
import { parseLog } from '../../../../src/core/store/event-log';
import { Store } from '../../../../src/core/store/store';
import { tryLock } from '../../../../src/core/store/lock';
import { LoopxError } from '../../../../src/core/model/errors';
import type { Actor } from '../../../../src/core/model/goal-state';
import { agent, human, removeTempDirs, signed, tempDir, tempStore } from '../../../helpers/store';

after(removeTempDirs);

const other: Actor = { kind: 'agent', id: 'writer-2', channel: 'hook' };

function setUp(): Store {
  const store = tempStore();
  invoke(store, 'goal.create', { goalId: 'g', title: 'Grouped' }, human);
  invoke(store, 'todo.add', { goalId: 'g', todoId: 't1', title: 'First' }, agent);
  return store;
}

/** The queue of goal `g` and a call as another process of this clone would queue it. */
function queueOf(store: Store, goalId = 'g') {
  const request = (
    capability: string,
    input: Record<string, unknown>,
    actor: unknown = other,
  ): GroupRequest => {
    const ctx = store.groupFor(goalId, { capability, input, actor: agent }, () => () => [])!;
    return { ...ctx.request, capability, input, actor };
  };
  const queue = store.groupFor(goalId, { capability: 'x', input: {}, actor: agent }, () => () => [])!.queue;
  return { queue, request };
}

function files(queue: GroupQueue): string[] {
  return fs.existsSync(queue.dir) ? fs.readdirSync(queue.dir).sort() : [];
}

function ok(a: GroupAnswer | undefined): Extract<GroupAnswer, { ok: true }> {
  assert.ok(a, 'the call was answered');
  assert.ok(a.ok, `the call was refused: ${a.ok ? '' : a.message}`);
  return a;
}

function refusedWith(a: GroupAnswer | undefined, reason: string) {
  assert.ok(a, 'the call was answered');
  assert.equal(a.ok, false, 'the call was committed');
  if (!a.ok) assert.equal(a.details.reason, reason, a.message);
}

const notes = (store: Store) =>
  parseLog(fs.readFileSync(store.logPath('g')), store.logPath('g'), store.writerId())
    .events.filter((e) => e.type === 'todo.updated')
    .map((e) => (e.data as { note?: string }).note);

describe('group commit', () => {
  const saved = {
    respond: GroupQueue.prototype.respond,
    journal: GroupQueue.prototype.journal,
    submit: GroupQueue.prototype.submit,
    recover: GroupQueue.prototype.recover,
  };

  /**
   * The holder's own call, made while `patch` kills it at some point of its batch. A killed
   * process does not clean up after itself, so its in-process recovery is off meanwhile.
   */
  function holderDies(store: Store, patch: Partial<GroupQueue>) {
    Object.assign(GroupQueue.prototype, { recover: () => [] }, patch);
    try {
      assert.throws(
        () => invoke(store, 'todo.update', { goalId: 'g', todoId: 't1', note: 'own' }, agent),
        /killed/,
      );
    } finally {
      Object.assign(GroupQueue.prototype, saved);
    }
  }
  afterEach(() => Object.assign(GroupQueue.prototype, saved));

  it('the next holder commits the queued calls after its own, in one write, and answers each', () => {
    const store = setUp();
    const { queue, request } = queueOf(store);
    const a = queue.submit(request('todo.update', { goalId: 'g', todoId: 't1', note: 'queued a' }))!;
    const b = queue.submit(request('todo.add', { goalId: 'g', todoId: 't2', title: 'Queued b' }))!;
    const before = store.load('g').revision;

    const own = invoke(store, 'todo.update', { goalId: 'g', todoId: 't1', note: 'own' }, agent);
    assert.equal(own.revision, before + 1, "the holder's own revision");
    const answerA = ok(queue.answer(a));
    const answerB = ok(queue.answer(b));
    assert.deepEqual(
      [answerA.events.map((e) => e.type), answerB.events.map((e) => e.type)],
      [['todo.updated'], ['todo.added']],
    );
    assert.deepEqual(answerA.events[0]!.actor, other, 'committed in the name of its caller');
    assert.equal(answerB.revision, before + 3);

    const loaded = store.load('g');
    assert.equal(loaded.revision, before + 3);
    assert.deepEqual(
      loaded.state.todos.map((t) => t.id),
      ['t1', 't2'],
    );
    assert.deepEqual(notes(store), ['own', 'queued a']);
    // Nothing is left behind but the (empty) journal.
    assert.deepEqual(files(queue), ['batch.json']);
    assert.equal(fs.statSync(path.join(queue.dir, 'batch.json')).size, 0);
  });

  it('a queued call whose idempotency key is in the log already is answered with what was written, nothing appended', () => {
    const store = setUp();
    const { queue, request } = queueOf(store);
    const first = queue.submit({
      ...request('todo.add', { goalId: 'g', todoId: 't2', title: 'Once' }),
      call: 'job-7#1',
    })!;
    invoke(store, 'todo.update', { goalId: 'g', todoId: 't1', note: 'own' }, agent);
    const written = ok(queue.answer(first));
    assert.equal(written.events[0]!.call, 'job-7#1');
    const revision = store.load('g').revision;
    // The same call again (its caller was killed before it read the answer, and retried).
    const again = queue.submit({
      ...request('todo.add', { goalId: 'g', todoId: 't2', title: 'Once' }),
      call: 'job-7#1',
    })!;
    invoke(store, 'todo.update', { goalId: 'g', todoId: 't1', note: 'own 2' }, agent);
    const replayed = ok(queue.answer(again));
    assert.deepEqual(
      replayed.events.map((e) => e.id),
      written.events.map((e) => e.id),
    );
    assert.equal(store.load('g').revision, revision + 1, 'only the holder’s own event was appended');
  });

  it('a queued call is checked as its caller’s own: a refusal refuses only that call', () => {
    const store = setUp();
    const { queue, request } = queueOf(store);
    const dup = queue.submit(request('todo.add', { goalId: 'g', todoId: 't1', title: 'Again' }))!;
    const person = queue.submit(request('quota.grant', { goalId: 'g', turns: 5 }))!;
    const badActor = queue.submit(
      request('todo.update', { goalId: 'g', todoId: 't1', note: 'x' }, { kind: 'root' }),
    )!;
    const elsewhere = queue.submit(request('todo.add', { goalId: 'h', todoId: 't9', title: 'Elsewhere' }))!;
    const moved = queue.submit({
      ...request('todo.update', { goalId: 'g', todoId: 't1', note: 'moved' }),
      expectRevision: 1,
    })!;
    const good = queue.submit(request('todo.update', { goalId: 'g', todoId: 't1', note: 'good' }))!;

    invoke(store, 'todo.update', { goalId: 'g', todoId: 't1', note: 'own' }, agent);
    refusedWith(queue.answer(dup), 'todo_exists');
    refusedWith(queue.answer(person), 'human_only');
    assert.equal(queue.answer(badActor)?.ok, false);
    refusedWith(queue.answer(elsewhere), 'queued_call_invalid');
    refusedWith(queue.answer(moved), 'goal_moved');
    ok(queue.answer(good));
    assert.deepEqual(notes(store), ['own', 'good']);
  });

  it('a call refused half-way through its events ends the batch: the holder reads its state again, the rest wait for the next', () => {
    const store = setUp();
    invoke(store, 'gate.request', { goalId: 'g', gateId: 'ship' }, agent);
    const { queue, request } = queueOf(store);
    // In a person's name, but unsigned: refused only once its event is sealed (chainEvents).
    const approve = queue.submit(request('gate.approve', { goalId: 'g', gateId: 'ship' }, human))!;
    const after = queue.submit(request('todo.update', { goalId: 'g', todoId: 't1', note: 'after' }))!;
    fs.utimesSync(path.join(queue.dir, `${after}.req`), new Date(), new Date(Date.now() + 1000));

    const own = invoke(store, 'todo.update', { goalId: 'g', todoId: 't1', note: 'own' }, agent);
    refusedWith(queue.answer(approve), 'unsigned_decision');
    assert.equal(queue.answer(after), undefined, 'the call after it was planned on a half-applied state');
    assert.equal(own.state.gates.find((x) => x.id === 'ship')?.status, 'pending');
    assert.equal(own.state.todos.find((t) => t.id === 't1')?.note, 'own');
    invoke(store, 'todo.update', { goalId: 'g', todoId: 't1', note: 'next' }, agent);
    ok(queue.answer(after));
    assert.deepEqual(notes(store), ['own', 'next', 'after']);
  });

  it('a file that is not a call LoopX queued is refused; a call of another context is left alone', () => {
    const store = setUp();
    const { queue, request } = queueOf(store);
    fs.mkdirSync(queue.dir, { recursive: true });
    const junk = 'a'.repeat(24);
    fs.writeFileSync(path.join(queue.dir, `${junk}.req`), '{"v":1,"ctx":');
    const old = new Date(Date.now() - 60_000);
    fs.utimesSync(path.join(queue.dir, `${junk}.req`), old, old);
    const foreign = queue.submit({
      ...request('todo.update', { goalId: 'g', todoId: 't1', note: 'foreign' }),
      ctx: 'another',
    })!;

    invoke(store, 'todo.update', { goalId: 'g', todoId: 't1', note: 'own' }, agent);
    refusedWith(queue.answer(junk), 'queued_call_invalid');
    assert.equal(queue.answer(foreign), undefined, 'a holder of another context answered');
    assert.ok(files(queue).includes(`${foreign}.req`));
    assert.deepEqual(notes(store), ['own']);
  });

  it('a holder that dies after appending: the next one answers its calls from the log, once', () => {
    const store = setUp();
    const { queue, request } = queueOf(store);
    const a = queue.submit(request('todo.update', { goalId: 'g', todoId: 't1', note: 'a' }))!;
    const b = queue.submit(request('todo.update', { goalId: 'g', todoId: 't1', note: 'b' }))!;
    // Dies once the batch is written and fsync'd, before it answers, and leaves its journal.
    holderDies(store, {
      respond: () => {
        throw new Error('killed');
      },
    });
    assert.deepEqual(files(queue), [`${a}.claimed`, `${b}.claimed`, 'batch.json'].sort());

    invoke(store, 'todo.update', { goalId: 'g', todoId: 't1', note: 'next' }, agent);
    assert.equal(ok(queue.answer(a)).events.length, 1);
    assert.equal(ok(queue.answer(b)).events.length, 1);
    assert.deepEqual(notes(store), ['own', 'a', 'b', 'next'], 'each queued call written exactly once');
    assert.deepEqual(files(queue), ['batch.json']);
  });

  it('a holder that dies before appending: its calls go back in the queue and are committed once', () => {
    const store = setUp();
    const { queue, request } = queueOf(store);
    const a = queue.submit(request('todo.update', { goalId: 'g', todoId: 't1', note: 'a' }))!;
    // Dies once its journal names where the calls' events go, before it appends them.
    holderDies(store, {
      journal(entries) {
        saved.journal.call(this, entries);
        if (entries.length > 0) throw new Error('killed');
      },
    });
    assert.deepEqual(notes(store), [], 'nothing of the batch was written');

    invoke(store, 'todo.update', { goalId: 'g', todoId: 't1', note: 'next' }, agent);
    ok(queue.answer(a));
    assert.deepEqual(notes(store), ['next', 'a']);
  });

  it('a journal torn while it was written: every claimed call goes back in the queue, committed once', () => {
    const store = setUp();
    const { queue, request } = queueOf(store);
    const a = queue.submit(request('todo.update', { goalId: 'g', todoId: 't1', note: 'a' }))!;
    // What a holder killed while it rewrote its journal leaves: the call claimed, the journal
    // new bytes over old ones (never empty, see store/group-queue.ts).
    fs.renameSync(path.join(queue.dir, `${a}.req`), path.join(queue.dir, `${a}.claimed`));
    fs.writeFileSync(path.join(queue.dir, 'batch.json'), '{"v":1,"entries":[{"id":"x"}]}es":[]}');

    invoke(store, 'todo.update', { goalId: 'g', todoId: 't1', note: 'next' }, agent);
    ok(queue.answer(a));
    assert.deepEqual(notes(store), ['next', 'a']);
    assert.deepEqual(files(queue), ['batch.json']);
  });

  it('a caller that gives up takes its call back, so no holder commits it later', () => {
    const store = setUp();
    const { queue, request } = queueOf(store);
    const a = queue.submit(request('todo.update', { goalId: 'g', todoId: 't1', note: 'a' }))!;
    assert.equal(queue.withdraw(a), true);
    assert.equal(queue.withdraw(a), false);
    invoke(store, 'todo.update', { goalId: 'g', todoId: 't1', note: 'own' }, agent);
    assert.equal(queue.answer(a), undefined);
    assert.deepEqual(notes(store), ['own']);
  });

  it('a call that finds the lock taken queues itself, and takes its call back when it gives up; a signed decision never queues', () => {
    const ws = tempDir();
    const store = Store.init(ws, { lockTimeoutMs: 150 });
    invoke(store, 'goal.create', { goalId: 'g', title: 'Grouped' }, human);
    invoke(store, 'gate.request', { goalId: 'g', gateId: 'ship' }, agent);
    const queued: string[] = [];
    GroupQueue.prototype.submit = function (req) {
      const id = saved.submit.call(this, req);
      if (id) queued.push(`${req.capability} ${id}`);
      return id;
    };
    // Another process holds the goal's lock (this test process is alive, so it is not stale).
    const release = tryLock(path.join(store.root, 'local', 'locks', 'goal-g.lock'))!;
    try {
      const busy = (fn: () => unknown) =>
        assert.throws(fn, (e: unknown) => e instanceof LoopxError && e.reason === 'lock_busy');
      busy(() => invoke(store, 'todo.add', { goalId: 'g', todoId: 't', title: 'T' }, agent));
      busy(() => invoke(store, 'gate.approve', { goalId: 'g', gateId: 'ship' }, human, signed(store)));
    } finally {
      release();
    }
    assert.deepEqual(
      queued.map((q) => q.split(' ')[0]),
      ['todo.add'],
      'the signed decision was queued',
    );
    assert.deepEqual(
      files(new GroupQueue(path.join(store.root, 'local', 'queue', 'g'))).filter((f) => f !== 'batch.json'),
      [],
      'the call that gave up was left in the queue',
    );
    assert.equal(store.load('g').state.todos.length, 0);
    // A store with a clock of its own neither queues nor answers.
    const clocked = tempStore({ now: () => new Date('2026-12-01T00:00:00Z') });
    assert.equal(
      clocked.groupFor('g', { capability: 'x', input: {}, actor: agent }, () => () => []),
      undefined,
    );
  });
});
