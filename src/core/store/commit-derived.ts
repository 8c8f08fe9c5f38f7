/**
 * The write protocol's last step and what the steps hand each other (store/commit.ts has the
 * protocol): once the events are appended, the caches derived from them (the snapshot, the goal
 * index entry, this process's memo) are brought up to date.
 */
import type { Trust } from '../trust';
import type { EventDraft, LoopxEvent } from '../model';
import type { CommitOptions, CommitResult, CommitTarget } from './commit';
import type { chainEvents, WriterHead } from './event-log';
import type { PendingAppend } from './log-append';
import { indexEntryOf } from './goal-index';
import type { LoadedGoal } from './goal-load';
import type { LogFile } from './goal-logs';
import { LEGACY_LOG } from './goal-logs';
import type { drainQueue, GroupTarget } from './group-commit';
import { resultLater } from './group-commit';
import type { Snapshot } from './snapshot';
import { SNAPSHOT_EVERY } from './snapshot';

/** What the lock holder found: the goal as it is now (`loaded`: undefined for a goal being created). */
export interface Current {
  files: LogFile[];
  loaded: LoadedGoal | undefined;
  /** `loaded`, when it was resumed from this process's last commit rather than read. */
  fromMemo: LoadedGoal | undefined;
  revision: number;
  /** The events this call wrote before, when it is a retry (CommitOptions.call): nothing is appended. */
  done: LoopxEvent[] | undefined;
}

/** What one commit appends: the drafts, and this writer's place in the goal before them. */
export interface Appending {
  drafts: EventDraft[];
  own: WriterHead | undefined;
  firstInGoal: boolean;
  migration: ReturnType<CommitTarget['migrateLegacy']> | undefined;
}

/** What the append wrote: this call's events chained, and the queued calls' written with them. */
export interface Appended {
  next: ReturnType<typeof chainEvents>;
  drained: ReturnType<typeof drainQueue> | undefined;
  ownRevision: number;
  /** The goal's index entry before the events (they are applied to the loaded state in place). */
  indexBefore: string;
  trust: Trust;
}

export type AfterCommit = { syncLater: (p: PendingAppend) => void; keep: (snap: Snapshot) => void };

export function groupTargetOf(target: CommitTarget): GroupTarget {
  return {
    goalId: target.goalId,
    ownLog: target.ownLog,
    tryLock: (stale) => target.tryLock(stale),
    state: () => target.load(target.logFiles()).state,
  };
}

/** Events the snapshot file `head` lacks of a goal at `revision`; undefined when it cannot be resumed from. */
export function memoLag(head: Omit<Snapshot, 'state'> | undefined, revision: number, trust: string) {
  return head && head.trust === trust && head.revision <= revision ? revision - head.revision : undefined;
}

/**
 * Whether the snapshot file lags SNAPSHOT_EVERY events or more once `added` are appended, or
 * cannot be resumed from. Resumed from memory, the file's header says how far behind it is: the
 * same rule as after a load from it, without parsing its state.
 */
export function snapshotDue(
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

/** Step 4: the snapshot, the index entry and this process's memo, derived from what was appended. */
export function refreshDerived(
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
  // A `loopx` call's commits, and any process's first one, bring the snapshot up to date: the next
  // call then resumes with no tail to validate (zod's schemas for its events, several ms; reads
  // never write it), while a process that writes on and on (a server, the extension) keeps to
  // one snapshot every SNAPSHOT_EVERY events.
  const oneShot = target.oneShot || (target.memo?.first() ?? true);
  // The events are appended: a cache that cannot be written now is rebuilt by the next read, so
  // its failure (a full disk) is a warning, never a failed call the caller would retry.
  const cacheWrite = (what: string, write: () => void) => {
    try {
      write();
    } catch (e) {
      target.warn(
        `goal ${target.goalId}: the events are written, but its ${what} could not be updated ` +
          `(${(e as Error).message}); it is rebuilt from the logs when next read`,
      );
    }
  };
  if (
    !cur.loaded ||
    oneShot ||
    migration?.cleanup ||
    snapshotDue(target, cur.loaded, cur.fromMemo, revision, added)
  )
    cacheWrite('snapshot', () => target.writeSnapshot(snap));
  const entry = indexEntryOf(state);
  if (!opts.deferIndex && JSON.stringify(entry) !== indexBefore)
    cacheWrite('entry in the goal index', () => target.updateIndexEntry(entry, trust.fingerprint));
  if (!migration?.cleanup) after.keep(snap);
  return { events: next.events, state, revision: ownRevision };
}
