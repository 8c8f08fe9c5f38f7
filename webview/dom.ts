/** DOM builders that take text only: strings become text nodes or checked attribute values. */
export type Child = Node | string | number | null | undefined | false;
interface Props {
  class?: string;
  attrs?: Record<string, string | undefined>;
  title?: string;
  onClick?: () => void;
}

export function setAttr(el: Element, name: string, value: string): void {
  // Handlers, inline styles and nested documents never come from here.
  if (/^(on|style$|srcdoc$|href$|src$)/i.test(name)) throw new Error(`refusing to set the ${name} attribute`);
  el.setAttribute(name, value);
}

export function append(el: Node, children: readonly Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    el.appendChild(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
  }
}

export function h<K extends keyof HTMLElementTagNameMap>(
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
export function svg(
  tag: string,
  attrs: Record<string, string | number | undefined> = {},
  ...children: Child[]
): SVGElement {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined) setAttr(el, k, String(v));
  append(el, children);
  return el;
}

export function clear(el: Element): void {
  while (el.lastChild) el.removeChild(el.lastChild);
}

/** A badge in the theme's badge colours; `tone` adds a coloured dot (colour never carries text). */
export function badge(text: string, cls = '', tone = ''): HTMLElement {
  const b = document.createElement('vscode-badge');
  if (cls) b.className = cls;
  if (tone) b.append(h('span', { class: `dot ${tone}`, attrs: { 'aria-hidden': 'true' } }));
  b.append(h('span', { class: 'badge-text' }, text));
  return b;
}
export const badgeText = (b: HTMLElement) => b.querySelector('.badge-text') as HTMLElement;

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
export const tone = (s: string) => TONE[s] ?? 'tone-grey';

export function button(
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

export function progressBar(done: number, total: number, label: string): HTMLElement {
  const p = document.createElement('vscode-progress-bar');
  p.max = Math.max(1, total);
  p.value = total ? done : 0;
  p.ariaLabel = label;
  return p;
}
