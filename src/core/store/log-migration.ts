/**
 * Moving a goal written by an older LoopX (one `events.jsonl`, shared by every clone, so git
 * conflicted on it) to per-writer logs: the old log becomes the head of this writer's log, byte
 * for byte, chain intact, followed by a `log.migrated` event. Two clones that migrate the same
 * old log each hold a copy of its events; replay counts each event once (rules/merge-order.ts).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { EventDraft } from '../model';
import { draft } from '../model';
import type { WriterHead } from './event-log';
import { writeFileAtomic } from './json-file';
import { mkdirStore, readStoreFile } from './safe-path';

export interface LegacyLog {
  goalDir: string;
  /** The old `events.jsonl`. */
  legacy: string;
  /** This writer's log. */
  own: string;
  /** Where the old log's complete lines end. */
  head: WriterHead;
  ownExists: boolean;
}

/** The old log's files a migration leaves behind: the log itself and its snapshot. */
function removeLegacy(l: LegacyLog): void {
  fs.rmSync(l.legacy, { force: true });
  fs.rmSync(path.join(l.goalDir, 'goal.json'), { force: true });
}

/**
 * Under the goal lock. When this writer has no log yet, its log starts as a copy of the old one
 * (the complete lines only: a torn tail stays in the old file, which is then kept) and the draft
 * records it; `apply` makes the copy, called only once the write is not refused. When this writer's log already starts with the old log (a migration cut short), the
 * old file only needs removing. Otherwise the old log holds events this writer's does not (an
 * older LoopX on another clone still writes it): it stays, and replay reads it as one more log.
 */
export function migrateLegacyLog(l: LegacyLog): {
  draft?: EventDraft;
  apply?: () => void;
  cleanup?: () => void;
} {
  const old = readStoreFile(l.legacy);
  const complete = old.subarray(0, l.head.bytes);
  const torn = old.length > complete.length;
  if (!l.ownExists) {
    return {
      apply: () => {
        mkdirStore(path.dirname(l.own));
        // The temp file's name is no log's (`<id>.jsonl`): a crash leaves nothing replay reads.
        writeFileAtomic(l.own, complete, 0o644, true);
      },
      draft: draft('log.migrated', {
        from: 'events.jsonl',
        events: l.head.seq,
        lastHash: l.head.lastHash,
      }),
      cleanup: torn ? undefined : () => removeLegacy(l),
    };
  }
  const mine = readStoreFile(l.own);
  if (!torn && mine.length >= complete.length && mine.subarray(0, complete.length).equals(complete))
    return { cleanup: () => removeLegacy(l) };
  return {};
}
