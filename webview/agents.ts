/**
 * The Agents section: the lanes of `loopx drive`, read-only, in the words the extension made for
 * them (core/views/lane-text.ts, the tree's too): name, state, goal, runtime and branch, why, the
 * last turn and what it spent. Absent from the message (the browser's page, a workspace with no
 * lanes): the section is hidden.
 */
import type { AgentRow, LaneTone, StatusMessage } from '../src/core/views/browser';
import { badge, clear, h } from './dom';
import { agentsEl } from './skeleton';

/** The dot of each state (colour never carries the text: the state's words are beside it). */
const TONE_DOT: Record<LaneTone, string> = {
  working: 'tone-blue',
  asleep: 'tone-grey',
  needs: 'tone-orange',
  stopped: 'tone-red',
  done: 'tone-green',
  idle: 'tone-grey',
  off: 'tone-grey',
};

export function renderAgents(m: StatusMessage): void {
  clear(agentsEl);
  const section = m.agents;
  agentsEl.hidden = !section;
  if (!section) return;
  agentsEl.append(
    h(
      'div',
      { class: 'section-head' },
      h('h2', { attrs: { id: 'agents-heading' } }, 'Agents'),
      badge(String(section.rows.length), 'count-badge'),
      h('span', { class: 'muted agents-driver' }, `loopx drive: ${section.driver}`),
    ),
  );
  const list = h('ul', { class: 'agent-list' });
  for (const r of section.rows) list.append(agentItem(r));
  agentsEl.append(list);
}

function agentItem(r: AgentRow): HTMLElement {
  const facts = [r.last ? `last turn ${r.last}` : 'no turn yet', `spent ${r.spend}`].join(' · ');
  return h(
    'li',
    {
      class: `agent tone-${r.tone}`,
      attrs: { 'data-lane': r.name, 'data-tone': r.tone, 'data-folder': r.folder },
    },
    h(
      'div',
      { class: 'agent-head' },
      h('span', { class: 'agent-name' }, r.name),
      badge(r.state, 'agent-state', TONE_DOT[r.tone]),
      r.folder ? h('span', { class: 'muted agent-folder' }, `in folder ${r.folder}`) : null,
    ),
    h(
      'div',
      { class: 'agent-goal' },
      h('span', { class: 'agent-goal-title' }, r.goal),
      h('span', { class: 'muted' }, ` · ${r.runtime}${r.branch ? ` on branch ${r.branch}` : ''}`),
    ),
    r.why ? h('div', { class: 'agent-why muted' }, r.why) : null,
    h('div', { class: 'agent-facts muted' }, facts),
  );
}
