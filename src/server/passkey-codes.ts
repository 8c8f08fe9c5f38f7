/**
 * The one-time link that lets a browser register a passkey: `loopx key passkey add` mints it
 * after the person unlocked their terminal key, and the code is that key's Ed25519 signature over
 * `loopx-passkey-register/1\n<canonical {exp, keyId, name, nonce}>`. So only someone who knows
 * the passphrase can make one: the status server's token (which any process of the user can read)
 * is not enough, unlike a dashboard login code (login.ts).
 *
 * A code names the passkey's name, lives 10 minutes (plus a little clock skew) and is spent by
 * the first registration that uses it, whether that succeeds or not. Spent codes are remembered in
 * memory, so a server takes only codes minted after it started: a restart cannot make a spent
 * code good again.
 */
import { createPublicKey, randomBytes, verify } from 'node:crypto';
import type { Signer } from '../core/index';
import { canonicalJson, isPasskey, keyNameProblem, pinnedKeys } from '../core/index';

export const PASSKEY_CODE_TTL_MS = 10 * 60_000;
const CLOCK_SKEW_MS = 5_000;
const MAX_USED = 10_000;

interface CodeBody {
  exp: number;
  keyId: string;
  name: string;
  nonce: string;
}

export type PasskeyCodeRefusal = 'passkey_code_used' | 'passkey_code_expired' | 'passkey_code_invalid';

const statementOf = (b: CodeBody) => `loopx-passkey-register/1\n${canonicalJson(b)}`;

/** A fresh registration code for a passkey named `name`, signed by the person's `signer`. */
export function mintPasskeyCode(
  signer: Signer,
  name: string,
  nowMs = Date.now(),
): { code: string; expiresAt: number } {
  const body: CodeBody = {
    exp: Math.floor(nowMs) + PASSKEY_CODE_TTL_MS,
    keyId: signer.keyId,
    name,
    nonce: randomBytes(16).toString('base64url'),
  };
  const sig = Buffer.from(signer.sign(statementOf(body)), 'base64').toString('base64url');
  return { code: `${Buffer.from(JSON.stringify(body)).toString('base64url')}.${sig}`, expiresAt: body.exp };
}

function parse(code: unknown): { body: CodeBody; sig: Buffer } | undefined {
  if (typeof code !== 'string' || code.length > 1500) return undefined;
  const m = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{86})$/.exec(code);
  if (!m) return undefined;
  try {
    const b = JSON.parse(Buffer.from(m[1]!, 'base64url').toString('utf8')) as Partial<CodeBody>;
    if (
      typeof b.exp !== 'number' ||
      !Number.isSafeInteger(b.exp) ||
      typeof b.keyId !== 'string' ||
      !/^[0-9a-f]{64}$/.test(b.keyId) ||
      typeof b.name !== 'string' ||
      b.name.length < 1 ||
      b.name.length > 128 ||
      keyNameProblem(b.name) ||
      typeof b.nonce !== 'string' ||
      !/^[A-Za-z0-9_-]{22}$/.test(b.nonce)
    )
      return undefined;
    return {
      body: { exp: b.exp, keyId: b.keyId, name: b.name, nonce: b.nonce },
      sig: Buffer.from(m[2]!, 'base64url'),
    };
  } catch {
    return undefined;
  }
}

export interface PasskeyCodes {
  /** The passkey name a code is for, when it is good now (not spent: see `spend`); else why not. */
  check(code: unknown, nowMs?: number): { name: string; nonce: string } | { refusal: PasskeyCodeRefusal };
  /** Marks the code with this nonce used. */
  spend(nonce: string, exp?: number): void;
}

/**
 * Codes are checked against the Ed25519 keys pinned in `configDir` (the person's terminal key, the
 * editor's key, any key whose decisions count here; never a passkey); `startedAt`
 * is when this server started (codes minted before it may have been spent before it).
 */
export function passkeyCodes(configDir: string, startedAt = Date.now()): PasskeyCodes {
  const used = new Map<string, number>(); // nonce -> expiry
  return {
    check(code, nowMs = Date.now()) {
      const p = parse(code);
      if (!p) return { refusal: 'passkey_code_invalid' };
      // A person's own key whose decisions count here: the terminal key, or the editor's.
      const key = pinnedKeys(configDir).find((k) => k.keyId === p.body.keyId && !isPasskey(k));
      let good = false;
      try {
        good = !!key && verify(null, Buffer.from(statementOf(p.body)), createPublicKey(key.publicKey), p.sig);
      } catch {
        good = false;
      }
      if (!good || p.body.exp - nowMs > PASSKEY_CODE_TTL_MS + CLOCK_SKEW_MS)
        return { refusal: 'passkey_code_invalid' };
      if (used.has(p.body.nonce) || p.body.exp - PASSKEY_CODE_TTL_MS < startedAt)
        return { refusal: 'passkey_code_used' };
      if (p.body.exp <= nowMs) return { refusal: 'passkey_code_expired' };
      return { name: p.body.name, nonce: p.body.nonce };
    },
    spend(nonce, exp = Date.now() + PASSKEY_CODE_TTL_MS + CLOCK_SKEW_MS) {
      const now = Date.now();
      for (const [n, e] of used) if (e <= now) used.delete(n);
      while (used.size >= MAX_USED) used.delete(used.keys().next().value as string);
      used.set(nonce, exp);
    },
  };
}
