/** The page's header (counts by status), the error banner, and the first steps when there are no goals. */
import type { StatusDoc } from '../src/core/views/browser';
import { append, button, clear, h, type Child } from './dom';
import { fmtDate } from './format';
import { bannerEl, emptyEl, headerEl } from './skeleton';
import { state } from './state';

export function renderHeader(doc: StatusDoc): void {
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

export function renderBanner(doc: StatusDoc | undefined): void {
  clear(bannerEl);
  const lines: Child[] = [];
  const { hostError } = state;
  if (hostError) lines.push(h('p', null, hostError));
  for (const e of doc?.errors ?? [])
    lines.push(h('p', null, h('strong', null, `Goal ${e.goal_id} could not be read: `), e.message));
  if (doc?.policy?.message)
    lines.push(
      h('p', { class: 'policy-notice' }, h('strong', null, 'Workspace policy: '), doc.policy.message),
    );
  bannerEl.hidden = lines.length === 0;
  const dismiss = () => {
    state.hostError = undefined;
    renderBanner(state.status?.doc);
  };
  if (lines.length)
    append(bannerEl, [
      h('div', { class: 'banner-text' }, ...lines),
      hostError ? button('Dismiss', dismiss, { secondary: true }) : null,
    ]);
}

export function renderEmpty(doc: StatusDoc): void {
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
