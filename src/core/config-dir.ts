/**
 * The user's LoopX config folder, outside every workspace: the person's encrypted terminal keys,
 * the approver keys they pinned, and each workspace's secrets (contract-signing key, snapshot
 * key, status server token). An agent that edits the workspace finds no secret there.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { sha256 } from './jsonfile';

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
