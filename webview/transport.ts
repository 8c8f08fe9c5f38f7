/**
 * How the page talks to whatever serves it. In VS Code that is the extension (messages both ways,
 * state kept by VS Code); in a browser it is the loopback status server (`fetch` and Server-Sent
 * Events, state in `sessionStorage`). Both are read-only: see src/core/views/dashboard-protocol.ts. host.ts picks one.
 */
import type { Msg } from '../src/core/views/browser';

export interface Transport {
  readonly kind: 'vscode' | 'browser';
  /** A message for the host; the browser answers only `ready` and `select-goal`. */
  post(msg: Msg): void;
  getState(): unknown;
  setState(state: unknown): void;
  /**
   * `deliver` gets each message from the host, unchecked (host.ts checks it); `recovered` is
   * called when a connection problem it reported is over.
   */
  subscribe(deliver: (m: unknown) => void, recovered: () => void): void;
}
