/**
 * `loopx policy`: which policy LoopX enforces, a person signing an edit of `policy.json` so that it
 * counts, and a person allowing agents a command (`policy allow`: an edit signed at once). The
 * policy is a person's decision (docs/TRUST.md).
 */
import type { Command } from 'commander';
import { policyChange, policyDiff, quote, withAllowedCommand, writeAndSignPolicy } from '../../core/index';
import type { Act } from '../define';
import { example } from '../define';
import { person } from '../person';
import { registerRuntimeCommands } from './policy-runtime';
import { assertNothingUnsigned, policyJson, policyText } from './policy-shared';

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
  example(
    policy
      .command('allow')
      .description(
        'let agents run a command without a contract (the hooks allow it): adds it to allowCommands and signs the policy (a person: asks your key’s passphrase)',
      )
      .argument(
        '<pattern>',
        'the command’s words; `*` alone stands for any further words ("npm run lint", "make test *")',
      )
      .action(
        act((ctx, pattern: string) => {
          const store = ctx.store();
          const before = store.policyView();
          assertNothingUnsigned(before, 'allow the command');
          const { policy: next, added } = withAllowedCommand(before.file, pattern);
          if (!added) {
            ctx.print(policyJson(before), () => `agents may already run ${quote(pattern)}: nothing to do`);
            return;
          }
          const { signer } = person(
            ctx,
            'allow a command for agents',
            'LoopX: Sign Workspace Policy',
            `Agents will run ${quote(pattern)} with no contract, as often as they like. Changes to the policy:\n${policyChange(before.file, next)}\n`,
          );
          const after = writeAndSignPolicy(store, next, signer);
          ctx.print(
            policyJson(after),
            () => `agents may now run ${quote(pattern)} without a contract (signed by ${signer.name})`,
          );
        }),
      ),
    "loopx policy allow 'npm run lint'",
    "loopx policy allow 'make test *' --passphrase-fd 3 3<passphrase.txt",
  );
  registerRuntimeCommands(policy, act);
}
