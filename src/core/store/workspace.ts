/** Where a LoopX workspace is and what `loopx init` puts in it. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DEFAULT_POLICY } from '../model';
import { writeJsonAtomic } from './json-file';
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

/**
 * Lines `init` makes sure `.loopx/.gitignore` holds. `local`, not `local/`: the pattern with a
 * slash matches only a folder, not a link named local. The other two are the caches an older
 * LoopX kept beside the logs: never commit them either.
 */
export const GITIGNORE_LINES = ['local', '/index.json', 'goals/*/goal.json'];

/**
 * Lines `init` makes sure `.loopx/.gitattributes` holds: the logs are hash-chained, so git must
 * keep their bytes exactly as written (no end-of-line conversion on any platform).
 */
export const GITATTRIBUTES_LINES = ['*.jsonl -text'];

/** Adds to `file` each of `lines` it lacks, keeping what is there. */
function ensureLines(file: string, header: string, lines: string[]): void {
  const text = storePathExists(file) ? readStoreFile(file, 'utf8') : '';
  const have = new Set(text.split(/\r?\n/).map((l) => l.trim()));
  const missing = lines.filter((l) => !have.has(l) && !(l === 'local' && have.has('/local')));
  if (missing.length === 0) return;
  const start = text === '' ? `${header}\n` : text.endsWith('\n') ? text : `${text}\n`;
  writeStoreFile(file, `${start}${missing.join('\n')}\n`);
}

/**
 * The `.gitignore` and `.gitattributes` lines of `.loopx/` (init, and the migration of an older
 * store). Committed with .loopx/, so a fresh clone ignores local before anything is written there.
 */
export function ensureGitFiles(root: string): void {
  ensureLines(
    path.join(root, '.gitignore'),
    '# Written by loopx init: machine-local files.',
    GITIGNORE_LINES,
  );
  ensureLines(
    path.join(root, '.gitattributes'),
    '# Written by loopx init: the event logs are hash-chained; keep their bytes as written.',
    GITATTRIBUTES_LINES,
  );
}

/** Creates the `.loopx/` layout at `root`, keeping whatever is already there. */
export function initLayout(root: string, files: { localDir: string; policy: string }): void {
  mkdirStore(path.join(root, 'goals'));
  ensureLocalDir(files.localDir);
  ensureGitFiles(root);
  for (const name of LEGACY_LOCAL_SECRETS) fs.rmSync(path.join(files.localDir, name), { force: true });
  // The goal index an older LoopX kept here; it now lives in local/cache.
  fs.rmSync(path.join(root, 'index.json'), { force: true });
  if (!storePathExists(files.policy)) writeJsonAtomic(files.policy, DEFAULT_POLICY);
}
