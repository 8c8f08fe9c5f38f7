/**
 * The LoopX dashboard webview: a read-only picture of the status documents the extension posts.
 *
 * - Every workspace string is rendered as text (text nodes, `textContent`, attribute values set
 *   with `setAttribute`); no data ever goes through `innerHTML`.
 * - Styles come from `media/dashboard.css` and the components' adopted style sheets; nothing sets
 *   a `style` attribute (the CSP allows no inline style), only CSSOM properties for layout.
 * - The only messages sent are `ready` and navigation intents (see src/core/views/dashboard-protocol.ts). In a
 *   browser (the status server's `/`) the controls that would act are links to VS Code and CLI
 *   commands to copy (handoff.ts); the page only reads.
 * - The goals list renders only the rows in view (fixed row height), so 1,000 goals cost what 20 do.
 */
import '@vscode-elements/elements/dist/vscode-badge/index.js';
import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-collapsible/index.js';
import '@vscode-elements/elements/dist/vscode-divider/index.js';
import '@vscode-elements/elements/dist/vscode-progress-bar/index.js';
import '@vscode-elements/elements/dist/vscode-progress-ring/index.js';
import '@vscode-elements/elements/dist/vscode-textfield/index.js';
import './zod-jitless';
// The components above are defined before the modules below create any of them.
import type { GoalMessage, StatusMessage } from '../src/core/views/browser';
import { renderAgents } from './agents';
import { renderAttention } from './attention';
import { renderDetails } from './details';
import { renderEverywhere } from './everywhere';
import { mountGoalsList } from './goals-list';
import { renderBanner, renderEmpty, renderHeader } from './header';
import { announceReady, listen, saveSelection, send, withFolder } from './host';
import { emptyEl, loadingEl, mainEl } from './skeleton';
import { isSelected, keyOf, rebuildItems, state, stats } from './state';

export type { RenderStats } from './state';

const goalsList = mountGoalsList(select);

function select(goalId: string, folder?: string): void {
  state.selected = { goalId, ...withFolder(folder) };
  saveSelection(state.selected);
  send({ type: 'select-goal', goalId, ...withFolder(folder) });
  goalsList.render();
  renderDetails(select);
}

function onStatus(m: StatusMessage): void {
  const t0 = performance.now();
  performance.mark('loopx:status:start');
  state.status = m;
  rebuildItems(m);
  loadingEl.hidden = true;
  renderHeader(m.doc);
  renderBanner(m.doc);
  const empty = m.doc.goals.length === 0;
  emptyEl.hidden = !empty;
  mainEl.hidden = empty;
  if (empty) renderEmpty(m.doc);
  renderAttention(m, select);
  renderEverywhere(m);
  renderAgents(m);
  goalsList.showCount(m.doc.goals.length);
  const { selected } = state;
  if (selected && !state.byKey.has(keyOf(selected.goalId, selected.folder))) {
    state.selected = undefined;
    saveSelection(undefined);
  }
  if (!empty) {
    goalsList.render();
    if (!state.goal || !state.selected) renderDetails(select);
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
  state.goal = m;
  if (isSelected(m.doc.id, m.folder)) renderDetails(select);
}

listen({
  status: onStatus,
  goal: onGoal,
  error(message) {
    state.hostError = message;
    renderBanner(state.status?.doc);
  },
  recovered() {
    state.hostError = undefined;
    renderBanner(state.status?.doc);
  },
});

console.log(`[loopx] script ready at ${performance.now().toFixed(1)} ms`);
announceReady(state.selected);
