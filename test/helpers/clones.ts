/**
 * Clones of one workspace without git, for the core's team-mode tests: a clone copies the
 * committed part of `.loopx/` (not `local/`), and a sync gives every clone each writer's log as
 * the clone with the most of it has it (logs only grow), as pulling and pushing through git would.
 * The real git round trip is test/team/git.test.ts.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Store } from '../../src/core/store/store';
import { manualClock, tempDir } from './store';

export interface Clone {
  store: Store;
  clock: ReturnType<typeof manualClock>;
}

/** A new clone of `from`'s workspace (its committed files), on a clock of its own. */
export function cloneOf(from: Store, start = '2026-11-30T10:00:00.000Z'): Clone {
  const ws = tempDir('loopx-clone-');
  fs.cpSync(from.root, path.join(ws, '.loopx'), {
    recursive: true,
    filter: (src) => path.relative(from.root, src).split(path.sep)[0] !== 'local',
  });
  const clock = manualClock(start);
  return { store: new Store(ws, { clock: clock.now }), clock };
}

/** Every log file of every goal of `store`, by its path under `.loopx/`. */
function logsOf(store: Store): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  for (const goalId of store.goalIds()) {
    for (const f of store.logFiles(goalId))
      out.set(path.relative(store.root, f.file), fs.readFileSync(f.file));
  }
  return out;
}

/** Brings every clone to the union of all their logs: for each log, the longest copy wins. */
export function sync(...clones: Clone[]): void {
  const best = new Map<string, Buffer>();
  for (const c of clones) {
    for (const [rel, buf] of logsOf(c.store)) {
      const have = best.get(rel);
      if (have && have.length > buf.length) {
        if (!have.subarray(0, buf.length).equals(buf)) throw new Error(`two clones wrote ${rel} differently`);
        continue;
      }
      if (have && !buf.subarray(0, have.length).equals(have))
        throw new Error(`two clones wrote ${rel} differently`);
      best.set(rel, buf);
    }
  }
  for (const c of clones) {
    for (const [rel, buf] of best) {
      const file = path.join(c.store.root, rel);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      if (!fs.existsSync(file) || !fs.readFileSync(file).equals(buf)) fs.writeFileSync(file, buf);
    }
  }
}
