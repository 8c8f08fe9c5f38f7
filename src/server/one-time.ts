/**
 * Values kept in memory under a random id for a short time and handed out once: the challenges of
 * passkey registrations, sign-ins and decisions. `take` removes the entry whether or not the
 * caller's check then succeeds, so a challenge is spent by its first answer.
 */
import { randomBytes } from 'node:crypto';

/** Entries kept at most; the oldest go first (a flood of options calls cannot grow memory). */
const MAX_ENTRIES = 256;

export interface OneTime<T> {
  /** Keeps `value` for `ttlMs` and returns its id (24 random bytes, base64url). */
  put(value: T, nowMs?: number): string;
  /** The value of `id` if it is there and live; it is gone afterwards either way. */
  take(id: unknown, nowMs?: number): T | undefined;
}

export function oneTime<T>(ttlMs: number): OneTime<T> {
  const live = new Map<string, { value: T; exp: number }>();
  return {
    put(value, nowMs = Date.now()) {
      for (const [k, v] of live) if (v.exp <= nowMs) live.delete(k);
      while (live.size >= MAX_ENTRIES) live.delete(live.keys().next().value as string);
      const id = randomBytes(24).toString('base64url');
      live.set(id, { value, exp: nowMs + ttlMs });
      return id;
    },
    take(id, nowMs = Date.now()) {
      if (typeof id !== 'string') return undefined;
      const e = live.get(id);
      live.delete(id);
      return e && e.exp > nowMs ? e.value : undefined;
    },
  };
}
