/**
 * The controls that act (approve, reject, show in tree, open evidence). In VS Code each is a
 * button that posts its message. In a browser the page may not act, so each is a link that hands
 * the message to VS Code's URI handler (which asks the person there) and the exact CLI command,
 * shown as selectable text with a Copy button. Both come from src/core/views/dashboard-links.ts.
 */
import type { Msg } from '../src/core/views/browser';
import { cliCommandFor, DASHBOARD_LINK_PREFIX, vscodeLinkFor } from '../src/core/views/browser';
import { button, h } from './dom';
import { inBrowser, send } from './host';

interface ControlOptions {
  secondary?: boolean;
  label?: string;
  data?: Record<string, string>;
}

export function actionControl(text: string, msg: Msg, opts: ControlOptions = {}): HTMLElement {
  if (!inBrowser) return button(text, () => send(msg), opts);
  return handoff(text, msg, opts);
}

function handoff(text: string, msg: Msg, opts: ControlOptions): HTMLElement {
  const link = vscodeLinkFor(msg);
  const command = cliCommandFor(msg);
  const a = h('a', { class: 'handoff-link', title: 'Opens VS Code, which asks you before anything changes' });
  // dom.ts refuses `href` from data; this one is built and checked by dashboard-links.ts.
  if (!link.startsWith(DASHBOARD_LINK_PREFIX)) throw new Error('refusing a link that is not ours');
  a.href = link;
  a.textContent = `${text} in VS Code`;
  if (opts.label) a.setAttribute('aria-label', `${opts.label} in VS Code`);
  const wrap = h('span', { class: `handoff${opts.secondary ? ' secondary' : ''}` }, a);
  for (const [k, v] of Object.entries(opts.data ?? {})) wrap.setAttribute(`data-${k}`, v);
  if (command) {
    const code = h('code', { class: 'handoff-cli', title: 'The same from a terminal' }, command);
    const copy = button(
      'Copy',
      () => {
        const done = (label: string) => {
          copy.textContent = label;
          setTimeout(() => (copy.textContent = 'Copy'), 2000);
        };
        if (!navigator.clipboard) return done('Select and copy');
        navigator.clipboard.writeText(command).then(
          () => done('Copied'),
          () => done('Select and copy'),
        );
      },
      { secondary: true, label: `Copy the command: ${command}` },
    );
    copy.classList.add('handoff-copy');
    wrap.append(' or ', code, copy);
  }
  return wrap;
}
