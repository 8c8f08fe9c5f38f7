/**
 * Keys a person reads and keys an attacker guesses at (issue 34, finding 8 and the key files):
 * a published approver key's name is text under the one rule for characters, so a file an agent
 * writes into `.loopx/approvers/` cannot move the cursor and overwrite `loopx approvers list`'s own
 * "NOT pinned" row; and the private key file's passphrase costs an offline guesser at least
 * scrypt N=2^17, r=8 (about half a second here), a key made with the old cost still unlocks and is
 * sealed again at the new one. Through the built CLI.
 */
import assert from 'node:assert/strict';
import { createCipheriv, randomBytes, scryptSync } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { newKeyPair } from '../../src/core/trust/keys';
import { Sandbox, loopx, ok, removeTempDirs } from '../helpers/security';
import type { Result } from '../helpers/security';
import { PASSPHRASE, loopxAsPerson, show } from '../helpers/cli';

after(removeTempDirs);

/** A key file published by hand in the workspace: any name, its id and public key genuine. */
function publishByHand(s: Sandbox, name: string): string {
  const { pub } = newKeyPair('x', new Date().toISOString());
  const dir = s.file('.loopx', 'approvers');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, `${pub.keyId}.json`), JSON.stringify({ ...pub, name }, null, 2));
  return pub.keyId;
}

/** Nothing a terminal acts on: no C0/C1 control (tab and newline aside), no bidi or zero-width character. */
function plainForTerminal(text: string, what: string) {
  const bad = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069]/u.exec(text);
  assert.equal(bad, null, `${what} printed ${JSON.stringify(bad?.[0])} raw:\n${JSON.stringify(text)}`);
}

/** The `{error}` line of a `--json` run that failed. */
function jsonError(r: Result): { kind: string; reason: string; message: string } {
  assert.notEqual(r.code, 0, `expected a refusal, got exit 0: ${r.stdout}`);
  const line = r.stderr.trim().split('\n').at(-1)!;
  return (JSON.parse(line) as { error: { kind: string; reason: string; message: string } }).error;
}

describe('security: approver key names', { concurrency: true }, () => {
  it('a published name with terminal escapes cannot overwrite the "NOT pinned" row (finding 8)', async () => {
    const s = new Sandbox();
    ok(await s.run(['init']));
    const forged = publishByHand(s, '\r\u001b[2Kpinned      1111 2222 3333 4444  Trusted Person');
    const bidi = publishByHand(s, 'Mallory \u202eyeK detsurT');
    const r = await s.run(['approvers', 'list']);
    ok(r);
    plainForTerminal(r.stdout + r.stderr, 'approvers list');
    assert.doesNotMatch(r.stdout, /Trusted Person/, 'the forged name is not shown as a key');
    assert.doesNotMatch(r.stdout, /^pinned/m, 'no row claims to be pinned');
    for (const id of [forged, bidi])
      assert.match(r.stdout, new RegExp(`${id}\\.json`), `the invalid file ${id} is named:\n${r.stdout}`);
    const json = await s.run(['--json', 'approvers', 'list']);
    ok(json);
    assert.deepEqual(JSON.parse(json.stdout), [], 'an invalid key file is no approver');
  });

  it('an invalid published key cannot be pinned', async () => {
    const s = new Sandbox();
    ok(await s.run(['init']));
    const id = publishByHand(s, 'Eve\u001b]0;title\u0007');
    // Refused before any passphrase is asked for: the file is no key.
    const e = jsonError(await s.run(['--json', 'approvers', 'trust', id.slice(0, 16)]));
    assert.equal(e.reason, 'no_such_key', JSON.stringify(e));
  });

  it('a key name with control or invisible characters is refused when the key is made', async () => {
    const s = new Sandbox();
    ok(await s.run(['init']));
    for (const name of ['Ada\u001b[2K', 'Ada\rBob', 'Ada\u200bLovelace']) {
      // Refused before any passphrase is asked for.
      const r = await s.run(['--json', 'key', 'create', '--name', name]);
      assert.equal(jsonError(r).reason, 'bad_key_name', show(r));
    }
    const filesIn = (dir: string) => (fs.existsSync(dir) ? fs.readdirSync(dir) : []);
    assert.deepEqual(filesIn(path.join(s.config, 'keys')), [], 'no key was made');
    assert.deepEqual(filesIn(s.file('.loopx', 'approvers')), [], 'no key was published');
  });
});

/** A terminal key file as LoopX wrote it before: scrypt N=2^15, r=8, p=1. */
function oldKeyFile(configDir: string, passphrase: string): string {
  const { privateKey, pub } = newKeyPair('Old Key', new Date().toISOString());
  const kdf = { name: 'scrypt', N: 1 << 15, r: 8, p: 1 };
  const salt = randomBytes(16);
  const iv = randomBytes(12);
  const key = scryptSync(passphrase.normalize('NFC'), salt, 32, {
    N: kdf.N,
    r: kdf.r,
    p: kdf.p,
    maxmem: 64 << 20,
  });
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const data = Buffer.concat([
    cipher.update(privateKey.export({ type: 'pkcs8', format: 'der' })),
    cipher.final(),
  ]);
  const file = {
    ...pub,
    kdf: { ...kdf, salt: salt.toString('base64') },
    cipher: {
      name: 'aes-256-gcm',
      iv: iv.toString('base64'),
      tag: cipher.getAuthTag().toString('base64'),
      data: data.toString('base64'),
    },
  };
  for (const [dir, body] of [
    ['keys', file],
    ['trusted', pub],
  ] as const) {
    fs.mkdirSync(path.join(configDir, dir), { recursive: true, mode: 0o700 });
    fs.writeFileSync(path.join(configDir, dir, `${pub.keyId}.json`), JSON.stringify(body, null, 2), {
      mode: 0o600,
    });
  }
  return path.join(configDir, 'keys', `${pub.keyId}.json`);
}

const kdfOf = (file: string) =>
  (JSON.parse(fs.readFileSync(file, 'utf8')) as { kdf: { N: number; r: number; p: number } }).kdf;
/** scrypt's work per guess grows with N·r (memory 128·N·r bytes, time about the same). */
const cost = (k: { N: number; r: number; p: number }) => k.N * k.r * k.p;

describe('security: the passphrase of a key file', { concurrency: true }, () => {
  it('a new key costs a guesser at least scrypt N=2^17, r=8', async () => {
    const s = new Sandbox();
    ok(await s.run(['init']));
    ok(
      await loopx(['key', 'create', '--name', 'Ada', '--passphrase-fd', '3'], {
        ...s.opts(),
        fd3: `${PASSPHRASE}\n`,
      }),
    );
    const [name] = fs.readdirSync(path.join(s.config, 'keys'));
    assert.ok(
      cost(kdfOf(path.join(s.config, 'keys', name!))) >= (1 << 17) * 8,
      JSON.stringify(kdfOf(path.join(s.config, 'keys', name!))),
    );
  });

  it('a key made at the old cost still unlocks, and is sealed again at the new cost', async () => {
    const s = new Sandbox();
    ok(await s.run(['init']));
    const file = oldKeyFile(s.config, PASSPHRASE);
    assert.equal(kdfOf(file).N, 1 << 15);
    const policy = JSON.parse(fs.readFileSync(s.file('.loopx', 'policy.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    fs.writeFileSync(
      s.file('.loopx', 'policy.json'),
      JSON.stringify({ ...policy, contractTtlMinutes: 20 }, null, 2),
    );
    ok(await loopxAsPerson(['policy', 'sign'], s.opts()));
    assert.ok(cost(kdfOf(file)) >= (1 << 17) * 8, `not sealed again: ${JSON.stringify(kdfOf(file))}`);
    // It opens with the same passphrase, and only with it.
    fs.writeFileSync(
      s.file('.loopx', 'policy.json'),
      JSON.stringify({ ...policy, contractTtlMinutes: 25 }, null, 2),
    );
    const wrong = await loopx(['--json', '--passphrase-fd', '3', 'policy', 'sign'], {
      ...s.opts(),
      fd3: 'not the passphrase\n',
    });
    assert.equal(jsonError(wrong).reason, 'wrong_passphrase', show(wrong));
    ok(await loopxAsPerson(['policy', 'sign'], s.opts()));
  });
});
