/** What changes whenever a file is rewritten or appended to, for callers that poll for changes. */
import * as fs from 'node:fs';

/** Inode, size and mtime: an atomic rename gives a new inode, an append a new size. */
export function fileStamp(file: string): string {
  try {
    const st = fs.statSync(file);
    return `${st.ino}:${st.size}:${st.mtimeMs}`;
  } catch {
    return 'missing';
  }
}

/**
 * A folder's stamp, as recorded at `now`: its mtime in ns (git changes it whenever a pull, a
 * checkout or a rebase adds, replaces or removes a file in it) and when it was taken.
 */
export function folderStamp(dir: string, now = Date.now()): string | undefined {
  try {
    return `${fs.lstatSync(dir, { bigint: true }).mtimeNs}@${now}`;
  } catch {
    return undefined;
  }
}

/** File systems stamp times coarsely: a change this soon after a stamp may not have moved the mtime. */
const STAMP_SETTLE_MS = 2000;

/** Whether two folder stamps name the same folder time (taken at any moment). */
export function sameFolderTime(a: string | undefined, b: string | undefined): boolean {
  return a !== undefined && b !== undefined && a.split('@')[0] === b.split('@')[0];
}

/**
 * Whether a folder stamp was taken long enough after the folder's last change to prove anything.
 * One taken "in the future" (by a process whose clock was ahead, or an index restored from
 * elsewhere) proves nothing: it would vouch for a change made after it.
 */
export function stampSettled(recorded: string | undefined, now = Date.now()): boolean {
  const [, mtimeNs = '', at = ''] = /^(\d{1,30})@(\d{1,16})$/.exec(recorded ?? '') ?? [];
  return (
    mtimeNs !== '' &&
    Number(at) <= now &&
    Number(at) - Number(BigInt(mtimeNs) / 1_000_000n) >= STAMP_SETTLE_MS
  );
}
