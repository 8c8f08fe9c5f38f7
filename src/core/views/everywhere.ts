/**
 * The dashboard's "All workspaces" section: the machine-wide queue (views/needs-you-doc.ts) as the
 * page shows it, every item marked with whether its workspace is open in this window. Pure and
 * free of Node, so the editor and the browser's page build it the same way.
 */
import type { NeedsYouDoc, NeedsYouItem } from './needs-you-doc';

export interface EverywhereItem {
  /** The workspace's folder name and path. */
  workspace: string;
  folder: string;
  /** Its key in links (`/decide/<key>/<goal>/<gate>`). */
  key: string;
  /** The workspace is a folder of this window. */
  here: boolean;
  kind: NeedsYouItem['kind'];
  goal_id: string;
  goal: string;
  id: string;
  title: string;
  detail: string;
  requested_by?: string;
  commands?: string[];
  cli?: string;
}

export interface EverywhereSection {
  workspaces: { name: string; path: string; items: number; here: boolean; problem?: string }[];
  items: EverywhereItem[];
}

/**
 * The section, or undefined when it would add nothing to the window's own queue: no listed
 * workspace but the window's own folders.
 */
export function everywhereSection(
  doc: NeedsYouDoc,
  openHere: readonly string[],
): EverywhereSection | undefined {
  const here = new Set(openHere);
  if (doc.workspaces.every((w) => here.has(w.path))) return undefined;
  return {
    workspaces: doc.workspaces.map((w) => ({
      name: w.name,
      path: w.path,
      items: w.items,
      here: here.has(w.path),
      ...(w.problem ? { problem: w.problem } : {}),
    })),
    items: doc.items.map((i) => ({
      workspace: i.workspace.name,
      folder: i.workspace.path,
      key: i.workspace.key,
      here: here.has(i.workspace.path),
      kind: i.kind,
      goal_id: i.goal_id,
      goal: i.goal_title,
      id: i.id,
      title: i.title,
      detail: i.detail,
      ...(i.requested_by ? { requested_by: i.requested_by } : {}),
      ...(i.commands ? { commands: i.commands } : {}),
      ...(i.cli ? { cli: i.cli } : {}),
    })),
  };
}
