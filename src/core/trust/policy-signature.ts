/**
 * The policy is a person's decision. `policy.json` stays hand-editable, but what LoopX enforces is
 * the last policy a person signed (`policy.signed.json`, committed), tightened by whatever an
 * unsigned edit adds: a new gate or deny rule, a smaller budget or a shorter contract applies at
 * once, since it gives an agent nothing; an edit that loosens anything waits for a signature.
 * Signed policies form a chain (each names its version and the one before it), each kept in a
 * file of its own under `.loopx/policies/` and the newest in the user's config folder: the newest
 * that verifies wins, so restoring an older signed file (a rollback by an agent or a push) on any
 * clone does not bring back what a person has since tightened.
 */
import { z } from 'zod';
import { DEFAULT_POLICY, DEFAULT_QUOTA, lazy, lazyArray, Policy, policyTtlMinutes, refused } from '../model';
import { allowRulesOf } from '../shell';
import { canonicalJson, sha256 } from '../store';
import { formatDiff, lineDiff } from '../views';
import type { Signer, Trust } from './signed-decisions';
import { loosenedBy, signStatement } from './signed-decisions';

export const SIGNED_POLICY_FILE = 'policy.signed.json';

export const SignedPolicy = lazy(() =>
  z.strictObject({
    v: z.union([z.literal(1), z.literal(2)]),
    /** The workspace it was signed in (absent from an older LoopX's, which count nowhere now). */
    workspace: z.string().max(64).optional(),
    /** 1 for a workspace's first signed policy, one more for each after it: the newest wins. */
    version: z.number().int().positive().max(1e9).optional(),
    /** sha256 of the statement of the policy it replaces (null for the first). */
    previous: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .nullable()
      .optional(),
    policy: Policy,
    signedAt: z.string().max(40),
    signedBy: z.string().min(1).max(128),
    keyId: z.string().max(128),
    sig: z.string().max(200),
  }),
);
export type SignedPolicy = z.infer<typeof SignedPolicy>;

type PolicyFacts = Pick<
  SignedPolicy,
  'workspace' | 'version' | 'previous' | 'policy' | 'signedAt' | 'signedBy'
>;

/**
 * What a person signs: the policy, the workspace, and its place in the workspace's chain of signed
 * policies, so that restoring an older signed file on any clone never outranks a newer one
 * (2: workspace, version and previous named).
 */
export function policyStatement(p: PolicyFacts): string {
  const { workspace, version, previous, policy, signedAt, signedBy } = p;
  return `loopx-policy/2\n${canonicalJson({ workspace, version, previous, policy, signedAt, signedBy })}`;
}

/**
 * A person's signature over `policy`, the next in the chain after `prior` (the newest signed
 * policy known here), refused without a key, with one not pinned here, or before the workspace
 * has an identity.
 */
export function signPolicy(
  policy: Policy,
  signer: Signer | undefined,
  trust: Trust,
  now: Date,
  prior: SignedPolicy | undefined,
): SignedPolicy {
  if (!trust.workspace)
    throw refused('the policy cannot be signed: this workspace has no identity yet (run `loopx init`)', {
      reason: 'no_workspace_identity',
    });
  const facts: PolicyFacts = {
    workspace: trust.workspace,
    version: (prior?.version ?? 0) + 1,
    previous: prior ? sha256(policyStatement(prior)) : null,
    policy,
    signedAt: now.toISOString(),
    signedBy: signer?.name ?? 'unknown',
  };
  const sig = signStatement('signing the policy', policyStatement(facts), signer, trust);
  return { v: 2, ...facts, ...sig };
}

/** Why a signed policy cannot count in the workspace `trust` is for, before its signature is checked. */
function misplaced(signed: SignedPolicy, trust: Trust): string | undefined {
  if (signed.v === 1 || !signed.workspace || signed.version === undefined)
    return 'it was signed by an older LoopX, before signed policies named their workspace and version: sign the policy again';
  if (signed.workspace !== trust.workspace)
    return `it was signed in workspace ${signed.workspace}, not this one (${trust.workspace ?? 'no identity yet'})`;
  return undefined;
}

/** Whether `a` is newer than `b` in the chain (then by time, then by signature, so every clone picks one). */
const newer = (a: SignedPolicy, b: SignedPolicy) =>
  (a.version ?? 0) !== (b.version ?? 0)
    ? (a.version ?? 0) > (b.version ?? 0)
    : a.signedAt !== b.signedAt
      ? a.signedAt > b.signedAt
      : a.sig > b.sig;

export type PolicyState =
  /** policy.json is what a person signed. */
  | 'signed'
  /** policy.json differs from the last signed policy. */
  | 'unsigned_changes'
  /** No signed policy counts here: the default policy, tightened by policy.json. */
  | 'not_signed';

export interface PolicyView {
  /** What LoopX enforces. */
  effective: Policy;
  state: PolicyState;
  /** The signed policy in force, when one counts here. */
  signed?: SignedPolicy;
  /** What policy.json would become if signed (`effective` until then) and the baseline it is compared with. */
  file: Policy;
  baseline: Policy;
  /** Fields of policy.json that have no effect until a person signs them. */
  unsigned: string[];
  /** Why a signed policy was not used (a bad signature, a key not pinned here), if one was found. */
  ignored: string[];
}

/**
 * Picks the newest signed policy that verifies here among `candidates` (the workspace's file and
 * the config folder's copy), and applies `file` over it as far as `file` only tightens.
 */
export function resolvePolicy(
  file: Policy,
  candidates: readonly { where: string; signed: SignedPolicy | string | undefined }[],
  trust: Trust,
): PolicyView {
  const ignored: string[] = [];
  let signed: SignedPolicy | undefined;
  // Both files normally hold the same signature: one that already verified is not checked again.
  const accepted = new Set<string>();
  for (const c of candidates) {
    if (c.signed === undefined) continue;
    if (typeof c.signed === 'string') {
      ignored.push(`${c.where}: ${c.signed}`);
      continue;
    }
    const statement = policyStatement(c.signed);
    const key = `${c.signed.keyId}\n${c.signed.sig}\n${statement}`;
    if (accepted.has(key)) continue;
    const why =
      misplaced(c.signed, trust) ??
      trust.rejectsStatement(statement, { keyId: c.signed.keyId, sig: c.signed.sig });
    if (why) {
      ignored.push(`${c.where} is ignored: ${why}`);
      continue;
    }
    accepted.add(key);
    if (!signed || newer(c.signed, signed)) signed = c.signed;
  }
  const baseline = signed?.policy ?? DEFAULT_POLICY;
  const effective = tighten(baseline, file);
  const unsigned = POLICY_FIELDS.filter((k) => canonicalJson(effective[k]) !== canonicalJson(file[k]));
  const state: PolicyState = !signed
    ? 'not_signed'
    : canonicalJson(file) === canonicalJson(signed.policy)
      ? 'signed'
      : 'unsigned_changes';
  return { effective, state, signed, file, baseline, unsigned, ignored };
}

const POLICY_FIELDS = lazyArray(() => Object.keys(Policy.shape) as (keyof Policy)[]);
const REVIEW_ORDER = { none: 0, tools: 1, all: 2 } as const;

/** `base` with every part of `edit` that only tightens it; what would loosen stays as in `base`. */
export function tighten(base: Policy, edit: Policy): Policy {
  const out: Policy = { ...base };
  const set = <K extends keyof Policy>(k: K, v: Policy[K]) => {
    if (v === undefined) delete out[k];
    else out[k] = v;
  };
  if (loosenedBy(base.defaultQuota ?? DEFAULT_QUOTA, edit.defaultQuota ?? DEFAULT_QUOTA).length === 0)
    set('defaultQuota', edit.defaultQuota);
  if (policyTtlMinutes(edit) <= policyTtlMinutes(base)) set('contractTtlMinutes', edit.contractTtlMinutes);
  set('gatedActions', union(base.gatedActions, edit.gatedActions));
  set('deniedActions', union(base.deniedActions, edit.deniedActions));
  const review = (p: Policy) => REVIEW_ORDER[p.reviewAgentActions ?? 'tools'];
  if (review(edit) >= review(base)) set('reviewAgentActions', edit.reviewAgentActions);
  // An allow rule taken out applies at once; one added (or changed) waits for a signature.
  const allowed = new Set(allowRulesOf(base).map((r) => canonicalJson(r)));
  const wanted = allowRulesOf(edit);
  const kept = wanted.filter((r) => allowed.has(canonicalJson(r)));
  set('allowCommands', kept.length === wanted.length ? edit.allowCommands : kept);
  set('runtimes', signedRuntimes(base.runtimes, edit.runtimes));
  if ((edit.enforcement ?? 'enforce') === 'enforce' || base.enforcement === 'observe')
    set('enforcement', edit.enforcement);
  // claimTimeoutMinutes, gateExpiryHours, requireSignedApprovals and prices stay as signed:
  // neither direction of a change is plainly safer (a lower price loosens a cost budget).
  return out;
}

/**
 * The runtimes in force under an unsigned `edit`: those it keeps run as `base` signed them (a
 * change to one, its program, environment or limits, waits for a signature); one it takes out
 * stops at once; one it adds waits for a signature.
 */
function signedRuntimes(base: Policy['runtimes'], edit: Policy['runtimes']): Policy['runtimes'] {
  if (edit === undefined || base === undefined) return undefined;
  const out: NonNullable<Policy['runtimes']> = {};
  for (const name of Object.keys(edit)) if (Object.hasOwn(base, name)) out[name] = base[name]!;
  return out;
}

/** Every rule of both lists, `a`'s first (so a signed rule wins a first-match lookup). */
function union<T>(a: T[] | undefined, b: T[] | undefined): T[] | undefined {
  if (!a?.length && !b?.length) return a ?? b;
  const seen = new Set<string>();
  const out: T[] = [];
  for (const r of [...(a ?? []), ...(b ?? [])]) {
    const key = canonicalJson(r);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(r);
  }
  return out;
}

/** The sentence every report uses when policy.json has edits with no effect, else undefined. */
export function describeUnsignedPolicy(v: PolicyView): string | undefined {
  if (v.unsigned.length === 0) return undefined;
  const under = v.signed
    ? `the policy ${v.signed.signedBy} signed at ${v.signed.signedAt}`
    : 'the default policy (no signed policy counts on this machine)';
  return (
    `policy.json has changes no person signed (${v.unsigned.join(', ')}): they have no effect until signed; ` +
    `LoopX applies ${under}, with any restriction the edit adds. Sign it with \`loopx policy sign\` or from the LoopX notification in VS Code`
  );
}

/** A policy as people read it in a diff: keys sorted, two-space indent. */
export const prettyPolicy = (p: Policy) => JSON.stringify(JSON.parse(canonicalJson(p)), null, 2);

/** The change from one policy to another, as people read it in a diff. */
export function policyChange(from: Policy, to: Policy): string {
  return formatDiff(lineDiff(prettyPolicy(from), prettyPolicy(to)));
}

/** What signing would change: the policy in force before (signed, or the default) against policy.json. */
export function policyDiff(v: PolicyView): string {
  return policyChange(v.baseline, v.file);
}
