/**
 * `loopx policy runtime add|remove`: a person declares (or withdraws) a program `loopx drive` may
 * start for an agent turn. What runs is a person's decision: the edit is written to policy.json and
 * signed at once with the person's key, like `policy allow`.
 */
import type { Command } from 'commander';
import type { Policy, Runtime } from '../../core/index';
import {
  policyChange,
  quote,
  refused,
  Runtime as RuntimeSchema,
  RUNTIME_NAME,
  usageError,
  writeAndSignPolicy,
} from '../../core/index';
import type { CliContext } from '../context';
import type { Act } from '../define';
import { example, num } from '../define';
import { person } from '../person';
import { assertNothingUnsigned, policyJson } from './policy-shared';

const pair = (v: string, prev: string[] = []) => [...prev, v];

function runtimeOf(
  o: { preset?: string; env?: string[]; turnMinutes?: number; worktree?: boolean },
  argv: string[],
): Runtime {
  if ((o.preset === undefined) === (argv.length === 0))
    throw usageError(
      'give either --preset claude-code|codex or the command after --, e.g. `-- my-agent {contract_file}`',
      {
        reason: 'bad_runtime',
      },
    );
  const env: Record<string, string> = {};
  for (const e of o.env ?? []) {
    const at = e.indexOf('=');
    if (at < 1)
      throw usageError(`--env ${quote(e)}: expected NAME=value`, { reason: 'bad_runtime', field: 'env' });
    env[e.slice(0, at)] = e.slice(at + 1);
  }
  const r = RuntimeSchema.safeParse({
    ...(o.preset ? { preset: o.preset } : { command: argv }),
    ...(Object.keys(env).length ? { env } : {}),
    ...(o.turnMinutes !== undefined ? { turnTimeoutMinutes: o.turnMinutes } : {}),
    ...(o.worktree ? { worktree: true } : {}),
  });
  if (!r.success) {
    const issue = r.error.issues[0]!;
    throw usageError(`the runtime is not valid: ${issue.path.join('.') || 'it'}: ${issue.message}`, {
      reason: 'bad_runtime',
    });
  }
  return r.data;
}

function signEdit(ctx: CliContext, next: Policy, what: string, done: string) {
  const store = ctx.store();
  const before = store.policyView();
  const { signer } = person(
    ctx,
    what,
    'LoopX: Sign Workspace Policy',
    `Changes to the policy:\n${policyChange(before.file, next)}\n`,
  );
  const after = writeAndSignPolicy(store, next, signer);
  ctx.print(policyJson(after), () => `${done} (signed by ${signer.name})`);
}

export function registerRuntimeCommands(policy: Command, act: Act) {
  const runtime = example(
    policy.command('runtime').description('the programs `loopx drive` may start for an agent turn'),
    'loopx policy runtime add claude --preset claude-code',
    "loopx policy runtime add my-agent -- my-agent --contract '{contract_file}'",
  );
  example(
    runtime
      .command('add <name>')
      .description(
        'declare a runtime and sign the policy (a person: asks your key’s passphrase); the command after -- gets {prompt}, {contract_file}, {contract_id}, {goal_id}, {lane}, {workspace}, {cwd} filled in',
      )
      .argument('[command...]', 'the program and its arguments (after --)')
      .option('--preset <preset>', 'claude-code or codex')
      .option(
        '--env <NAME=value>',
        'a variable the runtime gets (repeatable; a secret belongs in your own environment)',
        pair,
      )
      .option('--turn-minutes <n>', 'a turn longer than this is stopped (default 30)', num('--turn-minutes'))
      .option('--worktree', 'work in a git worktree and branch of the lane’s own')
      .action(
        act(
          (
            ctx,
            name: string,
            argv: string[],
            o: { preset?: string; env?: string[]; turnMinutes?: number; worktree?: boolean },
          ) => {
            if (!RUNTIME_NAME.test(name))
              throw usageError(`runtime name ${quote(name)}: use a-z, 0-9 and - (up to 40)`, {
                reason: 'bad_runtime_name',
              });
            const before = ctx.store().policyView();
            assertNothingUnsigned(before, 'declare the runtime');
            const next: Policy = {
              ...before.file,
              runtimes: { ...before.file.runtimes, [name]: runtimeOf(o, argv) },
            };
            signEdit(ctx, next, `let loopx drive run ${name}`, `runtime ${name} may now run agent turns`);
          },
        ),
      ),
    'loopx policy runtime add claude --preset claude-code --turn-minutes 20',
    'loopx policy runtime add codex --preset codex --worktree',
  );
  example(
    runtime
      .command('remove <name>')
      .description('withdraw a runtime and sign the policy: lanes on it stop starting turns')
      .action(
        act((ctx, name: string) => {
          const before = ctx.store().policyView();
          assertNothingUnsigned(before, 'remove the runtime');
          if (!before.file.runtimes?.[name])
            throw refused(`policy.json declares no runtime ${quote(name)}`, { reason: 'runtime_not_found' });
          const { [name]: _gone, ...rest } = before.file.runtimes;
          signEdit(
            ctx,
            { ...before.file, runtimes: rest },
            `stop loopx drive running ${name}`,
            `runtime ${name} removed`,
          );
        }),
      ),
    'loopx policy runtime remove codex',
  );
}
