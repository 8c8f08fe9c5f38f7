/**
 * The append itself: the one way lines reach a writer's log, whole or not at all, and the fsync
 * that acknowledges them (store/commit.ts calls both under the goal's lock).
 */
import * as fs from 'node:fs';
import { conflict } from '../model';
import { appendWhole, cutBack, storageError, syncFolders } from './disk-write';
import { openStoreFile } from './safe-path';

/** A chunk appended to a log and not yet fsync'd: the caller's fsync is the acknowledgement. */
export interface PendingAppend {
  fd: number;
  file: string;
  /** Where the chunk starts: the log's length before it. */
  startsAt: number;
  /** The file was made by this append: its folder must be synced too (`syncAppend`). */
  created: boolean;
}

/**
 * The one way lines reach a writer's log: `chunk` (whole lines) at its end, all of it or none
 * (store/disk-write.ts). The log must be `expectSize` bytes long, as the caller read it under the
 * goal's lock: if another process wrote to it since (a lock that did not exclude it), nothing is
 * written. `beforeWrite` learns the offset the chunk will start at, before anything is written
 * (group commit journals where each queued call's events go).
 */
export function appendToLog(
  file: string,
  chunk: Buffer,
  expectSize: number,
  beforeWrite?: (startsAt: number) => void,
): PendingAppend {
  const fd = openStoreFile(file, 'a', 0o644);
  try {
    const size = fs.fstatSync(fd).size;
    if (size !== expectSize)
      throw conflict(
        `${file} is ${size} bytes, not the ${expectSize} this call read under the goal's lock: ` +
          'another process wrote to it meanwhile; nothing was written, run the command again',
        { file, reason: 'log_moved' },
      );
    beforeWrite?.(size);
    appendWhole(fd, file, chunk, size);
    return { fd, file, startsAt: size, created: size === 0 };
  } catch (e) {
    fs.closeSync(fd);
    throw e;
  }
}

/**
 * Makes an append durable: fsyncs the log (and, for a new log, its folders up to `root`), then
 * closes it. An fsync that fails is reported as a storage error: the write is not acknowledged.
 * `held`: the caller still holds the goal's lock, so the chunk is cut off again (a failed fsync
 * may have lost it already, and a second fsync would not say so).
 */
export function syncAppend(pending: PendingAppend, root: string, held = false): void {
  try {
    fs.fsyncSync(pending.fd);
  } catch (e) {
    const cut = held && cutBack(pending.fd, pending.startsAt);
    throw storageError(
      e,
      pending.file,
      0,
      cut ? 'nothing was written (cut off again)' : 'the events may not be on disk; run the command again',
    );
  } finally {
    fs.closeSync(pending.fd);
  }
  if (pending.created) syncFolders(pending.file, root);
}
