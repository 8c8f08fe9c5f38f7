/**
 * Every workspace LoopX has touched on this machine, listed in the user's config folder
 * (`known-workspaces/<workspaceId>.json`: its path, identity and name), so that one queue can show what
 * needs the person across all of them. One file per workspace: processes of many workspaces
 * register at once without sharing a file, and a workspace registers with one `stat` a process.
 *
 * The list lives in the config folder, never in a workspace: a workspace cannot add another to
 * it, or name a folder that is not one. An entry whose folder no longer has a `.loopx/` is pruned
 * when the list is read.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { compareText, lazy, textProblem } from '../model';
import { ensurePrivateDir, workspaceId } from './config-dir';
import { fileDiffers, writeFileAtomic } from './json-file';
import { readStoreFile } from './safe-path';
import { LOOPX_DIR } from './workspace';

export const REGISTRY_DIR = 'known-workspaces';

const RegistryFile = lazy(() =>
  z.strictObject({
    v: z.literal(1),
    path: z.string().min(1).max(4096),
    identity: z
      .string()
      .regex(/^ws_[0-9a-f]{32}$/)
      .optional(),
    name: z.string().min(1).max(256),
    registeredAt: z.string().max(40),
  }),
);

/** One listed workspace. */
export interface RegisteredWorkspace {
  /** The workspace folder (absolute, real path). */
  path: string;
  /** Its identity (`.loopx/workspace.json`), once it has one. */
  identity?: string;
  /** What a person calls it: the folder's name. */
  name: string;
  registeredAt: string;
}

export const registryDir = (configDir: string) => path.join(configDir, REGISTRY_DIR);
const entryFile = (configDir: string, workspace: string) =>
  path.join(registryDir(configDir), `${workspaceId(workspace)}.json`);

function entryText(w: RegisteredWorkspace): string {
  return `${JSON.stringify({ v: 1, ...w }, null, 2)}\n`;
}

/**
 * Lists `workspace` (its real path) in the config folder, or updates its entry when its identity
 * changed. Returns whether it wrote. A read-only caller never calls this.
 */
export function registerWorkspace(
  configDir: string,
  workspace: string,
  identity: string | undefined,
  now: string,
): boolean {
  const real = fs.realpathSync(workspace);
  const file = entryFile(configDir, real);
  const existing = readEntry(file);
  const entry: RegisteredWorkspace = {
    path: real,
    ...(identity ? { identity } : {}),
    name: path.basename(real) || real,
    registeredAt: existing?.registeredAt ?? now,
  };
  const text = entryText(entry);
  if (!fileDiffers(file, text)) return false;
  ensurePrivateDir(registryDir(configDir));
  writeFileAtomic(file, text, 0o600);
  return true;
}

/** Whether `workspace` is listed (one `stat`: the cheap check a process makes before registering). */
export function isRegistered(configDir: string, workspace: string): boolean {
  return fs.existsSync(entryFile(configDir, workspace));
}

function readEntry(file: string): RegisteredWorkspace | undefined {
  try {
    const r = RegistryFile.safeParse(JSON.parse(readStoreFile(file, 'utf8')));
    if (!r.success || !path.isAbsolute(r.data.path) || textProblem(r.data.path) || textProblem(r.data.name))
      return undefined;
    const { v: _v, ...entry } = r.data;
    return entry;
  } catch {
    return undefined;
  }
}

export interface WorkspaceList {
  workspaces: RegisteredWorkspace[];
  /** Entries removed because their folder has no `.loopx/` any more. */
  pruned: string[];
  /** Files in the registry that are not entries (named, left in place). */
  problems: string[];
}

/**
 * The listed workspaces, by name then path. Entries whose folder has no `.loopx/` are removed
 * (`prune`, the default) or only left out; an entry filed under another workspace's id (copied by
 * hand) is left out, so one folder is never listed twice.
 */
export function listWorkspaces(configDir: string, opts: { prune?: boolean } = {}): WorkspaceList {
  const dir = registryDir(configDir);
  let names: string[];
  try {
    names = fs.readdirSync(dir).filter((n) => n.endsWith('.json'));
  } catch {
    return { workspaces: [], pruned: [], problems: [] };
  }
  const out: WorkspaceList = { workspaces: [], pruned: [], problems: [] };
  for (const n of names.sort()) {
    const file = path.join(dir, n);
    const entry = readEntry(file);
    if (!entry || `${workspaceId(entry.path)}.json` !== n) {
      out.problems.push(
        `${file} is not a workspace entry: delete it, or open the workspace to list it again`,
      );
      continue;
    }
    if (!fs.existsSync(path.join(entry.path, LOOPX_DIR, 'goals'))) {
      out.pruned.push(entry.path);
      if (opts.prune !== false) fs.rmSync(file, { force: true });
      continue;
    }
    out.workspaces.push(entry);
  }
  out.workspaces.sort((a, b) => compareText(a.name, b.name) || compareText(a.path, b.path));
  return out;
}

/** Removes `workspace` from the list (its `.loopx/` is left alone); whether it was listed. */
export function forgetWorkspace(configDir: string, workspace: string): boolean {
  const file = entryFile(configDir, path.resolve(workspace));
  if (!fs.existsSync(file)) return false;
  fs.rmSync(file, { force: true });
  return true;
}
