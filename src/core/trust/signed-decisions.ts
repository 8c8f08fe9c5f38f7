/**
 * A person's decisions: approving or rejecting a gate, a reward, a quota grant, and a quota change
 * that loosens a budget. Each is an event carrying an Ed25519 signature (`sig`) over its canonical
 * statement. Replay gives it effect only when the signature verifies against a key pinned on this
 * machine; otherwise it stays in the log, with no effect, and is reported as ignored.
 */
import type { KeyObject } from 'node:crypto';
import { sign, verify } from 'node:crypto';
import type { Actor, DecisionSig, GoalState, Quota } from '../model';
import { BUDGET_NAMES, refused } from '../model';
import { canonicalJson, fileStamp, sha256 } from '../store';
import type { PublicKeyFile } from './keys';
import { fingerprint, isPasskey, pinnedKeys, publicKeyObject, trustedDir } from './keys';
import { rejectsPasskeySig } from './passkey';

export const DECISION_TYPES = ['gate.approved', 'gate.rejected', 'reward.added', 'quota.granted'] as const;

/** What a decision's statement covers: everything in the event but its place in the chain. */
export interface DecisionFacts {
  goalId: string;
  id: string;
  ts: string;
  /** The clock stamp that places it among all writers' events (absent on version 1 events). */
  hlc?: string;
  writer: string;
  actor: Actor;
  type: string;
  data: unknown;
}

/** Budgets, cooldown or window that `next` loosens compared with `old` (empty: it only tightens). */
export function loosenedBy(old: Quota, next: Quota): string[] {
  const out: string[] = BUDGET_NAMES.filter((k) => {
    const now = next.budgets[k];
    const was = old.budgets[k];
    return now === undefined ? was !== undefined : was !== undefined && now > was;
  }).map(String);
  if (next.cooldownSeconds < old.cooldownSeconds) out.push('cooldownSeconds');
  if (JSON.stringify(next.window) !== JSON.stringify(old.window)) out.push('window');
  return out;
}

/** Whether an event is a person's decision, which counts only when signed by a pinned key. */
export function isDecision(state: GoalState | undefined, ev: { type: string; data: unknown }): boolean {
  if ((DECISION_TYPES as readonly string[]).includes(ev.type)) return true;
  if (ev.type === 'quota.set' && state)
    return loosenedBy(state.quota, (ev.data as { quota: Quota }).quota).length > 0;
  return false;
}

/**
 * What a person signs: the decision's facts and the workspace it is made in, so a copy in another
 * workspace's logs verifies nowhere else (2: the workspace named).
 */
export function decisionStatement(f: DecisionFacts, workspace: string): string {
  return `loopx-decision/2\n${canonicalJson({
    workspace,
    goal: f.goalId,
    id: f.id,
    ts: f.ts,
    hlc: f.hlc,
    writer: f.writer,
    actor: f.actor,
    type: f.type,
    data: f.data,
  })}`;
}

/** A person's private key, unlocked for one call (a terminal passphrase, VS Code's secret storage). */
export interface Signer {
  keyId: string;
  name: string;
  sign(statement: string): string;
}

export function signerFor(privateKey: KeyObject, keyId: string, name: string): Signer {
  return {
    keyId,
    name,
    sign: (statement) => sign(null, Buffer.from(statement), privateKey).toString('base64'),
  };
}

const HOW_TO_SIGN =
  'at a terminal, make your key once with `loopx key create`, then give its passphrase when asked; in VS Code, use the LoopX commands';

/**
 * Signs a person's statement (`what` names it in messages), refusing when there is no key, or
 * when the signature would not count here (the key is not pinned): a decision that would be
 * ignored must not be written.
 */
export function signStatement(
  what: string,
  statement: string,
  signer: Signer | undefined,
  trust: Trust,
  details: Record<string, unknown> = {},
): DecisionSig {
  if (!signer) {
    throw refused(`${what} is a person's decision and must be signed with the person's key: ${HOW_TO_SIGN}`, {
      ...details,
      reason: 'unsigned_decision',
    });
  }
  const sig = { keyId: signer.keyId, sig: signer.sign(statement) };
  const why = trust.rejectsStatement(statement, sig);
  if (why) {
    throw refused(
      `${what} would have no effect: ${why}. Pin the key with \`loopx approvers trust ${signer.keyId.slice(0, 16)}\``,
      { ...details, reason: 'untrusted_signer', keyId: signer.keyId },
    );
  }
  return sig;
}

/** Signs a person's decision about a goal (see signStatement). */
export function signDecision(
  goalId: string,
  ev: Omit<DecisionFacts, 'goalId'>,
  signer: Signer | undefined,
  trust: Trust,
): DecisionSig {
  const workspace = requireWorkspace(trust, ev.type);
  const sig = signStatement(ev.type, decisionStatement({ goalId, ...ev }, workspace), signer, trust, {
    goalId,
  });
  return { ...sig, ws: workspace };
}

/**
 * A signature made elsewhere for exactly this decision (a passkey's, in a browser: store/prepared-event.ts),
 * accepted only when it would count here, by the same check replay makes.
 */
export function acceptDecisionSig(
  goalId: string,
  ev: Omit<DecisionFacts, 'goalId'>,
  sig: DecisionSig,
  trust: Trust,
): DecisionSig {
  const why = trust.rejects({ goalId, ...ev }, sig);
  if (why)
    throw refused(`${ev.type} would have no effect: ${why}`, {
      goalId,
      reason: 'untrusted_signer',
      keyId: sig.keyId,
    });
  return sig;
}

/** The workspace identity a signature must name; refused before init made one. */
function requireWorkspace(trust: Trust, what: string): string {
  if (trust.workspace) return trust.workspace;
  throw refused(`${what} cannot be signed: this workspace has no identity yet (run \`loopx init\`)`, {
    reason: 'no_workspace_identity',
  });
}

/** Which keys count on this machine, and how a decision is checked against them. */
export interface Trust {
  /** The identity of the workspace decisions are checked for (undefined before `loopx init`). */
  readonly workspace?: string;
  /** Changes when the pinned keys or the workspace change: a snapshot built under others is replayed. */
  readonly fingerprint: string;
  /** Why a decision has no effect, or undefined when its signature verifies against a pinned key. */
  rejects(f: DecisionFacts, sig: DecisionSig | undefined): string | undefined;
  /** The same check for any signed statement (a decision, a policy). */
  rejectsStatement(statement: string, sig: DecisionSig | undefined): string | undefined;
  /** The pinned key with this id, if any. */
  key(keyId: string): PublicKeyFile | undefined;
}

export function trustOf(keys: readonly PublicKeyFile[], workspace?: string): Trust {
  const byId = new Map(keys.map((k) => [k.keyId, k]));
  const objects = new Map<string, KeyObject>();
  const rejectsStatement = (statement: string, sig: DecisionSig | undefined): string | undefined => {
    if (!sig) return 'it is not signed';
    const k = byId.get(sig.keyId);
    if (!k) return `it is signed by key ${fingerprint(sig.keyId)}, which is not pinned on this machine`;
    let obj = objects.get(k.keyId);
    if (!obj) objects.set(k.keyId, (obj = publicKeyObject(k)));
    const who = `key ${fingerprint(sig.keyId)}`;
    // The key's kind decides how it signs: an assertion never passes for an Ed25519 signature.
    if (isPasskey(k)) return rejectsPasskeySig(statement, sig, k, obj, who);
    if (sig.webauthn) return `${who} is an Ed25519 key, and this signature is a passkey's assertion`;
    try {
      if (verify(null, Buffer.from(statement), obj, Buffer.from(sig.sig, 'base64'))) return undefined;
    } catch {
      /* a malformed signature is a bad signature */
    }
    return `its signature by key ${fingerprint(sig.keyId)} does not verify`;
  };
  let fingerprintMemo: string | undefined;
  return {
    // Computed on first use: NO_TRUST is built while the store (which hashes) may still be loading.
    get fingerprint() {
      const parts = [DECISION_RULES, workspace ?? '', ...[...byId.keys()].sort()];
      return (fingerprintMemo ??= sha256(parts.join('\n')).slice(0, 16));
    },
    workspace,
    key: (id) => byId.get(id),
    rejects: (f, sig) => {
      if (!sig) return 'it is not signed';
      if (!sig.ws)
        return 'it was signed by an older LoopX, before signatures named their workspace: the person decides again';
      if (!workspace) return 'this workspace has no identity (.loopx/workspace.json): run `loopx init`';
      if (sig.ws !== workspace)
        return `it was signed in workspace ${sig.ws}, not this one (${workspace}): a decision copied from another workspace has no effect`;
      return rejectsStatement(decisionStatement(f, workspace), sig);
    },
    rejectsStatement,
  };
}

/**
 * The version of the rules that give decisions their effect, folded into the trust fingerprint so
 * that snapshots and the index built under older rules are replayed (2: an approval covers the
 * work listed in it; 3: a decision names its workspace; 4: a todo records the clone its command came from).
 */
const DECISION_RULES = 'loopx-decision-rules/4';

/** Trusts nothing: every decision is ignored. */
export const NO_TRUST: Trust = trustOf([]);

/**
 * The pinned keys of `configDir`, re-read when the folder changes (a person pins a key while the
 * editor runs).
 */
export class PinnedTrust {
  private cached?: { stamp: string; trust: Trust };
  constructor(private readonly configDir: string) {}

  /** The trust for decisions made in `workspace` (its identity). */
  current(workspace: string | undefined): Trust {
    const stamp = `${fileStamp(trustedDir(this.configDir))}\n${workspace ?? ''}`;
    if (this.cached?.stamp !== stamp)
      this.cached = { stamp, trust: trustOf(pinnedKeys(this.configDir), workspace) };
    return this.cached.trust;
  }
}

/** One line per decision in the log that has no effect here, for status, verify and the editor. */
export function describeIgnored(goal: GoalState): string[] {
  return (goal.ignored ?? []).map(
    (i) => `${i.type} ${i.eventId} by ${i.actor.kind} ${i.actor.id} at ${i.ts} is ignored: ${i.reason}`,
  );
}
