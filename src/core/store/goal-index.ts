/**
 * The goal index (`local/cache/index.json`): one summary line per goal, derived from the goals, so
 * listing need not load each. A cache of this clone, never committed. The counts depend on which
 * signed decisions count (a gate approved by a key pinned here is no longer pending), so the index
 * records the fingerprint of the pinned keys it was made under, as the snapshots do: one made
 * under other keys is rebuilt. Each entry also records the stamp of its goal's `events/` folder,
 * which git changes whenever a pull, checkout or rebase changes a log: a goal whose folder moved
 * on since is read again.
 *
 * A commit does not rewrite the index (at 10,000 goals that is a megabyte per `todo add`): it
 * appends its goal's new entry to the index's journal (`index.log`, one JSON line). Reading the
 * index applies the journal over it, the last line of a goal winning; a listing that writes the
 * index folds the journal in, and so does a commit once the journal is past JOURNAL_MAX.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import type { GoalState } from '../model';
import { compareText, effectiveStatus, GoalStatus, Id, lazy, Timestamp } from '../model';
import { writeAll } from './disk-write';
import { folderStamp, sameFolderTime, stampSettled } from './file-stamp';
import { readJsonFile, writeJsonAtomic } from './json-file';
import { openStoreFile, readStoreFile } from './safe-path';

export const IndexEntry = lazy(() =>
  z.object({
    id: Id,
    title: z.string(),
    status: GoalStatus,
    createdAt: Timestamp,
    todosDone: z.number().int().nonnegative(),
    todosTotal: z.number().int().nonnegative(),
    pendingGates: z.number().int().nonnegative(),
    /** Tool calls the hooks refused an agent on the goal, in all (`deniedTotal`). */
    denied: z.number().int().nonnegative(),
    /**
     * Runs still open on the goal, of any writer: the hooks look for a session's runs in the goals
     * that have some, so the turn that completes a goal still finds its run (hooks/open-runs.ts).
     */
    openRuns: z.number().int().nonnegative(),
  }),
);
export type IndexEntry = z.infer<typeof IndexEntry>;
/** An entry as stored: with the stamp of the goal's logs folder when it was made (LogsStamp). */
const StoredEntry = lazy(() => IndexEntry.extend({ logs: z.string().max(80).optional() }));
export type StoredEntry = z.infer<typeof StoredEntry>;
/** Version 4 entries count open runs; an older index does not parse, so listing rebuilds it. */
const IndexFile = lazy(() =>
  z.object({ v: z.literal(4), trust: z.string().optional(), goals: z.array(StoredEntry) }),
);

/** A line of the journal: an entry a commit made, under the pinned keys `trust`. */
const JournalLine = lazy(() => z.object({ trust: z.string(), entry: StoredEntry }));
/** Past this size a commit folds the journal into the index (about a thousand commits). */
export const JOURNAL_MAX = 256 * 1024;

/** The journal of the index file `indexFile`. */
export const indexJournal = (indexFile: string) => path.join(path.dirname(indexFile), 'index.log');

export interface GoalIndex {
  goals: StoredEntry[];
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
    denied: state.deniedTotal ?? 0,
    openRuns: state.runs.filter((r) => !r.endedAt).length,
  };
}

/**
 * The index with its journal applied, with no entries and no trust when it is missing or broken:
 * listing rebuilds it. An entry made under other keys than the index's leaves it without trust.
 */
export function readIndexFile(file: string): GoalIndex {
  let index: GoalIndex;
  try {
    const { goals, trust } = readJsonFile(file, IndexFile);
    index = { goals, trust };
  } catch (e) {
    // A missing index starts empty and trusted (its first entries say under which keys); a
    // broken one is rebuilt by the next listing.
    index = { goals: [], trust: (e as NodeJS.ErrnoException).code === 'ENOENT' ? '' : undefined };
  }
  const { lines, damaged } = readJournal(file);
  if (lines.length === 0 && !damaged) return index.trust === '' ? { goals: [] } : index;
  const at = new Map(index.goals.map((g, i) => [g.id, i]));
  // A damaged line may have held a goal's latest entry: the index is then not trusted, and the
  // next listing rebuilds it from the goals.
  let trust = damaged ? undefined : index.trust === '' ? lines[0]!.trust : index.trust;
  for (const { trust: t, entry } of lines) {
    const i = at.get(entry.id);
    if (i === undefined) at.set(entry.id, index.goals.push(entry) - 1);
    else index.goals[i] = entry;
    if (t !== trust) trust = undefined;
  }
  return { goals: index.goals, ...(trust === undefined ? {} : { trust }) };
}

/** The journal's lines that parse, and whether any did not (a line torn by a crash, an edit). */
function readJournal(file: string): { lines: { trust: string; entry: StoredEntry }[]; damaged: boolean } {
  let text: string;
  try {
    text = readStoreFile(indexJournal(file), 'utf8');
  } catch {
    return { lines: [], damaged: false };
  }
  const lines: { trust: string; entry: StoredEntry }[] = [];
  let damaged = false;
  for (const line of text.split('\n')) {
    if (!line) continue;
    let parsed;
    try {
      parsed = JournalLine.safeParse(JSON.parse(line));
    } catch {
      parsed = undefined;
    }
    if (parsed?.success) lines.push(parsed.data);
    else damaged = true;
  }
  return { lines, damaged };
}

/** Writes the whole index, the journal folded in (the caller holds the index lock). */
export function writeIndexFile(file: string, goals: StoredEntry[], trust?: string): void {
  writeJsonAtomic(file, { v: 4, ...(trust === undefined ? {} : { trust }), goals });
  // After the index is written: a crash in between leaves lines the index already holds.
  fs.rmSync(indexJournal(file), { force: true });
}

/** An entry without its stamp, as listings show it. */
export function shownEntry(e: StoredEntry): IndexEntry {
  const { logs: _logs, ...entry } = e;
  return entry;
}

/**
 * Replaces (or adds) one goal's entry, made under the pinned keys `trust`: one line appended to
 * the journal, so a commit costs the same at 10,000 goals as at one. The caller holds the index
 * lock. When the other entries were made under other keys, the index then names none, so the next
 * listing rebuilds it.
 */
export function upsertIndexEntry(file: string, entry: StoredEntry, trust: string): void {
  const fd = openStoreFile(indexJournal(file), 'a', 0o600);
  let size: number;
  try {
    writeAll(fd, Buffer.from(`${JSON.stringify({ trust, entry })}\n`));
    size = fs.fstatSync(fd).size;
  } finally {
    fs.closeSync(fd);
  }
  if (size <= JOURNAL_MAX) return;
  const index = readIndexFile(file);
  writeIndexFile(file, index.goals, index.trust);
}

/** An entry per goal id, oldest goal first; a goal whose entry cannot be made is reported, not thrown. */
export function collectIndexEntries<E extends IndexEntry>(
  ids: string[],
  entryOf: (goalId: string) => E,
): { goals: E[]; errors: { goalId: string; message: string }[] } {
  const goals: E[] = [];
  const errors: { goalId: string; message: string }[] = [];
  for (const id of ids) {
    try {
      goals.push(entryOf(id));
    } catch (e) {
      errors.push({ goalId: id, message: (e as Error).message });
    }
  }
  goals.sort((a, b) => compareText(a.createdAt, b.createdAt) || compareText(a.id, b.id));
  return { goals, errors };
}

/**
 * The stamp of a goal's logs folder (`events/`), or of the goal's folder while it has none (a goal
 * an older LoopX wrote, not migrated yet): git changes either when a pull changes a log.
 */
export function logsFolderStamp(logsDir: string, now = Date.now()): string | undefined {
  return folderStamp(logsDir, now) ?? folderStamp(path.dirname(logsDir), now);
}

/** What listing needs from the store. */
export interface GoalListSource {
  indexFile: string;
  /** The fingerprint of the keys pinned now. */
  trust: string;
  goalIds: string[];
  logsDir(goalId: string): string;
  stateOf(goalId: string): GoalState;
  withIndexLock<T>(fn: () => T): T;
  /** Make every entry again, from the goals. */
  rebuild?: boolean;
}

/**
 * The goal list: each goal's index entry while its logs folder is unchanged since the entry was
 * made, else an entry made from the goal itself; the index is brought up to date when it was not
 * (best effort: a read-only checkout or a busy lock leaves it as it was, the list is right anyway).
 * An index made under other pinned keys, or a rebuild, is made again in full under the index lock,
 * as commits update their entry under it: a commit cannot land between a goal's read and the write.
 */
export function listGoalEntries(src: GoalListSource): {
  goals: IndexEntry[];
  errors: { goalId: string; message: string }[];
} {
  const shown = (l: { goals: StoredEntry[]; errors: { goalId: string; message: string }[] }) => ({
    goals: l.goals.map(shownEntry),
    errors: l.errors,
  });
  // Stamped before reading: a change made while the goal is read leaves the stamp behind.
  const fresh = (id: string): StoredEntry => {
    const logs = logsFolderStamp(src.logsDir(id));
    return { ...indexEntryOf(src.stateOf(id)), logs };
  };
  const index = readIndexFile(src.indexFile);
  if (src.rebuild || index.trust !== src.trust) {
    const rebuild = () => {
      const list = collectIndexEntries(src.goalIds, fresh);
      writeIndexFile(src.indexFile, list.goals, src.trust);
      return list;
    };
    if (src.rebuild) return shown(src.withIndexLock(rebuild));
    try {
      return shown(src.withIndexLock(rebuild));
    } catch {
      return shown(collectIndexEntries(src.goalIds, fresh));
    }
  }
  const seen = new Map(index.goals.map((e) => [e.id, e]));
  const ids = new Set(src.goalIds);
  let changed = index.goals.some((e) => !ids.has(e.id));
  const list = collectIndexEntries(src.goalIds, (id): StoredEntry => {
    const known = seen.get(id);
    if (known && stampSettled(known.logs) && sameFolderTime(logsFolderStamp(src.logsDir(id), 0), known.logs))
      return known;
    const entry = fresh(id);
    // Right already, and not settled yet when recorded: written again only once the new stamp
    // is settled, so that from then on the entry is trusted without reading the goal.
    const same =
      known !== undefined &&
      sameFolderTime(known.logs, entry.logs) &&
      JSON.stringify(shownEntry(known)) === JSON.stringify(shownEntry(entry));
    if (!same || stampSettled(entry.logs)) changed = true;
    return same && !stampSettled(entry.logs) ? known : entry;
  });
  if (changed) {
    try {
      src.withIndexLock(() => keepNewer(src.indexFile, list.goals, seen, src.trust));
    } catch {
      /* not written: the list is made from the goals all the same */
    }
  }
  return shown(list);
}

/**
 * Writes `goals` as the index, except where an entry changed in the file since it was read as
 * `seen` (a commit updated it meanwhile, under the lock the caller holds now): that one is newer.
 */
function keepNewer(file: string, goals: StoredEntry[], seen: Map<string, StoredEntry>, trust: string): void {
  const now = readIndexFile(file);
  if (now.trust !== trust) return; // made under other keys meanwhile: the next listing rebuilds it
  const current = new Map(now.goals.map((e) => [e.id, e]));
  const movedOn = (cur: StoredEntry) => JSON.stringify(cur) !== JSON.stringify(seen.get(cur.id));
  const out = goals.map((e) => {
    const cur = current.get(e.id);
    return cur && movedOn(cur) ? cur : e;
  });
  // A goal created meanwhile (its entry new since the read) stays listed.
  const listed = new Set(goals.map((e) => e.id));
  for (const cur of now.goals) if (!listed.has(cur.id) && movedOn(cur)) out.push(cur);
  writeIndexFile(file, out, trust);
}
