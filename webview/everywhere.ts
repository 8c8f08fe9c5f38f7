/**
 * All workspaces: what needs the person in every workspace LoopX knows on this machine, one queue
 * (core/views/everywhere.ts). In VS Code each item opens its workspace's window (or shows the goal
 * when the workspace is open here); in a browser a gate links to the status server's decision
 * page (`decide/<key>/<goal>/<gate>`, relative, so it works through port forwarding) and every
 * item shows the command that acts on it at a terminal. Hidden when no workspace but this
 * window's is listed.
 */
import type { EverywhereItem, EverywhereSection, StatusMessage } from '../src/core/views/browser';
import { KIND_LABEL } from './attention';
import { badge, button, clear, h } from './dom';
import { inBrowser, send } from './host';
import { everywhereEl } from './skeleton';

/** The Needs you section's words for a kind, and `Agent` for a lane of `loopx drive`. */
const label = (k: EverywhereItem['kind']) => (k === 'lane' ? 'Agent' : (KIND_LABEL[k] ?? k));
const SHOWN = 30;
const KEY = /^[0-9a-f]{32}$/;

export function renderEverywhere(m: StatusMessage): void {
  clear(everywhereEl);
  const section = m.everywhere;
  everywhereEl.hidden = !section;
  if (!section) return;
  everywhereEl.append(
    h(
      'div',
      { class: 'section-head' },
      h('h2', { attrs: { id: 'everywhere-heading' } }, 'All workspaces'),
      section.items.length ? badge(String(section.items.length), 'count-badge') : null,
      h('span', { class: 'muted everywhere-count' }, workspacesLine(section)),
    ),
  );
  if (section.items.length === 0) {
    everywhereEl.append(
      h('p', { class: 'muted calm' }, 'Nothing needs you in any workspace on this machine.'),
    );
    return;
  }
  const list = h('ul', { class: 'attention-list everywhere-list' });
  for (const i of section.items.slice(0, SHOWN)) list.append(item(i));
  everywhereEl.append(list);
  if (section.items.length > SHOWN)
    everywhereEl.append(
      h('p', { class: 'muted' }, `${section.items.length - SHOWN} more: loopx status --all lists every one.`),
    );
  for (const w of section.workspaces.filter((x) => x.problem))
    everywhereEl.append(
      h('p', { class: 'muted everywhere-problem' }, `Could not read ${w.name}: ${w.problem}`),
    );
}

function workspacesLine(s: EverywhereSection): string {
  const n = s.workspaces.length;
  const quiet = s.workspaces.filter((w) => w.items === 0).length;
  return `${n} workspace${n === 1 ? '' : 's'} on this machine${quiet ? ` · ${quiet} with nothing for you` : ''}`;
}

function item(i: EverywhereItem): HTMLLIElement {
  const actions = h('div', { class: 'att-actions' });
  if (!inBrowser) {
    const label = i.here ? 'Show' : 'Open window';
    actions.append(
      button(label, () => send({ type: 'open-workspace', folder: i.folder, goalId: i.goal_id }), {
        secondary: !(i.kind === 'gate'),
        label: `${label}: ${i.workspace}, goal ${i.goal_id}`,
      }),
    );
  } else if (i.kind === 'gate') {
    const link = decideLink(i);
    if (link) actions.append(link);
  }
  return h(
    'li',
    {
      class: `att kind-${i.kind === 'lane' ? 'user-todo' : i.kind}`,
      attrs: {
        'data-kind': i.kind,
        'data-workspace': i.workspace,
        'data-goal': i.goal_id,
        'data-id': i.id,
        'data-here': String(i.here),
      },
    },
    h('span', { class: 'att-kind' }, label(i.kind)),
    h(
      'div',
      { class: 'att-body' },
      h('div', { class: 'att-title' }, i.title),
      h(
        'div',
        { class: 'att-detail' },
        h('span', { class: 'everywhere-workspace' }, i.workspace),
        h('span', { class: 'muted' }, ` · ${i.goal} · ${i.detail}`),
      ),
      i.requested_by ? h('div', { class: 'att-detail muted' }, `asked by ${i.requested_by}`) : null,
      ...(i.commands ?? []).map((c) => h('code', { class: 'everywhere-command' }, `$ ${c}`)),
      inBrowser && i.cli
        ? h('code', { class: 'handoff-cli', title: 'The same from a terminal' }, i.cli)
        : null,
    ),
    actions,
  );
}

/** The decision page's link for a gate, relative to this page; none for a key or id out of shape. */
function decideLink(i: EverywhereItem): HTMLAnchorElement | undefined {
  if (!KEY.test(i.key)) return undefined;
  const a = h('a', { class: 'handoff-link', title: 'Approve or reject with your passkey' });
  // dom.ts refuses `href` from data: this one is built from checked parts, each encoded.
  a.href = `decide/${i.key}/${encodeURIComponent(i.goal_id)}/${encodeURIComponent(i.id)}`;
  a.textContent = 'Decide';
  a.setAttribute('aria-label', `Decide gate ${i.id} of ${i.goal}, in ${i.workspace}`);
  return a;
}
