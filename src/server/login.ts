/**
 * Signing in to the dashboard page without the bearer token in any URL.
 *
 * A login code is `<expiryMs>.<nonce>.<mac>`: 16 random bytes of nonce (base64url) and
 * HMAC-SHA256(token, "loopx-login/1|<expiryMs>|<nonce>") (base64url). Minting needs only the
 * token, so `loopx status-server --login-link` (or the extension) makes one without asking the
 * server; the server checks the MAC, that the code expires in the future and at most 60 s (plus
 * a little clock skew) from now, and that its nonce was not used before. A good code is spent on
 * the spot and buys a session: 32 random bytes, in memory only, for 12 hours, carried by an
 * HttpOnly, SameSite=Strict cookie named after the port (cookies are not port-scoped).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const LOGIN_CODE_TTL_MS = 60_000;
/** Tolerated difference between the minting clock and the server's. */
const CLOCK_SKEW_MS = 5_000;
export const SESSION_TTL_MS = 12 * 3600_000;
/** Used nonces and live sessions kept at most; the oldest go first. */
const MAX_USED_NONCES = 10_000;
const MAX_SESSIONS = 1_000;
const CODE_RULE = /^([0-9]{1,16})\.([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/;
const SESSION_RULE = /^[A-Za-z0-9_-]{43}$/;

export type LoginRefusal = 'login_code_used' | 'login_code_expired' | 'login_code_invalid';

const mac = (token: string, expiry: string, nonce: string) =>
  createHmac('sha256', token).update(`loopx-login/1|${expiry}|${nonce}`, 'utf8').digest();

/** A fresh login code for `token`, valid for LOGIN_CODE_TTL_MS from `nowMs`. */
export function mintLoginCode(token: string, nowMs: number = Date.now()): string {
  const expiry = String(Math.floor(nowMs) + LOGIN_CODE_TTL_MS);
  const nonce = randomBytes(16).toString('base64url');
  return `${expiry}.${nonce}.${mac(token, expiry, nonce).toString('base64url')}`;
}

/** When a code says it expires (ms since the epoch), or undefined when it is not shaped like one. */
export function loginCodeExpiry(code: string): number | undefined {
  const m = CODE_RULE.exec(code);
  return m ? Number(m[1]) : undefined;
}

/** `<server>/login?code=<a fresh code>`. */
export function loginUrl(serverUrl: string, token: string, nowMs: number = Date.now()): string {
  return `${serverUrl.replace(/\/+$/, '')}/login?code=${encodeURIComponent(mintLoginCode(token, nowMs))}`;
}

export interface LoginVerifier {
  /** Spends `code`: undefined when it was good (and is now used), else why not. */
  redeem(code: string, nowMs?: number): LoginRefusal | undefined;
}

export function createLoginVerifier(token: string): LoginVerifier {
  const used = new Map<string, number>(); // nonce -> expiry
  const forget = (now: number) => {
    for (const [n, exp] of used) if (exp <= now) used.delete(n);
    while (used.size >= MAX_USED_NONCES) used.delete(used.keys().next().value as string);
  };
  return {
    redeem(code, nowMs = Date.now()) {
      const m = CODE_RULE.exec(code);
      if (!m) return 'login_code_invalid';
      const [, expiry, nonce, given] = m as unknown as [string, string, string, string];
      const want = mac(token, expiry, nonce);
      const got = Buffer.from(given, 'base64url');
      if (got.length !== want.length || !timingSafeEqual(got, want)) return 'login_code_invalid';
      const exp = Number(expiry);
      // A code that claims to live longer than any we mint was not minted by us as we mint.
      if (exp - nowMs > LOGIN_CODE_TTL_MS + CLOCK_SKEW_MS) return 'login_code_invalid';
      if (used.has(nonce)) return 'login_code_used';
      if (exp <= nowMs) return 'login_code_expired';
      forget(nowMs);
      used.set(nonce, exp);
      return undefined;
    },
  };
}

export interface Sessions {
  /** A new session id (to go into the cookie). */
  create(nowMs?: number): string;
  /** Whether `id` names a live session. */
  valid(id: string | undefined, nowMs?: number): boolean;
  cookieName(): string;
  /** The session id the request's Cookie header carries for this server, if any. */
  fromCookieHeader(header: string | undefined): string | undefined;
  setCookie(id: string): string;
}

export function createSessions(port: () => number): Sessions {
  const live = new Map<string, number>(); // id -> expiry
  const cookieName = () => `loopx_session_${port()}`;
  return {
    create(nowMs = Date.now()) {
      for (const [id, exp] of live) if (exp <= nowMs) live.delete(id);
      while (live.size >= MAX_SESSIONS) live.delete(live.keys().next().value as string);
      const id = randomBytes(32).toString('base64url');
      live.set(id, nowMs + SESSION_TTL_MS);
      return id;
    },
    valid(id, nowMs = Date.now()) {
      if (id === undefined || !SESSION_RULE.test(id)) return false;
      const exp = live.get(id);
      if (exp === undefined) return false;
      if (exp <= nowMs) {
        live.delete(id);
        return false;
      }
      return true;
    },
    cookieName,
    fromCookieHeader(header) {
      const name = cookieName();
      for (const part of (header ?? '').split(';')) {
        const eq = part.indexOf('=');
        if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
      }
      return undefined;
    },
    setCookie(id) {
      return `${cookieName()}=${id}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${SESSION_TTL_MS / 1000}`;
    },
  };
}
