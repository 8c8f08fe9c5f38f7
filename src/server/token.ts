/**
 * The bearer token. It is 32 random bytes, hex, kept outside the workspace in the user's LoopX
 * config folder (`<config>/workspaces/<workspace id>/status-token`, 0600, through `Store.secret`),
 * so it is reused across restarts and never reaches git or an agent that reads the workspace; a
 * caller may pass its own instead (then nothing is written). The server writes nothing in the
 * workspace.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import * as path from 'node:path';
import type { Store } from '../core/index';
import { usageError } from '../core/index';

export const TOKEN_FILE = 'status-token';
const TOKEN_RULE = /^[A-Za-z0-9._~+/=-]{16,512}$/;

const sha = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/** Throws the usage error for a caller-supplied token the server would not accept. */
export function checkGivenToken(token: string) {
  if (!TOKEN_RULE.test(token)) {
    throw usageError('the status server token must be 16-512 characters of letters, digits and ._~+/=-');
  }
}

/** Where the token of `store`'s workspace is kept (`loopx status-server --print-token` prints it). */
export function tokenFile(store: Store): string {
  return path.join(store.secretsDir, TOKEN_FILE);
}

export function readOrCreateToken(store: Store): string {
  // Store.secret refuses a file that does not hold exactly 32 bytes as hex.
  return store.secret(TOKEN_FILE, 32).toString('hex');
}

/** A test of an Authorization header against `token`: true for `Bearer <token>`. */
export function bearerChecker(token: string): (header: string | undefined) => boolean {
  const tokenHash = sha(token);
  return (header) => {
    const m = /^Bearer[ \t]+([^\s]+)[ \t]*$/i.exec(header ?? '');
    // Compare hashes: equal length always, so timingSafeEqual never throws and leaks no length.
    return !!m && timingSafeEqual(sha(m[1]!), tokenHash);
  };
}
