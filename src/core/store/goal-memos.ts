/**
 * Where this process's last commits left a few goals (a snapshot in memory, never shared with a
 * caller): the next commit to one of them resumes there instead of reading the goal again
 * (store/commit.ts). A goal a caller has just read and is about to write to is kept the same way
 * (Store.keepForCommit): `exec` its replay, for the commits of its claim and evidence.
 */
import type { CommitTarget } from './commit';
import type { Snapshot } from './snapshot';

/** A long-lived process (the extension, a server) touches many goals: the latest few are kept. */
const MEMO_GOALS = 8;

export class GoalMemos {
  private readonly memos = new Map<string, Snapshot>();
  private readonly committed = new Set<string>();
  /** Goals this process said it writes to more than once (keepForCommit). */
  private readonly writingOn = new Set<string>();

  /**
   * Keeps `snap` (the caller's own copy) as goal `goalId`'s latest state; with `more`, the
   * process writes to the goal again after its next commit, so that one keeps a memo too.
   */
  put(goalId: string, snap: Snapshot, more = false): void {
    this.memos.delete(goalId);
    this.memos.set(goalId, snap);
    if (more) this.writingOn.add(goalId);
    for (const k of this.memos.keys()) if (this.memos.size > MEMO_GOALS) this.memos.delete(k);
  }

  /** The memo as a commit to `goalId` sees it. */
  forGoal(goalId: string): NonNullable<CommitTarget['memo']> {
    return {
      take: () => {
        const m = this.memos.get(goalId);
        this.memos.delete(goalId);
        return m;
      },
      keep: (make) => {
        // A process that commits once (a CLI call) never uses a memo: copy only from the second.
        if (!this.committed.has(goalId)) {
          this.committed.add(goalId);
          if (!this.writingOn.has(goalId)) return;
        }
        this.put(goalId, make());
      },
      first: () => !this.committed.has(goalId),
    };
  }
}
