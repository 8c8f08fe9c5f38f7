/**
 * The store never follows a symbolic link under `.loopx/`. A link there could send an append, an
 * artifact or a snapshot outside the workspace, or (a committed `local` link) make every clone
 * sign with a key from the repository. So every file the store opens, reads, writes or creates
 * under `.loopx/` goes through this module: each path component from `.loopx` itself down to the
 * file is checked with `lstat` and refused when it is a link, and the file itself is opened with
 * `O_NOFOLLOW`, so a link put in place between the check and the open is refused too.
 *
 * The `.loopx` folder a path belongs to is its last path segment named `.loopx` (no id, file or
 * folder name below it can be `.loopx`: ids start with a letter or a digit). Paths outside any
 * `.loopx` (the user's config folder) get the `O_NOFOLLOW` open and the file checks only.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { refused } from '../model';

/** The store's folder in a workspace (store/workspace.ts re-exports it). */
export const LOOPX_DIR = '.loopx';

/** Reason codes of the refusals (LoopxError details.reason). */
const SYMLINK_REASON = 'store_symlink';
const NOT_PLAIN_REASON = 'store_not_plain';

const O_NOFOLLOW = fs.constants.O_NOFOLLOW ?? 0;
const { O_RDONLY, O_WRONLY, O_RDWR, O_CREAT, O_EXCL, O_APPEND, O_TRUNC } = fs.constants;

/** open(2) flags for the few modes the store uses, always with O_NOFOLLOW. */
const FLAGS = {
  r: O_RDONLY,
  'r+': O_RDWR,
  a: O_WRONLY | O_CREAT | O_APPEND,
  w: O_WRONLY | O_CREAT | O_TRUNC,
  wx: O_WRONLY | O_CREAT | O_EXCL,
} as const;
export type OpenMode = keyof typeof FLAGS;

function linkRefused(p: string) {
  const local = path.basename(p) === 'local' && path.basename(path.dirname(p)) === LOOPX_DIR;
  return refused(
    `${p} is a symbolic link: LoopX never follows a link inside ${LOOPX_DIR}/ ` +
      (local
        ? '(a linked local/ would share this clone’s writer id and locks with wherever it points). Remove the link; LoopX makes a real local/ folder on next use'
        : '(it could point outside the workspace). Remove the link and put a real file or folder there (or restore it from git)'),
    { reason: SYMLINK_REASON, path: p },
  );
}

function notRegular(p: string) {
  return refused(`${p} is not a regular file: LoopX reads and writes only plain files in ${LOOPX_DIR}/`, {
    reason: NOT_PLAIN_REASON,
    path: p,
  });
}

function notFolder(p: string) {
  return refused(`${p} is not a folder`, { reason: NOT_PLAIN_REASON, path: p });
}

/** Where checking starts: the `.loopx` folder `abs` is in (or is), else undefined. */
function storeRootOf(abs: string): string | undefined {
  const parts = abs.split(path.sep);
  const i = parts.lastIndexOf(LOOPX_DIR);
  return i < 0 ? undefined : parts.slice(0, i + 1).join(path.sep) || path.sep;
}

/** Folders under `.loopx` found to be real folders since the call began or last waited. */
let checkedFolders: Set<string> | undefined;

/**
 * Runs one call (`invoke`) with its folder checks shared: a folder found to be a real folder is
 * not looked at again until the call ends or waits (`forgetCheckedFolders`). A commit opens a
 * dozen files under the same four folders, and checking each again was a quarter of its system
 * calls. The window this leaves is the one every check already has: a folder is checked before
 * the open that follows, so a link swapped in between is followed either way; only the file
 * itself is opened with O_NOFOLLOW, and it is still checked every time.
 */
export function withFolderChecksShared<T>(fn: () => T): T {
  if (checkedFolders) return fn();
  checkedFolders = new Set();
  try {
    return fn();
  } finally {
    checkedFolders = undefined;
  }
}

/** Every folder is checked again from now on: called before a call sleeps (waiting for a lock). */
export function forgetCheckedFolders(): void {
  checkedFolders?.clear();
}

/**
 * `lstat` of a file or folder, undefined when missing. Under `.loopx` every component from the
 * `.loopx` folder down to `p` is checked and a link refused (checking stops at the first that
 * does not exist); outside it (the user's config folder) only `p` itself is.
 */
export function lstatStore(p: string): fs.Stats | undefined {
  const abs = path.resolve(p);
  const root = storeRootOf(abs);
  if (root !== undefined) {
    let cur = root;
    const rest = path.relative(root, abs);
    const parts = rest ? rest.split(path.sep) : [];
    for (let i = -1; i < parts.length; i++) {
      if (i >= 0) cur = path.join(cur, parts[i]!);
      if (cur !== abs && checkedFolders?.has(cur)) continue;
      let st: fs.Stats;
      try {
        st = fs.lstatSync(cur);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT' || (e as NodeJS.ErrnoException).code === 'ENOTDIR')
          return undefined;
        throw e;
      }
      if (st.isSymbolicLink()) throw linkRefused(cur);
      if (cur === abs) return st;
      if (checkedFolders && st.isDirectory()) checkedFolders.add(cur);
    }
    return undefined;
  }
  try {
    const st = fs.lstatSync(abs);
    if (st.isSymbolicLink()) throw linkRefused(abs);
    return st;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

/** Whether `p` exists (as a file or folder, never as a link): see `lstatStore`. */
export function storePathExists(p: string): boolean {
  return lstatStore(p) !== undefined;
}

/**
 * Opens `file` without following a link: its folders are checked, the file itself is opened with
 * O_NOFOLLOW (a link there fails with ELOOP, reported as the refusal). Reading opens only a
 * regular file (a FIFO would block forever).
 */
export function openStoreFile(file: string, mode: OpenMode, perm = 0o644): number {
  const st = lstatStore(file);
  if (st && !st.isFile()) throw notRegular(file);
  try {
    return fs.openSync(file, FLAGS[mode] | O_NOFOLLOW, perm);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ELOOP') throw linkRefused(file);
    throw e;
  }
}

/** Reads a whole file under `.loopx` (see `openStoreFile`). */
export function readStoreFile(file: string): Buffer;
export function readStoreFile(file: string, encoding: BufferEncoding): string;
export function readStoreFile(file: string, encoding?: BufferEncoding): Buffer | string {
  const fd = openStoreFile(file, 'r');
  try {
    const buf = fs.readFileSync(fd);
    return encoding ? buf.toString(encoding) : buf;
  } finally {
    fs.closeSync(fd);
  }
}

/** Writes a whole file under `.loopx` (`w`: create or replace the content; `wx`: only create). */
export function writeStoreFile(
  file: string,
  content: string | Buffer,
  opts: { mode?: number; flag?: 'w' | 'wx' } = {},
): void {
  const fd = openStoreFile(file, opts.flag ?? 'w', opts.mode ?? 0o644);
  try {
    fs.writeFileSync(fd, content);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Creates folder `dir` and its missing parents (like `mkdir -p`), refusing when an existing one
 * below `.loopx` is a link. Returns the first folder it created, like `fs.mkdirSync`.
 */
export function mkdirStore(dir: string, mode?: number): string | undefined {
  const st = lstatStore(dir);
  if (st) {
    if (!st.isDirectory()) throw notFolder(dir);
    return undefined;
  }
  const made = fs.mkdirSync(dir, { recursive: true, mode });
  // A link planted between the check and the mkdir would have been followed: look again.
  lstatStore(dir);
  return made;
}

/** The names in a folder under `.loopx` (refuses a linked folder; [] when it does not exist). */
export function readdirStore(dir: string): string[] {
  const st = lstatStore(dir);
  if (!st) return [];
  if (!st.isDirectory()) throw notFolder(dir);
  return fs.readdirSync(dir);
}
