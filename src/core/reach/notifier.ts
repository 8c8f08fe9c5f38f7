/**
 * The long-running sender (`loopx notify watch`, and beside `loopx drive`): a pass at start, then
 * a pass whenever something that can change the queue changes. The kernel tells (fs.watch on each
 * listed workspace's `.loopx/`, its goals' logs and its lanes' states, on the list of workspaces
 * and on channels.json), as drive/wake.ts does for lanes: nothing is polled. The one timer is for
 * the next retry due.
 */
import type * as fs from 'node:fs';
import { watch } from 'node:fs';
import * as path from 'node:path';
import { LOOPX_DIR, listWorkspaces, readdirStore, registryDir, storePathExists } from '../store';
import type { Delivery, NotifySendDoc } from '../views';
import { CHANNELS_FILE, channelsFile } from './channels';
import type { Post, ShowDesktop } from './deliver';
import { sendDue } from './sender';

/** A little delay after a watcher event, so that one commit (log, snapshot, index) is one pass. */
const SETTLE_MS = 100;
/** Another sender held the outbox: look again this much later (it may have read the queue before the change). */
const BUSY_RETRY_MS = 2000;
/** setTimeout's longest delay: a retry further off is re-armed when it fires. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface NotifierOptions {
  configDir: string;
  /** One line for a person: each delivery, each problem. */
  log: (line: string) => void;
  /** Each pass's document, when it sent or failed something. */
  onPass?: (doc: NotifySendDoc) => void;
  env?: NodeJS.ProcessEnv;
  post?: Post;
  desktop?: ShowDesktop;
}

export interface Notifier {
  /** Stops watching and waits for the pass under way (its records written). */
  close(): Promise<void>;
}

/** A folder to watch, and which names in it matter (undefined: all). */
type Watched = (name: string) => boolean;

function deliveryLine(d: Delivery, sent: boolean): string {
  if (sent) return `sent ${d.what} to ${d.channel}`;
  const then = d.gave_up ? 'gave up' : d.next_at ? `next attempt at ${d.next_at}` : 'not retried';
  return `could not send ${d.what} to ${d.channel} (attempt ${d.attempts}): ${d.error}; ${then}`;
}

/**
 * The folders whose changes can change the queue. Without channels.json only the config folder
 * is watched (for the file to appear): a machine that set up no channel pays for nothing more.
 */
function foldersToWatch(configDir: string): Map<string, Watched> {
  const dirs = new Map<string, Watched>();
  const registry = registryDir(configDir);
  dirs.set(configDir, (n) => n.startsWith(CHANNELS_FILE) || n === path.basename(registry));
  if (!storePathExists(channelsFile(configDir))) return dirs;
  dirs.set(registry, () => true);
  for (const w of listWorkspaces(configDir, { prune: false }).workspaces) {
    const root = path.join(w.path, LOOPX_DIR);
    // `local/` holds caches and locks every read touches; only the lanes' states there matter.
    dirs.set(root, (n) => n !== 'local');
    dirs.set(path.join(root, 'local'), (n) => n === 'drive');
    dirs.set(path.join(root, 'local', 'drive'), (n) => n === 'state');
    dirs.set(path.join(root, 'local', 'drive', 'state'), () => true);
    const goals = path.join(root, 'goals');
    dirs.set(goals, () => true);
    let ids: string[] = [];
    try {
      ids = readdirStore(goals);
    } catch {
      // gone meanwhile: the registry's watcher sees it pruned
    }
    for (const g of ids) {
      dirs.set(path.join(goals, g), (n) => n === 'events');
      dirs.set(path.join(goals, g, 'events'), () => true);
    }
  }
  return dirs;
}

export function startNotifier(o: NotifierOptions): Notifier {
  const watchers = new Map<string, fs.FSWatcher>();
  let closed = false;
  let running: Promise<void> | undefined;
  let again = false;
  let settle: NodeJS.Timeout | undefined;
  let timer: NodeJS.Timeout | undefined;
  let busyTold = false;

  const kick = () => {
    if (closed) return;
    settle ??= setTimeout(() => {
      settle = undefined;
      run();
    }, SETTLE_MS);
  };

  const arm = (at: number) => {
    if (timer) clearTimeout(timer);
    const left = Math.max(0, at - Date.now());
    timer = setTimeout(
      () => {
        timer = undefined;
        if (left > MAX_TIMER_MS) arm(at);
        else kick();
      },
      Math.min(left, MAX_TIMER_MS),
    );
  };

  const rewatch = () => {
    let want: Map<string, Watched>;
    try {
      want = foldersToWatch(o.configDir);
    } catch (e) {
      o.log(`could not list the workspaces to watch: ${(e as Error).message}`);
      return;
    }
    for (const [dir, w] of watchers)
      if (!want.has(dir)) {
        w.close();
        watchers.delete(dir);
      }
    for (const [dir, matters] of want) {
      if (watchers.has(dir)) continue;
      try {
        const w = watch(dir, (_e, name) => {
          if (matters(String(name ?? ''))) kick();
        });
        w.on('error', () => {
          w.close();
          watchers.delete(dir);
          kick();
        });
        watchers.set(dir, w);
      } catch {
        // Not there yet: its parent's watcher sees it appear, and the next pass watches it.
      }
    }
  };

  const pass = async () => {
    let doc: NotifySendDoc | undefined;
    try {
      doc = await sendDue({
        configDir: o.configDir,
        env: o.env,
        post: o.post,
        desktop: o.desktop,
        onDelivery: (d, sent) => o.log(deliveryLine(d, sent)),
      });
    } catch (e) {
      o.log(`nothing sent: ${(e as Error).message}`);
    }
    if (closed) return;
    rewatch();
    if (doc?.busy) {
      if (!busyTold) o.log('another LoopX sender holds the outbox: it sends, this one looks again soon');
      busyTold = true;
      arm(Date.now() + BUSY_RETRY_MS);
    } else {
      busyTold = false;
      if (doc?.next_at) arm(Date.parse(doc.next_at));
      else if (timer) {
        clearTimeout(timer);
        timer = undefined;
      }
    }
    if (doc && (doc.sent.length || doc.failed.length)) o.onPass?.(doc);
  };

  const run = () => {
    if (closed) return;
    if (running) {
      again = true;
      return;
    }
    running = pass().finally(() => {
      running = undefined;
      if (again && !closed) {
        again = false;
        run();
      }
    });
  };

  rewatch();
  run();
  return {
    async close() {
      closed = true;
      if (settle) clearTimeout(settle);
      if (timer) clearTimeout(timer);
      for (const w of watchers.values()) w.close();
      watchers.clear();
      await running;
    },
  };
}
