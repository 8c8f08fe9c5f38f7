/**
 * Writes that land whole or not at all. `write(2)` may write less than it was given (a disk that
 * fills part-way, a file size limit) and report the rest only on the next call: every write here
 * goes on until all bytes are written, and an append that stops short is cut back to where it
 * started before the error is reported, so no caller is ever told bytes are stored that are not.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LoopxError } from '../model';

/** Writes all of `buf` at `position` (undefined: the descriptor's own offset, or the end for O_APPEND). */
export function writeAll(fd: number, buf: Buffer, position?: number): void {
  let done = 0;
  while (done < buf.length) {
    const at = position === undefined ? null : position + done;
    const n = fs.writeSync(fd, buf, done, buf.length - done, at);
    // A write that makes no progress would loop for ever; the kernel reports why on the next one.
    if (n === 0) throw Object.assign(new Error('write made no progress'), { code: 'EIO' });
    done += n;
  }
}

/** The bytes free for an unprivileged writer on the file system of `file`, when it can be asked. */
function freeBytes(file: string): number | undefined {
  try {
    const s = fs.statfsSync(path.dirname(file));
    return s.bavail * s.bsize;
  } catch {
    return undefined;
  }
}

const kib = (n: number) => (n < 10 * 1024 ? `${n} bytes` : `${Math.ceil(n / 1024)} KiB`);

/**
 * The error of a write to `file` the disk refused (`needed` bytes were to be written): names the
 * file and the space, with a reason code callers branch on. Anything not a storage failure is
 * returned as it is.
 */
export function storageError(
  e: unknown,
  file: string,
  needed: number,
  what = 'nothing was written',
): unknown {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOSPC' || code === 'EDQUOT') {
    const free = freeBytes(file);
    return new LoopxError(
      'storage',
      `${file}: the disk is full (${code}): ${kib(needed)} are needed` +
        (free === undefined ? '' : `, ${kib(free)} are free`) +
        `; ${what}. Free some space and run the command again`,
      { reason: 'disk_full', file, needed, free, code },
    );
  }
  if (code === 'EFBIG')
    return new LoopxError(
      'storage',
      `${file}: the file may not grow by ${kib(needed)} (EFBIG: a file size limit, \`ulimit -f\`?); ${what}`,
      { reason: 'file_too_large', file, needed, code },
    );
  if (code === 'EIO' || code === 'EROFS')
    return new LoopxError('storage', `${file}: the disk refused the write (${code}); ${what}`, {
      reason: 'write_failed',
      file,
      needed,
      code,
    });
  return e;
}

/**
 * Appends `chunk` to the file open as `fd` (O_APPEND), which is `startsAt` bytes long: all of it,
 * or, when the disk refuses part, none of it (cut back to `startsAt`, synced) and a storage error.
 * The caller holds the file's lock, so nobody else writes after `startsAt` meanwhile.
 */
export function appendWhole(fd: number, file: string, chunk: Buffer, startsAt: number): void {
  try {
    writeAll(fd, chunk);
  } catch (e) {
    const cut = cutBack(fd, startsAt);
    throw storageError(
      e,
      file,
      chunk.length,
      cut
        ? 'nothing was written (the part that fitted was cut off again)'
        : 'part of it may be at the end of the file, as an incomplete line that is never read',
    );
  }
}

/** Cuts the file open as `fd` back to `length` bytes, synced: whether that worked. */
export function cutBack(fd: number, length: number): boolean {
  try {
    fs.ftruncateSync(fd, length);
    fs.fsyncSync(fd);
    return true;
  } catch {
    return false;
  }
}

/**
 * Makes a new file's name durable: its folder is fsync'd (and the folders made for it, up to
 * `upTo`), so a crash cannot leave the file's data on disk but the file missing.
 */
export function syncFolders(file: string, upTo: string): void {
  let dir = path.dirname(file);
  for (;;) {
    let fd: number | undefined;
    try {
      fd = fs.openSync(dir, 'r');
      fs.fsyncSync(fd);
    } catch {
      // Some file systems do not sync folders (EINVAL); the data itself is synced.
    } finally {
      if (fd !== undefined) fs.closeSync(fd);
    }
    if (dir === upTo || path.dirname(dir) === dir || !dir.startsWith(upTo)) return;
    dir = path.dirname(dir);
  }
}
