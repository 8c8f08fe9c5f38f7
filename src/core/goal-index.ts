/**
 * `index.json`: one summary line per goal, derived from the goals, so listing need not load each.
 * The counts depend on which signed decisions count (a gate approved by a key pinned here is no
 * longer pending), so the index records the fingerprint of the pinned keys it was made under, as
 * the snapshots do: one made under other keys is rebuilt.
 */
import { z } from 'zod';
import { readJsonFile, writeJsonAtomic } from './jsonfile';
import { effectiveStatus, Id, GoalStatus, Timestamp } from './model';
import type { GoalState } from './model';

export const IndexEntry = z.object({
  id: Id,
  title: z.string(),
  status: GoalStatus,
  createdAt: Timestamp,
  todosDone: z.number().int().nonnegative(),
  todosTotal: z.number().int().nonnegative(),
  pendingGates: z.number().int().nonnegative(),
});
export type IndexEntry = z.infer<typeof IndexEntry>;
const IndexFile = z.object({ v: z.literal(1), trust: z.string().optional(), goals: z.array(IndexEntry) });

export interface GoalIndex {
  goals: IndexEntry[];
  /** The fingerprint of the pinned keys every entry was made under (none: unknown, rebuild it). */
  trust?: string;
}

export function indexEntryOf(state: GoalState): IndexEntry {
  const counted = state.todos.filter((t) => t.status !== 'cancelled');
  return {
    id: state.id,
    title: state.title,
    status: effectiveStatus(state),
    createdAt: state.createdAt,
    todosDone: counted.filter((t) => t.status === 'done').length,
    todosTotal: counted.length,
    pendingGates: state.gates.filter((g) => g.status === 'pending').length,
  };
}

/** The index, with no entries and no trust when it is missing or broken: listing rebuilds it. */
export function readIndexFile(file: string): GoalIndex {
  try {
    const { goals, trust } = readJsonFile(file, IndexFile);
    return { goals, trust };
  } catch {
    return { goals: [] };
  }
}

export function writeIndexFile(file: string, goals: IndexEntry[], trust?: string): void {
  writeJsonAtomic(file, { v: 1, ...(trust === undefined ? {} : { trust }), goals });
}

/**
 * Replaces (or adds) one goal's entry, made under the pinned keys `trust`. The caller holds the
 * index lock. When the other entries were made under other keys, the index then names none, so
 * the next listing rebuilds it.
 */
export function upsertIndexEntry(file: string, entry: IndexEntry, trust: string): void {
  const index = readIndexFile(file);
  const goals = index.goals;
  const i = goals.findIndex((g) => g.id === entry.id);
  if (i === -1) goals.push(entry);
  else goals[i] = entry;
  const current = index.trust === trust || goals.every((g) => g.id === entry.id);
  writeIndexFile(file, goals, current ? trust : undefined);
}

/** An entry per goal id, oldest goal first; a goal whose entry cannot be made is reported, not thrown. */
export function collectIndexEntries(
  ids: string[],
  entryOf: (goalId: string) => IndexEntry,
): { goals: IndexEntry[]; errors: { goalId: string; message: string }[] } {
  const goals: IndexEntry[] = [];
  const errors: { goalId: string; message: string }[] = [];
  for (const id of ids) {
    try {
      goals.push(entryOf(id));
    } catch (e) {
      errors.push({ goalId: id, message: (e as Error).message });
    }
  }
  goals.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
  return { goals, errors };
}
