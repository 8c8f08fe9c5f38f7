/**
 * What the Get Started walkthrough ticks off, read from the store rather than from which command
 * was run: each key is a context key (`loopx.hasGoal`, …) that package.json's walkthrough steps
 * complete on (`onContext:loopx.hasGoal`). Whoever made the state (this window, the CLI in a
 * terminal, an agent, a teammate's clone after a pull), the step is done once it exists.
 */
import type { GoalState } from '../../core/index';
import type { LoopxWorkspaces } from '../workspace/workspaces';

export interface WalkthroughState {
  /** A folder of the window has `.loopx/`. */
  'loopx.hasWorkspace': boolean;
  'loopx.hasGoal': boolean;
  'loopx.hasTodo': boolean;
  /** An agent took a turn under a contract: some goal has a run. */
  'loopx.hasRun': boolean;
  /** A person approved or rejected a gate. */
  'loopx.hasDecidedGate': boolean;
}

/**
 * The keys now. `seen`: the keys found true before, which stay true for the window (a walkthrough
 * step never unticks), so a goal's state is read only while the answer is still no, and the search
 * stops at the first goal that says yes.
 */
export function walkthroughState(
  workspaces: LoopxWorkspaces,
  seen: Set<keyof WalkthroughState>,
): WalkthroughState {
  const goals = workspaces.goals();
  const anyState = (key: keyof WalkthroughState, test: (g: GoalState) => boolean): boolean => {
    if (seen.has(key)) return true;
    const yes = goals.some(({ ref }) => {
      try {
        return test(ref.store.load(ref.goalId).state);
      } catch {
        return false; // an unreadable goal is reported by the tree, not here
      }
    });
    if (yes) seen.add(key);
    return yes;
  };
  return {
    'loopx.hasWorkspace': workspaces.hasWorkspace,
    'loopx.hasGoal': goals.length > 0,
    // Counted from the index, as the tree's goal rows are: no goal's log is read for these.
    'loopx.hasTodo': goals.some((g) => g.entry.todosTotal > 0),
    'loopx.hasRun': anyState('loopx.hasRun', (g) => g.runs.length > 0),
    'loopx.hasDecidedGate': anyState('loopx.hasDecidedGate', (g) =>
      g.gates.some((x) => x.status === 'approved' || x.status === 'rejected'),
    ),
  };
}
