/**
 * A goal's logs on disk: one per writer (clone) under `events/`, plus the single `events.jsonl`
 * an older LoopX wrote, read as one more log until it is migrated. Two clones never write the
 * same file, so git merges a goal without a conflict.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { LoopxError } from '../model';
import { corrupt, ID_PATTERN, notFound } from '../model';
import type { ParsedLog } from './event-log';
import { lastLineMatches, parseLog } from './event-log';
import { fileStamp } from './file-stamp';
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

/** Whether the line of `log` that ends at byte `end` hashes to `hash` (a line a clone read before is still there). */
export function lineEndsAt(log: LogFile, end: number, hash: string | null): boolean {
  const fd = openStoreFile(log.file, 'r');
  try {
    return lastLineMatches(fd, end, hash);
  } finally {
    fs.closeSync(fd);
  }
}

/** A log open for reading: its descriptor and size. */
export interface OpenLog extends LogFile {
  fd: number;
  size: number;
}

/** Opens every log (all or none: a failure closes those already open). */
export function openLogFiles(files: LogFile[]): OpenLog[] {
  const open: OpenLog[] = [];
  try {
    for (const f of files) {
      const fd = openStoreFile(f.file, 'r');
      const l: OpenLog = { ...f, fd, size: 0 };
      open.push(l);
      l.size = fs.fstatSync(fd).size;
    }
  } catch (e) {
    closeLogFiles(open);
    throw e;
  }
  return open;
}

export function closeLogFiles(open: OpenLog[]): void {
  for (const l of open) fs.closeSync(l.fd);
}

/** What changes when any of the logs changes (for callers that poll): each log's file stamp. */
export const logsStamp = (files: LogFile[]): string =>
  files.map((f) => `${f.name}=${fileStamp(f.file)}`).join(',');

/** The error for a goal with no log: corrupt when its folder is there, else not found. */
export function missingGoal(root: string, goalDir: string, goalId: string): LoopxError {
  if (storePathExists(goalDir)) {
    return corrupt(`goal ${goalId}: its folder has no event log (${logsDir(goalDir)} holds none)`, {
      goalId,
    });
  }
  return notFound(`no goal ${JSON.stringify(goalId)} in ${root}`, { goalId });
}
