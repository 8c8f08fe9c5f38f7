/**
 * The LoopX dashboard webview: a read-only picture of the status documents the extension posts.
 *
 * - Every workspace string is rendered as text (text nodes, `textContent`, attribute values set
 *   with `setAttribute`); no data ever goes through `innerHTML`.
 * - Styles come from `media/dashboard.css` and the components' adopted style sheets; nothing sets
 *   a `style` attribute (the CSP allows no inline style), only CSSOM properties for layout.
 * - The only messages sent are `ready` and navigation intents (see src/core/protocol.ts).
 * - The goals list renders only the rows in view (fixed row height), so 1,000 goals cost what 20 do.
 */
import '@vscode-elements/elements/dist/vscode-badge/index.js';
import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-collapsible/index.js';
import '@vscode-elements/elements/dist/vscode-divider/index.js';
import '@vscode-elements/elements/dist/vscode-progress-bar/index.js';
import '@vscode-elements/elements/dist/vscode-progress-ring/index.js';
import '@vscode-elements/elements/dist/vscode-textfield/index.js';
import type { AttentionEntry, GoalMessage, HostMessage, Msg, StatusMessage } from '../src/core/protocol';
import type { GoalStatusDoc, StatusDoc } from '../src/core/status';

interface VsCodeApi {
  postMessage(msg: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

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

const vscode = acquireVsCodeApi();
const send = (msg: Msg) => vscode.postMessage(msg);

// -----------------------------------------------------------------------------------------------
// DOM helpers: text only

type Child = Node | string | number | null | undefined | false;
interface Props {
  class?: string;
  attrs?: Record<string, string | undefined>;
  title?: string;
  onClick?: () => void;
}

function setAttr(el: Element, name: string, value: string): void {
  // Handlers, inline styles and nested documents never come from here.
  if (/^(on|style$|srcdoc$|href$|src$)/i.test(name)) throw new Error(`refusing to set the ${name} attribute`);
  el.setAttribute(name, value);
}

function append(el: Node, children: readonly Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    el.appendChild(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
  }
}

function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props?: Props | null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (props?.class) el.className = props.class;
  if (props?.title) el.title = props.title;
  for (const [k, v] of Object.entries(props?.attrs ?? {})) if (v !== undefined) setAttr(el, k, v);
  if (props?.onClick) el.addEventListener('click', props.onClick);
  append(el, children);
  return el;
}

const SVG_NS = 'http://www.w3.org/2000/svg';
function svg(
  tag: string,
  attrs: Record<string, string | number | undefined> = {},
  ...children: Child[]
): SVGElement {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined) setAttr(el, k, String(v));
  append(el, children);
  return el;
}

function clear(el: Element): void {
  while (el.lastChild) el.removeChild(el.lastChild);
}

/** A badge in the theme's badge colours; `tone` adds a coloured dot (colour never carries text). */
function badge(text: string, cls = '', tone = ''): HTMLElement {
  const b = document.createElement('vscode-badge');
  if (cls) b.className = cls;
  if (tone) b.append(h('span', { class: `dot ${tone}`, attrs: { 'aria-hidden': 'true' } }));
  b.append(h('span', { class: 'badge-text' }, text));
  return b;
}
const badgeText = (b: HTMLElement) => b.querySelector('.badge-text') as HTMLElement;

const TONE: Record<string, string> = {
  active: 'tone-blue',
  paused: 'tone-yellow',
  completed: 'tone-green',
  closed: 'tone-grey',
  cancelled: 'tone-grey',
  succeeded: 'tone-green',
  failed: 'tone-red',
  partial: 'tone-yellow',
  running: 'tone-blue',
  ended: 'tone-grey',
  pending: 'tone-orange',
  approved: 'tone-green',
  rejected: 'tone-red',
  expired: 'tone-grey',
};
const tone = (s: string) => TONE[s] ?? 'tone-grey';

function button(
  text: string,
  onClick: () => void,
  opts: { secondary?: boolean; label?: string; data?: Record<string, string> } = {},
): HTMLElement {
  const b = document.createElement('vscode-button');
  b.textContent = text;
  if (opts.secondary) b.secondary = true;
  if (opts.label) setAttr(b, 'aria-label', opts.label);
  for (const [k, v] of Object.entries(opts.data ?? {})) setAttr(b, `data-${k}`, v);
  b.addEventListener('click', (e) => {
    e.stopPropagation();
    onClick();
  });
  return b;
}

function progressBar(done: number, total: number, label: string): HTMLElement {
  const p = document.createElement('vscode-progress-bar');
  p.max = Math.max(1, total);
  p.value = total ? done : 0;
  p.ariaLabel = label;
  return p;
}

// -----------------------------------------------------------------------------------------------
// Formatting

const STATUS_RANK: Record<string, number> = { active: 0, paused: 1, completed: 2, closed: 3, cancelled: 4 };
const KIND_LABEL: Record<string, string> = {
  gate: 'Gate',
  'user-todo': 'Your todo',
  quota: 'Budget',
  plan: 'Plan',
};
const BUDGET_LABEL: Record<string, string> = {
  turns: 'Turns',
  tokens: 'Tokens',
  costUsd: 'Cost (USD)',
  wallSeconds: 'Wall time (s)',
};

function fmtNum(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  const a = Math.abs(n);
  if (a >= 1e6) return `${(n / 1e6).toFixed(a >= 1e7 ? 0 : 1)}M`;
  if (a >= 1e4) return `${(n / 1e3).toFixed(0)}k`;
  if (a >= 1e3) return `${(n / 1e3).toFixed(1)}k`;
  return Number.isInteger(n) ? String(n) : n.toFixed(a < 1 ? 2 : 1);
}
function fmtBudget(k: string, n: number): string {
  return k === 'costUsd' ? `$${n.toFixed(n >= 100 ? 0 : 2)}` : fmtNum(n);
}
function fmtWhen(iso: string): string {
  const t = Date.parse(iso);
  if (!Number.isFinite(t)) return iso;
  const s = Math.round((Date.now() - t) / 1000);
  if (s >= 0 && s < 60) return 'just now';
  if (s >= 0 && s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s >= 0 && s < 86400) return `${Math.round(s / 3600)} h ago`;
  return new Date(t).toLocaleDateString(undefined, { month: 'short', day: 'numeric', year: 'numeric' });
}
function fmtDate(iso: string): string {
  const t = Date.parse(iso);
  return Number.isFinite(t)
    ? new Date(t).toLocaleString(undefined, {
        month: 'short',
        day: 'numeric',
        hour: '2-digit',
        minute: '2-digit',
      })
    : iso;
}
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

// -----------------------------------------------------------------------------------------------
// State

interface Selected {
  goalId: string;
  folder?: string;
}
interface GoalItem {
  g: StatusDoc['goals'][number];
  folder?: string;
  folderName?: string;
  key: string;
}

let status: StatusMessage | undefined;
let goal: GoalMessage | undefined;
let selected: Selected | undefined = restoreSelection();
let items: GoalItem[] = [];
let byKey = new Map<string, GoalItem>();
let view: number[] = [];
let filter = '';
let attentionExpanded = false;
const openSections = new Set<string>(['runs']);

const stats: RenderStats = {
  firstRenderMs: undefined,
  lastUpdateMs: undefined,
  rows: 0,
  goals: 0,
  renders: 0,
};
window.__loopxRenderStats = stats;

const keyOf = (goalId: string, folder?: string) => `${folder ?? ''}\0${goalId}`;

function restoreSelection(): Selected | undefined {
  const s = vscode.getState() as { selected?: Selected } | undefined;
  const sel = s?.selected;
  return sel && typeof sel.goalId === 'string' && (sel.folder === undefined || typeof sel.folder === 'string')
    ? sel
    : undefined;
}

function select(goalId: string, folder?: string): void {
  selected = { goalId, ...(folder ? { folder } : {}) };
  vscode.setState({ selected });
  send({ type: 'select-goal', goalId, ...(folder ? { folder } : {}) });
  renderWindow();
  renderDetails();
}

const withFolder = (folder?: string) => (folder ? { folder } : {});

// -----------------------------------------------------------------------------------------------
// Page skeleton

const app = document.getElementById('app') ?? document.body.appendChild(h('div', { attrs: { id: 'app' } }));
const headerEl = h('header', { class: 'top' });
const bannerEl = h('div', { class: 'banner', attrs: { role: 'alert' } });
const attentionEl = h('section', {
  class: 'card attention',
  attrs: { 'aria-labelledby': 'attention-heading' },
});
const emptyEl = h('section', { class: 'card empty' });
const goalsEl = h('section', { class: 'card goals', attrs: { 'aria-labelledby': 'goals-heading' } });
const detailsEl = h('section', {
  class: 'card details',
  attrs: { 'aria-live': 'polite', 'aria-label': 'Goal details' },
});
const mainEl = h('div', { class: 'main' }, goalsEl, detailsEl);
bannerEl.hidden = true;
emptyEl.hidden = true;
mainEl.hidden = true;
attentionEl.hidden = true;
const loadingEl = h(
  'div',
  { class: 'loading' },
  document.createElement('vscode-progress-ring'),
  h('span', null, 'Reading the workspace…'),
);
append(app, [headerEl, bannerEl, loadingEl, attentionEl, emptyEl, mainEl]);

// Goals list: heading, filter, windowed rows.
const ROW_H = 44;
const OVERSCAN = 4;
const goalsHeading = h('h2', { attrs: { id: 'goals-heading' } }, 'Goals');
const goalsCount = h('span', { class: 'muted' });
const filterEl = document.createElement('vscode-textfield');
filterEl.placeholder = 'Filter by title or id';
setAttr(filterEl, 'aria-label', 'Filter goals');
filterEl.className = 'filter';
filterEl.addEventListener('input', () => {
  filter = (filterEl.value ?? '').trim().toLowerCase();
  rebuildView();
  viewport.scrollTop = 0;
  renderWindow();
});
const viewport = h('div', {
  class: 'goal-viewport',
  attrs: { role: 'listbox', 'aria-labelledby': 'goals-heading', tabindex: '0' },
});
const spacer = h('div', { class: 'goal-spacer' });
const noMatch = h('p', { class: 'muted no-match' }, 'No goal matches the filter.');
noMatch.hidden = true;
viewport.append(spacer);
append(goalsEl, [h('div', { class: 'section-head' }, goalsHeading, goalsCount), filterEl, noMatch, viewport]);

interface Row {
  el: HTMLDivElement;
  dot: HTMLSpanElement;
  title: HTMLSpanElement;
  status: HTMLElement;
  gates: HTMLElement;
  gatesText: HTMLElement;
  count: HTMLSpanElement;
  folder: HTMLSpanElement;
  bar: HTMLDivElement;
  fill: HTMLSpanElement;
  index: number;
}
const pool: Row[] = [];

function makeRow(): Row {
  const dot = h('span', { class: 'dot', attrs: { 'aria-hidden': 'true' } });
  const title = h('span', { class: 'goal-title' });
  const folder = h('span', { class: 'goal-folder muted' });
  const status = badge('', 'status');
  const gates = badge('', 'gates', 'tone-orange');
  const count = h('span', { class: 'goal-count muted' });
  // A plain bar here (cheaper than a component per row); the details use vscode-progress-bar.
  const fill = h('span', { class: 'goal-bar-fill' });
  const bar = h('div', { class: 'goal-bar', attrs: { role: 'progressbar', 'aria-valuemin': '0' } }, fill);
  const el = h(
    'div',
    { class: 'goal-row', attrs: { role: 'option', tabindex: '-1' } },
    dot,
    h('span', { class: 'goal-name' }, title, folder),
    h('span', { class: 'goal-meta' }, gates, count, status),
    bar,
  );
  const row: Row = {
    el,
    dot,
    title,
    status,
    gates,
    gatesText: badgeText(gates),
    count,
    folder,
    bar,
    fill,
    index: -1,
  };
  el.addEventListener('click', () => {
    const it = items[view[row.index] ?? -1];
    if (it) select(it.g.id, it.folder);
  });
  return row;
}

function fillRow(row: Row, index: number): void {
  const it = items[view[index] ?? -1];
  if (!it) return;
  const g = it.g;
  row.index = index;
  row.el.style.transform = `translateY(${index * ROW_H}px)`;
  row.dot.className = `dot status-${g.status}`;
  row.title.textContent = g.title;
  row.el.title = `${g.title} (${g.id})`;
  row.folder.textContent = it.folderName ? it.folderName : '';
  badgeText(row.status).textContent = g.status;
  row.gatesText.textContent = g.pending_gates ? `${plural(g.pending_gates, 'gate')} pending` : '';
  row.gates.hidden = !g.pending_gates;
  row.count.textContent = `${g.progress.done}/${g.progress.total}`;
  row.fill.style.width = `${g.progress.total ? Math.min(100, (100 * g.progress.done) / g.progress.total) : 0}%`;
  setAttr(row.bar, 'aria-valuemax', String(g.progress.total));
  setAttr(row.bar, 'aria-valuenow', String(g.progress.done));
  setAttr(row.bar, 'aria-label', `${g.progress.done} of ${g.progress.total} todos done`);
  const isSel = !!selected && selected.goalId === g.id && (selected.folder ?? undefined) === it.folder;
  row.el.classList.toggle('selected', isSel);
  setAttr(row.el, 'aria-selected', String(isSel));
  setAttr(row.el, 'aria-posinset', String(index + 1));
  setAttr(row.el, 'aria-setsize', String(view.length));
  setAttr(row.el, 'data-goal', g.id);
}

let frame = 0;
function scheduleWindow(): void {
  if (frame) return;
  frame = requestAnimationFrame(() => {
    frame = 0;
    renderWindow();
  });
}
viewport.addEventListener('scroll', scheduleWindow, { passive: true });
window.addEventListener('resize', scheduleWindow);

function renderWindow(): void {
  spacer.style.height = `${view.length * ROW_H}px`;
  noMatch.hidden = view.length > 0 || items.length === 0;
  const height = viewport.clientHeight || 480;
  const first = Math.max(0, Math.floor(viewport.scrollTop / ROW_H) - OVERSCAN);
  const last = Math.min(view.length, Math.ceil((viewport.scrollTop + height) / ROW_H) + OVERSCAN);
  const need = Math.max(0, last - first);
  while (pool.length < need) {
    const r = makeRow();
    pool.push(r);
    spacer.append(r.el);
  }
  // Rows beyond what is needed leave the DOM (a shrunk filter keeps the page small too).
  while (pool.length > need + OVERSCAN * 2) pool.pop()!.el.remove();
  pool.forEach((r, i) => {
    if (i < need) {
      r.el.hidden = false;
      fillRow(r, first + i);
    } else {
      r.el.hidden = true;
      r.index = -1;
    }
  });
  stats.rows = spacer.childElementCount;
}

viewport.addEventListener('keydown', (e) => {
  if (!view.length) return;
  const cur = selected
    ? view.findIndex((i) => items[i]?.g.id === selected!.goalId && items[i]?.folder === selected!.folder)
    : -1;
  const page = Math.max(1, Math.floor(viewport.clientHeight / ROW_H) - 1);
  const next = {
    ArrowDown: cur + 1,
    ArrowUp: cur - 1,
    PageDown: cur + page,
    PageUp: cur - page,
    Home: 0,
    End: view.length - 1,
  }[e.key];
  if (next === undefined) return;
  e.preventDefault();
  const idx = Math.max(0, Math.min(view.length - 1, next));
  const top = idx * ROW_H;
  if (top < viewport.scrollTop) viewport.scrollTop = top;
  else if (top + ROW_H > viewport.scrollTop + viewport.clientHeight)
    viewport.scrollTop = top + ROW_H - viewport.clientHeight;
  const it = items[view[idx]!];
  if (it) select(it.g.id, it.folder);
});

function rebuildItems(m: StatusMessage): void {
  const slices = m.folders ?? [];
  let s = 0;
  let left = slices[0]?.goals ?? Infinity;
  items = m.doc.goals.map((g) => {
    while (left <= 0 && s < slices.length - 1) left = slices[++s]!.goals;
    left--;
    const f = slices.length ? slices[s] : undefined;
    return { g, folder: f?.path, folderName: f?.name, key: keyOf(g.id, f?.path) };
  });
  byKey = new Map(items.map((it) => [it.key, it]));
  rebuildView();
}

function rebuildView(): void {
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
  view = idx;
}

// -----------------------------------------------------------------------------------------------
// Header, banner, empty state

function renderHeader(doc: StatusDoc): void {
  clear(headerEl);
  const counts = Object.entries(doc.counts).filter(([, n]) => n > 0);
  append(headerEl, [
    h('h1', null, 'LoopX'),
    h(
      'div',
      { class: 'counts', attrs: { 'aria-label': 'Goals by status' } },
      ...counts.map(([k, n]) =>
        h(
          'span',
          { class: 'count' },
          h('span', { class: `dot status-${k}`, attrs: { 'aria-hidden': 'true' } }),
          `${n} ${k}`,
        ),
      ),
    ),
    h('span', { class: 'updated muted', title: doc.generated_at }, `Updated ${fmtDate(doc.generated_at)}`),
  ]);
}

let hostError: string | undefined;
function renderBanner(doc: StatusDoc | undefined): void {
  clear(bannerEl);
  const lines: Child[] = [];
  if (hostError) lines.push(h('p', null, hostError));
  for (const e of doc?.errors ?? [])
    lines.push(h('p', null, h('strong', null, `Goal ${e.goal_id} could not be read: `), e.message));
  bannerEl.hidden = lines.length === 0;
  const dismiss = () => {
    hostError = undefined;
    renderBanner(status?.doc);
  };
  if (lines.length)
    append(bannerEl, [
      h('div', { class: 'banner-text' }, ...lines),
      hostError ? button('Dismiss', dismiss, { secondary: true }) : null,
    ]);
}

function renderEmpty(doc: StatusDoc): void {
  clear(emptyEl);
  const noWorkspace = !doc.workspace;
  append(emptyEl, [
    h('h2', null, noWorkspace ? 'LoopX is not set up in this workspace' : 'No goals yet'),
    h(
      'p',
      null,
      'A goal is a durable objective with todos, approval gates, evidence and a quota. Agents work on it turn by turn; this dashboard shows what needs you.',
    ),
    h(
      'ol',
      { class: 'steps' },
      h(
        'li',
        null,
        'Open the Command Palette (',
        h('kbd', null, 'Ctrl+Shift+P'),
        ' or ',
        h('kbd', null, '⇧⌘P'),
        ').',
      ),
      noWorkspace ? h('li', null, 'Run ', h('strong', null, 'LoopX: Initialize Workspace'), '.') : null,
      h('li', null, 'Run ', h('strong', null, 'LoopX: Create Goal'), ' and describe what done looks like.'),
      h(
        'li',
        null,
        'Add todos with ',
        h('strong', null, 'LoopX: Add Todo'),
        '. They show up here as soon as they are written.',
      ),
    ),
  ]);
}

// -----------------------------------------------------------------------------------------------
// Attention queue

const ATTENTION_SHOWN = 8;
const ATTENTION_MAX = 200;

function goalTitle(goalId: string, folder?: string): string {
  return byKey.get(keyOf(goalId, folder))?.g.title ?? goalId;
}

function renderAttention(m: StatusMessage): void {
  clear(attentionEl);
  const detailed = !!m.attention;
  const all: AttentionEntry[] = m.attention ?? m.doc.attention;
  const plans = all.filter((a) => a.kind === 'plan');
  const rest = all.filter((a) => a.kind !== 'plan');
  attentionEl.hidden = all.length === 0 && m.doc.goals.length === 0;
  const head = h(
    'div',
    { class: 'section-head' },
    h('h2', { attrs: { id: 'attention-heading' } }, 'Needs you'),
    all.length ? badge(String(all.length), 'count-badge') : null,
  );
  attentionEl.append(head);
  if (all.length === 0) {
    attentionEl.append(
      h(
        'p',
        { class: 'muted calm' },
        'Nothing needs you right now: no pending gates, no todos for a person, every budget has room.',
      ),
    );
    return;
  }
  const list = h('ul', { class: 'attention-list' });
  const cap = attentionExpanded ? ATTENTION_MAX : ATTENTION_SHOWN;
  let shown = 0;
  for (const a of rest.slice(0, cap)) {
    list.append(attentionItem(a, detailed));
    shown++;
  }
  if (plans.length && shown < cap) {
    if (plans.length <= 3 || attentionExpanded) {
      for (const a of plans.slice(0, cap - shown)) {
        list.append(attentionItem(a, detailed));
        shown++;
      }
    } else {
      list.append(
        h(
          'li',
          { class: 'att kind-plan' },
          h('span', { class: 'att-kind' }, KIND_LABEL.plan!),
          h(
            'div',
            { class: 'att-body' },
            h('div', { class: 'att-title' }, `${plans.length} goals need a plan`),
            h(
              'div',
              { class: 'att-detail muted' },
              `${plans
                .slice(0, 3)
                .map((p) => goalTitle(p.goal_id, p.folder))
                .join(', ')}, …: add todos so an agent can start`,
            ),
          ),
        ),
      );
      shown += plans.length;
    }
  }
  attentionEl.append(list);
  const hidden = all.length - shown;
  if (hidden > 0 || attentionExpanded) {
    attentionEl.append(
      h(
        'div',
        { class: 'att-more' },
        button(
          attentionExpanded ? 'Show fewer' : `Show all ${all.length}`,
          () => {
            attentionExpanded = !attentionExpanded;
            if (status) renderAttention(status);
          },
          { secondary: true },
        ),
        attentionExpanded && all.length > ATTENTION_MAX
          ? h(
              'span',
              { class: 'muted' },
              ` ${all.length - ATTENTION_MAX} more: filter the goals below to find them.`,
            )
          : null,
      ),
    );
  }
}

function attentionItem(a: AttentionEntry, detailed: boolean): HTMLLIElement {
  const goalName = goalTitle(a.goal_id, a.folder);
  const open = () => select(a.goal_id, a.folder);
  const actions = h('div', { class: 'att-actions' });
  const quotaCls =
    a.kind === 'quota' ? (/used up/.test(a.title) && !/nearly/.test(a.title) ? ' exhausted' : ' nearly') : '';
  let title: string;
  let detail: string;
  if (a.kind === 'gate' && detailed) {
    title = a.title;
    detail = a.detail;
    const data = { goal: a.goal_id, gate: a.id };
    actions.append(
      button(
        'Approve',
        () => send({ type: 'approve-gate', goalId: a.goal_id, gateId: a.id, ...withFolder(a.folder) }),
        { label: `Approve gate ${a.id} of ${goalName}`, data: { ...data, action: 'approve' } },
      ),
      button(
        'Reject',
        () => send({ type: 'reject-gate', goalId: a.goal_id, gateId: a.id, ...withFolder(a.folder) }),
        { secondary: true, label: `Reject gate ${a.id} of ${goalName}`, data: { ...data, action: 'reject' } },
      ),
    );
  } else if (a.kind === 'plan' || (a.kind === 'gate' && !detailed)) {
    // The index-level items name the goal itself.
    title = a.kind === 'plan' ? 'Needs a plan' : 'Gates pending';
    detail = a.detail;
    actions.append(button('Review', open, { secondary: true, label: `Review ${goalName}` }));
  } else {
    title = a.title;
    detail = a.detail;
    actions.append(button('Open', open, { secondary: true, label: `Open ${goalName}` }));
  }
  const goalLink = h('button', { class: 'link', title: `Show ${goalName}`, onClick: open }, goalName);
  return h(
    'li',
    {
      class: `att kind-${a.kind}${quotaCls}`,
      attrs: { 'data-kind': a.kind, 'data-goal': a.goal_id, 'data-id': a.id },
    },
    h('span', { class: 'att-kind' }, KIND_LABEL[a.kind] ?? a.kind),
    h(
      'div',
      { class: 'att-body' },
      h('div', { class: 'att-title' }, title),
      h(
        'div',
        { class: 'att-detail' },
        goalLink,
        detail ? h('span', { class: 'muted' }, ` · ${detail}`) : null,
      ),
    ),
    actions,
  );
}

// -----------------------------------------------------------------------------------------------
// Charts (inline SVG, colours from CSS classes)

const W = 360;
const H = 150;
const PAD = { l: 48, r: 14, t: 14, b: 26 };

interface Pt {
  t: number;
  y: number;
  tip: string;
}

function xScale(pts: readonly Pt[]): (i: number) => number {
  const ts = pts.map((p) => p.t);
  const min = Math.min(...ts);
  const max = Math.max(...ts);
  const w = W - PAD.l - PAD.r;
  if (!(max > min)) return (i) => PAD.l + (pts.length === 1 ? w / 2 : (i / Math.max(1, pts.length - 1)) * w);
  return (i) => PAD.l + ((pts[i]!.t - min) / (max - min)) * w;
}

function axisLabels(pts: readonly Pt[], xs: (i: number) => number): SVGElement[] {
  const y = H - 8;
  if (!pts.length) return [];
  const first = fmtDate(new Date(pts[0]!.t).toISOString());
  const out = [svg('text', { x: xs(0), y, 'text-anchor': pts.length === 1 ? 'middle' : 'start' }, first)];
  if (pts.length > 1)
    out.push(
      svg(
        'text',
        { x: xs(pts.length - 1), y, 'text-anchor': 'end' },
        fmtDate(new Date(pts.at(-1)!.t).toISOString()),
      ),
    );
  return out;
}

/** Cumulative spend per run (a step line) against the budget's limit. */
function burnChart(name: string, pts: Pt[], limit: number | undefined, used: number | undefined): SVGElement {
  const maxY = Math.max(1e-9, limit ?? 0, ...pts.map((p) => p.y)) * 1.1;
  const ys = (v: number) => PAD.t + (1 - v / maxY) * (H - PAD.t - PAD.b);
  const xs = xScale(pts);
  const fmt = (v: number) => fmtBudget(name, v);
  const label = `${BUDGET_LABEL[name] ?? name}: ${pts.length ? fmt(pts.at(-1)!.y) : 0} spent over ${plural(pts.length, 'run')}${limit ? `, limit ${fmt(limit)}${used !== undefined ? ` (${fmt(used)} used in the window)` : ''}` : ''}`;
  const root = svg(
    'svg',
    { viewBox: `0 0 ${W} ${H}`, class: 'chart burn', role: 'img', 'aria-label': label },
    svg('title', {}, label),
  );
  root.append(
    svg('line', { class: 'axis', x1: PAD.l, x2: W - PAD.r, y1: ys(0), y2: ys(0) }),
    svg('line', { class: 'axis', x1: PAD.l, x2: PAD.l, y1: PAD.t, y2: ys(0) }),
    svg('text', { x: PAD.l - 6, y: ys(0) + 4, 'text-anchor': 'end' }, '0'),
  );
  if (limit) {
    const y = ys(limit);
    root.append(
      svg('line', { class: 'limit', x1: PAD.l, x2: W - PAD.r, y1: y, y2: y }),
      svg('text', { class: 'limit-label', x: PAD.l + 4, y: y - 5, 'text-anchor': 'start' }, 'limit'),
      svg('text', { x: PAD.l - 6, y: y + 4, 'text-anchor': 'end' }, fmt(limit)),
    );
  }
  if (pts.length) {
    let d = `M${xs(0).toFixed(1)},${ys(0).toFixed(1)}`;
    pts.forEach((p, i) => {
      d += ` H${xs(i).toFixed(1)} V${ys(p.y).toFixed(1)}`;
    });
    const area = `${d} H${xs(pts.length - 1).toFixed(1)} V${ys(0).toFixed(1)} Z`;
    root.append(svg('path', { class: 'area', d: area }), svg('path', { class: 'line', d }));
    pts.forEach((p, i) => {
      const over = limit !== undefined && limit > 0 && p.y > limit;
      root.append(
        svg(
          'circle',
          { class: over ? 'point over' : 'point', cx: xs(i), cy: ys(p.y), r: 3 },
          svg('title', {}, p.tip),
        ),
      );
    });
    if (!limit)
      root.append(
        svg('text', { x: PAD.l - 6, y: ys(pts.at(-1)!.y) + 4, 'text-anchor': 'end' }, fmt(pts.at(-1)!.y)),
      );
    root.append(...axisLabels(pts, xs));
  } else {
    root.append(
      svg('text', { class: 'empty-label', x: W / 2, y: H / 2, 'text-anchor': 'middle' }, 'No runs yet'),
    );
  }
  return root;
}

/** Reward scores (-1..1) over time, with the zero line and the mean. */
function rewardChart(pts: Pt[], mean: number | null): SVGElement {
  const ys = (v: number) => PAD.t + ((1 - v) / 2) * (H - PAD.t - PAD.b);
  const xs = xScale(pts);
  const label = pts.length
    ? `Rewards: ${plural(pts.length, 'score')}, mean ${mean?.toFixed(2) ?? '–'}, latest ${pts.at(-1)!.y}`
    : 'Rewards: none yet';
  const root = svg(
    'svg',
    { viewBox: `0 0 ${W} ${H}`, class: 'chart reward', role: 'img', 'aria-label': label },
    svg('title', {}, label),
  );
  for (const v of [1, 0, -1]) {
    root.append(
      svg('line', { class: v === 0 ? 'axis zero' : 'grid', x1: PAD.l, x2: W - PAD.r, y1: ys(v), y2: ys(v) }),
      svg('text', { x: PAD.l - 6, y: ys(v) + 4, 'text-anchor': 'end' }, v > 0 ? '+1' : String(v)),
    );
  }
  if (pts.length) {
    if (mean !== null) {
      root.append(svg('line', { class: 'mean', x1: PAD.l, x2: W - PAD.r, y1: ys(mean), y2: ys(mean) }));
    }
    if (pts.length > 1)
      root.append(
        svg('polyline', {
          class: 'line',
          points: pts.map((p, i) => `${xs(i).toFixed(1)},${ys(p.y).toFixed(1)}`).join(' '),
        }),
      );
    pts.forEach((p, i) =>
      root.append(
        svg(
          'circle',
          { class: `point ${p.y > 0 ? 'pos' : p.y < 0 ? 'neg' : 'zero'}`, cx: xs(i), cy: ys(p.y), r: 3.5 },
          svg('title', {}, p.tip),
        ),
      ),
    );
    root.append(...axisLabels(pts, xs));
  } else {
    root.append(
      svg(
        'text',
        { class: 'empty-label', x: W / 2, y: H / 2 - 8, 'text-anchor': 'middle' },
        'No rewards yet',
      ),
    );
  }
  return root;
}

// -----------------------------------------------------------------------------------------------
// Goal details

function renderDetails(): void {
  clear(detailsEl);
  if (!selected) {
    append(detailsEl, [
      h(
        'div',
        { class: 'placeholder muted' },
        h('p', null, 'Select a goal to see its progress, quota burn, last runs and rewards.'),
      ),
    ]);
    return;
  }
  const d = goal?.doc;
  if (!d || d.id !== selected.goalId || (goal?.folder ?? undefined) !== selected.folder) {
    append(detailsEl, [
      h(
        'div',
        { class: 'loading' },
        document.createElement('vscode-progress-ring'),
        h('span', null, `Reading ${goalTitle(selected.goalId, selected.folder)}…`),
      ),
    ]);
    return;
  }
  const folder = goal?.folder;
  const head = h(
    'div',
    { class: 'details-head' },
    h(
      'div',
      { class: 'details-title' },
      h('h2', { attrs: { id: 'details-heading' } }, d.title),
      badge(d.status, 'status', tone(d.status)),
    ),
    h(
      'div',
      { class: 'details-actions' },
      button('Show in Tree', () => send({ type: 'reveal-goal', goalId: d.id, ...withFolder(folder) }), {
        secondary: true,
        label: `Show ${d.title} in the Goals tree`,
        data: { action: 'reveal' },
      }),
    ),
  );
  const meta = h(
    'div',
    { class: 'muted meta' },
    h('code', null, d.id),
    ` · created ${fmtWhen(d.created_at)} · updated ${fmtWhen(d.updated_at)} · revision ${d.revision}`,
  );
  append(detailsEl, [head, meta]);
  if (d.objective) detailsEl.append(h('p', { class: 'objective' }, d.objective));
  for (const w of d.warnings) detailsEl.append(h('p', { class: 'warning' }, w));

  // Key figures.
  const todoCounts = Object.entries(d.counts.todos)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${n} ${k}`)
    .join(' · ');
  const pendingGates = d.gates.filter((g) => g.status === 'pending');
  append(detailsEl, [
    h(
      'div',
      { class: 'kpis' },
      kpi(
        'Progress',
        `${d.progress.done}/${d.progress.total}`,
        todoCounts || 'no todos yet',
        progressBar(
          d.progress.done,
          d.progress.total,
          `${d.progress.done} of ${d.progress.total} todos done`,
        ),
      ),
      kpi(
        'Gates',
        String(pendingGates.length),
        pendingGates.length ? 'pending your decision' : `${plural(d.gates.length, 'gate')}, none pending`,
      ),
      kpi(
        'Spend',
        fmtBudget('costUsd', d.quota.spend.costUsd),
        `${plural(d.quota.spend.turns, 'turn')} · ${fmtNum(d.quota.spend.tokens)} tokens`,
      ),
      kpi(
        'Reward',
        d.rewards.mean === null ? '–' : d.rewards.mean.toFixed(2),
        d.rewards.count ? `mean of ${plural(d.rewards.count, 'score')}` : 'no scores yet',
      ),
    ),
  ]);

  if (d.attention.length) {
    const list = h('ul', { class: 'attention-list' });
    for (const a of d.attention) list.append(attentionItem({ ...a, ...withFolder(folder) }, true));
    append(detailsEl, [h('h3', null, 'Needs you'), list]);
  }

  // Quota burn: one small chart per budget with a limit (turns and cost when none is set).
  const budgets = Object.entries(d.quota.budgets).filter(([, b]) => b.limit > 0);
  const names = budgets.length
    ? budgets.map(([k]) => k)
    : ['turns', ...(d.quota.spend.costUsd > 0 ? ['costUsd'] : [])];
  const burnGrid = h('div', { class: 'charts' });
  for (const k of names) {
    const key = k as 'turns' | 'tokens' | 'costUsd' | 'wallSeconds';
    const b = d.quota.budgets[k];
    const pts = d.burn.map((p) => ({
      t: Date.parse(p.at),
      y: p[key],
      tip: `${p.run_id} · ${fmtDate(p.at)} · ${fmtBudget(k, p[key])} ${BUDGET_LABEL[k]?.toLowerCase() ?? k} so far`,
    }));
    burnGrid.append(
      h(
        'figure',
        { class: 'chart-box' },
        h(
          'figcaption',
          null,
          h('strong', null, BUDGET_LABEL[k] ?? k),
          b
            ? h(
                'span',
                { class: `muted${b.used >= b.limit ? ' over-text' : ''}` },
                ` ${fmtBudget(k, b.used)} of ${fmtBudget(k, b.limit)} used${b.used >= b.limit ? ' (exhausted)' : ''}`,
              )
            : h('span', { class: 'muted' }, ' no limit'),
        ),
        burnChart(k, pts, b?.limit, b?.used),
      ),
    );
  }
  append(detailsEl, [
    h(
      'h3',
      null,
      'Quota burn ',
      h(
        'span',
        { class: 'muted small' },
        `(window: ${d.quota.window}${d.quota.cooldown_seconds ? `, cooldown ${d.quota.cooldown_seconds} s` : ''})`,
      ),
    ),
    burnGrid,
  ]);

  // Reward trend.
  const rpts = d.rewards.trend.map((r) => ({
    t: Date.parse(r.at),
    y: r.score,
    tip: `${r.run_id} · ${fmtDate(r.at)} · score ${r.score}`,
  }));
  const rewardCaption = h(
    'figcaption',
    null,
    h('strong', null, 'Scores'),
    h('span', { class: 'muted' }, d.rewards.count ? ` ${plural(d.rewards.count, 'score')} · ` : ' none yet'),
    d.rewards.mean !== null
      ? h('span', { class: 'mean-text', title: 'the dashed line' }, `mean ${d.rewards.mean.toFixed(2)}`)
      : null,
  );
  append(detailsEl, [
    h('h3', null, 'Reward trend'),
    h(
      'div',
      { class: 'charts' },
      h('figure', { class: 'chart-box' }, rewardCaption, rewardChart(rpts, d.rewards.mean)),
    ),
  ]);

  // Last runs with their evidence and rewards.
  detailsEl.append(section('runs', `Last runs`, String(d.runs.length), runsList(d, folder)));
  if (d.gates.length) detailsEl.append(section('gates', 'Gates', gateSummary(d), gatesList(d, folder)));
  detailsEl.append(section('todos', 'Todos', `${d.progress.done}/${d.progress.total} done`, todosList(d)));
}

function kpi(label: string, value: string, sub: string, extra?: Node): HTMLElement {
  return h(
    'div',
    { class: 'kpi' },
    h('div', { class: 'kpi-label muted' }, label),
    h('div', { class: 'kpi-value' }, value),
    extra ?? null,
    h('div', { class: 'kpi-sub muted' }, sub),
  );
}

function section(id: string, heading: string, description: string, body: Node): HTMLElement {
  const c = document.createElement('vscode-collapsible');
  setAttr(c, 'heading', heading);
  setAttr(c, 'description', description);
  setAttr(c, 'data-section', id);
  if (openSections.has(id)) setAttr(c, 'open', '');
  c.className = 'section';
  c.addEventListener('vsc-collapsible-toggle', (e) => {
    if ((e as CustomEvent<{ open: boolean }>).detail.open) openSections.add(id);
    else openSections.delete(id);
  });
  c.append(h('div', { class: 'section-body' }, body));
  return c;
}

function gateSummary(d: GoalStatusDoc): string {
  return Object.entries(d.counts.gates)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${n} ${k}`)
    .join(' · ');
}

function runsList(d: GoalStatusDoc, folder?: string): Node {
  if (!d.runs.length)
    return h(
      'p',
      { class: 'muted' },
      'No runs yet. An agent starts one when it requests a contract and works a turn.',
    );
  const ul = h('ul', { class: 'runs' });
  for (const r of d.runs) {
    const outcome = r.outcome ?? (r.ended_at ? 'ended' : 'running');
    const spend = [
      plural(r.spend.turns, 'turn'),
      `${fmtNum(r.spend.tokens)} tokens`,
      fmtBudget('costUsd', r.spend.costUsd),
      r.spend.wallSeconds ? `${fmtNum(r.spend.wallSeconds)} s` : '',
    ]
      .filter(Boolean)
      .join(' · ');
    const ev = h('ul', { class: 'evidence' });
    for (const e of r.evidence) {
      const code =
        e.exit_code === undefined
          ? null
          : h(
              'span',
              { class: `exit ${e.exit_code === 0 ? 'ok' : 'fail'}`, title: `exit code ${e.exit_code}` },
              e.exit_code === 0 ? '✓ exit 0' : `✗ exit ${e.exit_code}`,
            );
      ev.append(
        h(
          'li',
          { attrs: { 'data-evidence': e.id } },
          h('span', { class: 'tag' }, e.kind),
          code,
          e.todo_id ? h('code', { class: 'muted' }, e.todo_id) : null,
          h('span', { class: 'summary' }, e.summary),
          e.artifact
            ? button(
                'Open',
                () => send({ type: 'open-evidence', goalId: d.id, evidenceId: e.id, ...withFolder(folder) }),
                { secondary: true, label: `Open the artifact of evidence ${e.id}`, data: { evidence: e.id } },
              )
            : null,
        ),
      );
    }
    const rw = h('ul', { class: 'rewards' });
    for (const w of r.rewards) {
      rw.append(
        h(
          'li',
          null,
          h(
            'span',
            { class: `score ${w.score > 0 ? 'pos' : w.score < 0 ? 'neg' : 'zero'}` },
            w.score > 0 ? `+${w.score}` : String(w.score),
          ),
          h('span', { class: 'comment' }, w.comment || '(no comment)'),
        ),
      );
    }
    ul.append(
      h(
        'li',
        { class: 'run', attrs: { 'data-run': r.id } },
        h(
          'div',
          { class: 'run-head' },
          badge(outcome, 'outcome', tone(outcome)),
          h('code', null, r.id),
          h('span', { class: 'muted' }, ` ${r.agent} · ${fmtDate(r.started_at)} · ${spend}`),
        ),
        r.evidence.length ? ev : h('p', { class: 'muted small' }, 'No evidence recorded.'),
        r.rewards.length ? rw : null,
      ),
    );
  }
  return ul;
}

function gatesList(d: GoalStatusDoc, folder?: string): Node {
  const ul = h('ul', { class: 'plain' });
  for (const g of d.gates) {
    const actions =
      g.status === 'pending'
        ? h(
            'span',
            { class: 'att-actions' },
            button(
              'Approve',
              () => send({ type: 'approve-gate', goalId: d.id, gateId: g.id, ...withFolder(folder) }),
              { label: `Approve gate ${g.id}` },
            ),
            button(
              'Reject',
              () => send({ type: 'reject-gate', goalId: d.id, gateId: g.id, ...withFolder(folder) }),
              { secondary: true, label: `Reject gate ${g.id}` },
            ),
          )
        : null;
    ul.append(
      h(
        'li',
        { class: 'gate-line' },
        badge(g.status, 'gate-status', tone(g.status)),
        h(
          'span',
          null,
          h('strong', null, g.title),
          h(
            'span',
            { class: 'muted' },
            ` (${g.id})${g.reason ? ` · ${g.reason}` : ''}${g.decided_by ? ` · ${g.status} by ${g.decided_by}${g.signed ? ', signed' : ''}` : ` · requested by ${g.requested_by}`}`,
          ),
        ),
        actions,
      ),
    );
  }
  return ul;
}

function todosList(d: GoalStatusDoc): Node {
  if (!d.todos.length) return h('p', { class: 'muted' }, 'No todos yet: add one with LoopX: Add Todo.');
  const ul = h('ul', { class: 'plain todos' });
  for (const t of d.todos) {
    ul.append(
      h(
        'li',
        { class: `todo todo-${t.status}` },
        h(
          'span',
          { class: `check ${t.status}`, attrs: { 'aria-hidden': 'true' } },
          t.status === 'done' ? '✓' : t.status === 'cancelled' ? '–' : t.status === 'claimed' ? '◐' : '○',
        ),
        h('span', { class: 'todo-title' }, t.title),
        h(
          'span',
          { class: 'muted' },
          ` ${t.priority} · ${t.owner === 'user' ? 'for a person' : 'agent'} · ${t.status}${t.gate ? ` · gate ${t.gate}` : ''}${t.claimed_by ? ` · ${t.claimed_by}` : ''}`,
        ),
      ),
    );
  }
  return ul;
}

// -----------------------------------------------------------------------------------------------
// Messages

function onStatus(m: StatusMessage): void {
  const t0 = performance.now();
  performance.mark('loopx:status:start');
  status = m;
  rebuildItems(m);
  loadingEl.hidden = true;
  renderHeader(m.doc);
  renderBanner(m.doc);
  const empty = m.doc.goals.length === 0;
  emptyEl.hidden = !empty;
  mainEl.hidden = empty;
  if (empty) renderEmpty(m.doc);
  renderAttention(m);
  goalsCount.textContent = m.doc.goals.length ? `${m.doc.goals.length}` : '';
  if (selected && !byKey.has(keyOf(selected.goalId, selected.folder))) {
    selected = undefined;
    vscode.setState({});
  }
  if (!empty) {
    renderWindow();
    if (!goal || !selected) renderDetails();
  }
  void document.body.offsetHeight; // include layout in the measurement
  const ms = performance.now() - t0;
  performance.mark('loopx:status:end');
  stats.renders++;
  stats.goals = m.doc.goals.length;
  stats.lastUpdateMs = ms;
  if (stats.firstRenderMs === undefined) {
    stats.firstRenderMs = ms;
    console.log(
      `[loopx] first render ${ms.toFixed(1)} ms at ${performance.now().toFixed(1)} ms: ${stats.goals} goals, ${stats.rows} rows`,
    );
  } else {
    console.log(
      `[loopx] update ${ms.toFixed(1)} ms at ${performance.now().toFixed(1)} ms: ${stats.goals} goals, ${stats.rows} rows`,
    );
  }
}

function onGoal(m: GoalMessage): void {
  goal = m;
  if (selected && selected.goalId === m.doc.id && selected.folder === m.folder) renderDetails();
}

window.addEventListener('message', (e: MessageEvent) => {
  const m = e.data as HostMessage | undefined;
  if (!m || typeof m !== 'object') return;
  try {
    if (m.type === 'status' && m.doc && Array.isArray(m.doc.goals)) onStatus(m);
    else if (m.type === 'goal' && m.doc) onGoal(m);
    else if (m.type === 'error' && typeof m.message === 'string') {
      hostError = m.message;
      renderBanner(status?.doc);
    }
  } catch (err) {
    console.error('[loopx] could not render', err);
    hostError = `The dashboard could not render this update: ${(err as Error)?.message ?? String(err)}`;
    renderBanner(status?.doc);
  }
});

console.log(`[loopx] script ready at ${performance.now().toFixed(1)} ms`);
send({ type: 'ready' });
if (selected) send({ type: 'select-goal', goalId: selected.goalId, ...withFolder(selected.folder) });
