/**
 * Recurring todos on a goal: which are due again now, and when the next one is. A done recurring
 * todo is due when a slot of its recurrence has passed since it was last completed; the slot is
 * computed from stored facts (its recurrence and completion time), never from a timer, so a
 * restart loses nothing and a machine that was off reopens it once, for the latest slot missed.
 */
import type { GoalState, Todo } from '../model';
import { dueOccurrence, nextOccurrence } from './recurrence';

export interface DueTodo {
  todo: Todo;
  due: Date;
}

const lastDone = (t: Todo) => new Date(t.doneAt ?? t.updatedAt);

/** The done recurring agent todos whose next slot has come by `now`. */
export function dueTodos(goal: GoalState, now: Date): DueTodo[] {
  const out: DueTodo[] = [];
  for (const t of goal.todos) {
    if (!t.recur || t.status !== 'done') continue;
    const due = dueOccurrence(t.recur, lastDone(t), now);
    if (due) out.push({ todo: t, due });
  }
  return out;
}

/** The done recurring todo due soonest after `now`, and when. */
export function nextDue(goal: GoalState, now: Date): { todo: Todo; at: Date } | undefined {
  let best: { todo: Todo; at: Date } | undefined;
  for (const t of goal.todos) {
    if (!t.recur || t.status !== 'done') continue;
    const at = nextOccurrence(t.recur, new Date(Math.max(lastDone(t).getTime(), now.getTime())));
    if (!best || at < best.at) best = { todo: t, at };
  }
  return best;
}

/** `goal` as it is once `due` are reopened (what `todo.reopened` events will make of it). */
export function withReopened(goal: GoalState, due: readonly DueTodo[]): GoalState {
  if (due.length === 0) return goal;
  const ids = new Map(due.map((d) => [d.todo.id, d.due.toISOString()]));
  return {
    ...goal,
    todos: goal.todos.map((t) => {
      const at = ids.get(t.id);
      if (at === undefined) return t;
      const { claimedBy: _by, claimedAt: _at, ...rest } = t;
      return { ...rest, status: 'open', dueAt: at };
    }),
  };
}
