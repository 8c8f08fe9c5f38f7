/**
 * The bearer token. It is 32 random bytes, hex, kept in `.loopx/local/status-token` (0600) through
 * `Store.localSecret`, so it is reused across restarts; a caller may pass its own instead (then
 * nothing is written). When `local/` has no `.gitignore` (a fresh clone: the `*` in it ignores
 * itself, so it is never committed) the server writes it next to the token, so the token cannot be
 * committed by `git add .loopx`. Those are the only writes the server makes.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createHash, timingSafeEqual } from 'node:crypto';
import { corrupt, usageError } from '../core/index';
import type { Store } from '../core/index';

export const TOKEN_FILE = 'status-token';
const TOKEN_RULE = /^[A-Za-z0-9._~+/=-]{16,512}$/;

const sha = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/** Throws the usage error for a caller-supplied token the server would not accept. */
export function checkGivenToken(token: string) {
  if (!TOKEN_RULE.test(token)) {
    throw usageError('the status server token must be 16-512 characters of letters, digits and ._~+/=-');
  }
}

export function readOrCreateToken(store: Store): string {
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

/** A test of an Authorization header against `token`: true for `Bearer <token>`. */
export function bearerChecker(token: string): (header: string | undefined) => boolean {
  const tokenHash = sha(token);
  return (header) => {
    const m = /^Bearer[ \t]+([^\s]+)[ \t]*$/i.exec(header ?? '');
    // Compare hashes: equal length always, so timingSafeEqual never throws and leaks no length.
    return !!m && timingSafeEqual(sha(m[1]!), tokenHash);
  };
}
