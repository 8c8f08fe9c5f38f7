/** `loopx turn`: should-run, the contract's commands through exec, summary_all, in one process. */
import type { Command } from 'commander';
import { takeTurn, usageError } from '../../core/index';
import type { Act } from '../define';
import { example, num } from '../define';
import { turnText } from '../text';

export function registerTurnCommand(program: Command, act: Act) {
  example(
    program
      .command('turn')
      .description(
        'take one turn: get a contract, run the commands it lists (stopping at the first failure), end the run',
      )
      .requiredOption('--goal-id <id>', 'the goal')
      .option(
        '--agent <name>',
        'the agent the turn is for (default: LOOPX_AGENT or "agent"; with LOOPX_AGENT set, only that)',
      )
      .option('--max <n>', 'run at most this many commands', num('--max'))
      .option('--ttl-minutes <n>', 'contract lifetime', num('--ttl-minutes'))
      .action(
        act(async (ctx, o: { goalId: string; agent?: string; max?: number; ttlMinutes?: number }) => {
          const { io } = ctx;
          if (o.max !== undefined && (!Number.isInteger(o.max) || o.max < 1))
            throw usageError(`--max must be a whole number of 1 or more, not ${o.max}`);
          const { doc, exitCode, shouldRun } = await takeTurn(ctx.store(), o.goalId, ctx.actor(), {
            agent: ctx.agentName(o.agent),
            caller: ctx.callerAgent(),
            max: o.max,
            ttlMinutes: o.ttlMinutes,
            // The commands' output goes to stderr: stdout is the turn's own answer (JSON with --json).
            onOutput: (chunk) => io.stderr(chunk.toString('utf8')),
          });
          ctx.warn(shouldRun.warnings ?? []);
          ctx.print(doc, () => turnText(doc));
          return exitCode;
        }),
      ),
    'loopx turn --goal-id G',
    'loopx turn --goal-id G --max 1 --json | jq .ran',
  );
}
