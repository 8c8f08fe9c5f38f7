/**
 * The runs this clone has open, read once for what the hooks need of them: which contracts
 * authorise a command (PreToolUse), which goal and run a refusal concerns, which runs a Stop ends.
 * Another clone's runs are that clone's business (trust/identity.ts, ownOpenRuns).
 */
import type { GoalState, Run } from '../model';
import { compareText } from '../model';
import type { Store } from '../store';
import { ownOpenRuns } from '../trust';

export interface GoalRuns {
  goalId: string;
  state: GoalState;
  /** This clone's open runs of the goal (of the agent asked for), oldest first. */
  runs: Run[];
}

/**
 * The goals where this clone has open runs (of `agent`, when given), the goal of the latest run
 * first. Not only the active ones: the turn that completes a goal's last todo, or that a person
 * paused, still has its spend counted, its refusals recorded and its run ended. Only goals whose
 * index entry counts open runs are read, so a workspace of many finished goals stays cheap. A goal
 * that does not load is left out: its every read reports it, and it has no run that could
 * authorise anything here.
 */
export function openRunsByGoal(store: Store, agent?: string): GoalRuns[] {
  const out: GoalRuns[] = [];
  const writer = store.writerId();
  for (const g of store.listGoals().goals) {
    if (g.openRuns === 0 || g.status === 'closed' || g.status === 'cancelled') continue;
    try {
      const state = store.load(g.id).state;
      const runs = ownOpenRuns(state, writer, agent);
      if (runs.length) out.push({ goalId: g.id, state, runs });
    } catch {
      /* reported by every read of the goal */
    }
  }
  return out.sort((a, b) => compareText(b.runs.at(-1)!.startedAt, a.runs.at(-1)!.startedAt));
}
