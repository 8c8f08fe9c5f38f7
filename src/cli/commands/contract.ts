/** Working under a contract: `loopx exec` runs what it lists, `loopx contract verify` checks without running. */
import type { Command } from 'commander';
import { checkContract, execUnderContract, verifyCommand } from '../../core/index';
import type { Act } from '../define';
import { example } from '../define';

export function registerContractCommands(program: Command, act: Act) {
  example(
    program
      .command('exec')
      .description('run one command that the contract lists, recording its evidence')
      .requiredOption('--contract <id>', 'the contract id')
      .requiredOption('--todo <id>', 'the todo it does')
      .argument('<command...>', 'the command, exactly as the contract lists it (after --)')
      .action(
        act(async (ctx, words: string[], o: { contract: string; todo: string }) => {
          const { io } = ctx;
          const store = ctx.store();
          const command = words.join(' ');
          const res = await execUnderContract(store, {
            contractId: o.contract,
            todoId: o.todo,
            command,
            actor: ctx.actor(),
            agent: ctx.callerAgent(),
            onOutput: (chunk, stream) =>
              (stream === 'stdout' ? io.stdout : io.stderr)(chunk.toString('utf8')),
          });
          io.stderr(
            `loopx: exit ${res.exitCode} in ${(res.durationMs / 1000).toFixed(2)} s; evidence ${res.evidenceId}${res.todoDone ? `; todo ${o.todo} done` : ''}\n`,
          );
          return res.exitCode;
        }),
      ),
    "loopx exec --contract c-0123456789 --todo t-abc123 -- 'npm test'",
  );
  example(
    example(
      program.command('contract').description('interaction contracts'),
      "loopx contract verify --contract c-0123456789 --todo t-abc123 -- 'npm test'",
    )
      .command('verify')
      .description('check a contract, or a command against it, without running anything')
      .requiredOption('--contract <id>', 'the contract id')
      .option('--todo <id>', 'the todo')
      .argument('[command...]', 'the command to check (after --)')
      .action(
        act((ctx, words: string[], o: { contract: string; todo?: string }) => {
          const store = ctx.store();
          if (o.todo === undefined && words.length === 0) {
            // The contract alone: found, signed, unexpired, its run open and its goal active.
            const { goal, run, contract } = checkContract(store, o.contract, { agent: ctx.callerAgent() });
            const actions = contract.actions.map((a) => ({ todo_id: a.todoId, command: a.command }));
            ctx.print(
              {
                schema: 'loopx.contract-verify/1',
                valid: true,
                contract_id: contract.id,
                goal_id: goal.id,
                run_id: run.id,
                expires_at: contract.expiresAt,
                actions,
                judgment: contract.judgment,
              },
              () =>
                [
                  `ok: contract ${contract.id} of goal ${goal.id} (run ${run.id}) is valid until ${contract.expiresAt}`,
                  ...actions.map((a) => `  ${a.todo_id}: ${a.command}`),
                  ...contract.judgment.map((t) => `  ${t}: (judgment)`),
                ].join('\n'),
            );
            return;
          }
          const v = verifyCommand(store, {
            contractId: o.contract,
            todoId: o.todo,
            command: words.length ? words.join(' ') : undefined,
            agent: ctx.callerAgent(),
          });
          ctx.print(
            {
              schema: 'loopx.contract-verify/1',
              valid: true,
              contract_id: v.contract.id,
              goal_id: v.goal.id,
              run_id: v.run.id,
              todo_id: v.todo.id,
              command: v.command,
              expires_at: v.contract.expiresAt,
            },
            () =>
              `ok: contract ${v.contract.id} allows todo ${v.todo.id}: ${v.command} (until ${v.contract.expiresAt})`,
          );
        }),
      ),
    "loopx contract verify --contract c-0123456789 --todo t-abc123 -- 'npm test'",
  );
}
