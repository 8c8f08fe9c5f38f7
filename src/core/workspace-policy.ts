/**
 * Reading and signing the workspace policy: `policy.json` (hand-edited), `policy.signed.json`
 * (committed, the last policy a person signed) and its copy in the config folder. The rules for
 * which policy applies live in trust/policy-signature.ts; this module only finds the files.
 */
import * as path from 'node:path';
import { canonicalJson, writeFileAtomic, writeJsonAtomic } from './jsonfile';
import { refused } from './errors';
import type { Policy } from './policy-model';
import { ensurePrivateDir } from './config-dir';
import { readStoreFile } from './safe-path';
import { readPolicy } from './workspace';
import { SIGNED_POLICY_FILE, SignedPolicy, resolvePolicy, signPolicy } from './trust/policy-signature';
import type { PolicyView } from './trust/policy-signature';
import type { Signer, Trust } from './trust/decisions';

export interface PolicyFiles {
  /** `.loopx/policy.json` */
  policy: string;
  /** `.loopx/policy.signed.json` */
  signed: string;
  /** The copy kept in the workspace's folder of the user's config. */
  copy: string;
}

export function policyFiles(loopxRoot: string, secretsDir: string): PolicyFiles {
  return {
    policy: path.join(loopxRoot, 'policy.json'),
    signed: path.join(loopxRoot, SIGNED_POLICY_FILE),
    copy: path.join(secretsDir, SIGNED_POLICY_FILE),
  };
}

/**
 * A signed policy file; a string saying why it is unusable; undefined when there is none. Read
 * like the secrets in the config folder: a plain file, never through a link.
 */
function readSigned(file: string): SignedPolicy | string | undefined {
  let text: string;
  try {
    text = readStoreFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    return `cannot be read (${(e as Error).message})`;
  }
  try {
    const r = SignedPolicy.safeParse(JSON.parse(text));
    return r.success ? r.data : `is not a signed policy (${r.error.issues[0]?.message ?? 'invalid'})`;
  } catch {
    return 'is not valid JSON';
  }
}

/** Which policy applies now, and why (throws `corrupt` when policy.json itself does not parse). */
export function readPolicyView(files: PolicyFiles, trust: Trust): PolicyView {
  return resolvePolicy(
    readPolicy(files.policy),
    [
      { where: `.loopx/${SIGNED_POLICY_FILE}`, signed: readSigned(files.signed) },
      { where: 'the copy in your LoopX config folder', signed: readSigned(files.copy) },
    ],
    trust,
  );
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
  const policy = readPolicy(files.policy);
  if (shown && canonicalJson(shown) !== canonicalJson(policy))
    throw refused('policy.json changed while you were reviewing it: nothing was signed; review it again', {
      reason: 'policy_changed',
    });
  const signed = signPolicy(policy, signer, trust, now);
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
