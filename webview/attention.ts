/** The attention queue ("Needs you"): what waits for a person, with the action that settles it. */
import type { AttentionEntry, StatusMessage } from '../src/core/views/browser';
import { badge, button, clear, h } from './dom';
import { actionControl } from './handoff';
import { withFolder } from './host';
import { attentionEl } from './skeleton';
import { folderNameOf, goalTitle, state, type SelectGoal } from './state';

/** What each kind of item is called on the page (All workspaces adds its lanes). */
export const KIND_LABEL: Record<string, string> = {
  gate: 'Gate',
  'user-todo': 'Your todo',
  denied: 'Agent refused',
  quota: 'Budget',
  plan: 'Plan',
};
const ATTENTION_SHOWN = 8;
const ATTENTION_MAX = 200;

export function renderAttention(m: StatusMessage, select: SelectGoal): void {
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
  const cap = state.attentionExpanded ? ATTENTION_MAX : ATTENTION_SHOWN;
  let shown = 0;
  for (const a of rest.slice(0, cap)) {
    list.append(attentionItem(a, detailed, select));
    shown++;
  }
  if (plans.length && shown < cap) {
    if (plans.length <= 3 || state.attentionExpanded) {
      for (const a of plans.slice(0, cap - shown)) {
        list.append(attentionItem(a, detailed, select));
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
  if (hidden > 0 || state.attentionExpanded) {
    attentionEl.append(
      h(
        'div',
        { class: 'att-more' },
        button(
          state.attentionExpanded ? 'Show fewer' : `Show all ${all.length}`,
          () => {
            state.attentionExpanded = !state.attentionExpanded;
            if (state.status) renderAttention(state.status, select);
          },
          { secondary: true },
        ),
        state.attentionExpanded && all.length > ATTENTION_MAX
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

/**
 * Approve and Reject for a pending gate: each posts the decision's navigation (the extension asks
 * the person); in a browser, links to VS Code and the CLI commands (handoff.ts). `goalName` goes into the buttons' labels; `tagged` adds data-goal, data-gate and
 * data-action.
 */
export function gateButtons(
  { goalId, gateId, folder }: { goalId: string; gateId: string; folder?: string },
  { goalName, tagged = false }: { goalName?: string; tagged?: boolean } = {},
): HTMLElement[] {
  const of = goalName === undefined ? '' : ` of ${goalName}`;
  const data = (action: string) => (tagged ? { goal: goalId, gate: gateId, action } : undefined);
  return [
    actionControl(
      'Approve',
      { type: 'approve-gate', goalId, gateId, ...withFolder(folder) },
      {
        label: `Approve gate ${gateId}${of}`,
        data: data('approve'),
      },
    ),
    actionControl(
      'Reject',
      { type: 'reject-gate', goalId, gateId, ...withFolder(folder) },
      {
        secondary: true,
        label: `Reject gate ${gateId}${of}`,
        data: data('reject'),
      },
    ),
  ];
}

export function attentionItem(a: AttentionEntry, detailed: boolean, select: SelectGoal): HTMLLIElement {
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
    actions.append(
      ...gateButtons({ goalId: a.goal_id, gateId: a.id, folder: a.folder }, { goalName, tagged: true }),
    );
  } else if (a.kind === 'denied') {
    // Something to look at, nothing to settle here: the goal's Refused section has every one.
    title = a.title;
    detail = a.detail;
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
  // With several folders, which one: the same gate id may wait in two of them.
  const folderName = folderNameOf(a.goal_id, a.folder);
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
        folderName ? h('span', { class: 'att-folder muted' }, ` in folder ${folderName}`) : null,
        detail ? h('span', { class: 'muted' }, ` · ${detail}`) : null,
      ),
    ),
    actions,
  );
}
