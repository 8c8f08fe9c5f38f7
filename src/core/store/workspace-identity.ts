/**
 * The workspace's identity: made once (by `loopx init`, or by the first signature in a workspace
 * an older LoopX made), committed in `.loopx/workspace.json`, so every clone has the same one. A
 * person's signature names it: a decision or policy copied from another workspace's `.loopx/`
 * verifies nowhere but where it was made.
 *
 * Each clone pins the identity it first saw, in its folder of the user's config. A workspace.json
 * replaced later (another workspace's identity, pushed so that that workspace's decisions would
 * count here) changes nothing on a clone that pinned the old one: it keeps its identity and says
 * why until a person removes the pin.
 */
import { randomBytes } from 'node:crypto';
import * as path from 'node:path';
import { z } from 'zod';
import { lazy } from '../model';
import { ensurePrivateDir } from './config-dir';
import { createFileOnce } from './json-file';
import { readStoreFile, storePathExists } from './safe-path';

export const IDENTITY_FILE = 'workspace.json';
const PIN_FILE = 'workspace-identity';
const ID_SHAPE = /^ws_[0-9a-f]{32}$/;

const IdentityFile = lazy(() => z.strictObject({ v: z.literal(1), id: z.string().regex(ID_SHAPE) }));

export interface WorkspaceIdentity {
  /** The identity signatures here name: the pinned one, else the committed one; none before init. */
  id?: string;
  /** Why the committed identity is not the one in force (replaced, unreadable), if it is not. */
  problem?: string;
  /** This clone has pinned it. */
  pinned?: boolean;
}

/** The identity in `.loopx/workspace.json`, or why there is none usable. */
function committedIdentity(file: string): { id?: string; problem?: string } {
  if (!storePathExists(file)) return {};
  try {
    const r = IdentityFile.safeParse(JSON.parse(readStoreFile(file, 'utf8')));
    if (r.success) return { id: r.data.id };
    return { problem: `${file} is not a workspace identity (${r.error.issues[0]?.message ?? 'invalid'})` };
  } catch (e) {
    return { problem: `${file} cannot be read (${(e as Error).message})` };
  }
}

function readPin(file: string): string | undefined {
  if (!storePathExists(file)) return undefined;
  const text = readStoreFile(file, 'utf8').trim();
  return ID_SHAPE.test(text) ? text : undefined;
}

/**
 * The identity in force for the workspace whose `.loopx/` is `loopxRoot`: the one this clone
 * pinned in `secretsDir`, else the committed one. Reading writes nothing (see pinWorkspaceIdentity).
 */
export function readWorkspaceIdentity(loopxRoot: string, secretsDir: string): WorkspaceIdentity {
  const file = path.join(loopxRoot, IDENTITY_FILE);
  const pinFile = path.join(secretsDir, PIN_FILE);
  const committed = committedIdentity(file);
  const pinned = readPin(pinFile);
  if (pinned) {
    if (committed.id === pinned) return { id: pinned, pinned: true };
    return {
      id: pinned,
      pinned: true,
      problem:
        `${committed.problem ?? `.loopx/${IDENTITY_FILE} names workspace ${committed.id ?? '(none)'}`}, but this clone ` +
        `first knew the workspace as ${pinned}: LoopX keeps ${pinned}, so decisions signed for another ` +
        `workspace have no effect here. If the change is right (the workspace was made anew), delete ${pinFile}`,
    };
  }
  return committed;
}

/** Pins the committed identity on this clone, the first time the clone writes (see the header). */
export function pinWorkspaceIdentity(loopxRoot: string, secretsDir: string): WorkspaceIdentity {
  const now = readWorkspaceIdentity(loopxRoot, secretsDir);
  if (now.pinned || !now.id) return now;
  ensurePrivateDir(secretsDir);
  createFileOnce(path.join(secretsDir, PIN_FILE), `${now.id}\n`);
  return readWorkspaceIdentity(loopxRoot, secretsDir);
}

/** Makes the workspace's identity if it has none yet (init, a first signature); returns the one in force. */
export function ensureWorkspaceIdentity(loopxRoot: string, secretsDir: string): WorkspaceIdentity {
  const file = path.join(loopxRoot, IDENTITY_FILE);
  if (!storePathExists(file)) {
    const id = `ws_${randomBytes(16).toString('hex')}`;
    createFileOnce(file, `${JSON.stringify({ v: 1, id }, null, 2)}\n`);
  }
  return pinWorkspaceIdentity(loopxRoot, secretsDir);
}
