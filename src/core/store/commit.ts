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
import type { WriterHead } from './event-log';
import { appendToLog, chainEvents } from './event-log';
import type { IndexEntry } from './goal-index';
import { indexEntryOf } from './goal-index';
import type { LoadedGoal } from './goal-load';
import { resumeFromSnapshot } from './goal-load';
import type { LogFile } from './goal-logs';
import { closeLogFiles, LEGACY_LOG, openLogFiles } from './goal-logs';
import type { GroupContext, GroupTarget, HeldLock } from './group-commit';
import { answerBatch, batchOf, commitQueued, drainQueue, resultLater } from './group-commit';
import { copyJson } from './json-file';
import type { Plan } from './plan-check';
import { checkedActor, checkedPlan, movedOn } from './plan-check';
import { mkdirStore } from './safe-path';
import type { Snapshot } from './snapshot';
import { SNAPSHOT_EVERY } from './snapshot';

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
   * Group commit (store/group-commit.ts): when the lock is taken, queue this call for its holder; when
   * this call holds it, commit the calls queued meanwhile after it. The result's `state` is then
   * the goal as it was at least this call's events later (read when first asked for).
   */
  group?: GroupContext;
}

export interface CommitResult {
  events: LoopxEvent[];
  state: GoalState;
  revision: number;
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
  /** The goal's logs (none: the goal does not exist). */
  logFiles(): LogFile[];
  /** The goal's current state from `files`, its logs as `logFiles` listed them. */
  load(files: LogFile[]): LoadedGoal;
  /** Takes the goal's lock if it is free (group commit), breaking a stale one with `checkStale`. */
  tryLock(checkStale: boolean): (() => void) | undefined;
  /** The error for a goal that has no log. */
  missing(): LoopxError;
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

function groupTargetOf(target: CommitTarget): GroupTarget {
  return {
    goalId: target.goalId,
    ownLog: target.ownLog,
    tryLock: (stale) => target.tryLock(stale),
    state: () => target.load(target.logFiles()).state,
  };
}

/** Commits in this process, under the goal's lock as `lock` takes it. */
function commitHeld(target: CommitTarget, plan: Plan, opts: CommitOptions, lock: HeldLock): CommitResult {
  const { goalId } = target;
  const actor = checkedActor(opts.actor, goalId);
  // `made`: this call created the goal's folder, so a refused creation removes it again (while
  // still empty) instead of leaving a goal that never existed, listed as broken from then on.
  const made = opts.create ? mkdirStore(target.dir) !== undefined : false;
  let pendingSync: number | undefined;
  let kept: Snapshot | undefined;
  try {
    const result = lock(() => {
      try {
        return commitLocked(target, plan, opts, actor, {
          syncLater: (fd) => (pendingSync = fd),
          keep: (snap) => (kept = snap),
        });
      } catch (e) {
        if (made && pendingSync === undefined) {
          try {
            fs.rmdirSync(target.dir);
          } catch {
            /* not empty: leave it */
          }
        }
        throw e;
      }
    });
    // The copy is made outside the lock (it costs as much as the rest of a commit); the caller's
    // state and the kept one never share an object, so neither can change the other.
    const k = kept;
    if (k) target.memo?.keep(() => ({ ...k, state: copyJson(k.state) }));
    return result;
  } finally {
    if (pendingSync !== undefined) {
      try {
        fs.fsyncSync(pendingSync);
      } finally {
        fs.closeSync(pendingSync);
      }
    }
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

/** Events the snapshot file `head` lacks of a goal at `revision`; undefined when it cannot be resumed from. */
function memoLag(head: Omit<Snapshot, 'state'> | undefined, revision: number, trust: string) {
  return head && head.trust === trust && head.revision <= revision ? revision - head.revision : undefined;
}

/**
 * Whether the snapshot file lags SNAPSHOT_EVERY events or more once `added` are appended, or
 * cannot be resumed from. Resumed from memory, the file's header says how far behind it is: the
 * same rule as after a load from it, without parsing its state.
 */
function snapshotDue(
  target: CommitTarget,
  cur: LoadedGoal,
  fromMemo: LoadedGoal | undefined,
  revision: number,
  added: number,
): boolean {
  const lagBefore = fromMemo
    ? memoLag(target.snapshotHead(), revision, target.trust().fingerprint)
    : cur.snapshotLag;
  return lagBefore === undefined || lagBefore + added >= SNAPSHOT_EVERY;
}

/** What the lock holder found: the goal as it is now (`loaded`: undefined for a goal being created). */
interface Current {
  files: LogFile[];
  loaded: LoadedGoal | undefined;
  /** `loaded`, when it was resumed from this process's last commit rather than read. */
  fromMemo: LoadedGoal | undefined;
  revision: number;
}

/** What one commit appends: the drafts, and this writer's place in the goal before them. */
interface Appending {
  drafts: EventDraft[];
  own: WriterHead | undefined;
  firstInGoal: boolean;
  migration: ReturnType<CommitTarget['migrateLegacy']> | undefined;
}

/** What the append wrote: this call's events chained, and the queued calls' written with them. */
interface Appended {
  next: ReturnType<typeof chainEvents>;
  drained: ReturnType<typeof drainQueue> | undefined;
  ownRevision: number;
  /** The goal's index entry before the events (they are applied to the loaded state in place). */
  indexBefore: string;
  trust: Trust;
}

type AfterCommit = { syncLater: (fd: number) => void; keep: (snap: Snapshot) => void };

/** The write protocol under the goal's lock: read, plan, append (the acknowledgement), then the caches. */
function commitLocked(
  target: CommitTarget,
  plan: Plan,
  opts: CommitOptions,
  actor: Actor,
  after: AfterCommit,
): CommitResult {
  const cur = readCurrent(target, opts);
  // Plans only read the state (checkedPlan proves it in the tests): no copy is needed, and the
  // events below are applied to this same object.
  const planned = checkedPlan(plan)(cur.loaded?.state, cur.revision);
  const appending = draftsToAppend(target, cur, planned);
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
  if (opts.create && exists)
    throw conflict(`goal ${goalId} already exists`, { goalId, reason: 'goal_exists' });
  if (!opts.create && !exists) throw target.missing();
  const fromMemo = exists && memo ? resumeFromMemo(target, files, memo) : undefined;
  const loaded = fromMemo ?? (exists ? target.load(files) : undefined);
  const revision = loaded?.revision ?? 0;
  if (opts.expectRevision !== undefined && opts.expectRevision !== revision)
    throw movedOn(goalId, revision, opts.expectRevision);
  return { files, loaded, fromMemo, revision };
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
  const now = target.now();
  const writer = target.writerId();
  const next = chainEvents(
    goalId,
    drafts,
    // Above this writer's own last stamp too: one that now waits (the clock went back) stays below.
    { state, seq: own?.seq ?? 0, prev: own?.lastHash ?? null, hlc: maxHlc(cur.loaded?.hlc, own?.key) },
    { now, writer, actor, signer: opts.signer },
    trust,
  );
  const ownRevision = cur.revision + next.events.length;
  const queue = opts.group?.queue;
  queue?.recover(target.ownLog);
  const drained = opts.group && drainQueue(opts.group, goalId, next, ownRevision, { now, writer }, trust);
  try {
    if (firstInGoal) {
      mkdirStore(target.logsDir);
      target.firstWrite();
    }
    // Nothing is written before this point: a refused call leaves an older store as it was.
    migration?.apply?.();
    const batch = batchOf(target.ownLog, next.chunk, drained, queue);
    const fd = appendToLog(target.ownLog, batch.chunk, batch.journal);
    // The fsync (the acknowledgement) happens after the lock is released: waiting for the disk
    // no longer holds other writers back, and concurrent fsyncs share one journal commit. An
    // fsync flushes everything written to the file before it, so no later event is durable
    // while an earlier one is not. Derived files below are rebuilt if a crash outruns them.
    // Queued calls are answered under the lock, once fsync'd, so a holder that finds one
    // claimed and unanswered knows its holder died (GroupQueue.recover).
    if (drained && queue) answerBatch(fd, drained, queue);
    else after.syncLater(fd);
  } catch (e) {
    // Answers whatever got written, puts the rest back in the queue.
    if (drained) queue?.recover(target.ownLog);
    throw e;
  }
  return { next, drained, ownRevision, indexBefore, trust };
}

/** Step 4: the snapshot, the index entry and this process's memo, derived from what was appended. */
function refreshDerived(
  target: CommitTarget,
  opts: CommitOptions,
  cur: Current,
  { own, migration }: Appending,
  { next, drained, ownRevision, indexBefore, trust }: Appended,
  after: AfterCommit,
): CommitResult {
  const { revision } = cur;
  const tip = drained ? drained.head : next;
  const revisionAfter = drained ? drained.revision : ownRevision;
  const added = revisionAfter - revision;
  if (drained?.poisoned) {
    // The state object holds half of a queued call's events: read the goal again when asked.
    return resultLater(groupTargetOf(target), { ok: true, events: next.events, revision: ownRevision });
  }
  const state = tip.state!;
  const heads = { ...cur.loaded?.heads };
  if (migration?.cleanup) delete heads[LEGACY_LOG];
  heads[target.writerId()] = {
    seq: tip.seq,
    bytes: (own?.bytes ?? 0) + next.chunk.length + (drained?.bytes ?? 0),
    lastHash: tip.prev,
    key: tip.hlc,
  };
  const heldUntil = cur.loaded?.heldUntil;
  const snap: Snapshot = {
    revision: revisionAfter,
    heads,
    hlc: tip.hlc,
    heldUntil,
    trust: trust.fingerprint,
    state,
  };
  // A process's first commit brings the snapshot up to date: the next `loopx` call then resumes
  // with no tail to validate (a few ms each; reads never write it), while a process that writes
  // on and on (a server, the extension) keeps to one snapshot every SNAPSHOT_EVERY events.
  const oneShot = target.memo?.first() ?? true;
  if (
    !cur.loaded ||
    oneShot ||
    migration?.cleanup ||
    snapshotDue(target, cur.loaded, cur.fromMemo, revision, added)
  )
    target.writeSnapshot(snap);
  const entry = indexEntryOf(state);
  if (!opts.deferIndex && JSON.stringify(entry) !== indexBefore)
    target.updateIndexEntry(entry, trust.fingerprint);
  if (!migration?.cleanup) after.keep(snap);
  return { events: next.events, state, revision: ownRevision };
}
