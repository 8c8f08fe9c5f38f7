// No `node:crypto` here: model/goal-state.ts imports this module and the webview (a browser) imports model/goal-state.ts.
// Web Crypto's `getRandomValues` is there in both Node (>= 19) and browsers.
import { quote, usageError } from './errors';

/**
 * Ids name folders on disk and appear in shell commands an executor will `eval`, so they are
 * deliberately narrow: 1-64 characters of letters, digits, '-' and '_', starting with a letter or
 * digit. No dots (no '..'), no separators, no shell metacharacters, no control characters.
 */
export const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
export const ID_RULE = "1-64 letters, digits, '-' or '_', starting with a letter or digit";

export function checkId(value: unknown, what: string): string {
  if (typeof value !== 'string')
    throw usageError(`${what} must be a string, got ${typeof value}`, { field: what });
  if (value.length === 0) throw usageError(`${what} is empty: ids are ${ID_RULE}`, { field: what });
  if (value.length > 64)
    throw usageError(`${what} ${quote(value, 24)} is too long: ids are ${ID_RULE}`, { field: what });
  if (!ID_PATTERN.test(value)) {
    const bad = [...value].find((c, i) => !(i === 0 ? /[A-Za-z0-9]/ : /[A-Za-z0-9_-]/).test(c)) ?? '';
    throw usageError(
      `${what} ${quote(value)} is not a valid id: ${quote(bad)} is not allowed there; ids are ${ID_RULE}`,
      { field: what },
    );
  }
  return value;
}

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'; // Crockford base32, lowercase, no i/l/o/u

export function randomSuffix(length: number): string {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(length));
  let out = '';
  for (const b of bytes) out += ALPHABET[b & 31];
  return out;
}

/** A fresh id with a readable prefix, e.g. `run-7k2f9x3a`. */
export function newId(prefix: string, length = 8): string {
  return `${prefix}-${randomSuffix(length)}`;
}

/** A goal id from its title: `Refactor Payment Module` -> `refactor-payment-module-7k2f`. */
export function goalIdFromTitle(title: string): string {
  const slug = title
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '') // the accents NFKD split off: 'Crème' -> 'creme', not 'cre-me'
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40)
    .replace(/-+$/, '');
  return `${slug || 'goal'}-${randomSuffix(4)}`;
}
