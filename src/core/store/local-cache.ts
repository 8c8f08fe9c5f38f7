/**
 * This clone's caches in `local/cache/`: each goal's snapshot and the goal index, both derived
 * from the logs, never committed, made again when missing or stale. A reader writes them only
 * into a `local/` the clone already has: on a fresh clone nothing is written until the first
 * write, and a failure to write a cache is no error. A read-only store's reader writes none.
 */
import * as path from 'node:path';
import { checkId } from '../model';
import { fileStamp } from './file-stamp';
import type { GoalListSource, IndexEntry } from './goal-index';
import { listGoalEntries, logsFolderStamp, upsertIndexEntry } from './goal-index';
import type { LoadedGoal } from './goal-load';
import { lockFile } from './local-dir';
import { withLock } from './lock';
import { mkdirStore, storePathExists } from './safe-path';
import type { Snapshot } from './snapshot';
import { readSnapshotFile, readSnapshotHead, writeSnapshotFile } from './snapshot';

export interface LocalCacheOptions {
  localDir: string;
  /** The key of the snapshots' MAC (asked for only when a snapshot is read or written). */
  snapshotKey: () => Buffer;
  lockTimeoutMs: number;
  /** Read-only (StoreOptions.readOnly): no cache is written, no lock taken. */
  readOnly?: boolean;
  /** Refuses a write the caller asked for in a read-only store (StoreFiles.assertWritable). */
  assertWritable: (what: string) => void;
}

/** What listing reads from the store (the index's own file and lock are the cache's). */
export type GoalSource = Omit<GoalListSource, 'indexFile' | 'withIndexLock' | 'rebuild'>;

type SnapshotHead = Omit<Snapshot, 'state'>;
/** Snapshot headers kept in memory: a long-lived process writes to a few goals at a time. */
const HEADS_KEPT = 32;

export class LocalCache {
  private readonly heads = new Map<string, { stamp: string; head?: SnapshotHead }>();
  constructor(private readonly o: LocalCacheOptions) {}

  get dir() {
    return path.join(this.o.localDir, 'cache');
  }
  get indexPath() {
    return path.join(this.dir, 'index.json');
  }
  snapshotPath(goalId: string) {
    return path.join(this.dir, 'goals', `${checkId(goalId, 'goal id')}.json`);
  }

  /** Whether a reader may write caches: only into a `local/` this clone already has. */
  canWrite(): boolean {
    if (this.o.readOnly) return false;
    try {
      return storePathExists(this.o.localDir);
    } catch {
      return false;
    }
  }

  /** The snapshot, or why it cannot be used (a missing one is no problem). */
  readSnapshot(goalId: string): { snap?: Snapshot; problem?: string } {
    return readSnapshotFile(this.snapshotPath(goalId), this.o.snapshotKey);
  }

  writeSnapshot(goalId: string, snap: Snapshot): void {
    this.o.assertWritable(`writing the snapshot of goal ${goalId}`);
    mkdirStore(path.dirname(this.snapshotPath(goalId)), 0o700);
    writeSnapshotFile(this.snapshotPath(goalId), this.o.snapshotKey(), snap);
    // What was just written is known (another writer's rename in between only makes it look
    // fresher, and the header decides nothing but when to write again).
    const { state: _state, ...head } = snap;
    this.heads.set(goalId, { stamp: fileStamp(this.snapshotPath(goalId)), head });
  }

  /**
   * The snapshot's header if its MAC verifies, else undefined; read again only when the file
   * changed (a snapshot is replaced by rename, so a new one is a new inode). A long-lived writer
   * asks after every commit; the header only tells it when to write the next snapshot.
   */
  snapshotHead(goalId: string): SnapshotHead | undefined {
    const file = this.snapshotPath(goalId);
    const stamp = fileStamp(file);
    const known = this.heads.get(goalId);
    if (known?.stamp === stamp) return known.head;
    const { head } = readSnapshotHead(file, this.o.snapshotKey);
    this.heads.set(goalId, { stamp, head });
    for (const k of this.heads.keys()) if (this.heads.size > HEADS_KEPT) this.heads.delete(k);
    return head;
  }

  /** The snapshot of a replayed goal, made under the pinned keys `trust` (a fingerprint). */
  static snapshotOf(loaded: LoadedGoal, trust: string): Snapshot {
    const { revision, heads, hlc, heldUntil, state } = loaded;
    return { revision, heads, hlc, heldUntil, trust, state };
  }

  /** Saves a state a reader replayed, for the next load: best effort. Whether it was saved. */
  keepReplay(goalId: string, loaded: LoadedGoal, trust: string): boolean {
    if (!this.canWrite()) return false;
    try {
      this.writeSnapshot(goalId, LocalCache.snapshotOf(loaded, trust));
      return true;
    } catch {
      return false; // a read-only checkout, a full disk: the next load replays again
    }
  }

  /** Records a goal's entry after a write (the writer holds no index lock yet: this takes it). */
  updateIndexEntry(entry: IndexEntry, logsDir: string, trust: string): void {
    const logs = logsFolderStamp(logsDir);
    withLock(this.indexLock(), () => upsertIndexEntry(this.indexPath, { ...entry, logs }, trust), {
      timeoutMs: this.o.lockTimeoutMs,
    });
  }

  /**
   * The goal list from the index, each entry checked against its goal's logs folder (a pull may
   * have changed it), kept current when this clone has a `local/`; `rebuild` makes every entry
   * again from the goals.
   */
  listGoals(src: GoalSource, rebuild: boolean) {
    return listGoalEntries({
      indexFile: this.indexPath,
      ...src,
      withIndexLock: (fn) => {
        if (rebuild) this.o.assertWritable('rebuilding the goal index');
        else if (!this.canWrite()) throw new Error('no local/ to keep a cache in');
        return withLock(this.indexLock(), fn, { timeoutMs: this.o.lockTimeoutMs });
      },
      rebuild,
    });
  }

  private indexLock() {
    return lockFile(this.o.localDir, 'index');
  }
}
