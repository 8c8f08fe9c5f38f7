/**
 * The browser's transport, for the page the loopback status server serves at `/`: `ready` reads
 * `/status` and opens `/events` (each `snapshot` is a status message), `select-goal` reads
 * `/goals/<id>`, and the selected goal is read again after every snapshot. Same origin only, with
 * the session cookie the login link set; nothing but GET is ever sent.
 *
 * The selection is kept in `sessionStorage` (per tab, survives a reload, never in the URL a
 * person might paste somewhere).
 */
import type { Msg, NeedsYouDoc } from '../src/core/views/browser';
import { everywhereSection } from '../src/core/views/browser';
import type { Transport } from './transport';

const STATE_KEY = 'loopx.dashboard.state';
/** After the server ended the stream for good (restart, busy), try again this often. */
const REOPEN_MS = 5000;
/**
 * The event stream follows this workspace only: the other workspaces' queue (`/all`) is read
 * again with each snapshot, when the tab comes back into view, and this often while it is seen.
 */
const ALL_EVERY_MS = 30_000;

/** The status server's port: the page's own, or the one in a path proxy's `/proxy/<port>/` (code-server). */
function serverPort(): string {
  const proxied = /\/proxy\/(\d+)\//.exec(location.pathname)?.[1];
  return proxied ?? (location.port || (location.protocol === 'https:' ? '443' : '80'));
}

/** What the person reads when the session is gone: the way to a new one, in words. */
export function signedOutMessage(port = serverPort()): string {
  return `Signed out of the LoopX status server (the login expired or the server restarted): open a new login link with \`loopx status-server --login-link --port ${port}\` in the workspace.`;
}

/** The body class VS Code would set, from the browser's colour scheme. */
function followColorScheme(): void {
  const dark = window.matchMedia?.('(prefers-color-scheme: dark)');
  const apply = () => {
    const isDark = dark?.matches ?? false;
    document.body.classList.toggle('vscode-dark', isDark);
    document.body.classList.toggle('vscode-light', !isDark);
    document.body.dataset.vscodeThemeKind = isDark ? 'vscode-dark' : 'vscode-light';
  };
  apply();
  dark?.addEventListener?.('change', apply);
}

export function browserTransport(): Transport {
  let deliver: (m: unknown) => void = () => {};
  let recovered: () => void = () => {};
  let failing = false;
  let signedOut = false;
  let source: EventSource | undefined;
  let goalSeq = 0;

  const fail = (message: string) => {
    failing = true;
    deliver({ type: 'error', message });
  };
  const ok = () => {
    if (failing && !signedOut) {
      failing = false;
      recovered();
    }
  };
  const signOut = () => {
    signedOut = true;
    source?.close();
    fail(signedOutMessage());
  };

  /** GET `path` as JSON; undefined (after saying why) when it did not answer 200. */
  async function getJson(path: string): Promise<unknown> {
    let res: Response;
    try {
      res = await fetch(path, {
        method: 'GET',
        credentials: 'same-origin',
        cache: 'no-store',
        headers: { Accept: 'application/json' },
      });
    } catch {
      fail(`Lost the connection to the LoopX status server at ${location.host}: is it still running?`);
      return undefined;
    }
    if (res.status === 401) {
      signOut();
      return undefined;
    }
    const body: unknown = await res.json().catch(() => undefined);
    if (!res.ok) {
      const err = (body as { error?: { message?: unknown } } | undefined)?.error;
      fail(
        typeof err?.message === 'string'
          ? err.message
          : `The status server answered ${res.status} for ${path}.`,
      );
      return undefined;
    }
    ok();
    return body;
  }

  let lastStatus: { workspace?: unknown } | undefined;
  /** The status message with All workspaces (read from `/all`) when other workspaces are listed. */
  async function deliverStatus(doc: unknown): Promise<void> {
    lastStatus = doc as { workspace?: unknown };
    const all = (await getJson('all')) as NeedsYouDoc | undefined;
    if (doc !== lastStatus) return; // a newer snapshot is on its way
    const here = typeof lastStatus.workspace === 'string' ? [lastStatus.workspace] : [];
    const everywhere = all && Array.isArray(all.workspaces) ? everywhereSection(all, here) : undefined;
    deliver({ type: 'status', doc, ...(everywhere ? { everywhere } : {}) });
  }
  setInterval(() => {
    if (lastStatus && document.visibilityState === 'visible' && !signedOut) void deliverStatus(lastStatus);
  }, ALL_EVERY_MS);
  document.addEventListener('visibilitychange', () => {
    if (lastStatus && document.visibilityState === 'visible' && !signedOut) void deliverStatus(lastStatus);
  });

  function selectedGoal(): string | undefined {
    const s = readState() as { selected?: { goalId?: unknown } } | undefined;
    return typeof s?.selected?.goalId === 'string' ? s.selected.goalId : undefined;
  }

  async function loadGoal(goalId: string): Promise<void> {
    const seq = ++goalSeq;
    const doc = await getJson(`goals/${encodeURIComponent(goalId)}`);
    // An answer overtaken by a later selection is not shown.
    if (doc && seq === goalSeq) deliver({ type: 'goal', doc });
  }

  function openEvents(): void {
    if (signedOut) return;
    source?.close();
    const es = new EventSource('events');
    source = es;
    es.addEventListener('open', ok);
    es.addEventListener('snapshot', (e) => {
      let doc: unknown;
      try {
        doc = JSON.parse((e as MessageEvent<string>).data);
      } catch {
        return;
      }
      void deliverStatus(doc);
      const goalId = selectedGoal();
      if (goalId) void loadGoal(goalId);
    });
    es.addEventListener('error', (e) => {
      const data = (e as MessageEvent<string>).data;
      if (typeof data === 'string') {
        // The server's own `event: error`: it could not read the store.
        let message = 'The status server could not read the workspace.';
        try {
          const m = (JSON.parse(data) as { error?: { message?: unknown } }).error?.message;
          if (typeof m === 'string') message = m;
        } catch {
          // keep the general message
        }
        fail(message);
        return;
      }
      if (es !== source) return;
      if (es.readyState === EventSource.CLOSED) {
        // A refused stream is not retried by the browser: ask /status why, then try again.
        void getJson('status').then((doc) => {
          if (signedOut || es !== source) return;
          if (doc) void deliverStatus(doc);
          setTimeout(() => {
            if (es === source) openEvents();
          }, REOPEN_MS);
        });
      } else {
        fail(`Lost the connection to the LoopX status server at ${location.host}; reconnecting…`);
      }
    });
  }

  function readState(): unknown {
    try {
      const raw = sessionStorage.getItem(STATE_KEY);
      return raw ? (JSON.parse(raw) as unknown) : undefined;
    } catch {
      return undefined;
    }
  }

  return {
    kind: 'browser',
    post(msg: Msg) {
      if (msg.type === 'ready') {
        void getJson('status').then((doc) => {
          if (doc) void deliverStatus(doc);
          openEvents();
        });
      } else if (msg.type === 'select-goal') {
        void loadGoal(msg.goalId);
      } else {
        // The browser's controls are links (see handoff.ts); nothing here changes state.
        console.warn(`[loopx] ${msg.type} is not available in the browser`);
      }
    },
    getState: readState,
    setState(s) {
      try {
        sessionStorage.setItem(STATE_KEY, JSON.stringify(s ?? {}));
      } catch {
        // storage off: the selection lasts until the tab reloads
      }
    },
    subscribe(d, r) {
      deliver = d;
      recovered = r;
      if (document.body) followColorScheme();
      else document.addEventListener('DOMContentLoaded', followColorScheme, { once: true });
    },
  };
}
