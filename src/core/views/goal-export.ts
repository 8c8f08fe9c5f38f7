/**
 * A goal's whole record for keeping or sharing (`loopx export`), and the pieces of its history
 * that reading commands share: an event as `loopx log` prints it, and a tail of the merged
 * history that hands each event out once, however the writers' appends interleave.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { GoalState, Policy } from '../model';
import { quote, usageError } from '../model';
import type { MergedEvent } from '../rules';
import { sameEvent } from '../rules';
import type { Store } from '../store';
import { LOOPX_DIR, writeFileAtomic } from '../store';
import { evidenceOut, gateDoc, rewardOut, runList } from './records';
import type { ExportDoc } from './records-doc';
import { EXPORT_SCHEMA } from './records-doc';
import type { GoalStatusDoc } from './status-doc';

/** An event as `loopx log --json` prints it: the event, the log it came from, its writer's name. */
export function logEventOut(m: MergedEvent, names: ReadonlyMap<string, string>): Record<string, unknown> {
  return { ...m.ev, log: m.log, ...(names.has(m.log) ? { writer_name: names.get(m.log) } : {}) };
}

export function exportDoc(
  goal: GoalState,
  policy: Policy,
  status: GoalStatusDoc,
  events: readonly MergedEvent[],
  writerNames: ReadonlyMap<string, string>,
  now: string,
): ExportDoc {
  return {
    schema: EXPORT_SCHEMA,
    exported_at: now,
    goal: status,
    gates: status.gates.map((g) => gateDoc(goal, policy, g.id, { events, writerNames })),
    runs: runList(goal),
    evidence: goal.evidence.map(evidenceOut),
    rewards: goal.rewards.map(rewardOut),
    events: events.map((m) => logEventOut(m, writerNames) as ExportDoc['events'][number]),
  };
}

/**
 * What a follower has handed out of a goal's merged history. Each read of the history (every
 * writer's log, merged) is passed to `next`, which returns the events not handed out before, in
 * merged order. An event is known by its id and content (as `distinctEvents` tells copies apart),
 * not by its place: another clone's events pulled in later may sort before ones already shown,
 * and are then shown late rather than never, and a copy of one already shown is not shown again.
 */
export class HistoryTail {
  private readonly seen = new Map<string, MergedEvent['ev'][]>();

  /** The events of `events` not handed out yet; from now on they count as handed out. */
  next(events: readonly MergedEvent[]): MergedEvent[] {
    const fresh: MergedEvent[] = [];
    for (const m of events) {
      const same = this.seen.get(m.ev.id);
      if (same?.some((ev) => sameEvent(ev, m.ev))) continue;
      if (same) same.push(m.ev);
      else this.seen.set(m.ev.id, [m.ev]);
      fresh.push(m);
    }
    return fresh;
  }
}

/**
 * Writes an export to `file` atomically (a reader sees the old file or the whole new one). Never
 * into a `.loopx/` folder: the store holds only what LoopX writes, and an export there could pass
 * for a goal's own files (the real path is checked, so a link does not lead in either).
 */
export function writeExportFile(store: Store, file: string, content: string): string {
  const target = path.resolve(file);
  const dir = path.dirname(target);
  let realDir: string;
  try {
    realDir = fs.realpathSync(dir);
  } catch {
    throw usageError(`the folder ${dir} does not exist (--output): create it first, or write elsewhere`, {
      field: '--output',
      reason: 'output_folder_missing',
    });
  }
  const real = path.join(realDir, path.basename(target));
  const root = fs.realpathSync(store.root);
  const inStore = real === root || real.startsWith(`${root}${path.sep}`);
  if (inStore || real.split(path.sep).includes(LOOPX_DIR))
    throw usageError(
      `--output ${quote(file)} is inside a .loopx folder, which holds only LoopX's own files: write the export elsewhere (e.g. --output goal-report.md)`,
      { field: '--output', reason: 'output_in_store' },
    );
  writeFileAtomic(real, content);
  return real;
}
