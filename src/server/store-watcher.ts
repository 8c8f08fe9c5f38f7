/**
 * Tells the event stream when the store changed. A change is a new fingerprint of the store
 * (policy.json, the goals folder, each goal folder and each writer's log in it: mtime, size,
 * inode), so a pull that brings another clone's events is seen like a local write. fs.watch
 * is the fast trigger (recursive on macOS and Windows; on Linux the root, `goals/`, each goal
 * folder and its logs folder, non-recursively), a 500 ms poll of the same fingerprint the
 * fallback. At most one change is reported per 200 ms.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Store } from '../core/index';
import { fileStamp, ID_PATTERN } from '../core/index';

const POLL_MS = 500;
const MIN_PUSH_INTERVAL_MS = 200;
/** A little delay after a watcher event, so one commit (log, snapshot, index) becomes one push. */
const SETTLE_MS = 25;
/** Goal folders watched individually (Linux); beyond that the poll covers them. */
const MAX_GOAL_WATCHERS = 1000;

export interface StoreWatcher {
  /** Takes the current fingerprint as the unchanged state; a no-op while watching. */
  start(): void;
  stop(): void;
}

export function createStoreWatcher(store: Store, onChange: () => void): StoreWatcher {
  let watching = false;
  let lastFingerprint = '';
  let lastPushAt = 0;
  let checkTimer: NodeJS.Timeout | undefined;
  let pollTimer: NodeJS.Timeout | undefined;
  const watchers = new Map<string, fs.FSWatcher>();
  const recursiveWatch = process.platform === 'darwin' || process.platform === 'win32';
  const goalsDir = path.join(store.root, 'goals');

  function goalFolderNames(): string[] {
    try {
      return fs
        .readdirSync(goalsDir)
        .filter((n) => ID_PATTERN.test(n))
        .sort();
    } catch {
      return [];
    }
  }

  /** What changes when any writer changes the store (local/ is not part of it). */
  function fingerprint(names = goalFolderNames()): string {
    const parts = [fileStamp(store.policyPath), fileStamp(goalsDir)];
    for (const n of names) {
      const dir = path.join(goalsDir, n);
      let logs: string;
      try {
        logs = store.logsStamp(n);
      } catch {
        logs = 'unreadable'; // a linked folder: the goal's own load reports it
      }
      parts.push(`${n}=${fileStamp(dir)}/${logs}`);
    }
    return parts.join('|');
  }

  function check() {
    if (!watching) return;
    const names = goalFolderNames();
    if (!recursiveWatch) syncGoalWatchers(names);
    const fp = fingerprint(names);
    if (fp === lastFingerprint) return;
    lastFingerprint = fp; // taken before the document is read: a later change is seen by the next check
    lastPushAt = Date.now();
    onChange();
  }

  function scheduleCheck() {
    if (!watching || checkTimer) return;
    const delay = Math.max(SETTLE_MS, lastPushAt + MIN_PUSH_INTERVAL_MS - Date.now());
    checkTimer = setTimeout(() => {
      checkTimer = undefined;
      try {
        check();
      } catch {
        // the next poll tries again
      }
    }, delay);
  }

  function addWatcher(key: string, dir: string, recursive: boolean) {
    if (watchers.has(key)) return;
    try {
      const w = fs.watch(dir, { persistent: false, recursive }, (_event, filename) => {
        const name = filename ? String(filename) : '';
        if (
          key === 'root' &&
          (name === 'local' || name.startsWith(`local${path.sep}`) || name.startsWith('local/'))
        )
          return;
        scheduleCheck();
      });
      w.on('error', () => {
        w.close();
        watchers.delete(key);
      });
      watchers.set(key, w);
    } catch {
      // unsupported here, or out of watches: the poll covers it
    }
  }

  function syncGoalWatchers(names: string[]) {
    const shown = names.slice(0, MAX_GOAL_WATCHERS / 2);
    const wanted = new Set(shown.flatMap((n) => [`goal:${n}`, `logs:${n}`]));
    for (const [key, w] of watchers) {
      if ((key.startsWith('goal:') || key.startsWith('logs:')) && !wanted.has(key)) {
        w.close();
        watchers.delete(key);
      }
    }
    for (const n of shown) {
      addWatcher(`goal:${n}`, path.join(goalsDir, n), false);
      addWatcher(`logs:${n}`, path.join(goalsDir, n, 'events'), false);
    }
  }

  return {
    start() {
      if (watching) return;
      watching = true;
      lastFingerprint = fingerprint();
      if (recursiveWatch) {
        addWatcher('root', store.root, true);
      } else {
        addWatcher('root', store.root, false);
        addWatcher('goals', goalsDir, false);
        syncGoalWatchers(goalFolderNames());
      }
      pollTimer = setInterval(scheduleCheck, POLL_MS);
    },
    stop() {
      watching = false;
      for (const w of watchers.values()) w.close();
      watchers.clear();
      for (const t of [checkTimer, pollTimer]) if (t) clearTimeout(t);
      checkTimer = pollTimer = undefined;
    },
  };
}
