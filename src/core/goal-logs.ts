/**
 * A goal's logs on disk: one per writer (clone) under `events/`, plus the single `events.jsonl`
 * an older LoopX wrote, read as one more log until it is migrated. Two clones never write the
 * same file, so git merges a goal without a conflict.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ID_PATTERN } from './ids';
import { parseLog } from './event-log';
import type { ParsedLog } from './event-log';
import { openStoreFile, readdirStore, storePathExists } from './safe-path';

/** The file an older LoopX kept a goal's whole history in. */
export const LEGACY_LOG = 'events.jsonl';

export const logsDir = (goalDir: string) => path.join(goalDir, 'events');
export const writerLogPath = (goalDir: string, writer: string) =>
  path.join(logsDir(goalDir), `${writer}.jsonl`);

export interface LogFile {
  /** The writer id, or LEGACY_LOG for an older LoopX's log. */
  name: string;
  file: string;
}

const LOG_NAME = /^(.+)\.jsonl$/;

/** The goal's logs, sorted by name; files in `events/` not named `<writer id>.jsonl` are not logs. */
export function listLogFiles(goalDir: string): LogFile[] {
  const out: LogFile[] = [];
  const dir = logsDir(goalDir);
  for (const n of readdirStore(dir).sort()) {
    const m = LOG_NAME.exec(n);
    const writer = m?.[1];
    if (writer && ID_PATTERN.test(writer)) out.push({ name: writer, file: path.join(dir, n) });
  }
  const legacy = path.join(goalDir, LEGACY_LOG);
  if (storePathExists(legacy)) out.push({ name: LEGACY_LOG, file: legacy });
  return out;
}

/** The writer whose events a log holds (undefined for the legacy log, which names none). */
export const writerOf = (log: LogFile) => (log.name === LEGACY_LOG ? undefined : log.name);

/** Reads and checks one whole log. */
export function readLogFile(log: LogFile): ParsedLog {
  const fd = openStoreFile(log.file, 'r');
  try {
    return parseLog(fs.readFileSync(fd), log.file, writerOf(log));
  } finally {
    fs.closeSync(fd);
  }
}
