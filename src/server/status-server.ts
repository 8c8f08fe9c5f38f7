/**
 * The loopback status server: a read-only HTTP projection of the store for dashboards outside
 * VS Code. Routes (GET or HEAD only):
 *
 *   /healthz        `{"ok":true}`; the only route that needs no token
 *   /status         the `statusAll` document (schema `loopx.status/1`)
 *   /goals/<id>     the `goalStatus` document (schema `loopx.goal-status/1`); 400 for an invalid
 *                   id, 404 for an unknown goal, 500 naming the file for a goal whose files are broken
 *   /events         Server-Sent Events: `event: snapshot` with the status document at once, then
 *                   again whenever `.loopx/` (minus `local/`) changes; `: heartbeat` every 15 s
 *
 * Defences, in the order a request meets them: per-address rate limit (token bucket, 429 with
 * Retry-After) -> Host header must be a loopback name with our port (421; DNS rebinding) -> an
 * Origin header, when sent, must be our own loopback origin (403) -> URL at most 2 KB (414) ->
 * GET/HEAD only (405 with `Allow`) -> no request body (413) -> bearer token (401 with
 * `WWW-Authenticate: Bearer`). Headers are capped by `maxHeaderSize` (431 from Node) and slow
 * requests by `headersTimeout`/`requestTimeout`. No CORS header is ever sent.
 *
 * Decisions where the brief is silent:
 * - The token is 32 random bytes, hex, kept in `.loopx/local/status-token` (0600) through
 *   `Store.localSecret`, so it is reused across restarts; a caller may pass its own instead
 *   (then nothing is written). When `local/` has no `.gitignore` (a fresh clone: the `*` in it
 *   ignores itself, so it is never committed) the server writes it next to the token, so the
 *   token cannot be committed by `git add .loopx`. Those are the only writes the server makes.
 * - A snapshot is pushed when a fingerprint of the store (index.json, policy.json, the goals
 *   folder, each goal folder and its events.jsonl: mtime, size, inode) changes. fs.watch is the
 *   fast trigger (recursive on macOS and Windows; on Linux the root, `goals/` and each goal folder,
 *   non-recursively), a 500 ms poll of the same fingerprint the fallback. At most one push per
 *   200 ms; watching runs only while an SSE client is connected.
 * - Log lines carry the method, the path without its query string (control characters
 *   replaced, 200 characters at most), the status and the milliseconds; never a header.
 */
import * as http from 'node:http';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import {
  Store,
  statusAll,
  goalStatus,
  checkId,
  LoopxError,
  corrupt,
  refused,
  usageError,
  ID_PATTERN,
} from '../core/index';

export interface StatusServerOptions {
  workspace: string;
  /** 0 picks a free port. */
  port: number;
  /** Default 127.0.0.1. Anything that is not a loopback address is refused unless `allowUnsafeHost`. */
  host?: string;
  allowUnsafeHost?: boolean;
  /** Use this token instead of the one kept in `.loopx/local/status-token`. */
  token?: string;
  /** Requests per minute per remote address (token bucket; default 600). */
  rateLimitPerMinute?: number;
  /** One line per request: `GET /status 200 3ms`. Never sees the token. */
  log?: (line: string) => void;
  /** Concurrent `/events` clients before 503 (default 32). */
  maxEventClients?: number;
  /** Milliseconds between SSE heartbeat comments (default 15000). */
  heartbeatMs?: number;
}

export interface StatusServer {
  url: string;
  port: number;
  token: string;
  close(): Promise<void>;
}

export const TOKEN_FILE = 'status-token';
export const MAX_URL_BYTES = 2048;
export const MAX_HEADER_BYTES = 8192;
const DEFAULT_RATE_PER_MINUTE = 600;
const DEFAULT_MAX_EVENT_CLIENTS = 32;
const DEFAULT_HEARTBEAT_MS = 15_000;
const POLL_MS = 500;
const MIN_PUSH_INTERVAL_MS = 200;
/** A little delay after a watcher event, so one commit (log, snapshot, index) becomes one push. */
const SETTLE_MS = 25;
/** An SSE client that lets this much pile up unread is dropped. */
const MAX_SSE_BACKLOG_BYTES = 4 * 1024 * 1024;
/** Goal folders watched individually (Linux); beyond that the poll covers them. */
const MAX_GOAL_WATCHERS = 1000;
const MAX_RATE_BUCKETS = 10_000;
const TOKEN_RULE = /^[A-Za-z0-9._~+/=-]{16,512}$/;

const SECURITY_HEADERS: Record<string, string> = {
  'X-Content-Type-Options': 'nosniff',
  'Cache-Control': 'no-store',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'",
  'Cross-Origin-Resource-Policy': 'same-origin',
};
const JSON_TYPE = 'application/json; charset=utf-8';

/** True for 127.0.0.0/8, ::1 (also written out or IPv4-mapped) and `localhost`. */
export function isLoopbackHost(host: string): boolean {
  let h = host.trim().toLowerCase();
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  if (h === 'localhost') return true;
  if (h.startsWith('::ffff:') && net.isIPv4(h.slice(7))) h = h.slice(7);
  if (net.isIPv4(h)) return h.split('.')[0] === '127';
  if (net.isIPv6(h)) {
    // Every spelling of ::1 ("0:0:0:0:0:0:0:1", "::0:1", ...).
    const [head = '', tail = ''] = h.includes('::') ? h.split('::') : [h, ''];
    const groups = [...(head ? head.split(':') : []), ...(tail ? tail.split(':') : [])];
    if (groups.length === 0 || groups.some((g) => !/^[0-9a-f]{1,4}$/.test(g))) return false;
    const nums = groups.map((g) => parseInt(g, 16));
    return nums.at(-1) === 1 && nums.slice(0, -1).every((n) => n === 0);
  }
  return false;
}

const isWildcard = (h: string) => h === '0.0.0.0' || h === '::' || h === '[::]';

function sanitizeForLog(s: string): string {
  const clean = s.replace(/[\u0000-\u001f\u007f-\u009f]/g, '?');
  return clean.length > 200 ? clean.slice(0, 200) + '…' : clean;
}

const sha = (s: string) => createHash('sha256').update(s, 'utf8').digest();

function httpStatusOf(e: unknown): number {
  if (!(e instanceof LoopxError)) return 500;
  switch (e.kind) {
    case 'usage':
      return 400;
    case 'not_found':
      return 404;
    case 'refused':
      return 403;
    case 'conflict':
      return 409;
    default:
      return 500;
  }
}

interface RateBucket {
  tokens: number;
  at: number;
}

interface SseClient {
  res: http.ServerResponse;
}

function readOrCreateToken(store: Store): string {
  const file = path.join(store.localDir, TOKEN_FILE);
  const token = store.localSecret(TOKEN_FILE, 32).toString('hex');
  if (token.length < 32) {
    throw corrupt(
      `${file} does not hold a token (at least 16 bytes as hex): delete it and start the server again to make a new one`,
      { file },
    );
  }
  const ignore = path.join(store.localDir, '.gitignore');
  if (!fs.existsSync(ignore)) {
    try {
      fs.writeFileSync(ignore, '# Machine-local: signing keys, locks, tokens. Never commit.\n*\n', {
        flag: 'wx',
      });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
  }
  return token;
}

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
        'so other machines could reach it; pass the unsafe-host flag only if you mean that',
      { host },
    );
  }
  const ratePerMinute = opts.rateLimitPerMinute ?? DEFAULT_RATE_PER_MINUTE;
  if (!(ratePerMinute > 0))
    throw usageError(`rateLimitPerMinute must be above 0, got ${String(ratePerMinute)}`);
  const maxEventClients = opts.maxEventClients ?? DEFAULT_MAX_EVENT_CLIENTS;
  const heartbeatMs = opts.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
  if (opts.token !== undefined && !TOKEN_RULE.test(opts.token)) {
    throw usageError('the status server token must be 16-512 characters of letters, digits and ._~+/=-');
  }

  const store = Store.open(opts.workspace);
  const token = opts.token ?? readOrCreateToken(store);
  const tokenHash = sha(token);
  const log = (line: string) => {
    try {
      opts.log?.(line);
    } catch {
      // a failing logger must not take a request down
    }
  };

  // -------------------------------------------------------------------------------------------
  // Rate limit: a token bucket per remote address, `ratePerMinute` deep, refilled continuously.
  const buckets = new Map<string, RateBucket>();
  const perMs = ratePerMinute / 60_000;
  function takeToken(addr: string): number {
    const now = Date.now();
    let b = buckets.get(addr);
    if (!b) {
      if (buckets.size >= MAX_RATE_BUCKETS) {
        // Forget the buckets that have refilled: they hold no information.
        for (const [k, v] of buckets) if (v.tokens + (now - v.at) * perMs >= ratePerMinute) buckets.delete(k);
        if (buckets.size >= MAX_RATE_BUCKETS) buckets.delete(buckets.keys().next().value as string);
      }
      b = { tokens: ratePerMinute, at: now };
      buckets.set(addr, b);
    }
    b.tokens = Math.min(ratePerMinute, b.tokens + (now - b.at) * perMs);
    b.at = now;
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - b.tokens) / perMs / 1000)); // seconds until one token
  }

  // -------------------------------------------------------------------------------------------
  // Responses

  function send(
    res: http.ServerResponse,
    status: number,
    body: unknown,
    headers: Record<string, string> = {},
  ) {
    const text = JSON.stringify(body) + '\n';
    res.writeHead(status, {
      ...SECURITY_HEADERS,
      'Content-Type': JSON_TYPE,
      'Content-Length': String(Buffer.byteLength(text)),
      ...headers,
    });
    res.end(text);
  }

  function sendError(
    res: http.ServerResponse,
    status: number,
    kind: string,
    message: string,
    extra: Record<string, unknown> = {},
    headers: Record<string, string> = {},
  ) {
    send(res, status, { error: { status, kind, message, ...extra } }, headers);
  }

  function sendCaught(res: http.ServerResponse, e: unknown) {
    const status = httpStatusOf(e);
    const kind = e instanceof LoopxError ? e.kind : 'internal';
    const message = e instanceof Error ? e.message : String(e);
    const extra: Record<string, unknown> = {};
    if (e instanceof LoopxError) {
      for (const k of ['file', 'line', 'goalId', 'field'] as const)
        if (e.details[k] !== undefined) extra[k === 'goalId' ? 'goal_id' : k] = e.details[k];
    }
    sendError(res, status, kind, message, extra);
  }

  // -------------------------------------------------------------------------------------------
  // Server-Sent Events

  const clients = new Set<SseClient>();
  let eventSeq = 0;
  let watching = false;
  let lastFingerprint = '';
  let lastPushAt = 0;
  let checkTimer: NodeJS.Timeout | undefined;
  let pollTimer: NodeJS.Timeout | undefined;
  let heartbeatTimer: NodeJS.Timeout | undefined;
  const watchers = new Map<string, fs.FSWatcher>();
  const recursiveWatch = process.platform === 'darwin' || process.platform === 'win32';
  const goalsDir = path.join(store.root, 'goals');

  function statPart(p: string): string {
    try {
      const s = fs.statSync(p);
      return `${s.mtimeMs}:${s.size}:${s.ino}`;
    } catch {
      return '-';
    }
  }

  function goalFolderNames(): string[] {
    try {
      return fs
        .readdirSync(goalsDir)
        .filter((n) => ID_PATTERN.test(n))
        .sort();
    } catch {
      return [];
    }
  }

  /** What changes when any writer changes the store (local/ is not part of it). */
  function fingerprint(names = goalFolderNames()): string {
    const parts = [statPart(store.indexPath), statPart(store.policyPath), statPart(goalsDir)];
    for (const n of names) {
      const dir = path.join(goalsDir, n);
      parts.push(`${n}=${statPart(dir)}/${statPart(path.join(dir, 'events.jsonl'))}`);
    }
    return parts.join('|');
  }

  function frame(event: string, data: unknown): string {
    // JSON.stringify escapes newlines inside strings, so the data is one line.
    return `event: ${event}\nid: ${++eventSeq}\ndata: ${JSON.stringify(data)}\n\n`;
  }

  function snapshotFrame(): string {
    try {
      return frame('snapshot', statusAll(store));
    } catch (e) {
      return frame('error', {
        error: { kind: e instanceof LoopxError ? e.kind : 'internal', message: (e as Error).message },
      });
    }
  }

  function writeTo(c: SseClient, chunk: string) {
    if (c.res.destroyed) return;
    c.res.write(chunk);
    if (c.res.writableLength > MAX_SSE_BACKLOG_BYTES) c.res.destroy(); // a reader that stopped reading
  }

  function push() {
    lastPushAt = Date.now();
    const chunk = snapshotFrame();
    for (const c of clients) writeTo(c, chunk);
  }

  function check() {
    if (!watching) return;
    const names = goalFolderNames();
    if (!recursiveWatch) syncGoalWatchers(names);
    const fp = fingerprint(names);
    if (fp === lastFingerprint) return;
    lastFingerprint = fp; // taken before the document is read: a later change is seen by the next check
    push();
  }

  function scheduleCheck() {
    if (!watching || checkTimer) return;
    const delay = Math.max(SETTLE_MS, lastPushAt + MIN_PUSH_INTERVAL_MS - Date.now());
    checkTimer = setTimeout(() => {
      checkTimer = undefined;
      try {
        check();
      } catch {
        // the next poll tries again
      }
    }, delay);
  }

  function addWatcher(key: string, dir: string, recursive: boolean) {
    if (watchers.has(key)) return;
    try {
      const w = fs.watch(dir, { persistent: false, recursive }, (_event, filename) => {
        const name = filename ? String(filename) : '';
        if (
          key === 'root' &&
          (name === 'local' || name.startsWith(`local${path.sep}`) || name.startsWith('local/'))
        )
          return;
        scheduleCheck();
      });
      w.on('error', () => {
        w.close();
        watchers.delete(key);
      });
      watchers.set(key, w);
    } catch {
      // unsupported here, or out of watches: the poll covers it
    }
  }

  function syncGoalWatchers(names: string[]) {
    const wanted = new Set(names.slice(0, MAX_GOAL_WATCHERS).map((n) => `goal:${n}`));
    for (const [key, w] of watchers) {
      if (key.startsWith('goal:') && !wanted.has(key)) {
        w.close();
        watchers.delete(key);
      }
    }
    for (const key of wanted) addWatcher(key, path.join(goalsDir, key.slice(5)), false);
  }

  function startWatching() {
    if (watching) return;
    watching = true;
    lastFingerprint = fingerprint();
    if (recursiveWatch) {
      addWatcher('root', store.root, true);
    } else {
      addWatcher('root', store.root, false);
      addWatcher('goals', goalsDir, false);
      syncGoalWatchers(goalFolderNames());
    }
    pollTimer = setInterval(scheduleCheck, POLL_MS);
    heartbeatTimer = setInterval(() => {
      for (const c of clients) writeTo(c, ': heartbeat\n\n');
    }, heartbeatMs);
  }

  function stopWatching() {
    watching = false;
    for (const w of watchers.values()) w.close();
    watchers.clear();
    for (const t of [checkTimer, pollTimer]) if (t) clearTimeout(t);
    if (heartbeatTimer) clearInterval(heartbeatTimer);
    checkTimer = pollTimer = heartbeatTimer = undefined;
  }

  function openEvents(req: http.IncomingMessage, res: http.ServerResponse) {
    if (clients.size >= maxEventClients) {
      sendError(
        res,
        503,
        'busy',
        `too many event stream clients (${maxEventClients}); try again later`,
        {},
        { 'Retry-After': '5' },
      );
      return;
    }
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      'Content-Type': 'text/event-stream; charset=utf-8',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    res.socket?.setNoDelay(true);
    const client: SseClient = { res };
    clients.add(client);
    startWatching(); // before the first document, so a change made meanwhile is pushed after it
    res.write('retry: 2000\n\n');
    writeTo(client, snapshotFrame());
    res.on('close', () => {
      clients.delete(client);
      if (clients.size === 0) stopWatching();
    });
  }

  // -------------------------------------------------------------------------------------------
  // Requests

  let boundPort = 0;
  let allowedHosts = new Set<string>();
  let allowedOrigins = new Set<string>();

  function hostAllowed(value: string | undefined): boolean {
    return value !== undefined && allowedHosts.has(value.toLowerCase());
  }

  function authorized(header: string | undefined): boolean {
    const m = /^Bearer[ \t]+([^\s]+)[ \t]*$/i.exec(header ?? '');
    // Compare hashes: equal length always, so timingSafeEqual never throws and leaks no length.
    return !!m && timingSafeEqual(sha(m[1]!), tokenHash);
  }

  function handle(req: http.IncomingMessage, res: http.ServerResponse) {
    const rawUrl = req.url ?? '';
    const method = req.method ?? '';
    const q = rawUrl.indexOf('?');
    const pathname = q === -1 ? rawUrl : rawUrl.slice(0, q);

    const wait = takeToken(req.socket.remoteAddress ?? 'unknown');
    if (wait > 0) {
      return sendError(
        res,
        429,
        'rate_limited',
        `too many requests; try again in ${wait} s`,
        {},
        { 'Retry-After': String(wait) },
      );
    }
    if (!hostAllowed(req.headers.host)) {
      return sendError(
        res,
        421,
        'misdirected',
        `the Host header must be one of ${[...allowedHosts].slice(0, 3).join(', ')}`,
      );
    }
    const origin = req.headers.origin;
    if (origin !== undefined && !allowedOrigins.has(origin.toLowerCase())) {
      return sendError(res, 403, 'forbidden', 'cross-origin requests are not allowed');
    }
    if (Buffer.byteLength(rawUrl) > MAX_URL_BYTES) {
      return sendError(res, 414, 'uri_too_long', `the URL is longer than ${MAX_URL_BYTES} bytes`);
    }
    const hasBody =
      req.headers['transfer-encoding'] !== undefined ||
      (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');
    if (method !== 'GET' && method !== 'HEAD') {
      return sendError(
        res,
        405,
        'method_not_allowed',
        `${sanitizeForLog(method)} is not allowed: this server is read-only`,
        {},
        {
          Allow: 'GET, HEAD',
          ...(hasBody ? { Connection: 'close' } : {}),
        },
      );
    }
    if (hasBody) {
      return sendError(
        res,
        413,
        'payload_too_large',
        'a request body is not accepted',
        {},
        { Connection: 'close' },
      );
    }
    if (!pathname.startsWith('/')) {
      return sendError(res, 400, 'usage', 'the request target must be a path');
    }
    if (pathname === '/healthz') return send(res, 200, { ok: true });

    if (!authorized(req.headers.authorization)) {
      const had = req.headers.authorization !== undefined;
      return sendError(
        res,
        401,
        'unauthorized',
        had ? 'the bearer token is wrong' : 'a bearer token is required (Authorization: Bearer <token>)',
        {},
        {
          'WWW-Authenticate': had ? 'Bearer realm="loopx", error="invalid_token"' : 'Bearer realm="loopx"',
        },
      );
    }

    if (pathname === '/status') {
      try {
        return send(res, 200, statusAll(store));
      } catch (e) {
        return sendCaught(res, e);
      }
    }
    if (pathname === '/events') return openEvents(req, res);
    const m = /^\/goals\/([^/]*)$/.exec(pathname);
    if (m) {
      let id: string;
      try {
        id = decodeURIComponent(m[1]!);
      } catch {
        return sendError(
          res,
          400,
          'usage',
          `goal id ${JSON.stringify(sanitizeForLog(m[1]!))} is not valid percent-encoding`,
        );
      }
      try {
        checkId(id, 'goal id');
        return send(res, 200, goalStatus(store, id));
      } catch (e) {
        return sendCaught(res, e);
      }
    }
    return sendError(
      res,
      404,
      'not_found',
      `no route ${JSON.stringify(sanitizeForLog(pathname))}: try /status, /goals/<id>, /events or /healthz`,
    );
  }

  // Node checks headersTimeout/requestTimeout only every `connectionsCheckingInterval` (30 s by
  // default): a slow client would hold its connection (one of maxConnections) for up to 35 s, not 5.
  const server = http.createServer(
    { maxHeaderSize: MAX_HEADER_BYTES, connectionsCheckingInterval: 1000 },
    (req, res) => {
      const started = process.hrtime.bigint();
      const rawUrl = req.url ?? '';
      const q = rawUrl.indexOf('?');
      const shown = sanitizeForLog(q === -1 ? rawUrl : rawUrl.slice(0, q));
      res.once('close', () => {
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        log(`${sanitizeForLog(req.method ?? '?')} ${shown} ${res.statusCode} ${ms.toFixed(1)}ms`);
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
    log(`- - ${status} 0.0ms (${sanitizeForLog(err.code ?? 'bad request')})`);
    if (socket.writable && !(socket as net.Socket).destroyed) {
      const body =
        JSON.stringify({
          error: { status, kind: 'bad_request', message: http.STATUS_CODES[status] ?? 'bad request' },
        }) + '\n';
      socket.end(
        `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Type: ${JSON_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
          `X-Content-Type-Options: nosniff\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${body}`,
      );
    } else {
      socket.destroy();
    }
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: opts.port, host: host.replace(/^\[(.*)\]$/, '$1') }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  if (!unsafe && !isLoopbackHost(addr.address)) {
    // `localhost` resolved to something else (a hand-edited hosts file): refuse rather than expose.
    await new Promise<void>((r) => server.close(() => r()));
    throw refused(
      `${JSON.stringify(host)} resolved to ${addr.address}, which is not a loopback address; not serving there`,
      { host },
    );
  }
  boundPort = addr.port;

  const names = new Set(['127.0.0.1', 'localhost', '[::1]']);
  const boundName = addr.family === 'IPv6' || addr.address.includes(':') ? `[${addr.address}]` : addr.address;
  if (!isWildcard(addr.address)) names.add(boundName.toLowerCase());
  if (!isLoopbackHost(host) && !net.isIP(host)) names.add(host.toLowerCase()); // a name given with the unsafe flag
  if (isWildcard(addr.address)) {
    // Bound everywhere (unsafe flag): this machine's own addresses are acceptable Host values.
    for (const list of Object.values(os.networkInterfaces())) {
      for (const i of list ?? []) names.add(i.family === 'IPv6' ? `[${i.address.toLowerCase()}]` : i.address);
    }
  }
  allowedHosts = new Set(
    [...names].flatMap((n) => (boundPort === 80 ? [`${n}:${boundPort}`, n] : [`${n}:${boundPort}`])),
  );
  allowedOrigins = new Set([...allowedHosts].map((h) => `http://${h}`));

  const urlHost = isWildcard(addr.address) ? '127.0.0.1' : boundName;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${urlHost}:${boundPort}`,
    port: boundPort,
    token,
    close() {
      closing ??= new Promise<void>((resolve) => {
        stopWatching();
        for (const c of clients) c.res.end();
        clients.clear();
        server.close(() => resolve());
        server.closeIdleConnections();
        setTimeout(() => server.closeAllConnections(), 100).unref();
      });
      return closing;
    },
  };
}
