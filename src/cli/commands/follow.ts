/**
 * `loopx log --follow`: the history so far, then every event any writer appends, as it lands.
 * Each writer's log is polled by its stamp (size, mtime, inode: as the status server's watcher
 * tells a change), and only a changed stamp costs a read. The merged history is re-read whole and
 * a HistoryTail hands out each event once, so events of two writers appended between two polls,
 * or pulled in from another clone with earlier stamps, are each printed exactly once.
 */
import type { Store } from '../../core/index';
import { historyLines, HistoryTail, logEventOut } from '../../core/index';
import type { CliContext } from '../context';
import { EXIT } from '../context';
import { readGoalHistory } from '../read-goal';

/** How often the logs are looked at. */
export const FOLLOW_POLL_MS = 250;

export function followLog(ctx: CliContext, goalId: string, limit?: number): Promise<number> {
  const store = ctx.store();
  const tail = new HistoryTail();
  const names = store.writerNames();
  // With --json, one event a line (NDJSON), so a reader can act on each as it comes.
  const print = (events: ReturnType<HistoryTail['next']>) => {
    if (!events.length) return;
    if (ctx.json) ctx.io.stdout(events.map((m) => `${JSON.stringify(logEventOut(m, names))}\n`).join(''));
    else ctx.io.stdout(`${historyLines(events, names).join('\n')}\n`);
  };
  let stamp = store.logsStamp(goalId);
  const all = tail.next(readGoalHistory(store, goalId).events);
  print(limit ? all.slice(-limit) : all);

  return new Promise((resolve, reject) => {
    const stop = (outcome: () => void) => {
      clearInterval(timer);
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      outcome();
    };
    const onSignal = () => stop(() => resolve(EXIT.ok));
    const poll = () => {
      try {
        // The reader went away (`| head`): nothing more to show anyone.
        if (ctx.io.stdoutClosed?.() ?? process.stdout.destroyed) return stop(() => resolve(EXIT.ok));
        const now = store.logsStamp(goalId);
        if (now === stamp) return;
        // Taken before the read: a write that lands during it changes the stamp again.
        stamp = now;
        refreshNames(store, names);
        print(tail.next(readGoalHistory(store, goalId).events));
      } catch (e) {
        stop(() => reject(e));
      }
    };
    const timer = setInterval(poll, FOLLOW_POLL_MS);
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
}

/** A clone that starts writing while we follow may have named itself since. */
function refreshNames(store: Store, names: Map<string, string>) {
  for (const [k, v] of store.writerNames()) names.set(k, v);
}
