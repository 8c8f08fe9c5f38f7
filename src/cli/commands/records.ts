/** What runs leave behind: `loopx evidence`, `loopx run` (spend) and `loopx reward`. */
import { Option } from 'commander';
import type { Command } from 'commander';
import { assertOwnRun, invoke } from '../../core/index';
import type { Store } from '../../core/index';
import { person } from '../person';
import type { CliContext } from '../context';
import { example, num } from '../define';
import type { Act } from '../define';

/**
 * With LOOPX_AGENT set, a shell agent reports only on its own runs (`run_other_agent`); without
 * it, the caller has no identity and the run id is enough, as before.
 */
function ownRun(ctx: CliContext, store: Store, goalId: string, runId: string) {
  const agent = ctx.callerAgent();
  if (agent === undefined) return;
  const run = store.load(goalId).state.runs.find((r) => r.id === runId);
  // A run that does not exist is the capability's to report.
  if (run) assertOwnRun(run, agent);
}

export function registerRecordCommands(program: Command, act: Act) {
  example(
    example(
      program.command('evidence').description('evidence records'),
      'loopx evidence add --goal-id G --kind note --summary "checked the logs"',
    )
      .command('add')
      .description('record evidence for a run or a todo')
      .requiredOption('--goal-id <id>', 'the goal')
      .requiredOption('--summary <text>', 'what it shows')
      .addOption(
        new Option('--kind <kind>', 'kind').choices(['command', 'test', 'note', 'file']).default('note'),
      )
      .option('--run-id <id>', 'the run')
      .option('--todo-id <id>', 'the todo')
      .option('--command <command>', 'the command it came from')
      .option('--exit-code <n>', 'its exit code', num('--exit-code'))
      .option('--duration-ms <n>', 'how long it took', num('--duration-ms'))
      .action(
        act((ctx, o: Record<string, unknown>) => {
          const store = ctx.store();
          if (typeof o.goalId === 'string' && typeof o.runId === 'string')
            ownRun(ctx, store, o.goalId, o.runId);
          const res = invoke(store, 'evidence.add', o, ctx.actor());
          ctx.print(
            {
              schema: 'loopx.evidence-change/1',
              goal_id: res.goalId,
              revision: res.revision,
              evidence_id: res.input.evidenceId,
            },
            () => `recorded evidence ${res.input.evidenceId as string}`,
          );
        }),
      ),
    'loopx evidence add --goal-id G --todo-id t-abc123 --kind test --summary "42 passed" --exit-code 0',
  );
  const runCmd = example(
    program.command('run').description('runs (agent turns)'),
    'loopx run spend --goal-id G --run-id run-7k2f9x3a --tokens 12000 --cost 0.04',
  );
  example(
    runCmd
      .command('spend')
      .description('report what an open run spent')
      .requiredOption('--goal-id <id>', 'the goal')
      .requiredOption('--run-id <id>', 'the run')
      .option('--tokens <n>', 'tokens', num('--tokens'))
      .option('--cost <usd>', 'cost in USD', num('--cost'))
      .option('--wall-seconds <s>', 'wall time', num('--wall-seconds'))
      .action(
        act(
          (
            ctx,
            o: { goalId: string; runId: string; tokens?: number; cost?: number; wallSeconds?: number },
          ) => {
            const store = ctx.store();
            ownRun(ctx, store, o.goalId, o.runId);
            const res = invoke(
              store,
              'run.spend',
              {
                goalId: o.goalId,
                runId: o.runId,
                tokens: o.tokens,
                costUsd: o.cost,
                wallSeconds: o.wallSeconds,
              },
              ctx.actor(),
            );
            const r = res.state.runs.find((x) => x.id === o.runId);
            ctx.print(
              { schema: 'loopx.run-change/1', goal_id: res.goalId, run: r },
              () => `run ${o.runId} spent ${JSON.stringify(r?.spend)}`,
            );
          },
        ),
      ),
    'loopx run spend --goal-id G --run-id run-7k2f9x3a --tokens 12000 --cost 0.04',
  );
  example(
    example(
      program.command('reward').description('structured human feedback'),
      'loopx reward add --goal-id G --run-id run-7k2f9x3a --score 0.8 --comment "Good approach"',
    )
      .command('add')
      .description('score one run (a person, at a terminal)')
      .requiredOption('--goal-id <id>', 'the goal')
      .requiredOption('--run-id <id>', 'the run')
      .requiredOption('--score <n>', 'from -1 to 1', num('--score'))
      .option('--comment <text>', 'what was good or bad', '')
      .option('--lesson <text>', 'what to do differently next time')
      .action(
        act((ctx, o: { goalId: string; runId: string; score: number; comment: string; lesson?: string }) => {
          const { actor, signer } = person(ctx, 'record a reward', 'LoopX: Record Reward');
          const res = invoke(ctx.store(), 'reward.add', o, actor, { signer });
          ctx.print(
            {
              schema: 'loopx.reward-change/1',
              goal_id: res.goalId,
              reward_id: res.input.rewardId,
              revision: res.revision,
            },
            () => `recorded reward ${res.input.rewardId as string} (${o.score}) for run ${o.runId}`,
          );
        }),
      ),
    'loopx reward add --goal-id G --run-id run-7k2f9x3a --score 0.8 --comment "Good approach but needs more edge case handling."',
  );
}
