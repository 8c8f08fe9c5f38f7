/**
 * A passkey made in software: a P-256 key standing in for an authenticator, with the
 * authenticator data and client data a browser would send, built by hand so each byte can be got
 * wrong on purpose (flags, RP ID hash, challenge, type, origin, the signing key).
 */
import { createHash, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import type { DecisionSig, PublicKeyFile } from '../../src/core/index';
import { keyIdOf, passkeyChallenge } from '../../src/core/index';

const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest();

export interface SoftPasskey {
  privateKey: KeyObject;
  key: PublicKeyFile & { passkey: NonNullable<PublicKeyFile['passkey']> };
}

/** A P-256 passkey registered at `rpId`, as its pinned key file would describe it. */
export function softPasskey(name = 'ada-passkey', rpId = 'localhost'): SoftPasskey {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  return {
    privateKey,
    key: {
      v: 1,
      keyId: keyIdOf(pem),
      name,
      publicKey: pem,
      createdAt: new Date().toISOString(),
      passkey: { credentialId: randomBytes(16).toString('base64url'), rpId, alg: -7 },
    },
  };
}

export interface AssertionTweaks {
  type?: string;
  challenge?: string;
  origin?: string;
  /** Default UP|UV (0x05). */
  flags?: number;
  rpId?: string;
  /** Sign with this key instead of the passkey's. */
  signWith?: KeyObject;
}

/** The signature a browser's assertion over `statement` makes, as the store keeps it. */
export function softAssertion(
  p: SoftPasskey,
  statement: string,
  workspace: string,
  t: AssertionTweaks = {},
): DecisionSig {
  const authData = Buffer.alloc(37);
  sha256(t.rpId ?? p.key.passkey.rpId).copy(authData, 0);
  authData[32] = t.flags ?? 0x05;
  authData.writeUInt32BE(1, 33);
  const clientData = Buffer.from(
    JSON.stringify({
      type: t.type ?? 'webauthn.get',
      challenge: t.challenge ?? passkeyChallenge(statement),
      origin: t.origin ?? 'http://localhost:8080',
      crossOrigin: false,
    }),
  );
  const signed = Buffer.concat([authData, sha256(clientData)]);
  const sig = sign('sha256', signed, { key: t.signWith ?? p.privateKey, dsaEncoding: 'der' });
  return {
    keyId: p.key.keyId,
    ws: workspace,
    sig: sig.toString('base64'),
    webauthn: {
      authenticatorData: authData.toString('base64url'),
      clientDataJSON: clientData.toString('base64url'),
    },
  };
}
