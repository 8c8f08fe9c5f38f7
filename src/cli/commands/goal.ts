/** Goal lifecycle, under two names: `project_prompt` is an alias kept for scripts that use it, `goal` has every transition. */
import type { Command } from 'commander';
import { goalStatus, invoke, statusAll } from '../../core/index';
import type { CliContext } from '../context';
import type { Act } from '../define';
import { example, num } from '../define';
import { choosesGoalId } from '../goal-option';
import { goalText, statusText } from '../text';

const createGoal = (
  ctx: CliContext,
  o: { title: string; description?: string; objective?: string; goalId?: string; turns?: number },
) => {
  const store = ctx.storeOrInit();
  const res = invoke(
    store,
    'goal.create',
    {
      goalId: o.goalId,
      title: o.title,
      objective: o.description ?? o.objective ?? '',
      ...(o.turns !== undefined
        ? { quota: { budgets: { turns: o.turns }, window: { kind: 'life' }, cooldownSeconds: 0 } }
        : {}),
    },
    ctx.actor(),
  );
  const doc = goalStatus(store, res.goalId);
  ctx.print(
    doc,
    () =>
      `created goal ${doc.id}: ${doc.title}\nnext: loopx todo add --goal-id ${doc.id} --title "..." --action "<command>"`,
  );
};

const listGoals = (ctx: CliContext, o: { all?: boolean }) => {
  const doc = statusAll(ctx.store());
  const goals = doc.goals.filter((g) => o.all || (g.status !== 'closed' && g.status !== 'cancelled'));
  ctx.warn(doc.errors.map((e) => `${e.goal_id}: ${e.message}`));
  ctx.print(goals, () =>
    goals.length
      ? statusText({ ...doc, goals, attention: [], errors: [] })
      : 'No goals. Create one: loopx project_prompt create --title "..." --description "..."',
  );
};

const transitionGoal =
  (t: 'pause' | 'resume' | 'close' | 'cancel') =>
  (ctx: CliContext, o: { goalId: string; reason?: string }) => {
    const store = ctx.store();
    const res = invoke(store, `goal.${t}`, { goalId: o.goalId, reason: o.reason }, ctx.actor());
    const doc = goalStatus(store, res.goalId);
    ctx.print(doc, () => `goal ${doc.id} is ${doc.status}`);
  };

export function registerGoalCommands(program: Command, act: Act) {
  for (const [name, alias] of [
    ['project_prompt', 'project-prompt'],
    ['goal', undefined],
  ] as const) {
    const group = example(
      program
        .command(name)
        .description(
          name === 'goal'
            ? 'goal lifecycle'
            : 'create, list and close goals (as goal does; kept for scripts that use this name)',
        ),
      `loopx ${name} create --title "Refactor Payment Module" --description "Extract retry logic" --json | jq -r .id`,
      `loopx ${name} list --json`,
    );
    if (alias) group.alias(alias);
    example(
      choosesGoalId(group.command('create'))
        .description('create a durable goal')
        .requiredOption('--title <title>', 'a short title')
        .option('--description <text>', 'the objective')
        .option('--objective <text>', 'the objective (same as --description)')
        .option('--goal-id <id>', 'choose the id (default: from the title)')
        .option('--turns <n>', 'turn budget (default: the policy’s)', num('--turns'))
        .action(act(createGoal)),
      `loopx ${name} create --title "Refactor Payment Module" --description "Extract retry logic" --json | jq -r .id`,
    );
    example(
      group
        .command('list')
        .description('list open goals (closed and cancelled with --all)')
        .option('--all', 'include closed and cancelled goals')
        .action(act(listGoals)),
      `loopx ${name} list --json | jq -r '.[0].id'`,
    );
    const transitions =
      name === 'goal' ? (['pause', 'resume', 'close', 'cancel'] as const) : (['close'] as const);
    for (const t of transitions) {
      example(
        group
          .command(t)
          .description(`${t} a goal`)
          .requiredOption('--goal-id <id>', 'the goal')
          .option('--reason <text>', 'why')
          .action(act(transitionGoal(t))),
        `loopx ${name} ${t} --goal-id refactor-payment-7k2f`,
      );
    }
    if (name === 'goal') {
      example(
        group
          .command('show')
          .description('a goal’s status (same as status --goal-id)')
          .requiredOption('--goal-id <id>', 'the goal')
          .action(
            act((ctx, o: { goalId: string }) => {
              const doc = goalStatus(ctx.store(), o.goalId);
              ctx.warn(doc.warnings);
              ctx.print(doc, () => goalText(doc));
            }),
          ),
        'loopx goal show --goal-id refactor-payment-7k2f',
      );
    }
  }
}
