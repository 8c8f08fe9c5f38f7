/**
 * The page's only link to whatever serves it (the extension, or the status server in a browser;
 * see transport.ts): messages both ways (see src/core/views/dashboard-protocol.ts) and the state kept for the
 * page while it is hidden or reloaded.
 */
import type { GoalMessage, HostMessage, Msg, StatusMessage } from '../src/core/views/browser';
import type { Transport } from './transport';
import { browserTransport } from './transport-browser';
import { vscodeTransport } from './transport-vscode';

declare function acquireVsCodeApi(): unknown;

const transport: Transport = typeof acquireVsCodeApi === 'function' ? vscodeTransport() : browserTransport();

export const send = (msg: Msg) => transport.post(msg);

/** In a browser no control may act: each becomes a `vscode://` link plus a CLI command. */
export const inBrowser = transport.kind === 'browser';

export const withFolder = (folder?: string) => (folder ? { folder } : {});

export interface Selected {
  goalId: string;
  folder?: string;
}

export function restoreSelection(): Selected | undefined {
  const s = transport.getState() as { selected?: Selected } | undefined;
  const sel = s?.selected;
  return sel && typeof sel.goalId === 'string' && (sel.folder === undefined || typeof sel.folder === 'string')
    ? sel
    : undefined;
}

export function saveSelection(selected: Selected | undefined): void {
  transport.setState(selected ? { selected } : {});
}

export interface HostHandlers {
  status(m: StatusMessage): void;
  goal(m: GoalMessage): void;
  /** A message from the extension, or this page's own failure to render one. */
  error(message: string): void;
  /** The connection problem last reported through `error` is over. */
  recovered(): void;
}

export function listen(on: HostHandlers): void {
  transport.subscribe((data) => {
    const m = data as HostMessage | undefined;
    if (!m || typeof m !== 'object') return;
    try {
      if (m.type === 'status' && m.doc && Array.isArray(m.doc.goals)) on.status(m);
      else if (m.type === 'goal' && m.doc) on.goal(m);
      else if (m.type === 'error' && typeof m.message === 'string') on.error(m.message);
    } catch (err) {
      console.error('[loopx] could not render', err);
      on.error(`The dashboard could not render this update: ${(err as Error)?.message ?? String(err)}`);
    }
  }, on.recovered);
}

/** Asks for the first status message, and for the goal the page showed before it was reloaded. */
export function announceReady(selected: Selected | undefined): void {
  send({ type: 'ready' });
  if (selected) send({ type: 'select-goal', goalId: selected.goalId, ...withFolder(selected.folder) });
}
