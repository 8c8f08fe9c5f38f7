/** Where a LoopX workspace is, what `loopx init` puts in it, and its hand-edited policy. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readJsonFile, writeJsonAtomic } from './jsonfile';
import { Policy, DEFAULT_POLICY } from './model';
import { writeIndexFile } from './goal-index';
import { ensureLocalDir } from './local-dir';
import { LOOPX_DIR, mkdirStore, readStoreFile, storePathExists, writeStoreFile } from './safe-path';

export { LOOPX_DIR };

/** Like git: the nearest folder at or above `start` that has a `.loopx/`. */
export function findWorkspace(start: string): string | undefined {
  let dir = path.resolve(start);
  for (;;) {
    if (fs.existsSync(path.join(dir, LOOPX_DIR, 'goals'))) return dir;
    const up = path.dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
}

/**
 * Secrets that older versions kept in `local/`. They now live in the user's config folder; the
 * old files are removed by `init` (an agent may have read them, so they are not carried over).
 */
export const LEGACY_LOCAL_SECRETS = ['contract-key', 'snapshot-key', 'status-token'] as const;

/** Creates the `.loopx/` layout at `root`, keeping whatever is already there. */
export function initLayout(root: string, files: { localDir: string; policy: string; index: string }): void {
  mkdirStore(path.join(root, 'goals'));
  ensureLocalDir(files.localDir);
  // Committed with .loopx/, so a fresh clone ignores local before anything is written there.
  // `local`, not `local/`: the pattern with a slash matches only a folder, not a link named local.
  const topIgnore = path.join(root, '.gitignore');
  if (!storePathExists(topIgnore)) writeStoreFile(topIgnore, 'local\n');
  else {
    const text = readStoreFile(topIgnore, 'utf8');
    if (!text.split(/\r?\n/).some((l) => l.trim() === 'local' || l.trim() === '/local')) {
      writeStoreFile(topIgnore, `${text}${text === '' || text.endsWith('\n') ? '' : '\n'}local\n`);
    }
  }
  for (const name of LEGACY_LOCAL_SECRETS) fs.rmSync(path.join(files.localDir, name), { force: true });
  if (!storePathExists(files.policy)) writeJsonAtomic(files.policy, DEFAULT_POLICY);
  if (!storePathExists(files.index)) writeIndexFile(files.index, []);
}

/** The workspace policy, the default when there is no policy file (a link there is refused). */
export function readPolicy(file: string): Policy {
  try {
    return readJsonFile(file, Policy);
  } catch (e) {
    // Missing, as `storePathExists` reads it: the file, or a folder on the way.
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return DEFAULT_POLICY;
    throw e;
  }
}
