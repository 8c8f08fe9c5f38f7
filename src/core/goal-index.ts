/** `index.json`: one summary line per goal, derived from the goals, so listing need not load each. */
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
const IndexFile = z.object({ v: z.literal(1), goals: z.array(IndexEntry) });

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

/** The index's entries, none when it is missing or broken: listing reconciles with the folders, self-repair rebuilds it. */
export function readIndexFile(file: string): IndexEntry[] {
  try {
    return readJsonFile(file, IndexFile).goals;
  } catch {
    return [];
  }
}

export function writeIndexFile(file: string, goals: IndexEntry[]): void {
  writeJsonAtomic(file, { v: 1, goals });
}

/** Replaces (or adds) one goal's entry. The caller holds the index lock. */
export function upsertIndexEntry(file: string, entry: IndexEntry): void {
  const goals = readIndexFile(file);
  const i = goals.findIndex((g) => g.id === entry.id);
  if (i === -1) goals.push(entry);
  else goals[i] = entry;
  writeIndexFile(file, goals);
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
