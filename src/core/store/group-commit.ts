/**
 * Group commit: processes writing to one goal at once share the lock holder's work instead of
 * each taking the lock, reading the others' events and fsyncing in turn.
 *
 * A call that finds the goal's lock taken queues itself (store/group-queue.ts) and waits. The holder,
 * once it has planned its own call, claims the waiting calls and plans each against the state the
 * events before it left, by the same rules as if its caller had made it in the holder's process
 * (the capability, the caller's identity and input are checked again, the policy applies, a
 * refusal refuses only that call). It appends every call's events in one write, fsyncs once, and
 * answers each call: so a caller is told its events are written only once they are fsync'd.
 *
 * While it waits, a caller keeps trying the lock. If it gets it, it first finishes the batch of a
 * holder that died (`GroupQueue.recover`), then takes its call back and commits it itself, with
 * whatever else waits. A caller that gives up (the lock timeout) takes its call back first; one a
 * holder has claimed already is waited for to the end, since it may be written.
 *
 * Only calls made in the same context are grouped (the same LoopX, config folder and real clock):
 * everything else a plan depends on, the holder reads from the same workspace.
 */
import type { Actor, GoalState, LoopxEvent } from '../model';
import { LoopxError } from '../model';
import type { Trust } from '../trust';
import type { LogHead } from './event-log';
import { chainEvents } from './event-log';
import type { PendingAppend } from './log-append';
import { syncAppend } from './log-append';
import type { GroupAnswer, GroupQueue, GroupRequest, JournalEntry } from './group-queue';
import { sha256 } from './json-file';
import { lockBusy, STALE_CHECK_MS } from './lock';
import type { Plan } from './plan-check';
import { checkedActor, checkedPlan, movedOn } from './plan-check';
import { sleepMs } from './sleep';

/** At most this many queued calls go into one batch, besides the holder's own. */
const BATCH_MAX = 64;
/** A waiting caller looks for its answer (and at the lock) this often: short, jittered, growing steps. */
const WAIT_MIN_MS = 0.2;
const WAIT_MAX_MS = 2;
/**
 * A process a holder answered within STICKY_MS queues its next call as well and leaves the lock
 * to that holder for GRACE_MS: the holder's memo of the goal is current, while a new holder would
 * first read the whole last batch again (about as much work as the batch itself).
 */
const STICKY_MS = 50;
const GRACE_MS = 10;
let answeredAt = -Infinity;

/** How a groupable call (invoke) queues itself, and how a holder plans the calls it finds queued. */
export interface GroupContext {
  queue: GroupQueue;
  /** This call, as it is queued when the lock is taken. */
  request: GroupRequest;
  /** The plan of a queued call, checked as its caller's own: throws a LoopxError to refuse it. */
  planOf(req: GroupRequest, actor: Actor): Plan;
  lockPath: string;
  lockTimeoutMs: number;
}

/** What a commit needs of its target for group commit (a part of CommitTarget). */
export interface GroupTarget {
  goalId: string;
  ownLog: string;
  tryLock(checkStale: boolean): (() => void) | undefined;
  /** The goal as it is now. */
  state(): GoalState;
}

/** Runs `fn` holding a lock taken already, and releases it. */
export type HeldLock = <T>(fn: () => T) => T;

/** The queued calls a holder planned after its own. */
export interface Drained {
  answers: { id: string; answer: GroupAnswer; chunk?: Buffer }[];
  /** Calls claimed but not planned: they go back in the queue. */
  left: string[];
  /** The log's head and the goal's revision after the last call planned, and the bytes they add. */
  head: LogHead;
  revision: number;
  bytes: number;
  /** A call's events failed half-way through being applied: the state object is not to be used. */
  poisoned: boolean;
}

function answerOf(e: unknown): GroupAnswer {
  if (e instanceof LoopxError) return { ok: false, kind: e.kind, message: e.message, details: e.details };
  return { ok: false, kind: 'internal', message: e instanceof Error ? e.message : String(e), details: {} };
}

/** Claims the queued calls and plans each after the holder's own events (`head`, at `revision`). */
export function drainQueue(
  group: GroupContext,
  goalId: string,
  head: LogHead,
  revision: number,
  stamp: { now: Date; writer: string },
  trust: Trust,
  eventsOfCall: (call: string) => LoopxEvent[] | undefined,
): Drained | undefined {
  const claimed = group.queue.claim(group.request.ctx, BATCH_MAX);
  if (claimed.length === 0) return undefined;
  const out: Drained = {
    answers: [],
    left: [],
    head,
    revision,
    bytes: 0,
    poisoned: false,
  };
  for (const { id, req } of claimed) {
    if (out.poisoned) {
      out.left.push(id);
      continue;
    }
    // A retried call that was written already: answered with what was written then.
    const done = req.call === undefined ? undefined : eventsOfCall(req.call);
    if (done) {
      out.answers.push({ id, answer: { ok: true, events: done, revision: out.revision } });
      continue;
    }
    let actor: Actor;
    let drafts;
    try {
      actor = checkedActor(req.actor, goalId);
      const plan = group.planOf(req, actor);
      if (req.expectRevision !== undefined && req.expectRevision !== out.revision)
        throw movedOn(goalId, out.revision, req.expectRevision);
      drafts = checkedPlan(plan)(out.head.state, out.revision);
    } catch (e) {
      out.answers.push({ id, answer: answerOf(e) });
      continue;
    }
    if (drafts.length === 0) {
      out.answers.push({ id, answer: { ok: true, events: [], revision: out.revision } });
      continue;
    }
    try {
      const next = chainEvents(goalId, drafts, out.head, { ...stamp, actor, call: req.call }, trust);
      out.head = { state: next.state, seq: next.seq, prev: next.prev, hlc: next.hlc };
      out.revision += next.events.length;
      out.bytes += next.chunk.length;
      out.answers.push({
        id,
        answer: { ok: true, events: next.events, revision: out.revision },
        chunk: next.chunk,
      });
    } catch (e) {
      // chainEvents applies events as it goes: the state may hold half of this call's.
      out.poisoned = true;
      out.answers.push({ id, answer: answerOf(e) });
    }
  }
  return out;
}

/**
 * One write's worth: the holder's own events, then the drained calls' events, and `journal`, which
 * records (before the write) where in the log each call's events will be.
 */
export function batchOf(
  ownLog: string,
  own: Buffer,
  drained: Drained | undefined,
  queue?: GroupQueue,
): { chunk: Buffer; journal?: (startsAt: number) => void } {
  if (!drained || !queue) return { chunk: own };
  const chunks = [own];
  const placed: { id: string; answer: GroupAnswer; chunk: Buffer }[] = [];
  for (const { id, answer, chunk } of drained.answers) {
    if (!chunk) continue;
    placed.push({ id, answer, chunk });
    chunks.push(chunk);
  }
  const journal = (startsAt: number) => {
    let at = startsAt + own.length;
    const entries: JournalEntry[] = [];
    for (const { id, answer, chunk } of placed) {
      entries.push({ id, log: ownLog, start: at, end: at + chunk.length, sha: sha256(chunk), answer });
      at += chunk.length;
    }
    if (entries.length > 0) queue.journal(entries);
  };
  return { chunk: chunks.length === 1 ? own : Buffer.concat(chunks), journal };
}

/** Once the batch is written: fsyncs it, then answers every call (the rest go back in the queue). */
export function answerBatch(pending: PendingAppend, root: string, drained: Drained, queue: GroupQueue): void {
  syncAppend(pending, root, true);
  for (const { id, answer } of drained.answers) queue.respond(id, answer);
  queue.endBatch(drained.left);
}

/** A commit's result whose state is read when first asked for (a queued call's, a poisoned batch's). */
export function resultLater(target: GroupTarget, events: GroupAnswer & { ok: true }) {
  let state: GoalState | undefined;
  return {
    events: events.events,
    revision: events.revision,
    get state(): GoalState {
      return (state ??= target.state());
    },
  };
}

function heldBy(release: () => void): { lock: HeldLock; release: () => void } {
  let held = true;
  const once = () => {
    if (held) {
      held = false;
      release();
    }
  };
  return {
    lock: (fn) => {
      try {
        return fn();
      } finally {
        once();
      }
    },
    release: once,
  };
}

/**
 * A groupable commit: made here when the lock is free, else queued for the holder (see the top of
 * this file). `run` makes the commit in this process under the lock it is given.
 */
export function commitQueued<R>(
  target: GroupTarget,
  group: GroupContext,
  run: (lock: HeldLock) => R,
  withLock: HeldLock,
): R | ReturnType<typeof resultLater> {
  const deferred = performance.now() - answeredAt < STICKY_MS;
  if (!deferred) {
    const free = target.tryLock(false);
    if (free) return runHeld(free, run);
  }
  const { queue } = group;
  const id = queue.submit(group.request);
  if (id === undefined) return run(withLock);
  const deadline = Date.now() + group.lockTimeoutMs;
  let staleAt = Date.now() + STALE_CHECK_MS;
  const lockAt = deferred ? performance.now() + GRACE_MS : 0;
  let wait = WAIT_MIN_MS;
  for (;;) {
    const a = queue.answer(id);
    if (a) return settled(target, a);
    const now = Date.now();
    const checkStale = now >= staleAt;
    if (checkStale) staleAt = now + STALE_CHECK_MS;
    const release = performance.now() >= lockAt ? target.tryLock(checkStale) : undefined;
    if (release) {
      const held = heldBy(release);
      try {
        queue.recover(target.ownLog);
        const b = queue.answer(id);
        if (b) return settled(target, b);
        // After recover, a call of ours is answered or back in the queue: never claimed by a holder.
        if (!queue.withdraw(id))
          throw new LoopxError('internal', `queued call ${id} was lost from ${queue.dir}`);
        answeredAt = -Infinity;
        return run(held.lock);
      } finally {
        held.release();
      }
    }
    if (now > deadline && queue.withdraw(id)) throw lockBusy(group.lockPath, group.lockTimeoutMs);
    sleepMs(wait * (0.5 + Math.random()));
    wait = Math.min(wait * 1.5, WAIT_MAX_MS);
  }
}

function runHeld<R>(release: () => void, run: (lock: HeldLock) => R): R {
  // A holder takes the lock at once for its next call: it holds the goal's current state.
  answeredAt = -Infinity;
  const held = heldBy(release);
  try {
    return run(held.lock);
  } finally {
    held.release();
  }
}

function settled(target: GroupTarget, a: GroupAnswer) {
  answeredAt = performance.now();
  if (!a.ok) throw new LoopxError(a.kind, a.message, a.details);
  return resultLater(target, a);
}
