/** The selected goal's details: heading, key figures, what it needs from you, charts and sections. */
import { attentionItem } from './attention';
import { quotaBurn, rewardTrend } from './charts';
import { append, badge, clear, h, progressBar, tone } from './dom';
import { fmtBudget, fmtNum, fmtWhen, plural } from './format';
import { goalSections } from './goal-sections';
import { actionControl } from './handoff';
import { withFolder } from './host';
import { detailsEl } from './skeleton';
import { goalTitle, isSelected, state, type SelectGoal } from './state';

export function renderDetails(select: SelectGoal): void {
  const { selected, goal } = state;
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
  if (!d || !isSelected(d.id, goal?.folder)) {
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
      actionControl(
        'Show in Tree',
        { type: 'reveal-goal', goalId: d.id, ...withFolder(folder) },
        {
          secondary: true,
          label: `Show ${d.title} in the Goals tree`,
          data: { action: 'reveal' },
        },
      ),
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
    for (const a of d.attention) list.append(attentionItem({ ...a, ...withFolder(folder) }, true, select));
    append(detailsEl, [h('h3', null, 'Needs you'), list]);
  }

  append(detailsEl, [...quotaBurn(d), ...rewardTrend(d), ...goalSections(d, folder)]);
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
