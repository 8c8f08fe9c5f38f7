/**
 * `.loopx/local/`: what belongs to this clone of the workspace and never reaches git: the writer
 * id, locks and caches (contract pointers). The secrets (contract and snapshot keys, the status
 * server token) are kept outside the workspace, in the user's config folder (store/config-dir.ts), made
 * once like the writer id (`createFileOnce`).
 */
import * as path from 'node:path';
import { corrupt, ID_PATTERN, ID_RULE, newId } from '../model';
import { createFileOnce } from './json-file';
import { mkdirStore, readStoreFile, storePathExists, writeStoreFile } from './safe-path';

const LOCAL_GITIGNORE = '# Machine-local: writer id, locks, caches. Never commit.\n*\n';

/** Creates `dir` (0700) with its own `.gitignore`: the writer id, locks and caches never reach git. */
export function ensureLocalDir(dir: string): string {
  mkdirStore(dir, 0o700);
  const ignore = path.join(dir, '.gitignore');
  if (!storePathExists(ignore)) {
    try {
      writeStoreFile(ignore, LOCAL_GITIGNORE, { flag: 'wx' });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
  }
  return dir;
}

/** The folder of the locks in `localDir`. */
export const locksDir = (localDir: string) => path.join(localDir, 'locks');

/** The path of lock `name` in `localDir`, creating the locks folder on first use. */
export function lockFile(localDir: string, name: string): string {
  const dir = locksDir(localDir);
  if (!storePathExists(dir)) {
    ensureLocalDir(localDir);
    mkdirStore(dir, 0o700);
  }
  return path.join(dir, `${name}.lock`);
}

/** The clone's writer id, or undefined when it has written nothing yet (nothing is made). */
export function peekWriterId(localDir: string): string | undefined {
  try {
    const id = readStoreFile(path.join(localDir, 'writer-id'), 'utf8').trim();
    return ID_PATTERN.test(id) ? id : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The clone's writer id, made on first use. It names this clone's logs, so two clones must never
 * share one: `local/` is never committed, and a copied workspace should drop it (see README).
 */
export function readOrCreateWriterId(localDir: string): string {
  const file = path.join(localDir, 'writer-id');
  let id: string;
  try {
    id = readStoreFile(file, 'utf8').trim();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    ensureLocalDir(localDir);
    createFileOnce(file, newId('w', 12));
    id = readStoreFile(file, 'utf8').trim();
  }
  // A damaged file in local/ is a corrupt store (exit 6, naming the file), not a usage error.
  if (!ID_PATTERN.test(id)) {
    throw corrupt(`${file} does not hold a valid writer id (${ID_RULE}): delete it and a new one is made`, {
      file,
    });
  }
  return id;
}
