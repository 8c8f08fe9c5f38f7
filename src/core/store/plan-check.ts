/** What every commit checks of a plan, its own or one queued by another process (store/group-commit.ts). */
import type { EventDraft, GoalState, LoopxError } from '../model';
import { Actor, conflict, usageError } from '../model';
import { describeIssues } from './json-file';

/** A plan sees the goal's current state (undefined for a new goal) and returns the events to append; it throws to refuse. */
export type Plan = (state: GoalState | undefined, revision: number) => EventDraft[];

/**
 * The caller's identity, checked: it comes from outside (LOOPX_ACTOR, LOOPX_AGENT, --agent, a
 * client's name, a queued call's file), so a bad one is the caller's error, not a crash.
 */
export function checkedActor(actor: unknown, goalId: string): Actor {
  const checked = Actor.safeParse(actor);
  if (!checked.success)
    throw usageError(`the caller's identity (actor) is not valid: ${describeIssues(checked.error)}`, {
      goalId,
    });
  return checked.data;
}

/** The refusal of a call that expected the goal at another revision. */
export function movedOn(goalId: string, revision: number, expected: number): LoopxError {
  return conflict(
    `goal ${goalId} is at revision ${revision}, not ${expected} as expected: it changed since you read it; read it again and retry`,
    { goalId, revision, expected, reason: 'goal_moved' },
  );
}

/**
 * When LOOPX_CHECK_PLANS=1 (the test runs set it), a plan that changes the state it was shown
 * fails the call: plans get the live state, not a copy, and one that wrote to it would change the
 * state without an event.
 */
export function checkedPlan(plan: Plan): Plan {
  if (process.env.LOOPX_CHECK_PLANS !== '1') return plan;
  return (state, revision) => {
    const before = JSON.stringify(state);
    let drafts: EventDraft[] | undefined;
    try {
      drafts = plan(state, revision);
    } catch (e) {
      // A refusal is the plan's answer, unless it also wrote to the state.
      if (JSON.stringify(state) === before) throw e;
    }
    if (JSON.stringify(state) !== before) throw new Error('a plan changed the state it was shown');
    return drafts!;
  };
}
