/** Building the decision pages as DOM nodes: every piece of store text goes in as text, never as HTML. */

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: { class?: string; text?: string; href?: string } = {},
  children: (Node | string)[] = [],
): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (props.class) e.className = props.class;
  if (props.text !== undefined) e.textContent = props.text;
  if (props.href !== undefined) e.setAttribute('href', props.href);
  for (const c of children) e.append(c);
  return e;
}

export const app = document.getElementById('app') as HTMLElement;

export function show(...nodes: Node[]): void {
  app.replaceChildren(...nodes);
}

/** A message under the page's controls: `done`, `error` or plain. */
export function message(text: string, kind: 'done' | 'error' | 'info' = 'info'): HTMLElement {
  const m = el('div', { class: `message ${kind}`, text });
  m.setAttribute('role', kind === 'error' ? 'alert' : 'status');
  return m;
}

export function setWho(name: string | undefined): void {
  const who = document.getElementById('who');
  if (who) who.textContent = name ? `Signed in with passkey ${name}` : '';
}

/** Passkeys need a host name: an address (127.0.0.1, [::1]) is no RP ID. */
export function atAddress(): boolean {
  const h = location.hostname;
  return /^[0-9.]+$/.test(h) || h.includes(':') || h.startsWith('[');
}

/** The notice shown at an address instead of the page, with the same page at localhost. */
export function addressNotice(): HTMLElement {
  const here = `${location.protocol}//localhost${location.port ? `:${location.port}` : ''}${location.pathname}${location.search}`;
  return el('div', {}, [
    el('h2', { text: 'Open this page at localhost' }),
    el('p', {
      text: 'Passkeys are bound to a host name, and this page is open at an address. The same page at localhost (same port):',
    }),
    el('p', {}, [el('a', { href: here, text: here })]),
  ]);
}
