/** Where a LoopX workspace is, what `loopx init` puts in it, and its hand-edited policy. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readJsonFile, writeJsonAtomic } from './jsonfile';
import { Policy, DEFAULT_POLICY } from './model';
import { writeIndexFile } from './goal-index';
import { ensureLocalDir } from './local-dir';

export const LOOPX_DIR = '.loopx';

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

/** Creates the `.loopx/` layout at `root`, keeping whatever is already there. */
export function initLayout(root: string, files: { localDir: string; policy: string; index: string }): void {
  fs.mkdirSync(path.join(root, 'goals'), { recursive: true });
  ensureLocalDir(files.localDir);
  // Committed with .loopx/, so a fresh clone ignores local/ before anything is written there.
  const topIgnore = path.join(root, '.gitignore');
  if (!fs.existsSync(topIgnore)) fs.writeFileSync(topIgnore, 'local/\n');
  if (!fs.existsSync(files.policy)) writeJsonAtomic(files.policy, DEFAULT_POLICY);
  if (!fs.existsSync(files.index)) writeIndexFile(files.index, []);
}

/** The workspace policy, the default when there is no policy file. */
export function readPolicy(file: string): Policy {
  if (!fs.existsSync(file)) return DEFAULT_POLICY;
  return readJsonFile(file, Policy);
}
