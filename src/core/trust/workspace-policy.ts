/**
 * Reading and signing the workspace policy: `policy.json` (hand-edited), `policy.signed.json`
 * (committed, the newest policy a person signed), `policies/` (every signed policy, the chain)
 * and the newest's copy in the config folder. The rules for
 * which policy applies live in trust/policy-signature.ts; this module only finds the files.
 */
import * as path from 'node:path';
import { DEFAULT_POLICY, Policy, refused } from '../model';
import {
  canonicalJson,
  copyJson,
  ensurePrivateDir,
  mkdirStore,
  parseJsonText,
  readdirStore,
  readStoreFile,
  sha256,
  writeFileAtomic,
  writeJsonAtomic,
} from '../store';
import type { PolicyView } from './policy-signature';
import { resolvePolicy, SIGNED_POLICY_FILE, SignedPolicy, signPolicy } from './policy-signature';
import type { Signer, Trust } from './signed-decisions';

export interface PolicyFiles {
  /** `.loopx/policy.json` */
  policy: string;
  /** `.loopx/policy.signed.json`: the newest signed policy, for people to read. */
  signed: string;
  /** `.loopx/policies/`: every signed policy, one file each, never rewritten (the chain). */
  history: string;
  /**
   * The newest signed policy this machine has seen for the workspace, in the user's config
   * folder, by workspace identity: shared by every clone of it here.
   */
  copy: string;
}

export function policyFiles(
  loopxRoot: string,
  configDir: string,
  workspace: string | undefined,
): PolicyFiles {
  return {
    policy: path.join(loopxRoot, 'policy.json'),
    signed: path.join(loopxRoot, SIGNED_POLICY_FILE),
    history: path.join(loopxRoot, POLICY_HISTORY_DIR),
    copy: path.join(configDir, 'identities', workspace ?? 'none', SIGNED_POLICY_FILE),
  };
}

const POLICY_HISTORY_DIR = 'policies';

/** A signed policy's file name in the chain: its version first (sorts by it), then its signature's. */
const historyName = (s: SignedPolicy) =>
  `${String(s.version ?? 0).padStart(9, '0')}-${sha256(s.sig).slice(0, 12)}.json`;

/** The chain's file names, newest version first ([] without the folder). */
function historyNames(dir: string): string[] {
  try {
    return readdirStore(dir)
      .filter((n) => /^\d{9}-[0-9a-f]{12}\.json$/.test(n))
      .sort()
      .reverse();
  } catch {
    return [];
  }
}

/** A policy file's text, or why it has none: read like the secrets, a plain file, never through a link. */
type FileText = { text: string } | { error: NodeJS.ErrnoException };

function readText(file: string): FileText {
  try {
    return { text: readStoreFile(file, 'utf8') };
  } catch (e) {
    return { error: e as NodeJS.ErrnoException };
  }
}

const sameText = (a: FileText, b: FileText) =>
  'text' in a ? 'text' in b && a.text === b.text : 'error' in b && a.error.code === b.error.code;

/** A signed policy file; a string saying why it is unusable; undefined when there is none. */
function signedOf(f: FileText): SignedPolicy | string | undefined {
  if ('error' in f) {
    if (f.error.code === 'ENOENT') return undefined;
    return `cannot be read (${f.error.message})`;
  }
  try {
    const r = SignedPolicy.safeParse(JSON.parse(f.text));
    return r.success ? r.data : `is not a signed policy (${r.error.issues[0]?.message ?? 'invalid'})`;
  } catch {
    return 'is not valid JSON';
  }
}

/** policy.json's policy; the default when there is none (a link there is refused). */
function policyOf(f: FileText, file: string): Policy {
  if ('text' in f) return parseJsonText(f.text, Policy, file);
  // Missing, as `storePathExists` reads it: the file, or a folder on the way.
  if (f.error.code === 'ENOENT' || f.error.code === 'ENOTDIR') return DEFAULT_POLICY;
  throw f.error;
}

function viewOf(files: PolicyFiles, texts: FileText[], names: string[], trust: Trust): PolicyView {
  const candidates = [
    { where: `.loopx/${SIGNED_POLICY_FILE}`, signed: signedOf(texts[1]!) },
    { where: 'the copy in your LoopX config folder', signed: signedOf(texts[2]!) },
  ];
  // Only the chain's files above the newest of those two can change the answer: read just them.
  const known = Math.max(
    0,
    ...candidates.map((c) => (typeof c.signed === 'object' ? (c.signed.version ?? 0) : 0)),
  );
  for (const name of names) {
    if (Number(name.slice(0, 9)) <= known) break;
    const where = `.loopx/${POLICY_HISTORY_DIR}/${name}`;
    candidates.push({ where, signed: signedOf(readText(path.join(files.history, name))) });
  }
  return resolvePolicy(policyOf(texts[0]!, files.policy), candidates, trust);
}

const readTexts = (files: PolicyFiles) => [files.policy, files.signed, files.copy].map(readText);

/** Which policy applies now, and why (throws `corrupt` when policy.json itself does not parse). */
export function readPolicyView(files: PolicyFiles, trust: Trust): PolicyView {
  return viewOf(files, readTexts(files), historyNames(files.history), trust);
}

/**
 * readPolicyView for a process that reads the policy again and again (a server, the editor, a
 * writer's every commit): the files are read every time, but parsed and their signatures checked
 * again only when a text or the pinned keys changed. Each caller gets a copy of its own.
 */
export class PolicyViewCache {
  private cached?: { texts: FileText[]; names: string; trust: Trust; view: PolicyView };

  view(files: PolicyFiles, trust: Trust): PolicyView {
    const texts = readTexts(files);
    const names = historyNames(files.history);
    const c = this.cached;
    if (c && c.trust === trust && c.names === names.join() && texts.every((t, i) => sameText(t, c.texts[i]!)))
      return copyJson(c.view);
    this.cached = undefined;
    const view = viewOf(files, texts, names, trust);
    this.cached = { texts, names: names.join(), trust, view: copyJson(view) };
    return view;
  }
}

/**
 * Signs policy.json as it is now, for the workspace (committed) and this machine's copy. With
 * `shown`, the policy the person reviewed: refused if the file changed since (an agent editing it
 * between the diff and the signature must not get its edit signed).
 */
export function signWorkspacePolicy(
  files: PolicyFiles,
  signer: Signer | undefined,
  trust: Trust,
  now: Date,
  shown?: Policy,
): PolicyView {
  const policy = policyOf(readText(files.policy), files.policy);
  if (shown && canonicalJson(shown) !== canonicalJson(policy))
    throw refused('policy.json changed while you were reviewing it: nothing was signed; review it again', {
      reason: 'policy_changed',
    });
  const signed = signPolicy(policy, signer, trust, now, readPolicyView(files, trust).signed);
  mkdirStore(files.history);
  writeJsonAtomic(path.join(files.history, historyName(signed)), signed);
  writeJsonAtomic(files.signed, signed);
  ensurePrivateDir(path.dirname(files.copy));
  writeJsonAtomic(files.copy, signed);
  return readPolicyView(files, trust);
}

/**
 * A workspace's first policy is signed with its person's key when the key is first used here,
 * unless policy.json already holds edits that would loosen the default: those the person
 * reviews and signs (`review`). Undefined when a signed policy already counts.
 */
export function signFirstPolicy(
  store: { policyView(): PolicyView; signPolicy(signer: Signer, shown?: Policy): unknown },
  signer: Signer,
): 'signed' | 'review' | undefined {
  const v = store.policyView();
  if (v.state !== 'not_signed') return undefined;
  if (v.unsigned.length > 0) return 'review';
  store.signPolicy(signer, v.file);
  return 'signed';
}

/**
 * A person's edit of the policy made by a command (`loopx policy allow`): written to policy.json
 * and signed at once with the key already unlocked; when the signature is refused, policy.json
 * is put back as it was, so a failed command leaves no edit behind.
 */
export function writeAndSignPolicy(
  store: { policyPath: string; signPolicy(signer: Signer, shown?: Policy): PolicyView },
  next: Policy,
  signer: Signer,
): PolicyView {
  let before: string | undefined;
  try {
    before = readStoreFile(store.policyPath, 'utf8');
  } catch {
    before = undefined;
  }
  writeJsonAtomic(store.policyPath, next);
  try {
    return store.signPolicy(signer, next);
  } catch (e) {
    if (before !== undefined) writeFileAtomic(store.policyPath, before);
    throw e;
  }
}
