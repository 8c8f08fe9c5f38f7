/**
 * What `loopx policy` and `loopx policy runtime` share: the policy as a document and as text, and
 * the refusal to sign an edit of a command's own over edits nobody signed.
 */
import type { PolicyView } from '../../core/index';
import { describeUnsignedPolicy, fingerprint, policyDiff, refused } from '../../core/index';

export function policyJson(v: PolicyView) {
  return {
    schema: 'loopx.policy/1',
    state: v.state,
    ...(v.signed
      ? { signed_by: v.signed.signedBy, signed_at: v.signed.signedAt, key: fingerprint(v.signed.keyId) }
      : {}),
    unsigned_changes: v.unsigned,
    ignored: v.ignored,
    effective: v.effective,
  };
}

/**
 * Refuses a command that signs an edit of its own while policy.json holds edits nobody signed:
 * signing would sign those too, unseen.
 */
export function assertNothingUnsigned(before: PolicyView, then: string): void {
  if (before.state === 'unsigned_changes' || (before.state === 'not_signed' && before.unsigned.length))
    throw refused(
      `policy.json has changes no person signed (${before.unsigned.join(', ') || 'see loopx policy show'}): review and sign them first with \`loopx policy sign\`, then ${then}`,
      { reason: 'policy_unsigned' },
    );
}

export function policyText(v: PolicyView): string {
  const head = v.signed
    ? `policy signed by ${v.signed.signedBy} at ${v.signed.signedAt} (key ${fingerprint(v.signed.keyId)})`
    : 'no signed policy counts on this machine: the default policy applies, with what policy.json adds';
  const lines = [head, ...v.ignored.map((i) => `ignored: ${i}`)];
  const unsigned = describeUnsignedPolicy(v);
  if (unsigned) lines.push(unsigned, '', policyDiff(v));
  else if (v.state === 'signed') lines.push('policy.json is what was signed');
  lines.push('', 'in force:', JSON.stringify(v.effective, null, 2));
  return lines.join('\n');
}
