/**
 * What wakes a sleeping lane: a change to something that can alter its contract's answer. The
 * kernel tells (fs.watch on the workspace's `.loopx/` folder, `policies/`, the goal's folder and its
 * logs folder, and the lanes' folder): nothing is polled, so a driver whose lanes all sleep costs
 * no CPU. A change is confirmed by the files' stamps (size, mtime, inode), so the driver's own
 * reads and the caches in `local/` wake nobody.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Store } from '../store';
import { fileStamp } from '../store';
import { laneFiles } from './lanes';

/** A little delay after a watcher event, so that one commit (log, snapshot, index) is one wake. */
const SETTLE_MS = 15;

export interface GoalWatch {
  /** Notes the files as they are now: the lane is about to read them. */
  look(): void;
  /** Ends the current wait as if something changed (a person asked for a look now). */
  poke(): void;
  /**
   * Resolves when a file that can change the answer changed since the last look (at once if it
   * already has), at `until`, or when the watch is closed.
   */
  wait(until?: Date): Promise<'changed' | 'timer' | 'closed'>;
  close(): void;
}

/** setTimeout's longest delay: a wake further off is re-armed when it fires. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The stamps of everything a lane's answer depends on: a change in any is worth a new look. */
function fingerprint(store: Store, goalId: string): string {
  const f = laneFiles(store);
  let logs: string;
  try {
    logs = store.logsStamp(goalId);
  } catch {
    logs = 'unreadable';
  }
  return [
    store.policyPath,
    path.join(store.root, 'policy.signed.json'),
    path.join(store.root, 'policies'),
    path.join(store.root, 'goals', goalId),
    f.specs,
  ]
    .map((p) => fileStamp(p))
    .concat(logs)
    .join('|');
}

/** Watches what `goalId`'s lanes depend on; each `wait` ends at the first change after it began. */
export function watchGoal(store: Store, goalId: string): GoalWatch {
  const waiters = new Set<(why: 'changed') => void>();
  const closers = new Set<() => void>();
  let seen = fingerprint(store, goalId);
  let settle: NodeJS.Timeout | undefined;
  const check = () => {
    settle = undefined;
    const now = fingerprint(store, goalId);
    if (now === seen) return;
    for (const w of [...waiters]) w('changed');
  };
  const onEvent = () => {
    settle ??= setTimeout(check, SETTLE_MS);
  };
  const watchers: fs.FSWatcher[] = [];
  const dirs = [
    store.root,
    path.join(store.root, 'policies'),
    path.join(store.root, 'goals', goalId),
    path.join(store.root, 'goals', goalId, 'events'),
    laneFiles(store).specs,
  ];
  for (const dir of dirs) {
    try {
      const w = fs.watch(dir, (_e, name) => {
        // The root's `local/` holds caches and locks every read may touch: not a change.
        if (dir === store.root && String(name ?? '') === 'local') return;
        onEvent();
      });
      w.on('error', () => w.close());
      watchers.push(w);
    } catch {
      // A folder that does not exist yet (no signed policy chain, no lanes): its parent's
      // watcher sees it appear, and the fingerprint covers it from then on.
    }
  }
  return {
    look() {
      seen = fingerprint(store, goalId);
    },
    poke() {
      for (const w of [...waiters]) w('changed');
    },
    wait(until) {
      if (fingerprint(store, goalId) !== seen) return Promise.resolve('changed');
      return new Promise((resolve) => {
        let timer: NodeJS.Timeout | undefined;
        const done = (why: 'changed' | 'timer' | 'closed') => {
          if (timer) clearTimeout(timer);
          waiters.delete(done);
          closers.delete(onClose);
          resolve(why);
        };
        const onClose = () => done('closed');
        const arm = () => {
          // The store's clock, not the machine's: what is due is judged by it (a test's fake clock).
          const left = until!.getTime() - Date.parse(store.now());
          timer = setTimeout(
            () => (left > MAX_TIMER_MS ? arm() : done('timer')),
            Math.min(Math.max(0, left), MAX_TIMER_MS),
          );
        };
        waiters.add(done);
        closers.add(onClose);
        if (until) arm();
      });
    },
    close() {
      for (const w of watchers) w.close();
      if (settle) clearTimeout(settle);
      for (const c of [...closers]) c();
    },
  };
}
