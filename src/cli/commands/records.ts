/** What runs leave behind: `loopx evidence` and `loopx reward` (runs themselves: runs.ts). */
import type { Command } from 'commander';
import { Option } from 'commander';
import type { Store } from '../../core/index';
import { assertOwnRun, evidenceList, invoke, rewardList } from '../../core/index';
import type { CliContext } from '../context';
import type { Act } from '../define';
import { example, num } from '../define';
import { person } from '../person';
import { readGoal } from '../read-goal';
import { evidenceListText, rewardListText } from '../text/records';

/**
 * With LOOPX_AGENT set, a shell agent reports only on its own runs (`run_other_agent`); without
 * it, the caller has no identity and the run id is enough, as before.
 */
export function ownRun(ctx: CliContext, store: Store, goalId: string, runId: string) {
  const agent = ctx.callerAgent();
  if (agent === undefined) return;
  const run = store.load(goalId).state.runs.find((r) => r.id === runId);
  // A run that does not exist is the capability's to report.
  if (run) assertOwnRun(run, agent);
}

export function registerRecordCommands(program: Command, act: Act) {
  const evidence = example(
    program.command('evidence').description('evidence records'),
    'loopx evidence add --goal-id G --kind note --summary "checked the logs"',
    'loopx evidence list --goal-id G --todo-id t-abc123',
  );
  example(
    evidence
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
  example(
    evidence
      .command('list')
      .description('a goal’s evidence, oldest first (one run’s, one todo’s)')
      .requiredOption('--goal-id <id>', 'the goal')
      .option('--run-id <id>', 'only this run’s')
      .option('--todo-id <id>', 'only this todo’s')
      .action(
        act((ctx, o: { goalId: string; runId?: string; todoId?: string }) => {
          const items = evidenceList(readGoal(ctx, o.goalId).state, o);
          ctx.print(items, () => evidenceListText(items));
        }),
      ),
    'loopx evidence list --goal-id G --run-id run-7k2f9x3a',
    "loopx evidence list --goal-id G --todo-id t-abc123 --json | jq -r '.[].summary'",
  );
  const reward = example(
    program.command('reward').description('structured human feedback'),
    'loopx reward add --goal-id G --run-id run-7k2f9x3a --score 0.8 --comment "Good approach"',
    'loopx reward list --goal-id G',
  );
  example(
    reward
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
  example(
    reward
      .command('list')
      .description('the rewards people gave a goal’s runs, oldest first')
      .requiredOption('--goal-id <id>', 'the goal')
      .option('--run-id <id>', 'only this run’s')
      .action(
        act((ctx, o: { goalId: string; runId?: string }) => {
          const items = rewardList(readGoal(ctx, o.goalId).state, o);
          ctx.print(items, () => rewardListText(items));
        }),
      ),
    'loopx reward list --goal-id G --run-id run-7k2f9x3a --json',
  );
}
