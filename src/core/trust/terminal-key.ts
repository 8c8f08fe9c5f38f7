/**
 * A person's key for the terminal: an Ed25519 key pair whose private half is encrypted with a
 * passphrase (scrypt, then AES-256-GCM) in the user's config folder. A terminal without the
 * passphrase is not a person, however interactive it looks.
 */
import { createCipheriv, createDecipheriv, createPrivateKey, randomBytes, scryptSync } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { compareText, forLogLine, lazy, notFound, refused, usageError } from '../model';
import { ensurePrivateDir, writeFileAtomic } from '../store';
import { KEY_FILE_NAME, keyNameProblem, newKeyPair, pinKey, PublicKeyFile } from './keys';
import type { Signer } from './signed-decisions';
import { signerFor } from './signed-decisions';

/**
 * scrypt cost of a key sealed now: about 0.56 s and 128 MiB on a 2-CPU machine (N=2^15 was
 * 0.14 s), so each passphrase an offline guesser tries with a copied key file costs as much. A
 * file records its own parameters: one sealed at a lower cost still unlocks, and is sealed again
 * at this one when it does.
 */
const SCRYPT = { N: 1 << 17, r: 8, p: 1 } as const;
/** The most a key file may ask for: a file of the config folder must not exhaust the memory. */
const MAX_SCRYPT_BYTES = 1024 * 1024 * 1024;
const scryptBytes = (k: { N: number; r: number; p: number }) => 128 * k.N * k.r * k.p;
export const MIN_PASSPHRASE = 8;

/** The public key file's fields, with the private key sealed under the passphrase. */
const KeyFile = lazy(() =>
  PublicKeyFile.extend({
    kdf: z
      .object({
        name: z.literal('scrypt'),
        N: z
          .number()
          .int()
          .min(2)
          .max(2 ** 24),
        r: z.number().int().min(1).max(64),
        p: z.number().int().min(1).max(16),
        salt: z.string(),
      })
      .refine((k) => scryptBytes(k) <= MAX_SCRYPT_BYTES, { message: 'asks scrypt for too much memory' }),
    cipher: z.object({ name: z.literal('aes-256-gcm'), iv: z.string(), tag: z.string(), data: z.string() }),
  }),
);
type KeyFile = z.infer<typeof KeyFile>;

export const keysDir = (configDir: string) => path.join(configDir, 'keys');

function derive(passphrase: string, salt: Buffer, kdf: { N: number; r: number; p: number }): Buffer {
  const { N, r, p } = kdf;
  return scryptSync(passphrase.normalize('NFC'), salt, 32, { N, r, p, maxmem: 2 * scryptBytes(kdf) });
}

/** A private key (PKCS#8 DER) sealed under the passphrase at today's cost: the file's kdf and cipher. */
function seal(der: Buffer, passphrase: string): Pick<KeyFile, 'kdf' | 'cipher'> {
  const salt = randomBytes(16);
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', derive(passphrase, salt, SCRYPT), iv);
  const data = Buffer.concat([cipher.update(der), cipher.final()]);
  return {
    kdf: { name: 'scrypt', ...SCRYPT, salt: salt.toString('base64') },
    cipher: {
      name: 'aes-256-gcm',
      iv: iv.toString('base64'),
      tag: cipher.getAuthTag().toString('base64'),
      data: data.toString('base64'),
    },
  };
}

/** Makes a new key, stores it encrypted, and pins its public half: the person's own key counts here. */
export function createTerminalKey(
  configDir: string,
  name: string,
  passphrase: string,
  now: string,
): { key: PublicKeyFile; signer: Signer } {
  if (passphrase.length < MIN_PASSPHRASE)
    throw usageError(`the passphrase must be at least ${MIN_PASSPHRASE} characters`, {
      reason: 'weak_passphrase',
    });
  const problem = keyNameProblem(name);
  if (problem) throw usageError(`the key's name ${problem}`, { reason: 'bad_key_name' });
  const { privateKey, pub } = newKeyPair(name, now);
  const file: KeyFile = { ...pub, ...seal(privateKey.export({ type: 'pkcs8', format: 'der' }), passphrase) };
  const dir = ensurePrivateDir(keysDir(configDir));
  writeFileAtomic(path.join(dir, `${pub.keyId}.json`), JSON.stringify(file, null, 2) + '\n', 0o600);
  pinKey(configDir, pub);
  return { key: pub, signer: signerFor(privateKey, pub.keyId, pub.name) };
}

/** The key files in the config folder, as stored (the private half encrypted), newest first. */
function readKeyFiles(configDir: string): { file: string; key: KeyFile }[] {
  let names: string[];
  try {
    names = fs.readdirSync(keysDir(configDir)).filter((n) => KEY_FILE_NAME.test(n));
  } catch {
    return [];
  }
  const out: { file: string; key: KeyFile }[] = [];
  for (const n of names) {
    const file = path.join(keysDir(configDir), n);
    try {
      out.push({ file, key: KeyFile.parse(JSON.parse(fs.readFileSync(file, 'utf8'))) });
    } catch {
      /* not a key file */
    }
  }
  return out.sort((a, b) => compareText(b.key.createdAt, a.key.createdAt));
}

/** The terminal keys in the config folder, newest first. */
export function terminalKeys(configDir: string): (PublicKeyFile & { file: string })[] {
  return readKeyFiles(configDir).map(({ file, key: k }) => ({
    v: 1,
    keyId: k.keyId,
    name: k.name,
    publicKey: k.publicKey,
    createdAt: k.createdAt,
    file,
  }));
}

/** Unlocks a terminal key with its passphrase (the newest key, or `keyId`). */
export function unlockTerminalKey(configDir: string, passphrase: string, keyId?: string): Signer {
  const keys = readKeyFiles(configDir);
  const entry = keyId ? keys.find((x) => x.key.keyId.startsWith(keyId)) : keys[0];
  if (!entry) {
    throw notFound(
      keyId
        ? `no terminal key ${keyId} in ${keysDir(configDir)}`
        : `you have no LoopX key on this machine: make one with \`loopx key create\` (it asks for a passphrase), then run this again`,
      { reason: 'no_key' },
    );
  }
  const f = entry.key;
  let der: Buffer;
  try {
    const d = createDecipheriv(
      'aes-256-gcm',
      derive(passphrase, Buffer.from(f.kdf.salt, 'base64'), f.kdf),
      Buffer.from(f.cipher.iv, 'base64'),
    );
    d.setAuthTag(Buffer.from(f.cipher.tag, 'base64'));
    der = Buffer.concat([d.update(Buffer.from(f.cipher.data, 'base64')), d.final()]);
  } catch {
    throw refused(`wrong passphrase for key ${f.keyId.slice(0, 16)} (${forLogLine(f.name, 128)})`, {
      reason: 'wrong_passphrase',
    });
  }
  if (scryptBytes(f.kdf) < scryptBytes(SCRYPT)) {
    try {
      writeFileAtomic(entry.file, JSON.stringify({ ...f, ...seal(der, passphrase) }, null, 2) + '\n', 0o600);
    } catch {
      /* a config folder it cannot write: the key still unlocks at its old cost */
    }
  }
  const privateKey = createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
  return signerFor(privateKey, f.keyId, f.name);
}
