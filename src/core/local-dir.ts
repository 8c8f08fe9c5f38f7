/**
 * `.loopx/local/`: what belongs to this clone of the workspace and never reaches git: the writer
 * id, locks and caches (contract pointers). The secrets (contract and snapshot keys, the status
 * server token) are kept outside the workspace, in the user's config folder (Store.secret), with
 * the same create-once helper as the writer id.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { corrupt } from './errors';
import { ID_PATTERN, ID_RULE, checkId, newId } from './ids';
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

/**
 * Creates `file` with `content` unless it exists, atomically: the content is written to a temp
 * file first and hard-linked into place, so a concurrent reader never sees it half-written.
 */
function createOnce(file: string, content: string): void {
  const tmp = `${file}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  writeStoreFile(tmp, content, { mode: 0o600, flag: 'wx' });
  try {
    fs.linkSync(tmp, file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  } finally {
    fs.rmSync(tmp, { force: true });
  }
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

/** The clone's writer id, made on first use. */
export function readOrCreateWriterId(localDir: string): string {
  const file = path.join(localDir, 'writer-id');
  let id: string;
  try {
    id = readStoreFile(file, 'utf8').trim();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    ensureLocalDir(localDir);
    createOnce(file, newId('w', 12));
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

/**
 * Secret `name` of `bytes` random bytes, stored as hex in `dir` (mode 0600) and made on first use;
 * `ensureDir` creates `dir` first (a private folder outside the workspace: secrets never go in
 * `local/`).
 */
export function readOrCreateSecret(
  dir: string,
  name: string,
  bytes: number,
  ensureDir: (dir: string) => unknown,
): Buffer {
  const file = path.join(dir, checkId(name, 'secret name'));
  // A damaged key must not quietly become a short (or empty) one: anyone could sign with that.
  const read = () => {
    const text = readStoreFile(file, 'utf8').trim();
    if (!new RegExp(`^[0-9a-f]{${bytes * 2}}$`).test(text)) {
      throw corrupt(
        `${file} is not a valid key (expected ${bytes * 2} hex characters): delete it to make a new one (what the old key signed stops verifying)`,
        { file },
      );
    }
    return Buffer.from(text, 'hex');
  };
  if (storePathExists(file)) return read();
  ensureDir(dir);
  createOnce(file, randomBytes(bytes).toString('hex') + '\n');
  return read();
}
