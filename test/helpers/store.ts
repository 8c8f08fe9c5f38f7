import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Store } from '../../src/core/store/store';
import type { Actor } from '../../src/core/model/goal-state';
import type { Policy } from '../../src/core/model/policy';
import { newKeyPair, pinKey } from '../../src/core/trust/keys';
import { signerFor } from '../../src/core/trust/signed-decisions';
import type { Signer } from '../../src/core/trust/signed-decisions';

export const human: Actor = { kind: 'user', id: 'alice', channel: 'cli' };
/** A shell agent (Codex, a script) using the CLI without a terminal. */
export const agent: Actor = { kind: 'agent', id: 'codex', channel: 'cli' };
/** An agent calling through MCP or language-model tools: its proposed commands need a review gate. */
export const toolAgent: Actor = { kind: 'agent', id: 'copilot', channel: 'mcp' };
export const system: Actor = { kind: 'system', id: 'self-repair', channel: 'system' };

const created: string[] = [];

/** A fresh temp dir; `removeTempDirs` (from an `after` hook) deletes the ones made so far. */
export function tempDir(prefix = 'loopx-test-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  created.push(dir);
  return dir;
}

export function removeTempDirs(): void {
  for (const dir of created.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
}

/** A fresh initialised store; `clock` lets a test move time. */
export function tempStore(opts: { now?: () => Date } = {}): Store {
  return Store.init(tempDir(), { clock: opts.now });
}

/** A clock a test can move forward. */
export function manualClock(start = '2026-11-30T10:00:00.000Z') {
  let t = new Date(start).getTime();
  return {
    now: () => new Date(t),
    advance(ms: number) {
      t += ms;
    },
  };
}

/** Ids that must be refused everywhere an id is taken, with what makes each one hostile. */
export const HOSTILE_IDS: readonly (readonly [string, string])[] = [
  ['../x', 'path traversal'],
  ['a/b', 'a path separator'],
  ['a\\b', 'a Windows separator'],
  ['', 'empty'],
  ['x'.repeat(10_000), '10,000 characters'],
  ['$(rm -rf /)', 'command substitution'],
  ['`id`', 'backticks'],
  ['a;b', 'a command separator'],
  ['a|b', 'a pipe'],
  ['a&b', 'background'],
  ['a>b', 'a redirection'],
  ['a b', 'a space'],
  ["a'b", 'a quote'],
  ['a*', 'a glob'],
  ['~root', 'a tilde'],
  ['-rf', 'an option'],
  ['.', 'a dot'],
  ['..', 'two dots'],
  ['a\nb', 'a newline'],
  ['a\rb', 'a carriage return'],
  ['a\u0000b', 'NUL'],
  ['a\u001b[31mb', 'an escape sequence'],
  ['a\tb', 'a tab'],
  ['a\u007fb', 'DEL'],
  ['p\u0430yment', 'a Cyrillic a'],
  ['\uff47oal', 'a fullwidth g'],
  ['goal\u200b', 'a zero-width space'],
  ['\u212aelvin', 'the Kelvin sign'],
  ['a\u2215b', 'a division slash'],
  ['a\uff0fb', 'a fullwidth slash'],
  ['caf\u00e9', 'an accented letter'],
];

const signers = new Map<string, Signer>();

/**
 * A person's signing key for tests, pinned in the store's config folder (as `loopx key create`
 * or the editor would pin it): pass `signed(store)` to `invoke` for a person's decisions.
 */
export function personSigner(store: Store, name = 'alice'): Signer {
  const known = signers.get(`${store.configDir}|${name}`);
  if (known) return known;
  const { privateKey, pub } = newKeyPair(name, '2026-11-30T00:00:00.000Z');
  pinKey(store.configDir, pub);
  const signer = signerFor(privateKey, pub.keyId, name);
  signers.set(`${store.configDir}|${name}`, signer);
  return signer;
}

/** `invoke` options for a call a person signs. */
export const signed = (store: Store) => ({ signer: personSigner(store) });

/** A person edits policy.json and signs it (as `loopx policy sign` does): the policy applies in full. */
export function writeSignedPolicy(store: Store, policy: Omit<Policy, 'v'>): void {
  fs.writeFileSync(store.policyPath, JSON.stringify({ v: 1, ...policy }, null, 1));
  store.signPolicy(personSigner(store));
}

/**
 * Makes every goal's index entry one the index vouches for: each goal's logs folder is dated
 * 10 s back and the index rebuilt after, as for goals untouched since a while (an entry made
 * within 2 s of its folder's last change is checked against the goal itself, git's racy-index
 * rule, so in a fresh test store every listing would read the goals).
 */
export function settleIndex(store: Store): void {
  const past = new Date(Date.now() - 10_000);
  for (const id of store.goalIds()) fs.utimesSync(store.logsDir(id), past, past);
  store.rebuildIndex();
}
