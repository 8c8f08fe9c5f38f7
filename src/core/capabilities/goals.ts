/** Goal capabilities: creating a goal and moving it through its lifecycle. */
import { z } from 'zod';
import type { GoalState, GoalStatus } from '../model';
import {
  DEFAULT_QUOTA,
  draft,
  effectiveStatus,
  goalIdFromTitle,
  lazy,
  Line,
  Quota,
  refused,
  ShownText,
  Text,
} from '../model';
import { AllActors, goalId } from './shared';
import type { DefineCapability } from './types';

// Goal lifecycle: a state machine with its transitions written down.

export type GoalTransition = 'pause' | 'resume' | 'close' | 'cancel';
export const GOAL_TRANSITIONS: Record<GoalStatus, Partial<Record<GoalTransition, GoalStatus>>> = {
  active: { pause: 'paused', close: 'closed', cancel: 'cancelled' },
  paused: { resume: 'active', close: 'closed', cancel: 'cancelled' },
  completed: { close: 'closed', cancel: 'cancelled' },
  closed: {},
  cancelled: {},
};

function transition(state: GoalState, t: GoalTransition): GoalStatus {
  const from = effectiveStatus(state);
  const to = GOAL_TRANSITIONS[from][t];
  if (!to) {
    const allowed = Object.keys(GOAL_TRANSITIONS[from]);
    throw refused(
      `cannot ${t} goal ${state.id}: it is ${from}, and ${/^[aeiou]/.test(from) ? 'an' : 'a'} ${from} goal can ` +
        (allowed.length
          ? `only ${allowed.join(' or ')}`
          : 'not change any more (closed and cancelled are final)'),
      { goalId: state.id, from, transition: t, reason: 'goal_transition_not_allowed' },
    );
  }
  return to;
}

const reason = ShownText(2000).optional();

export function defineGoalCapabilities(define: DefineCapability): void {
  define({
    id: 'goal.create',
    summary: 'Create a durable goal with an objective and a quota.',
    touches: ['goal'],
    gates: 'none',
    quota: 'none',
    actors: AllActors,
    goal: 'create',
    input: lazy(() =>
      z.object({
        goalId: goalId.optional(),
        title: Line(200),
        objective: Text(10000).default(''),
        quota: Quota.optional(),
        handoff: z.array(Line(500)).max(50).default([]),
      }),
    ),
    prepare: (i) => ({ ...i, goalId: i.goalId ?? goalIdFromTitle(i.title) }),
    plan: (_s, i, ctx) => [
      draft('goal.created', {
        title: i.title,
        objective: i.objective,
        quota: i.quota ?? ctx.policy.defaultQuota ?? DEFAULT_QUOTA,
        handoff: i.handoff,
      }),
    ],
  });

  for (const t of ['pause', 'resume', 'close', 'cancel'] as const) {
    const type = (
      {
        pause: 'goal.paused',
        resume: 'goal.resumed',
        close: 'goal.closed',
        cancel: 'goal.cancelled',
      } as const
    )[t];
    define({
      id: `goal.${t}`,
      summary: `${t[0]!.toUpperCase()}${t.slice(1)} the goal (state machine: ${Object.entries(
        GOAL_TRANSITIONS,
      )
        .filter(([, v]) => v[t])
        .map(([k]) => k)
        .join('/')} -> ${Object.values(GOAL_TRANSITIONS).find((v) => v[t])![t]}).`,
      touches: ['goal.status'],
      gates: 'none',
      quota: 'none',
      actors: AllActors,
      input: lazy(() => z.object({ goalId, reason })),
      plan: (s, i) => {
        transition(s, t);
        return [draft(type, { reason: i.reason })];
      },
    });
  }
}
