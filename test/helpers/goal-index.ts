/**
 * The goal index as tests look at it: `index.json` with its journal (`index.log`, where commits
 * append their entries) applied, as LoopX reads it.
 */
import * as fs from 'node:fs';
import { indexJournal, readIndexFile, writeIndexFile } from '../../src/core/store/goal-index';
import type { GoalIndex } from '../../src/core/store/goal-index';
import type { Store } from '../../src/core/store/store';

/** The index as LoopX reads it. */
export const readIndex = (store: Store): GoalIndex => readIndexFile(store.indexPath);

/** Every byte of the index (the file and its journal), to show that nothing rewrote it. */
export function indexBytes(store: Store): string {
  const read = (f: string) => (fs.existsSync(f) ? fs.readFileSync(f, 'utf8') : '(none)');
  return `${read(store.indexPath)}\n--- journal\n${read(indexJournal(store.indexPath))}`;
}

/**
 * Replaces the index by hand, as a person or a stray tool would: `index.json` alone, no journal.
 * Text is written as it is; an index (as `readIndex` gives it) in the current format.
 */
export function writeIndex(store: Store, content: string | GoalIndex): void {
  if (typeof content !== 'string') return writeIndexFile(store.indexPath, content.goals, content.trust);
  fs.writeFileSync(store.indexPath, content);
  fs.rmSync(indexJournal(store.indexPath), { force: true });
}

/** Removes the index and its journal, as a clean of `local/cache/` would. */
export function removeIndex(store: Store): void {
  for (const f of [store.indexPath, indexJournal(store.indexPath)]) fs.rmSync(f, { force: true });
}
