/** The page's fixed frame: one element per part, each filled by its own view. */
import { append, h } from './dom';

const app = document.getElementById('app') ?? document.body.appendChild(h('div', { attrs: { id: 'app' } }));
export const headerEl = h('header', { class: 'top' });
export const bannerEl = h('div', { class: 'banner', attrs: { role: 'alert' } });
export const attentionEl = h('section', {
  class: 'card attention',
  attrs: { 'aria-labelledby': 'attention-heading' },
});
export const agentsEl = h('section', {
  class: 'card agents',
  attrs: { 'aria-labelledby': 'agents-heading' },
});
export const everywhereEl = h('section', {
  class: 'card everywhere',
  attrs: { 'aria-labelledby': 'everywhere-heading' },
});
export const emptyEl = h('section', { class: 'card empty' });
export const goalsEl = h('section', { class: 'card goals', attrs: { 'aria-labelledby': 'goals-heading' } });
export const detailsEl = h('section', {
  class: 'card details',
  attrs: { 'aria-live': 'polite', 'aria-label': 'Goal details' },
});
export const mainEl = h('div', { class: 'main' }, goalsEl, detailsEl);
bannerEl.hidden = true;
emptyEl.hidden = true;
mainEl.hidden = true;
attentionEl.hidden = true;
agentsEl.hidden = true;
everywhereEl.hidden = true;
export const loadingEl = h(
  'div',
  { class: 'loading' },
  document.createElement('vscode-progress-ring'),
  h('span', null, 'Reading the workspace…'),
);
append(app, [headerEl, bannerEl, loadingEl, attentionEl, everywhereEl, agentsEl, emptyEl, mainEl]);
