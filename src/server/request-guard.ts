/**
 * The checks a request meets before any route sees it, in this order: per-address rate limit
 * (429) -> Host (421) -> Origin (403) -> URL length (414) -> method (405) -> body (413) -> the
 * target is a path (400); then, for every route but `/healthz`, `/login` and `/assets/*`, the
 * bearer token or a session cookie (401).
 *
 * POST reaches only the decision and passkey endpoints (`postPaths`), and only as a JSON call
 * from our own page: an Origin header equal to the request's own origin (403), `Content-Type:
 * application/json` (415), at most MAX_POST_BYTES (413, also counted while reading). A page of
 * another site cannot send that without a CORS preflight, which gets no CORS answer.
 *
 * Host `localhost:<any port>` is accepted besides our own names: VS Code's port forwarding shows
 * this server at localhost:<another port> on the person's machine, and passkeys need a host name
 * (an IP address is no RP ID). A name that is not loopback is still refused (DNS rebinding).
 */
import type * as http from 'node:http';
import { forLogLine } from '../core/index';
import { sendError } from './responses';
import { bearerChecker } from './token';

export const MAX_URL_BYTES = 2048;
/** The largest JSON body a POST may carry (a WebAuthn response is a few KB). */
export const MAX_POST_BYTES = 64 * 1024;
/** A forwarded port's Host: the loopback name with any port. */
const FORWARDED_LOCALHOST = /^localhost:[0-9]{1,5}$/;
const MAX_RATE_BUCKETS = 10_000;

interface RateBucket {
  tokens: number;
  at: number;
}

/** The request target without its query string. */
export function requestPath(req: http.IncomingMessage): string {
  const rawUrl = req.url ?? '';
  const q = rawUrl.indexOf('?');
  return q === -1 ? rawUrl : rawUrl.slice(0, q);
}

/**
 * A token bucket per remote address, `ratePerMinute` deep, refilled continuously. The returned
 * function takes one token for `addr`: 0 when there was one, else the seconds until there is.
 */
function rateLimiter(ratePerMinute: number): (addr: string) => number {
  const buckets = new Map<string, RateBucket>();
  const perMs = ratePerMinute / 60_000;
  return (addr) => {
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
  };
}

export interface RequestGuard {
  /** Answers the request and returns true when it fails a check that applies to every route. */
  rejectBeforeRouting(req: http.IncomingMessage, res: http.ServerResponse): boolean;
  /** Whether the request carries the bearer token or a live session cookie. */
  authorized(req: http.IncomingMessage): boolean;
  /** Answers 401 and returns true when the request has neither the bearer token nor a session. */
  rejectUnauthorized(req: http.IncomingMessage, res: http.ServerResponse): boolean;
  /** Host header values that name this server; none until it listens and its port is known. */
  allowHosts(hosts: Set<string>): void;
  /** One more Host header value (and its http/https origins), e.g. a forwarded port's. */
  allowHost(host: string): void;
}

/**
 * The request's Origin header when it names the request's own host (`http://<Host>`: this server
 * speaks plain HTTP), else undefined.
 */
export function ownOrigin(req: http.IncomingMessage): string | undefined {
  const host = req.headers.host?.toLowerCase();
  const origin = req.headers.origin?.toLowerCase();
  return host && origin === `http://${host}` ? origin : undefined;
}

/** The request's host name without its port (`localhost`), as an RP ID is written. */
export function requestHostName(req: http.IncomingMessage): string {
  const host = (req.headers.host ?? '').toLowerCase();
  return host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.replace(/:[0-9]+$/, '');
}

export function createRequestGuard(opts: {
  ratePerMinute: number;
  token: string;
  /** A session id from the request's cookies is live. */
  sessionValid?: (req: http.IncomingMessage) => boolean;
  /** The paths that take a JSON POST (the decision and passkey endpoints). */
  postPaths?: ReadonlySet<string>;
}): RequestGuard {
  const takeToken = rateLimiter(opts.ratePerMinute);
  const bearer = bearerChecker(opts.token);
  const authorized = (req: http.IncomingMessage) =>
    bearer(req.headers.authorization) || (opts.sessionValid?.(req) ?? false);
  let allowedHosts = new Set<string>();
  let allowedOrigins = new Set<string>();

  function rejectBeforeRouting(req: http.IncomingMessage, res: http.ServerResponse): boolean {
    const rawUrl = req.url ?? '';
    const method = req.method ?? '';

    const wait = takeToken(req.socket.remoteAddress ?? 'unknown');
    if (wait > 0) {
      sendError(
        res,
        429,
        'rate_limited',
        `too many requests; try again in ${wait} s`,
        {},
        { 'Retry-After': String(wait) },
      );
      return true;
    }
    const host = req.headers.host?.toLowerCase();
    if (host === undefined || !(allowedHosts.has(host) || FORWARDED_LOCALHOST.test(host))) {
      sendError(
        res,
        421,
        'misdirected',
        `the Host header must be one of ${[...allowedHosts].slice(0, 3).join(', ')}`,
      );
      return true;
    }
    const origin = req.headers.origin;
    if (origin !== undefined && !allowedOrigins.has(origin.toLowerCase()) && !ownOrigin(req)) {
      sendError(res, 403, 'forbidden', 'cross-origin requests are not allowed');
      return true;
    }
    if (Buffer.byteLength(rawUrl) > MAX_URL_BYTES) {
      sendError(res, 414, 'uri_too_long', `the URL is longer than ${MAX_URL_BYTES} bytes`);
      return true;
    }
    const hasBody =
      req.headers['transfer-encoding'] !== undefined ||
      (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');
    if (method === 'POST' && opts.postPaths?.has(requestPath(req))) return rejectPost(req, res);
    if (method !== 'GET' && method !== 'HEAD') {
      sendError(
        res,
        405,
        'method_not_allowed',
        `${forLogLine(method)} is not allowed: this server is read-only`,
        {},
        {
          Allow: 'GET, HEAD',
          ...(hasBody ? { Connection: 'close' } : {}),
        },
      );
      return true;
    }
    if (hasBody) {
      sendError(res, 413, 'payload_too_large', 'a request body is not accepted', {}, { Connection: 'close' });
      return true;
    }
    if (!requestPath(req).startsWith('/')) {
      sendError(res, 400, 'usage', 'the request target must be a path');
      return true;
    }
    return false;
  }

  /** The checks a JSON POST from our own page passes (the session is the route's to check). */
  function rejectPost(req: http.IncomingMessage, res: http.ServerResponse): boolean {
    const close = { Connection: 'close' };
    if (!ownOrigin(req)) {
      sendError(
        res,
        403,
        'forbidden',
        'a POST must come from this server’s own page (its Origin header)',
        { reason: 'origin_required' },
        close,
      );
      return true;
    }
    if (!/^application\/json\s*(;|$)/i.test(req.headers['content-type'] ?? '')) {
      sendError(
        res,
        415,
        'unsupported_media_type',
        'a POST must be JSON (Content-Type: application/json)',
        {},
        close,
      );
      return true;
    }
    const length = Number(req.headers['content-length'] ?? '0');
    if (!(length <= MAX_POST_BYTES)) {
      sendError(
        res,
        413,
        'payload_too_large',
        `a request body is at most ${MAX_POST_BYTES} bytes`,
        {},
        close,
      );
      return true;
    }
    return false;
  }

  function rejectUnauthorized(req: http.IncomingMessage, res: http.ServerResponse): boolean {
    if (authorized(req)) return false;
    const had = req.headers.authorization !== undefined;
    sendError(
      res,
      401,
      'unauthorized',
      had
        ? 'the bearer token is wrong'
        : 'a bearer token (Authorization: Bearer <token>) or a session from a login link (`loopx status-server --login-link`) is required',
      {},
      {
        'WWW-Authenticate': had ? 'Bearer realm="loopx", error="invalid_token"' : 'Bearer realm="loopx"',
      },
    );
    return true;
  }

  return {
    rejectBeforeRouting,
    authorized,
    rejectUnauthorized,
    allowHosts(hosts) {
      allowedHosts = hosts;
      allowedOrigins = new Set([...hosts].map((h) => `http://${h}`));
    },
    allowHost(host) {
      const h = host.trim().toLowerCase();
      if (!/^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(:[0-9]{1,5})?$/.test(h))
        throw new Error(`not a host name with an optional port: ${JSON.stringify(forLogLine(host))}`);
      allowedHosts = new Set([...allowedHosts, h]);
      allowedOrigins = new Set([...allowedOrigins, `http://${h}`, `https://${h}`]);
    },
  };
}
