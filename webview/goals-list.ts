/**
 * The goals list: heading, filter, and only the rows in view, drawn from a small pool of row
 * elements that are reused as the list scrolls.
 */
import { append, badge, badgeText, h, setAttr } from './dom';
import { plural } from './format';
import { goalsEl } from './skeleton';
import { isSelected, rebuildView, state, stats, type SelectGoal } from './state';

const ROW_H = 44;
const OVERSCAN = 4;

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

export interface GoalsList {
  /** Lays out the rows in view for the current goals, filter and selection. */
  render(): void;
  showCount(goals: number): void;
}

export function mountGoalsList(select: SelectGoal): GoalsList {
  const goalsHeading = h('h2', { attrs: { id: 'goals-heading' } }, 'Goals');
  const goalsCount = h('span', { class: 'muted' });
  const filterEl = document.createElement('vscode-textfield');
  filterEl.placeholder = 'Filter by title or id';
  setAttr(filterEl, 'aria-label', 'Filter goals');
  filterEl.className = 'filter';
  filterEl.addEventListener('input', () => {
    state.filter = (filterEl.value ?? '').trim().toLowerCase();
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
  append(goalsEl, [
    h('div', { class: 'section-head' }, goalsHeading, goalsCount),
    filterEl,
    noMatch,
    viewport,
  ]);

  const pool: Row[] = [];
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
    const { items, view } = state;
    spacer.style.height = `${view.length * ROW_H}px`;
    noMatch.hidden = view.length > 0 || items.length === 0;
    const height = viewport.clientHeight || 480;
    const first = Math.max(0, Math.floor(viewport.scrollTop / ROW_H) - OVERSCAN);
    const last = Math.min(view.length, Math.ceil((viewport.scrollTop + height) / ROW_H) + OVERSCAN);
    const need = Math.max(0, last - first);
    while (pool.length < need) {
      const r = makeRow(select);
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
    const { items, view } = state;
    if (!view.length) return;
    const cur = view.findIndex((i) => {
      const it = items[i];
      return !!it && isSelected(it.g.id, it.folder);
    });
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

  return {
    render: renderWindow,
    showCount(goals) {
      goalsCount.textContent = goals ? `${goals}` : '';
    },
  };
}

function makeRow(select: SelectGoal): Row {
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
    const it = state.items[state.view[row.index] ?? -1];
    if (it) select(it.g.id, it.folder);
  });
  return row;
}

function fillRow(row: Row, index: number): void {
  const { items, view } = state;
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
  const isSel = isSelected(g.id, it.folder);
  row.el.classList.toggle('selected', isSel);
  setAttr(row.el, 'aria-selected', String(isSel));
  setAttr(row.el, 'aria-posinset', String(index + 1));
  setAttr(row.el, 'aria-setsize', String(view.length));
  setAttr(row.el, 'data-goal', g.id);
}
