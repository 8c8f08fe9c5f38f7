/**
 * Approver keys. A person's Ed25519 public key counts on this machine only once it is pinned in
 * the user's LoopX config folder (`trusted/<keyId>.json`), never because a file in the workspace
 * names it. `.loopx/approvers/` is where teammates publish their keys for others to pin.
 */
import type { KeyObject } from 'node:crypto';
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { lazy, LoopxError, textProblem, usageError } from '../model';
import { ensurePrivateDir, mkdirStore, readdirStore, readStoreFile, sha256, writeJsonAtomic } from '../store';
import { PasskeyRef } from './passkey';

export const KEY_ID = /^[0-9a-f]{64}$/;
/** The name of a key's file: `<keyId>.json`. */
export const KEY_FILE_NAME = /^[0-9a-f]{64}\.json$/;

export const PublicKeyFile = lazy(() =>
  z.object({
    v: z.literal(1),
    keyId: z.string().regex(KEY_ID),
    name: z.string().min(1).max(128),
    publicKey: z.string().max(2000),
    createdAt: z.string().max(40),
    /**
     * The key is a passkey (a WebAuthn credential; trust/passkey.ts): `publicKey` is its public key
     * converted from COSE when it was registered. Absent: an Ed25519 key.
     */
    passkey: PasskeyRef.optional(),
  }),
);
export type PublicKeyFile = z.infer<typeof PublicKeyFile>;

/** Whether `k` is a passkey: its signatures are WebAuthn assertions. */
export const isPasskey = (k: PublicKeyFile): k is PublicKeyFile & { passkey: PasskeyRef } =>
  k.passkey !== undefined;

/**
 * Why a key's name cannot be shown to a person as it is, or undefined: the one rule for text
 * (model/text-rules.ts). A name is printed in `loopx approvers list` and in the prompts that trust
 * a key, where an escape sequence could rewrite the row that says "NOT pinned".
 */
export function keyNameProblem(name: string): string | undefined {
  return textProblem(name);
}
/** The same for a whole key file: its name and its date are the text a person reads. */
function keyTextProblem(k: PublicKeyFile): string | undefined {
  const name = keyNameProblem(k.name);
  if (name) return `name ${name}`;
  const date = textProblem(k.createdAt);
  return date && `date ${date}`;
}

/** The key id: sha256 of the public key's DER (SPKI) bytes. */
export function keyIdOf(publicKeyPem: string): string {
  return sha256(createPublicKey(publicKeyPem).export({ type: 'spki', format: 'der' }));
}

/** The public key file of `privateKey` (its id derived from it), as pinned and published. */
export function publicKeyFileFor(privateKey: KeyObject, name: string, createdAt: string): PublicKeyFile {
  const publicKey = createPublicKey(privateKey).export({ type: 'spki', format: 'pem' }).toString();
  return { v: 1, keyId: keyIdOf(publicKey), name, publicKey, createdAt };
}

/** A new Ed25519 key pair, with its public key file (neither pinned nor published yet). */
export function newKeyPair(name: string, createdAt: string): { privateKey: KeyObject; pub: PublicKeyFile } {
  const { privateKey } = generateKeyPairSync('ed25519');
  return { privateKey, pub: publicKeyFileFor(privateKey, name, createdAt) };
}

/** The short form people compare: the first 16 hex digits, in groups of four. */
export function fingerprint(keyId: string): string {
  return keyId.slice(0, 16).replace(/(.{4})(?!$)/g, '$1 ');
}

/**
 * Reads a public key file; undefined when it does not check out (wrong id, bad PEM, bad JSON, not
 * a plain file: a link is never followed).
 */
export function readPublicKeyFile(file: string): PublicKeyFile | undefined {
  try {
    const k = PublicKeyFile.parse(JSON.parse(readStoreFile(file, 'utf8')));
    if (keyIdOf(k.publicKey) !== k.keyId || path.basename(file) !== `${k.keyId}.json`) return undefined;
    return k;
  } catch {
    return undefined;
  }
}

/** Why a folder of keys or a file in it was skipped (for a caller that tells the person). */
export type OnSkippedKey = (what: { file: string; why: 'not_a_folder' | 'not_a_key' }) => void;

/**
 * The valid key files of `dir` ([] when it does not exist). A `.json` file that does not check out,
 * or a `dir` that is not a plain folder (a link is never followed), is skipped and reported.
 */
function keyFiles(
  dir: string,
  onSkipped?: OnSkippedKey,
  list: (dir: string) => string[] = readdirStore,
  valid: (k: PublicKeyFile) => boolean = () => true,
): PublicKeyFile[] {
  let names: string[];
  try {
    names = list(dir);
  } catch (e) {
    if (!(e instanceof LoopxError)) return [];
    onSkipped?.({ file: dir, why: 'not_a_folder' });
    return [];
  }
  const out: PublicKeyFile[] = [];
  for (const n of names.filter((x) => x.endsWith('.json'))) {
    const k = KEY_FILE_NAME.test(n) ? readPublicKeyFile(path.join(dir, n)) : undefined;
    if (k && valid(k)) out.push(k);
    else onSkipped?.({ file: path.join(dir, n), why: 'not_a_key' });
  }
  return out;
}

export const trustedDir = (configDir: string) => path.join(configDir, 'trusted');
export const approversDir = (loopxRoot: string) => path.join(loopxRoot, 'approvers');

/** Keys pinned on this machine. */
export function pinnedKeys(configDir: string): PublicKeyFile[] {
  // The config folder is the user's own: a `trusted` link (to dotfiles, say) is theirs to make.
  return keyFiles(trustedDir(configDir), undefined, (d) => fs.readdirSync(d));
}

/**
 * Keys published in the workspace (not trusted for that); `onSkipped` hears of files that are not
 * keys. Anyone who writes to the workspace writes here, so a name or date the one rule for text
 * refuses makes the file no key (the person's own keys and pins are read as they are).
 */
export function publishedKeys(loopxRoot: string, onSkipped?: OnSkippedKey): PublicKeyFile[] {
  return keyFiles(approversDir(loopxRoot), onSkipped, readdirStore, (k) => !keyTextProblem(k));
}

function checked(k: PublicKeyFile): PublicKeyFile {
  if (keyIdOf(k.publicKey) !== k.keyId) throw usageError(`key ${k.keyId} does not match its public key`);
  const problem = keyTextProblem(k);
  if (problem) throw usageError(`key ${k.keyId.slice(0, 16)}: its ${problem}`, { reason: 'bad_key_name' });
  return PublicKeyFile.parse(k);
}

/** Pins a key on this machine: from now on its signatures count here. */
export function pinKey(configDir: string, k: PublicKeyFile): void {
  const dir = ensurePrivateDir(trustedDir(configDir));
  writeJsonAtomic(path.join(dir, `${k.keyId}.json`), checked(k));
}

/** Publishes a public key in the workspace for teammates (once per key). */
export function publishKey(loopxRoot: string, k: PublicKeyFile): void {
  const file = path.join(approversDir(loopxRoot), `${k.keyId}.json`);
  if (readPublicKeyFile(file)) return;
  mkdirStore(approversDir(loopxRoot));
  writeJsonAtomic(file, checked(k));
}

export function publicKeyObject(k: PublicKeyFile): KeyObject {
  return createPublicKey(k.publicKey);
}
