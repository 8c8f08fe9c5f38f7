/**
 * Write protocol (docs/ARCHITECTURE.md, "The write protocol"): lock the goal, load its current state (all writers' logs,
 * merged), let the caller plan the events against it, append them to this writer's own log in one
 * write + fsync (the acknowledgement), then rewrite the snapshot and the index entry through temp
 * file + rename, then unlock. A crash anywhere leaves logs whose complete lines are every
 * acknowledged event; derived files are rebuilt from them.
 */
import * as fs from 'node:fs';
import type { Actor, EventDraft, GoalState, LoopxError, LoopxEvent } from '../model';
import { aheadCutoff, conflict, maxHlc } from '../model';
import type { Signer, Trust } from '../trust';
import * as path from 'node:path';
import type { WriterHead } from './event-log';
import { chainEvents } from './event-log';
import type { PendingAppend } from './log-append';
import { appendToLog, syncAppend } from './log-append';
import type { IndexEntry } from './goal-index';
import { indexEntryOf } from './goal-index';
import type { LoadedGoal } from './goal-load';
import { resumeFromSnapshot } from './goal-load';
import type { LogFile } from './goal-logs';
import { closeLogFiles, LEGACY_LOG, openLogFiles } from './goal-logs';
import type { GroupContext, HeldLock } from './group-commit';
import { answerBatch, batchOf, commitQueued, drainQueue } from './group-commit';
import type { AfterCommit, Appended, Appending, Current } from './commit-derived';
import { groupTargetOf, refreshDerived } from './commit-derived';
import { copyJson } from './json-file';
import type { Plan } from './plan-check';
import { checkedActor, checkedPlan, movedOn } from './plan-check';
import { mkdirStore } from './safe-path';
import type { Snapshot } from './snapshot';
import type { ExactEvent } from './prepared-event';
import { checkExact } from './prepared-event';

export interface CommitOptions {
  actor: Actor;
  /** Refuse with a conflict if the goal is not at this revision. */
  expectRevision?: number;
  /** The goal must not exist yet (goal creation). */
  create?: boolean;
  /**
   * Leave the goal index alone (bulk generation, as the benchmark does: the caller rebuilds the
   * index once at the end). Listing stays correct meanwhile: a goal the index lacks is read.
   */
  deferIndex?: boolean;
  /** The person's key, for the events that are a person's decision (see trust/signed-decisions.ts). */
  signer?: Signer;
  /**
   * The call's idempotency key (model CallKey): its events carry it, and a call whose key this
   * writer's log already holds appends nothing and answers with the events written then.
   */
  call?: string;
  /**
   * Group commit (store/group-commit.ts): when the lock is taken, queue this call for its holder; when
   * this call holds it, commit the calls queued meanwhile after it. The result's `state` is then
   * the goal as it was at least this call's events later (read when first asked for).
   */
  group?: GroupContext;
  /**
   * Write exactly this prepared decision with the signature made for it (store/prepared-event.ts),
   * refused as `decision_stale` unless the goal is still at the head it was prepared on.
   */
  exact?: ExactEvent;
}

export interface CommitResult {
  events: LoopxEvent[];
  state: GoalState;
  revision: number;
  /** The call's key was in the log: `events` are what it wrote then, nothing was appended now. */
  replayed?: boolean;
}

/** What a commit needs from the store, bound to one goal (given, not imported: the store imports this module). */
export interface CommitTarget {
  goalId: string;
  /** The goal's folder. */
  dir: string;
  /** The folder of its writers' logs. */
  logsDir: string;
  /** This writer's log. */
  ownLog: string;
  withLock<T>(fn: () => T): T;
  /** Throws unless this process still holds the goal's lock (store/lock.ts `assertHeld`). */
  assertLockHeld(): void;
  /** The goal's logs (none: the goal does not exist). */
  logFiles(): LogFile[];
  /** The goal's current state from `files`, its logs as `logFiles` listed them. */
  load(files: LogFile[]): LoadedGoal;
  /** Takes the goal's lock if it is free (group commit), breaking a stale one with `checkStale`. */
  tryLock(checkStale: boolean): (() => void) | undefined;
  /** The error for a goal that has no log. */
  missing(): LoopxError;
  /** The events a call with this key wrote to this writer's log, if it did (store/event-log.ts `eventsOfCall`). */
  eventsOfCall(call: string): LoopxEvent[] | undefined;
  quarantineTornTail(): EventDraft | undefined;
  /**
   * Makes an older LoopX's `events.jsonl` (ended at `head`) the head of this writer's log, if
   * this writer has none yet: the draft to record it, and what to remove once the write is done.
   */
  migrateLegacy(
    head: WriterHead,
    ownExists: boolean,
  ): { draft?: EventDraft; apply?: () => void; cleanup?: () => void };
  writerId(): string;
  /** Called before this writer's first event in the goal: names the writer for people (store/writers.ts). */
  firstWrite(): void;
  trust(): Trust;
  snapshotKey(): Buffer;
  now(): Date;
  writeSnapshot(snap: Snapshot): void;
  /** Records the goal's entry in the index, made under the pinned keys `trust` (a fingerprint). */
  updateIndexEntry(entry: IndexEntry, trust: string): void;
  /** Tells the caller something it should know that did not fail the call (a cache not written). */
  warn(message: string): void;
  /**
   * The goal as this process's last commit to it left it (a snapshot in memory, never shared with
   * a caller), kept by the store between commits: `take` hands it over and forgets it, so a
   * commit that fails half-way leaves none behind.
   */
  memo?: {
    take(): Snapshot | undefined;
    keep(make: () => Snapshot): void;
    /** Whether this is the process's first commit to the goal (a CLI call makes just one). */
    first(): boolean;
  };
  /** The snapshot file's header if its MAC verifies (the state is not parsed), else undefined. */
  snapshotHead(): Omit<Snapshot, 'state'> | undefined;
  /** Every commit leaves the snapshot current (StoreOptions.oneShot: a `loopx` call). */
  oneShot?: boolean;
}

/** `Store.commit` for the goal `target` is bound to. */
export function commitGoal(target: CommitTarget, plan: Plan, opts: CommitOptions): CommitResult {
  if (!opts.group || opts.create) return commitHeld(target, plan, opts, target.withLock);
  return commitQueued(
    groupTargetOf(target),
    opts.group,
    (lock) => commitHeld(target, plan, opts, lock),
    target.withLock,
  );
}

/** Commits in this process, under the goal's lock as `lock` takes it. */
function commitHeld(target: CommitTarget, plan: Plan, opts: CommitOptions, lock: HeldLock): CommitResult {
  const { goalId } = target;
  const actor = checkedActor(opts.actor, goalId);
  // `made`: this call created the goal's folder, so a refused creation removes it again (while
  // still empty) instead of leaving a goal that never existed, listed as broken from then on.
  const made = opts.create ? mkdirStore(target.dir) !== undefined : false;
  let pendingSync: PendingAppend | undefined;
  let kept: Snapshot | undefined;
  try {
    const result = lock(() => {
      try {
        return commitLocked(target, plan, opts, actor, {
          syncLater: (p) => (pendingSync = p),
          keep: (snap) => (kept = snap),
        });
      } catch (e) {
        if (made && pendingSync === undefined) removeEmptyGoal(target);
        throw e;
      }
    });
    // The copy is made outside the lock (it costs as much as the rest of a commit); the caller's
    // state and the kept one never share an object, so neither can change the other.
    const k = kept;
    if (k) target.memo?.keep(() => ({ ...k, state: copyJson(k.state) }));
    return result;
  } finally {
    if (pendingSync !== undefined) syncAppend(pendingSync, path.dirname(target.dir));
  }
}

/** A goal this call was creating when it was refused (or the disk refused it): its empty folders go. */
function removeEmptyGoal(target: CommitTarget): void {
  try {
    const log = fs.statSync(target.ownLog, { throwIfNoEntry: false });
    if (log?.size === 0) fs.unlinkSync(target.ownLog);
    fs.rmdirSync(target.logsDir);
  } catch {
    /* not there, or not empty: leave it */
  }
  try {
    fs.rmdirSync(target.dir);
  } catch {
    /* not empty: leave it */
  }
}

/**
 * The goal's state from what this process's last commit left (`memo`): valid when no log but this
 * writer's own changed since, and that one only grew (other processes of this clone append to
 * it too), exactly the snapshot's rule. Undefined when the logs need a full load.
 */
function resumeFromMemo(target: CommitTarget, files: LogFile[], memo: Snapshot): LoadedGoal | undefined {
  const logs = openLogFiles(files);
  try {
    const cutoff = aheadCutoff(target.now());
    return resumeFromSnapshot(target.goalId, logs, memo, target.writerId(), target.trust(), cutoff);
  } finally {
    closeLogFiles(logs);
  }
}

/** The write protocol under the goal's lock: read, plan, append (the acknowledgement), then the caches. */
function commitLocked(
  target: CommitTarget,
  plan: Plan,
  opts: CommitOptions,
  actor: Actor,
  after: AfterCommit,
): CommitResult {
  const cur = readCurrent(target, opts);
  // A retry of a call that was written (its caller was not told: a crash, a failed fsync or cache
  // write, a timeout) appends nothing: it is answered with what was written then.
  if (cur.done && cur.loaded)
    return { events: cur.done, state: cur.loaded.state, revision: cur.revision, replayed: true };
  // Plans only read the state (checkedPlan proves it in the tests): no copy is needed, and the
  // events below are applied to this same object.
  const planned = checkedPlan(plan)(cur.loaded?.state, cur.revision);
  const appending = draftsToAppend(target, cur, planned);
  if (opts.exact) checkExact(target.goalId, opts.exact, cur.loaded, appending.drafts);
  if (appending.drafts.length === 0) return unchanged(target, cur, appending, after);
  const appended = appendToOwnLog(target, opts, actor, cur, appending, after);
  appending.migration?.cleanup?.();
  return refreshDerived(target, opts, cur, appending, appended, after);
}

/** Step 1: the goal as it is now, from this process's memo or its logs; refused if it is not what the call expects. */
function readCurrent(target: CommitTarget, opts: CommitOptions): Current {
  const { goalId } = target;
  const memo = target.memo?.take();
  const files = target.logFiles();
  const exists = files.length > 0;
  const done = exists && opts.call !== undefined ? target.eventsOfCall(opts.call) : undefined;
  // A retried creation (the same idempotency key) finds its own goal: answered, not refused.
  if (opts.create && exists && !done)
    throw conflict(`goal ${goalId} already exists`, { goalId, reason: 'goal_exists' });
  if (!opts.create && !exists) throw target.missing();
  const fromMemo = exists && memo ? resumeFromMemo(target, files, memo) : undefined;
  const loaded = fromMemo ?? (exists ? target.load(files) : undefined);
  const revision = loaded?.revision ?? 0;
  if (opts.expectRevision !== undefined && opts.expectRevision !== revision)
    throw movedOn(goalId, revision, opts.expectRevision);
  return { files, loaded, fromMemo, revision, done };
}

/**
 * Step 2: the drafts to append: a torn tail's quarantine, an older store's migration, then the plan.
 * A torn tail is not part of the state (load leaves it out), so the plan was made first and the
 * tail is quarantined only for a call that was not refused: a refusal must change nothing, and the
 * quarantine is then recorded by the `log.quarantined` event of the write that does it.
 */
function draftsToAppend(target: CommitTarget, cur: Current, planned: EventDraft[]): Appending {
  const { loaded, fromMemo } = cur;
  let own: WriterHead | undefined = loaded?.heads[target.writerId()];
  const firstInGoal = own === undefined;
  const drafts: EventDraft[] = [];
  // Resumed from memory without a warning, this writer's log ends on a complete line (its size
  // was checked): no torn tail to look for.
  if (own && !(fromMemo && fromMemo.warnings.length === 0)) {
    const quarantined = target.quarantineTornTail();
    if (quarantined) drafts.push(quarantined);
  }
  const legacy = loaded?.heads[LEGACY_LOG];
  const migration = legacy ? target.migrateLegacy(legacy, own !== undefined) : undefined;
  if (migration?.draft) {
    own = legacy;
    drafts.push(migration.draft);
  }
  drafts.push(...planned);
  return { drafts, own, firstInGoal, migration };
}

/** A call that appends nothing: the goal as it was. */
function unchanged(
  target: CommitTarget,
  cur: Current,
  appending: Appending,
  after: AfterCommit,
): CommitResult {
  appending.migration?.cleanup?.();
  const { state, heads, hlc, heldUntil } = cur.loaded!;
  const revision = cur.revision;
  if (!appending.migration?.cleanup)
    after.keep({ revision, heads, hlc, heldUntil, trust: target.trust().fingerprint, state });
  return { events: [], state, revision };
}

/**
 * Step 3: chains the drafts onto this writer's log and appends them, with the calls other
 * processes queued meanwhile (group commit), in one write. The fsync of that write is the
 * acknowledgement.
 */
function appendToOwnLog(
  target: CommitTarget,
  opts: CommitOptions,
  actor: Actor,
  cur: Current,
  { drafts, own, firstInGoal, migration }: Appending,
  after: AfterCommit,
): Appended {
  const { goalId } = target;
  const state = cur.loaded?.state;
  const indexBefore = state ? JSON.stringify(indexEntryOf(state)) : '';
  // The snapshot key is needed after the append: a damaged one must refuse the call before
  // anything is written, not report an error for an event that was appended anyway.
  target.snapshotKey();
  const trust = target.trust();
  // A prepared decision keeps the time its statement names.
  const now = opts.exact ? new Date(opts.exact.ts) : target.now();
  const writer = target.writerId();
  const next = chainEvents(
    goalId,
    drafts,
    // Above this writer's own last stamp too: one that now waits (the clock went back) stays below.
    { state, seq: own?.seq ?? 0, prev: own?.lastHash ?? null, hlc: maxHlc(cur.loaded?.hlc, own?.key) },
    { now, writer, actor, signer: opts.signer, call: opts.call, exact: opts.exact },
    trust,
  );
  const ownRevision = cur.revision + next.events.length;
  const queue = opts.group?.queue;
  queue?.recover(target.ownLog);
  const drained =
    opts.group &&
    drainQueue(opts.group, goalId, next, ownRevision, { now, writer }, trust, (call) =>
      target.eventsOfCall(call),
    );
  try {
    if (firstInGoal) {
      mkdirStore(target.logsDir);
      target.firstWrite();
    }
    // Nothing is written before this point: a refused call leaves an older store as it was.
    migration?.apply?.();
    const batch = batchOf(target.ownLog, next.chunk, drained, queue);
    target.assertLockHeld();
    const pending = appendToLog(target.ownLog, batch.chunk, own?.bytes ?? 0, batch.journal);
    // The fsync (the acknowledgement) happens after the lock is released: waiting for the disk
    // no longer holds other writers back, and concurrent fsyncs share one journal commit. An
    // fsync flushes everything written to the file before it, so no later event is durable
    // while an earlier one is not. Derived files below are rebuilt if a crash outruns them.
    // Queued calls are answered under the lock, once fsync'd, so a holder that finds one
    // claimed and unanswered knows its holder died (GroupQueue.recover).
    if (drained && queue) answerBatch(pending, path.dirname(target.dir), drained, queue);
    else after.syncLater(pending);
  } catch (e) {
    // Answers whatever got written, puts the rest back in the queue.
    if (drained) queue?.recover(target.ownLog);
    throw e;
  }
  return { next, drained, ownRevision, indexBefore, trust };
}
