/**
 * A passkey's public key as WebAuthn gives it (a COSE key, CBOR) and as LoopX pins it (SPKI PEM,
 * so the key id is the same sha256 of the SPKI DER as for every other key, and replay verifies
 * with node:crypto alone: trust/passkey.ts). The library decodes CBOR; this maps COSE fields to a
 * JWK and back. Only the algorithms LoopX accepts: ES256 (P-256), EdDSA (Ed25519), RS256.
 */
import { createPublicKey } from 'node:crypto';
import type { JsonWebKey } from 'node:crypto';
import { cose, decodeCredentialPublicKey, isoCBOR } from './webauthn';
import type { PasskeyAlg } from '../core/index';
import { PASSKEY_ALGS, refused } from '../core/index';

const b64u = (b: Uint8Array | undefined) => Buffer.from(b ?? new Uint8Array()).toString('base64url');
const bytes = (s: string | undefined) => new Uint8Array(Buffer.from(s ?? '', 'base64url'));

function unsupported(what: string): never {
  throw refused(`this passkey's ${what} is not one LoopX accepts (ES256, EdDSA with Ed25519, RS256)`, {
    reason: 'passkey_alg_unsupported',
  });
}

/** The SPKI PEM and algorithm of a COSE public key, as the registration response carries it. */
export function spkiFromCose(coseKey: Parameters<typeof decodeCredentialPublicKey>[0]): {
  pem: string;
  alg: PasskeyAlg;
} {
  const k = decodeCredentialPublicKey(coseKey);
  const alg = k.get(cose.COSEKEYS.alg);
  if (!(PASSKEY_ALGS as readonly unknown[]).includes(alg)) unsupported(`algorithm ${String(alg)}`);
  let jwk: JsonWebKey;
  if (cose.isCOSEPublicKeyEC2(k) && alg === -7 && k.get(cose.COSEKEYS.crv) === cose.COSECRV.P256)
    jwk = { kty: 'EC', crv: 'P-256', x: b64u(k.get(cose.COSEKEYS.x)), y: b64u(k.get(cose.COSEKEYS.y)) };
  else if (cose.isCOSEPublicKeyOKP(k) && alg === -8 && k.get(cose.COSEKEYS.crv) === cose.COSECRV.ED25519)
    jwk = { kty: 'OKP', crv: 'Ed25519', x: b64u(k.get(cose.COSEKEYS.x)) };
  else if (cose.isCOSEPublicKeyRSA(k) && alg === -257)
    jwk = { kty: 'RSA', n: b64u(k.get(cose.COSEKEYS.n)), e: b64u(k.get(cose.COSEKEYS.e)) };
  else unsupported('key type');
  const pem = createPublicKey({ key: jwk, format: 'jwk' }).export({ type: 'spki', format: 'pem' }).toString();
  return { pem, alg: alg as PasskeyAlg };
}

/** The COSE key of a pinned passkey, for the library's live check of an assertion. */
export function coseFromSpki(pem: string, alg: PasskeyAlg): ReturnType<typeof isoCBOR.encode> {
  const jwk = createPublicKey(pem).export({ format: 'jwk' });
  const m = new Map<number, number | Uint8Array>();
  if (alg === -7) {
    m.set(cose.COSEKEYS.kty, cose.COSEKTY.EC2)
      .set(cose.COSEKEYS.alg, alg)
      .set(cose.COSEKEYS.crv, cose.COSECRV.P256);
    m.set(cose.COSEKEYS.x, bytes(jwk.x)).set(cose.COSEKEYS.y, bytes(jwk.y));
  } else if (alg === -8) {
    m.set(cose.COSEKEYS.kty, cose.COSEKTY.OKP)
      .set(cose.COSEKEYS.alg, alg)
      .set(cose.COSEKEYS.crv, cose.COSECRV.ED25519);
    m.set(cose.COSEKEYS.x, bytes(jwk.x));
  } else {
    m.set(cose.COSEKEYS.kty, cose.COSEKTY.RSA).set(cose.COSEKEYS.alg, alg);
    m.set(cose.COSEKEYS.n, bytes(jwk.n)).set(cose.COSEKEYS.e, bytes(jwk.e));
  }
  return isoCBOR.encode(m);
}
