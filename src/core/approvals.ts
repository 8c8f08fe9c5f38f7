/**
 * Signed approvals. A person approving from VS Code signs a statement that binds the goal, the
 * gate, the moment the gate was requested and the note, with an Ed25519 key whose public half is
 * kept in `.loopx/approvers/`. With `requireSignedApprovals` in the policy, an approval counts
 * only if such a signature verifies.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createPublicKey, sign, verify } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { z } from 'zod';
import { canonicalJson, sha256, writeJsonAtomic } from './jsonfile';
import type { Gate } from './model';
import type { ApprovalSignature } from './model';
import type { Store } from './store';

export type ApprovalSignatureT = z.infer<typeof ApprovalSignature>;

const ApproverFile = z.object({
  v: z.literal(1),
  keyId: z.string().regex(/^[0-9a-f]{64}$/),
  name: z.string().max(128),
  publicKey: z.string().max(2000),
  createdAt: z.string(),
});

export function approversDir(store: Store) {
  return path.join(store.root, 'approvers');
}

/** The key id: sha256 of the public key's DER (SPKI) bytes. */
export function keyIdOf(publicKeyPem: string): string {
  return sha256(createPublicKey(publicKeyPem).export({ type: 'spki', format: 'der' }));
}

export function approvalStatement(
  goalId: string,
  gate: Pick<Gate, 'id' | 'requestedAt'>,
  note: string | undefined,
): string {
  return `loopx-approval/1\n${canonicalJson({ goal: goalId, gate: gate.id, requested_at: gate.requestedAt, note: note ?? '' })}`;
}

export function signApproval(
  privateKey: KeyObject,
  keyId: string,
  goalId: string,
  gate: Pick<Gate, 'id' | 'requestedAt'>,
  note: string | undefined,
): ApprovalSignatureT {
  return {
    keyId,
    sig: sign(null, Buffer.from(approvalStatement(goalId, gate, note)), privateKey).toString('base64'),
  };
}

/** Publishes an approver's public key in the workspace (once per key). */
export function writeApproverKey(store: Store, a: { keyId: string; name: string; publicKey: string }): void {
  const file = path.join(approversDir(store), `${a.keyId}.json`);
  if (fs.existsSync(file)) return;
  if (keyIdOf(a.publicKey) !== a.keyId) throw new Error('approver key id does not match its public key');
  fs.mkdirSync(approversDir(store), { recursive: true });
  writeJsonAtomic(file, {
    v: 1,
    keyId: a.keyId,
    name: a.name,
    publicKey: a.publicKey,
    createdAt: store.now(),
  });
}

/** Public keys of the workspace's approvers. A file that does not check out is ignored. */
export function loadApprovers(store: Store): Map<string, KeyObject> {
  const keys = new Map<string, KeyObject>();
  let names: string[] = [];
  try {
    names = fs.readdirSync(approversDir(store)).filter((n) => n.endsWith('.json'));
  } catch {
    return keys;
  }
  for (const n of names) {
    try {
      const a = ApproverFile.parse(JSON.parse(fs.readFileSync(path.join(approversDir(store), n), 'utf8')));
      if (keyIdOf(a.publicKey) === a.keyId && n === `${a.keyId}.json`)
        keys.set(a.keyId, createPublicKey(a.publicKey));
    } catch {
      /* not a valid approver file */
    }
  }
  return keys;
}

/** Whether an approved gate carries a signature that verifies against a known approver. */
export function approvalSignatureValid(goalId: string, gate: Gate, keys: Map<string, KeyObject>): boolean {
  if (!gate.signature) return false;
  const key = keys.get(gate.signature.keyId);
  if (!key) return false;
  try {
    return verify(
      null,
      Buffer.from(approvalStatement(goalId, gate, gate.note)),
      key,
      Buffer.from(gate.signature.sig, 'base64'),
    );
  } catch {
    return false;
  }
}

/** A checker for `gateApproved`, loading the approvers only when the policy needs them. */
export function signatureChecker(store: Store, goalId: string): (gate: Gate) => boolean {
  let keys: Map<string, KeyObject> | undefined;
  return (gate) => approvalSignatureValid(goalId, gate, (keys ??= loadApprovers(store)));
}
