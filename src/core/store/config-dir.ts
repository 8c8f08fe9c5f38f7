/**
 * The user's LoopX config folder, outside every workspace: the person's encrypted terminal keys,
 * the approver keys they pinned, and each workspace's secrets (contract-signing key, snapshot
 * key, status server token). An agent that edits the workspace finds no secret there.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { checkId, corrupt } from '../model';
import { createFileOnce, sha256 } from './json-file';
import { readStoreFile, storePathExists } from './safe-path';

/** `LOOPX_CONFIG_DIR`, else `$XDG_CONFIG_HOME/loopx`, else `~/.config/loopx`. */
export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.LOOPX_CONFIG_DIR) return path.resolve(env.LOOPX_CONFIG_DIR);
  if (env.XDG_CONFIG_HOME) return path.join(path.resolve(env.XDG_CONFIG_HOME), 'loopx');
  return path.join(env.HOME || os.homedir(), '.config', 'loopx');
}

/**
 * A stable id for one workspace on this machine: a hash of its real path, so each clone has its
 * own secrets and nothing in the workspace can point LoopX at another workspace's.
 */
export function workspaceId(workspace: string): string {
  let real = path.resolve(workspace);
  try {
    real = fs.realpathSync(real);
  } catch {
    /* not created yet: the resolved path is what it will be */
  }
  return sha256(real).slice(0, 32);
}

/** Creates `dir` and its parents with mode 0700 (the config folder holds keys). */
export function ensurePrivateDir(dir: string): string {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

/**
 * Secret `name` of `bytes` random bytes, stored as hex in `dir` (file 0600) and made on first use,
 * with `dir` (0700): a workspace's folder in the config folder, never `local/` in the workspace.
 */
export function readOrCreateSecret(dir: string, name: string, bytes: number): Buffer {
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
  ensurePrivateDir(dir);
  fs.chmodSync(dir, 0o700);
  createFileOnce(file, randomBytes(bytes).toString('hex') + '\n');
  return read();
}
