/**
 * `loopx policy`: which policy LoopX enforces, and a person signing an edit of `policy.json` so
 * that it counts (DESIGN.md, "Trust": the policy is a person's decision).
 */
import type { Command } from 'commander';
import { describeUnsignedPolicy, fingerprint, policyDiff } from '../../core/index';
import type { PolicyView } from '../../core/index';
import { example } from '../define';
import type { Act } from '../define';
import { person } from '../person';

function policyJson(v: PolicyView) {
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

function policyText(v: PolicyView): string {
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

export function registerPolicyCommands(program: Command, act: Act) {
  const policy = example(
    program.command('policy').description('the workspace policy: what applies, and signing an edit'),
    'loopx policy show',
    'loopx policy sign',
  );
  example(
    policy
      .command('show')
      .description(
        'the policy in force, whether policy.json is signed, and any edit that waits for a signature',
      )
      .action(
        act((ctx) => {
          const v = ctx.store().policyView();
          ctx.print(policyJson(v), () => policyText(v));
        }),
      ),
    'loopx policy show --json',
  );
  example(
    policy
      .command('sign')
      .description('sign policy.json as it is now, so that it applies (a person: asks your key’s passphrase)')
      .action(
        act((ctx) => {
          const store = ctx.store();
          const before = store.policyView();
          if (before.state === 'signed') {
            ctx.print(policyJson(before), () => 'policy.json is already signed: nothing to do');
            return;
          }
          const { signer } = person(
            ctx,
            'sign the workspace policy',
            'LoopX: Sign Workspace Policy',
            `Signing policy.json. Changes from the policy in force before:\n${policyDiff(before)}\n`,
          );
          const after = store.signPolicy(signer, before.file);
          ctx.print(policyJson(after), () => `signed policy.json as ${signer.name}: it applies from now on`);
        }),
      ),
    'loopx policy sign',
    'loopx policy sign --passphrase-fd 3 3<passphrase.txt',
  );
}
