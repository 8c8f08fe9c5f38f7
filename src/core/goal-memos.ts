/**
 * Where this process's last commits left a few goals (a snapshot in memory, never shared with a
 * caller): the next commit to one of them resumes there instead of reading the goal again
 * (commit.ts). A goal `exec` replayed to authorise a command is kept the same way, for the
 * commit of its evidence.
 */
import type { CommitTarget } from './commit';
import type { Snapshot } from './snapshot';

/** A long-lived process (the extension, a server) touches many goals: the latest few are kept. */
const MEMO_GOALS = 8;

export class GoalMemos {
  private readonly memos = new Map<string, Snapshot>();
  private readonly committed = new Set<string>();

  /** Keeps `snap` (the caller's own copy) as goal `goalId`'s latest state. */
  put(goalId: string, snap: Snapshot): void {
    this.memos.delete(goalId);
    this.memos.set(goalId, snap);
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
        if (!this.committed.has(goalId)) return void this.committed.add(goalId);
        this.put(goalId, make());
      },
      first: () => !this.committed.has(goalId),
    };
  }
}
