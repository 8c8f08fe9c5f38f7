/** Recording what a hook refused an agent, so that the person sees every attempt in the goal's history. */
import { z } from 'zod';
import { Denial, draft, lazy } from '../model';
import { goalId } from './shared';
import type { DefineCapability } from './types';

export function defineDenialCapabilities(define: DefineCapability): void {
  define({
    id: 'agent.deny',
    summary:
      'Record a tool call a hook refused an agent (or, in observe mode, would have): tool, command or path, reason, agent, run.',
    touches: ['denied'],
    gates: 'none',
    quota: 'none',
    // Only LoopX's own hooks write it: an agent's refusal is LoopX's record, not the agent's.
    actors: ['system'],
    // A closed goal's agent trying again is still worth knowing.
    onFinishedGoal: true,
    input: lazy(() => z.object({ goalId }).merge(Denial.omit({ eventId: true, at: true }))),
    plan: (_s, i) => {
      const { goalId: _g, ...denial } = i;
      return [draft('agent.denied', denial)];
    },
  });
}
