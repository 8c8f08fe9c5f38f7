/**
 * `--goal-id` as a person types it: the id whole, or a unique prefix of it (the slug without its
 * random suffix, say), which the CLI then names; anything else is answered with the goal ids it is
 * close to. One rule (core/model/id-match.ts) for every command that reads `--goal-id`, except the
 * ones where it chooses a new goal's id.
 */
import type { Command } from 'commander';
import { idChoices, matchId, notFound, quote, storePathExists } from '../core/index';
import type { CliContext } from './context';

/** What every "no goal" of `--goal-id` ends with when no id is close. */
export const LIST_GOALS_HINT = 'list the goals with `loopx project_prompt list`';

/** The commands whose `--goal-id` names a goal to be made, never one to be found. */
const CHOOSES_GOAL_ID = new WeakSet<Command>();

export function choosesGoalId(cmd: Command): Command {
  CHOOSES_GOAL_ID.add(cmd);
  return cmd;
}

/**
 * Replaces a unique prefix in `--goal-id` with the id it stands for, saying so on stderr; an id
 * that names no goal is refused before the command runs, with the ids it is close to. Costs one
 * look at the goal's folder when the id is whole.
 */
export function resolveGoalOption(cmd: Command, ctx: CliContext): void {
  const given: unknown = cmd.getOptionValue('goalId');
  if (typeof given !== 'string' || CHOOSES_GOAL_ID.has(cmd)) return;
  const store = ctx.store();
  // A goal whose folder is there but whose log is not is a damaged goal, not a typo: the command
  // reads it and names the file.
  if (store.exists(given) || storePathExists(store.goalDir(given))) return;
  const m = matchId(
    given,
    store.listGoals().goals.map((g) => g.id),
  );
  const where = `in ${store.root} (--goal-id)`;
  if (m.kind === 'prefix') {
    cmd.setOptionValue('goalId', m.id);
    ctx.note(`--goal-id ${given} is goal ${m.id}, the only goal id that starts with it`);
  } else if (m.kind === 'ambiguous')
    throw notFound(
      `no goal ${quote(given)} ${where}: ${m.ids.length} goal ids start with it (${idChoices(m.ids)}); give one whole`,
      { goalId: given, field: '--goal-id', reason: 'goal_id_ambiguous', candidates: m.ids },
    );
  else if (m.kind === 'none')
    throw notFound(
      `no goal ${quote(given)} ${where}; ${m.near.length ? `did you mean ${idChoices(m.near)}?` : LIST_GOALS_HINT}`,
      { goalId: given, field: '--goal-id', reason: 'goal_not_found', candidates: m.near },
    );
}
