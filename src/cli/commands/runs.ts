/** `loopx run`: runs (agent turns): list them, show one in full, report what one spent. */
import type { Command } from 'commander';
import { invoke, runDoc, runList } from '../../core/index';
import type { Act } from '../define';
import { count, example, num } from '../define';
import { readGoal } from '../read-goal';
import { spendWords } from '../text/format';
import { runListText, runShowText } from '../text/records';
import { ownRun } from './records';

export function registerRunCommands(program: Command, act: Act) {
  const runCmd = example(
    program.command('run').description('runs (agent turns)'),
    'loopx run list --goal-id G',
    'loopx run show --goal-id G --run-id run-7k2f9x3a',
    'loopx run spend --goal-id G --run-id run-7k2f9x3a --tokens 12000 --cost 0.04',
  );
  example(
    runCmd
      .command('list')
      .description('a goal’s runs, newest first: agent, start, outcome, evidence, spend, latest reward')
      .requiredOption('--goal-id <id>', 'the goal')
      .option('--agent <name>', 'only this agent’s runs')
      .option('--limit <n>', 'the newest n runs', count('--limit'))
      .action(
        act((ctx, o: { goalId: string; agent?: string; limit?: number }) => {
          const runs = runList(readGoal(ctx, o.goalId).state, o);
          ctx.print(runs, () =>
            runs.length || o.agent === undefined ? runListText(runs) : `no runs of agent ${o.agent}`,
          );
        }),
      ),
    'loopx run list --goal-id G --limit 5',
    "loopx run list --goal-id G --agent codex --json | jq -r '.[0].id'",
  );
  example(
    runCmd
      .command('show')
      .description('one run in full: its contract, evidence, spend and rewards')
      .requiredOption('--goal-id <id>', 'the goal')
      .requiredOption('--run-id <id>', 'the run')
      .action(
        act((ctx, o: { goalId: string; runId: string }) => {
          const { store, state } = readGoal(ctx, o.goalId);
          const doc = runDoc(state, o.runId, store.writerNames());
          ctx.print(doc, () => runShowText(doc));
        }),
      ),
    'loopx run show --goal-id G --run-id run-7k2f9x3a',
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
              () => `run ${o.runId} has spent ${r ? spendWords(r.spend) : 'nothing'} so far`,
            );
          },
        ),
      ),
    'loopx run spend --goal-id G --run-id run-7k2f9x3a --tokens 12000 --cost 0.04',
  );
}
