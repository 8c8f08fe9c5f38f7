/** What the read commands share: a goal loaded once, with a not-found that names the flag. */
import type { GoalState, Store } from '../core/index';
import { LoopxError, notFound, readHistory } from '../core/index';
import type { CliContext } from './context';
import { LIST_GOALS_HINT } from './goal-option';

export interface ReadGoal {
  store: Store;
  state: GoalState;
  revision: number;
}

/** The goal of `--goal-id`; an unknown one says which flag and how to list the goals. */
export function readGoal(ctx: CliContext, goalId: string): ReadGoal {
  const store = ctx.store();
  try {
    const loaded = store.load(goalId);
    ctx.warn(loaded.warnings);
    return { store, state: loaded.state, revision: loaded.revision };
  } catch (e) {
    throw namedGoal(e, goalId);
  }
}

/** The goal's merged history, with the same not-found as `readGoal`. */
export function readGoalHistory(store: Store, goalId: string): ReturnType<typeof readHistory> {
  try {
    return readHistory(store, goalId);
  } catch (e) {
    throw namedGoal(e, goalId);
  }
}

function namedGoal(e: unknown, goalId: string): unknown {
  if (!(e instanceof LoopxError) || e.kind !== 'not_found' || e.details.goalId !== goalId) return e;
  return notFound(`${e.message} (--goal-id); ${LIST_GOALS_HINT}`, {
    ...e.details,
    field: '--goal-id',
  });
}
