/**
 * What the page keeps between messages, in one place, and the render figures the browser tests
 * read. The views read it; the message handlers, the selection and the views' own controls
 * (filter, toggles, sections) change it.
 */
import type { GoalMessage, StatusDoc, StatusMessage } from '../src/core/views/browser';
import { restoreSelection, type Selected } from './host';

export interface GoalItem {
  g: StatusDoc['goals'][number];
  folder?: string;
  folderName?: string;
  key: string;
}

/** Shows a goal's details; main.ts wires it, so every view selects the same way. */
export type SelectGoal = (goalId: string, folder?: string) => void;

interface PageState {
  status: StatusMessage | undefined;
  goal: GoalMessage | undefined;
  selected: Selected | undefined;
  items: GoalItem[];
  byKey: Map<string, GoalItem>;
  /** Indexes into `items`: the goals the filter lets through, in the order they are listed. */
  view: number[];
  filter: string;
  attentionExpanded: boolean;
  /** The details' collapsible sections left open, kept across re-renders. */
  readonly openSections: Set<string>;
  hostError: string | undefined;
}

export const state: PageState = {
  status: undefined,
  goal: undefined,
  selected: restoreSelection(),
  items: [],
  byKey: new Map(),
  view: [],
  filter: '',
  attentionExpanded: false,
  openSections: new Set(['runs']),
  hostError: undefined,
};

export interface RenderStats {
  /** Time to handle the first status message and lay the page out, in ms. */
  firstRenderMs: number | undefined;
  /** The same for the latest status message. */
  lastUpdateMs: number | undefined;
  /** Goal row elements in the DOM (the windowed list keeps this small). */
  rows: number;
  /** Goals in the last status message. */
  goals: number;
  /** Status messages rendered so far. */
  renders: number;
}
declare global {
  interface Window {
    __loopxRenderStats: RenderStats;
  }
}

export const stats: RenderStats = {
  firstRenderMs: undefined,
  lastUpdateMs: undefined,
  rows: 0,
  goals: 0,
  renders: 0,
};
window.__loopxRenderStats = stats;

export const keyOf = (goalId: string, folder?: string) => `${folder ?? ''}\0${goalId}`;

/** Whether this goal (of this folder) is the one selected. */
export function isSelected(goalId: string, folder?: string): boolean {
  const s = state.selected;
  return !!s && keyOf(s.goalId, s.folder) === keyOf(goalId, folder);
}

export function goalTitle(goalId: string, folder?: string): string {
  return state.byKey.get(keyOf(goalId, folder))?.g.title ?? goalId;
}

/** The name of the folder a goal lives in, when the page shows several folders. */
export function folderNameOf(goalId: string, folder?: string): string | undefined {
  return folder === undefined ? undefined : state.byKey.get(keyOf(goalId, folder))?.folderName;
}

const STATUS_RANK: Record<string, number> = { active: 0, paused: 1, completed: 2, closed: 3, cancelled: 4 };

export function rebuildItems(m: StatusMessage): void {
  const slices = m.folders ?? [];
  let s = 0;
  let left = slices[0]?.goals ?? Infinity;
  state.items = m.doc.goals.map((g) => {
    while (left <= 0 && s < slices.length - 1) left = slices[++s]!.goals;
    left--;
    const f = slices.length ? slices[s] : undefined;
    return { g, folder: f?.path, folderName: f?.name, key: keyOf(g.id, f?.path) };
  });
  state.byKey = new Map(state.items.map((it) => [it.key, it]));
  rebuildView();
}

export function rebuildView(): void {
  const { items, filter } = state;
  const idx = items
    .map((_, i) => i)
    .filter((i) => {
      if (!filter) return true;
      const g = items[i]!.g;
      return g.title.toLowerCase().includes(filter) || g.id.toLowerCase().includes(filter);
    });
  // What needs a person first: pending gates, then by status (active, paused, completed, closed).
  idx.sort((a, b) => {
    const x = items[a]!.g;
    const y = items[b]!.g;
    return (
      Number(y.pending_gates > 0) - Number(x.pending_gates > 0) ||
      (STATUS_RANK[x.status] ?? 9) - (STATUS_RANK[y.status] ?? 9) ||
      a - b
    );
  });
  state.view = idx;
}
