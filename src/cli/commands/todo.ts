/** `loopx todo`: a goal's todo list. */
import type { Command } from 'commander';
import { Option } from 'commander';
import type { InvokeResult } from '../../core/index';
import {
  checkJudgment,
  gateDecisionCommand,
  goalStatus,
  invoke,
  parseRecurrence,
  sameAgent,
  todoDoc,
} from '../../core/index';
import type { CliContext } from '../context';
import type { Act } from '../define';
import { example, list } from '../define';
import { readGoal, readGoalHistory } from '../read-goal';
import { todoLines } from '../text';
import { todoShowText } from '../text/records';
import { person } from '../person';

const todoResult = (ctx: CliContext, res: InvokeResult, verb: string) => {
  const todoId = (res.input.todoId as string) ?? '';
  const t = res.state.todos.find((x) => x.id === todoId);
  ctx.print(
    { schema: 'loopx.todo-change/1', goal_id: res.goalId, revision: res.revision, todo: t },
    () =>
      `${verb} todo ${todoId}${t ? `: ${t.title} (${t.status})` : ''}${t?.gate && res.state.gates.find((g) => g.id === t.gate)?.status === 'pending' ? `\ngate ${t.gate} is pending: a person approves it with ${gateDecisionCommand('approve', res.goalId, t.gate)}` : ''}`,
  );
};

export function registerTodoCommands(program: Command, act: Act) {
  const todo = example(
    program.command('todo').description('the goal’s todo list'),
    'loopx todo add --goal-id G --title "Run the tests" --action "npm test"',
    'loopx todo list --goal-id G',
  );
  example(
    todo
      .command('add')
      .description(
        'add a todo (an agent runs its --action under a contract; --gate makes it wait for a person)',
      )
      .requiredOption('--goal-id <id>', 'the goal')
      .requiredOption('--title <title>', 'what to do')
      .option('--todo-id <id>', 'choose the id')
      .addOption(new Option('--owner <owner>', 'who does it').choices(['agent', 'user']).default('agent'))
      .addOption(new Option('--priority <p>', 'priority').choices(['P0', 'P1', 'P2', 'P3']).default('P2'))
      .option('--action <command>', 'the shell command that does it')
      .option('--gate <gate-id>', 'a gate that must be approved first (requested now if new)')
      .option('--depends-on <ids>', 'todo ids that must be done first (comma-separated, repeatable)', list)
      .option(
        '--sign',
        'as a person, sign the --action with your key: other clones then run it without a review gate',
      )
      .option('--every <interval>', 'recur: open again this long after each slot (30m, 2h, 1d, 1w)')
      .option('--at <HH:MM>', 'with --every in whole days: the local time of day it comes due')
      .option('--cron <expr>', 'recur on a cron schedule instead ("0 9 * * 1-5")')
      .option('--tz <zone>', 'the time zone of --at and --cron (default: this machine’s)')
      .action(
        act(
          (
            ctx,
            o: {
              goalId: string;
              title: string;
              todoId?: string;
              owner: string;
              priority: string;
              action?: string;
              gate?: string;
              dependsOn?: string[];
              sign?: boolean;
              every?: string;
              at?: string;
              cron?: string;
              tz?: string;
            },
          ) => {
            const { sign, every, at, cron, tz, ...rest } = o;
            const scheduled =
              every !== undefined || at !== undefined || cron !== undefined || tz !== undefined;
            const input = scheduled
              ? { ...rest, recur: parseRecurrence({ every, at, cron, tz }, new Date(ctx.store().now())) }
              : rest;
            const who = sign
              ? person(ctx, 'sign a todo’s command', 'LoopX: Add Todo', o.action && `$ ${o.action}`)
              : { actor: ctx.actor(), signer: undefined };
            const res = invoke(
              ctx.store(),
              'todo.add',
              { ...input, dependsOn: o.dependsOn ?? [] },
              who.actor,
              {
                signer: who.signer,
              },
            );
            todoResult(ctx, res, 'added');
          },
        ),
      ),
    'loopx todo add --goal-id G --title "Run the tests" --action "npm test"',
    'loopx todo add --goal-id G --title "Deploy" --action "./deploy.sh" --gate prod --depends-on t-abc123',
    'loopx todo add --goal-id G --title "Run the tests" --action "npm test" --sign',
    'loopx todo add --goal-id G --title "Nightly audit" --action "npm audit" --every 1d --at 02:00',
  );
  example(
    todo
      .command('list')
      .description('list a goal’s todos')
      .requiredOption('--goal-id <id>', 'the goal')
      .action(
        act((ctx, o: { goalId: string }) => {
          const doc = goalStatus(ctx.store(), o.goalId);
          ctx.print(doc.todos, () =>
            doc.todos.length ? ['todos:', ...todoLines(doc.todos)].join('\n') : 'no todos yet',
          );
        }),
      ),
    'loopx todo list --goal-id G --json',
  );
  example(
    todo
      .command('show')
      .description('one todo in full: its command, gates, dependencies, evidence and history')
      .requiredOption('--goal-id <id>', 'the goal')
      .requiredOption('--todo-id <id>', 'the todo')
      .action(
        act((ctx, o: { goalId: string; todoId: string }) => {
          const { store, state } = readGoal(ctx, o.goalId);
          const { events } = readGoalHistory(store, o.goalId);
          const doc = todoDoc(state, store.policy(), o.todoId, { events, writerNames: store.writerNames() });
          ctx.print(doc, () => todoShowText(doc));
        }),
      ),
    'loopx todo show --goal-id G --todo-id t-abc123',
    'loopx todo show --goal-id G --todo-id t-abc123 --json | jq -r .status',
  );
  example(
    todo
      .command('claim')
      .description('claim an open todo')
      .requiredOption('--goal-id <id>', 'the goal')
      .requiredOption('--todo-id <id>', 'the todo')
      .option('--by <name>', 'who (default: you)')
      .action(
        act((ctx, o: { goalId: string; todoId: string; by?: string }) => {
          // With LOOPX_AGENT set, an agent claims only for itself (`agent_mismatch`).
          const by = sameAgent(o.by, ctx.callerAgent(), '--by');
          todoResult(ctx, invoke(ctx.store(), 'todo.claim', { ...o, by }, ctx.actor()), 'claimed');
        }),
      ),
    'loopx todo claim --goal-id G --todo-id t-abc123',
  );
  example(
    todo
      .command('done')
      .description('mark a todo done, with what shows it')
      .requiredOption('--goal-id <id>', 'the goal')
      .requiredOption('--todo-id <id>', 'the todo')
      .option('--summary <text>', 'what was done (recorded as evidence)')
      .option('--evidence <ids>', 'evidence ids (comma-separated)', list)
      .option('--contract <id>', 'the contract that lists this judgment todo (agents)')
      .action(
        act(
          (
            ctx,
            o: { goalId: string; todoId: string; summary?: string; evidence?: string[]; contract?: string },
          ) => {
            const store = ctx.store();
            // The policy the contract was checked against is the one the completion runs under.
            const judged = o.contract
              ? checkJudgment(store, o.contract, o.todoId, o.goalId, ctx.callerAgent())
              : undefined;
            const res = invoke(
              store,
              'todo.complete',
              {
                goalId: o.goalId,
                todoId: o.todoId,
                summary: o.summary,
                evidence: o.evidence ?? [],
                runId: judged?.run.id,
              },
              ctx.actor(),
              judged ? { policy: judged.policy } : {},
            );
            todoResult(ctx, res, 'completed');
          },
        ),
      ),
    'loopx todo done --goal-id G --todo-id t-abc123 --summary "Reviewed the diff; no change needed"',
  );
  example(
    todo
      .command('cancel')
      .description('cancel a todo')
      .requiredOption('--goal-id <id>', 'the goal')
      .requiredOption('--todo-id <id>', 'the todo')
      .option('--reason <text>', 'why')
      .action(
        act((ctx, o: { goalId: string; todoId: string; reason?: string }) => {
          todoResult(ctx, invoke(ctx.store(), 'todo.cancel', o, ctx.actor()), 'cancelled');
        }),
      ),
    'loopx todo cancel --goal-id G --todo-id t-abc123 --reason "not needed"',
  );
  example(
    todo
      .command('update')
      .description('change a todo’s title, priority or note')
      .requiredOption('--goal-id <id>', 'the goal')
      .requiredOption('--todo-id <id>', 'the todo')
      .option('--title <title>', 'new title')
      .addOption(new Option('--priority <p>', 'new priority').choices(['P0', 'P1', 'P2', 'P3']))
      .option('--note <text>', 'a note')
      .action(
        act((ctx, o: { goalId: string; todoId: string }) => {
          todoResult(ctx, invoke(ctx.store(), 'todo.update', o, ctx.actor()), 'updated');
        }),
      ),
    'loopx todo update --goal-id G --todo-id t-abc123 --priority P0',
  );
}
