/**
 * The loopback status server: a read-only HTTP projection of the store for dashboards outside
 * VS Code, and the page where a person decides with a passkey. Routes (GET or HEAD unless said):
 *
 *   /healthz        `{"ok":true}`; needs no token
 *   /               the dashboard page (the VS Code webview's page, script and styles, talking to
 *                   this server with fetch and `/events`); needs a session (or the bearer token),
 *                   else a 401 page of fixed text saying how to get a login link
 *   /login?code=C   a one-time login code (login.ts: HMAC of the token, valid once, for 60 s)
 *                   -> 303 to `/` with the session cookie `loopx_session_<port>` (HttpOnly,
 *                   SameSite=Strict, 12 h); a used, expired or bad code -> 401 page, or JSON with
 *                   reason `login_code_used`/`login_code_expired`/`login_code_invalid` when
 *                   `Accept: application/json`; needs no token; HEAD is refused (spends nothing)
 *   /assets/<name>  the page's files from a fixed allow-list (assets.ts); needs no token
 *   /status         the `statusAll` document (schema `loopx.status/1`)
 *   /goals/<id>     the `goalStatus` document (schema `loopx.goal-status/1`); 400 for an invalid
 *                   id, 404 for an unknown goal, 500 naming the file for a goal whose files are broken
 *   /events         Server-Sent Events: `event: snapshot` with the status document at once, then
 *                   again whenever `.loopx/` (minus `local/`) changes; `: heartbeat` every 15 s
 *
 * Deciding from a browser (decide-routes.ts, passkey-routes.ts; docs/SECURITY.md "Deciding from
 * a browser"). The pages are fixed text and `assets/decide.js` (decide-page.ts); their data is
 * JSON (`Accept: application/json`) and needs a session:
 *
 *   /decide                     the gates waiting for a person, and the budgets used up, in every
 *                               workspace the config folder lists
 *   /decide/<ws>/<goal>/<gate>  one gate's facts (views/gate-facts.ts) with Approve / Reject; <ws>
 *                               is `workspaceId(path)`, found only in the config folder's list
 *   /grant/<ws>/<goal>          a goal's budgets (used, limit) with Grant
 *   /reward/<ws>/<goal>         the goal's ended runs (20 newest) with Record reward
 *   /passkey/register?code=C    registers a passkey with a one-time code `loopx key passkey add`
 *                               (or VS Code's Add Passkey) signed with the person's key (passkey-codes.ts; 10 min, once)
 *   POST /passkey/register/options, /passkey/register/verify   {code}, then {id, code, response}
 *   POST /passkey/login/options, /passkey/login/verify         sign in: sets the session cookie,
 *                               remembering the passkey (the only session that may ask to sign)
 *   POST /decide/options        {workspace, goal, decision: approve|reject, gate, note, shown} or
 *                               {workspace, goal, decision: grant, budgets, note, shown}: the event
 *                               is fixed (store/prepared-event.ts) under a one-time id (5 min); the
 *                               answer's WebAuthn challenge is the sha256 of its statement
 *   POST /decide/commit         {id, response}: the id is spent; the assertion is checked by
 *                               @simplewebauthn/server, then by the core's rule, then exactly the
 *                               prepared event is written, or refused (`decision_stale` when the
 *                               goal changed, `decision_challenge_spent`, `passkey_not_verified`)
 *
 * Defences, in the order a request meets them: per-address rate limit (token bucket, 429 with
 * Retry-After; login attempts included) -> Host header must be a loopback name with our port, or
 * `localhost` with any port (a forwarded port; 421; DNS rebinding) -> an Origin header, when sent,
 * must be our own loopback origin or the request's own (403) -> URL at most 2 KB (414) -> GET/HEAD
 * only (405 with `Allow`), except a JSON POST to the endpoints above with an Origin equal to the
 * request's own (403), `Content-Type: application/json` (415) and at most 64 KB (413) -> no
 * request body (413) -> bearer token or session cookie (401 with `WWW-Authenticate: Bearer`). Headers are capped by
 * `maxHeaderSize` (431 from Node) and slow requests by `headersTimeout`/`requestTimeout`. No CORS
 * header is ever sent. Every answer carries nosniff, no-store, no-referrer, DENY framing and a CSP;
 * `/` sends its own CSP with a fresh script nonce per response (only our origin's script, styles,
 * fetch and event stream; no base, no form, no framing). The token never appears in a URL: the
 * login code is derived from it and spent on first use; the session id lives only in the cookie.
 *
 * This file starts and stops the server; the parts are request-guard.ts (the checks), routes.ts,
 * page-routes.ts with login.ts and assets.ts (the page), event-stream.ts with store-watcher.ts
 * (`/events`), decide-routes.ts and passkey-routes.ts with decide-page.ts, passkey-codes.ts,
 * passkey-cose.ts, one-time.ts, json-body.ts and webauthn.ts (deciding), token.ts, loopback.ts
 * and responses.ts.
 *
 * Decisions where the brief is silent (the token's and change detection's are in token.ts and
 * store-watcher.ts):
 * - Log lines carry the method, the path without its query string (control characters
 *   replaced, 200 characters at most), the status and the milliseconds; never a header, so
 *   neither a login code nor a session id reaches a log.
 * - Sessions are kept in memory only: a restarted server signs every browser out; so are the
 *   passkey challenges and the spent registration codes, so a server refuses registration codes
 *   minted before it started (a restart cannot make a spent link good again).
 * - A passkey's signature counter is not kept: passkeys that sync report 0, and a decision's
 *   replay protection is its one-time challenge and its statement, not the counter.
 */
import * as http from 'node:http';
import type * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import { forLogLine, LoopxError, refused, Store, usageError } from '../core/index';
import { defaultAssetsDir } from './assets';
import { createEventStream } from './event-stream';
import { createLoginVerifier, createSessions, loginUrl } from './login';
import { allowedHostHeaders, boundHostName, isLoopbackHost, isWildcard } from './loopback';
import { createPageRoutes } from './page-routes';
import { createRequestGuard, requestPath } from './request-guard';
import { endWithClientError, sendCaught } from './responses';
import { createRequestHandler } from './routes';
import { createDecideRoutes, DECIDE_POST_PATHS } from './decide-routes';
import { passkeyCodes } from './passkey-codes';
import { createPasskeyRoutes, PASSKEY_POST_PATHS } from './passkey-routes';
import { checkGivenToken, readOrCreateToken } from './token';

export { LOGIN_CODE_TTL_MS, loginUrl, mintLoginCode } from './login';
export { isLoopbackHost } from './loopback';
export { MAX_URL_BYTES } from './request-guard';
export { TOKEN_FILE, tokenFile } from './token';

export interface StatusServerOptions {
  workspace: string;
  /** The caller's store of `workspace`, when it has one: its config folder holds the token. */
  store?: Store;
  /** 0 picks a free port. */
  port: number;
  /** Default 127.0.0.1. Anything that is not a loopback address is refused unless `allowUnsafeHost`. */
  host?: string;
  allowUnsafeHost?: boolean;
  /** Use this token instead of the one kept in the config folder (`Store.secretsDir`/status-token). */
  token?: string;
  /** Requests per minute per remote address (token bucket; default 600). */
  rateLimitPerMinute?: number;
  /** One line per request: `GET /status 200 3ms`. Never sees the token. */
  log?: (line: string) => void;
  /** Concurrent `/events` clients before 503 (default 32). */
  maxEventClients?: number;
  /** Milliseconds between SSE heartbeat comments (default 15000). */
  heartbeatMs?: number;
  /** The folder holding dist/webview.js and media/ (default: the one above the running bundle's dist/). */
  assetsDir?: string;
}

export interface StatusServer {
  url: string;
  port: number;
  token: string;
  /** A fresh one-time login link for the dashboard at `/` (valid once, for 60 s). */
  loginUrl(): string;
  /** Also answer to this Host header value (host[:port]), e.g. a forwarded port's address. */
  allowHost(host: string): void;
  close(): Promise<void>;
}

export const MAX_HEADER_BYTES = 8192;
const DEFAULT_RATE_PER_MINUTE = 600;
const DEFAULT_MAX_EVENT_CLIENTS = 32;
const DEFAULT_HEARTBEAT_MS = 15_000;

export async function startStatusServer(opts: StatusServerOptions): Promise<StatusServer> {
  const host = (opts.host ?? '127.0.0.1').trim();
  if (!host) throw usageError('the status server host is empty');
  if (!Number.isInteger(opts.port) || opts.port < 0 || opts.port > 65535) {
    throw usageError(
      `the status server port must be an integer from 0 to 65535, got ${JSON.stringify(opts.port)}`,
    );
  }
  const unsafe = opts.allowUnsafeHost === true;
  if (!unsafe && !isLoopbackHost(host)) {
    throw refused(
      `refusing to bind the status server to ${JSON.stringify(host)}: it is not a loopback address (127.0.0.0/8, ::1, localhost), ` +
        'so other machines could reach it; pass --unsafe-allow-non-loopback only if you mean that',
      { host, reason: 'host_not_loopback' },
    );
  }
  const ratePerMinute = opts.rateLimitPerMinute ?? DEFAULT_RATE_PER_MINUTE;
  if (!(ratePerMinute > 0))
    throw usageError(`rateLimitPerMinute must be above 0, got ${String(ratePerMinute)}`);
  if (opts.token !== undefined) checkGivenToken(opts.token);

  const store = opts.store ?? Store.open(opts.workspace);
  const token = opts.token ?? readOrCreateToken(store);
  const log = (line: string) => {
    try {
      opts.log?.(line);
    } catch {
      // a failing logger must not take a request down
    }
  };
  let boundPort = 0;
  const sessions = createSessions(() => boundPort);
  const guard = createRequestGuard({
    ratePerMinute,
    token,
    sessionValid: (req) => sessions.valid(sessions.fromCookieHeader(req.headers.cookie)),
    postPaths: new Set([...DECIDE_POST_PATHS, ...PASSKEY_POST_PATHS]),
  });
  const events = createEventStream(store, {
    maxClients: opts.maxEventClients ?? DEFAULT_MAX_EVENT_CLIENTS,
    heartbeatMs: opts.heartbeatMs ?? DEFAULT_HEARTBEAT_MS,
  });
  const pages = createPageRoutes({
    port: () => boundPort,
    verifier: createLoginVerifier(token),
    sessions,
    authorized: guard.authorized,
    assetsDir: opts.assetsDir ?? defaultAssetsDir(),
    log,
  });
  const passkeys = createPasskeyRoutes({
    configDir: store.configDir,
    loopxRoot: store.root,
    sessions,
    codes: passkeyCodes(store.configDir),
    log,
  });
  const decide = createDecideRoutes({
    configDir: store.configDir,
    store,
    authorized: guard.authorized,
    passkeys,
    log,
  });
  // The decision pages are pages too: answered before the dashboard's, which knows none of their paths.
  const handle = createRequestHandler(store, guard, events, {
    handle: (req, res, p) =>
      passkeys.handle(req, res, p) || decide.handle(req, res, p) || pages.handle(req, res, p),
  });

  // Node checks headersTimeout/requestTimeout only every `connectionsCheckingInterval` (30 s by
  // default): a slow client would hold its connection (one of maxConnections) for up to 35 s, not 5.
  const server = http.createServer(
    { maxHeaderSize: MAX_HEADER_BYTES, connectionsCheckingInterval: 1000 },
    (req, res) => {
      const started = process.hrtime.bigint();
      const shown = forLogLine(requestPath(req));
      res.once('close', () => {
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        log(`${forLogLine(req.method ?? '?')} ${shown} ${res.statusCode} ${ms.toFixed(1)}ms`);
      });
      try {
        handle(req, res);
      } catch (e) {
        if (!res.headersSent) sendCaught(res, e);
        else res.destroy();
      }
    },
  );
  server.headersTimeout = 5_000;
  server.requestTimeout = 10_000;
  server.keepAliveTimeout = 5_000;
  server.maxHeadersCount = 64;
  server.maxConnections = 256;
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    const status =
      err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    log(`- - ${status} 0.0ms (${forLogLine(err.code ?? 'bad request')})`);
    if (socket.writable && !(socket as net.Socket).destroyed) endWithClientError(socket, status);
    else socket.destroy();
  });

  await new Promise<void>((resolve, reject) => {
    // Another program (or another status server) holding the port is the person's to resolve: the
    // caller names its own way to pick another (the CLI's --port, the editor's setting).
    const onError = (e: NodeJS.ErrnoException) =>
      reject(
        e.code === 'EADDRINUSE'
          ? new LoopxError('internal', `port ${opts.port} is in use`, {
              reason: 'port_in_use',
              port: opts.port,
            })
          : e,
      );
    server.once('error', onError);
    server.listen({ port: opts.port, host: host.replace(/^\[(.*)\]$/, '$1') }, () => {
      server.off('error', onError);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  if (!unsafe && !isLoopbackHost(addr.address)) {
    // `localhost` resolved to something else (a hand-edited hosts file): refuse rather than expose.
    await new Promise<void>((r) => server.close(() => r()));
    throw refused(
      `${JSON.stringify(host)} resolved to ${addr.address}, which is not a loopback address; not serving there`,
      { host, reason: 'host_not_loopback' },
    );
  }
  guard.allowHosts(allowedHostHeaders(host, addr));
  boundPort = addr.port;

  const urlHost = isWildcard(addr.address) ? '127.0.0.1' : boundHostName(addr);
  const url = `http://${urlHost}:${addr.port}`;
  let closing: Promise<void> | undefined;
  return {
    url,
    port: addr.port,
    token,
    loginUrl: () => loginUrl(url, token),
    allowHost: (h) => guard.allowHost(h),
    close() {
      closing ??= new Promise<void>((resolve) => {
        events.close();
        server.close(() => resolve());
        server.closeIdleConnections();
        setTimeout(() => server.closeAllConnections(), 100).unref();
      });
      return closing;
    },
  };
}
