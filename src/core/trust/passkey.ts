/**
 * Passkeys as a person's key (docs/SECURITY.md, "Deciding from a browser"). A pinned key file
 * whose `passkey` names a WebAuthn credential holds that credential's public key as SPKI PEM
 * (converted from COSE when it was registered); its signature on a decision is an assertion whose
 * challenge is the sha256 of the decision's statement, so the authenticator signs the statement
 * itself, through `authenticatorData || sha256(clientDataJSON)`.
 *
 * Replay checks a stored assertion here with node:crypto over the stored bytes, synchronously and
 * the same way on every clone: no CBOR, no COSE, no network. (The status server checks it live
 * with @simplewebauthn/server first; this check is the one that gives the decision its effect.)
 */
import type { KeyObject } from 'node:crypto';
import { createHash, verify } from 'node:crypto';
import { z } from 'zod';
import type { DecisionSig } from '../model';
import { lazy } from '../model';
import type { PublicKeyFile } from './keys';

/** COSE algorithm ids LoopX accepts: ES256, EdDSA (Ed25519), RS256. */
export const PASSKEY_ALGS = [-7, -8, -257] as const;
export type PasskeyAlg = (typeof PASSKEY_ALGS)[number];

const BASE64URL = /^[A-Za-z0-9_-]+$/;
/** A host name as an RP ID is one (a domain, never an IP address or a port). */
const RP_ID =
  /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;

/** The WebAuthn credential a pinned key stands for. */
export const PasskeyRef = lazy(() =>
  z.object({
    /** base64url credential id (WebAuthn allows up to 1023 bytes). */
    credentialId: z.string().min(1).max(1400).regex(BASE64URL),
    /** The host name it was registered at (the RP ID): its assertions name only this one. */
    rpId: z.string().regex(RP_ID),
    alg: z.union([z.literal(-7), z.literal(-8), z.literal(-257)]),
  }),
);
export type PasskeyRef = z.infer<typeof PasskeyRef>;

const FLAG_UP = 0x01;
const FLAG_UV = 0x04;
/** rpIdHash (32) + flags (1) + signCount (4). */
const MIN_AUTH_DATA = 37;

const sha256Bytes = (b: Buffer | string) => createHash('sha256').update(b).digest();

/** The challenge a passkey signs for `statement`: base64url(sha256(statement)). */
export function passkeyChallenge(statement: string): string {
  return sha256Bytes(Buffer.from(statement, 'utf8')).toString('base64url');
}

/** Whether `k`'s key type is the one its COSE algorithm needs. */
function keyFitsAlg(obj: KeyObject, alg: PasskeyAlg): boolean {
  if (alg === -8) return obj.asymmetricKeyType === 'ed25519';
  if (alg === -257) return obj.asymmetricKeyType === 'rsa';
  return obj.asymmetricKeyType === 'ec' && obj.asymmetricKeyDetails?.namedCurve === 'prime256v1';
}

function verifiesAs(alg: PasskeyAlg, data: Buffer, obj: KeyObject, sig: Buffer): boolean {
  if (alg === -8) return verify(null, data, obj, sig);
  // ES256: WebAuthn sends ECDSA signatures DER-encoded; RS256: PKCS#1 v1.5 (node's default).
  if (alg === -7) return verify('sha256', data, { key: obj, dsaEncoding: 'der' }, sig);
  return verify('sha256', data, obj, sig);
}

/** The client data a browser signs with an assertion, as far as LoopX reads it. */
function clientDataOf(bytes: Buffer): { type?: unknown; challenge?: unknown; origin?: unknown } | undefined {
  try {
    const v: unknown = JSON.parse(bytes.toString('utf8'));
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Whether a browser origin (`http://localhost:8080`) is at the host name `rpId`. */
function originAt(origin: unknown, rpId: string): boolean {
  if (typeof origin !== 'string') return false;
  try {
    const host = new URL(origin).hostname;
    return host === rpId || host.endsWith(`.${rpId}`);
  } catch {
    return false;
  }
}

/**
 * Why the passkey `k` (its public key `obj`) did not sign `statement` with `sig`, or undefined
 * when it did: the client data is a `webauthn.get` over this statement's challenge at the key's
 * host, the authenticator data names the key's RP ID with the person present (UP) and verified
 * (UV), and the signature over `authenticatorData || sha256(clientDataJSON)` verifies.
 */
export function rejectsPasskeySig(
  statement: string,
  sig: DecisionSig,
  k: PublicKeyFile & { passkey: PasskeyRef },
  obj: KeyObject,
  who: string,
): string | undefined {
  const w = sig.webauthn;
  if (!w) return `${who} is a passkey, and this signature carries no WebAuthn assertion`;
  const { rpId, alg } = k.passkey;
  const authData = Buffer.from(w.authenticatorData, 'base64url');
  const clientBytes = Buffer.from(w.clientDataJSON, 'base64url');
  const client = clientDataOf(clientBytes);
  if (!client) return `the client data of ${who}'s assertion is not a JSON object`;
  if (client.type !== 'webauthn.get') return `${who}'s assertion is not a WebAuthn sign-in (webauthn.get)`;
  if (client.challenge !== passkeyChallenge(statement))
    return `${who}'s assertion was made for another statement (its challenge is not this decision's)`;
  if (!originAt(client.origin, rpId)) return `${who}'s assertion was made at another site than ${rpId}`;
  if (authData.length < MIN_AUTH_DATA) return `the authenticator data of ${who}'s assertion is too short`;
  if (!authData.subarray(0, 32).equals(sha256Bytes(rpId)))
    return `${who}'s assertion names another relying party than ${rpId}`;
  const flags = authData[32]!;
  if (!(flags & FLAG_UP)) return `${who}'s assertion was made without the person present (UP flag clear)`;
  if (!(flags & FLAG_UV)) return `${who}'s assertion was made without user verification (UV flag clear)`;
  if (!keyFitsAlg(obj, alg)) return `${who}'s public key is not of its algorithm ${alg}`;
  const signed = Buffer.concat([authData, sha256Bytes(clientBytes)]);
  try {
    if (verifiesAs(alg, signed, obj, Buffer.from(sig.sig, 'base64'))) return undefined;
  } catch {
    /* a malformed signature is a bad signature */
  }
  return `its signature by ${who} does not verify`;
}
