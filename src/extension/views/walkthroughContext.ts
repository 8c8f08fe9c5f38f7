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

/** The keys read from goals' states, each with what makes it true. */
const FROM_STATE: [keyof WalkthroughState, (g: GoalState) => boolean][] = [
  // An agent took a turn under a contract: some goal has a run.
  ['loopx.hasRun', (g) => g.runs.length > 0],
  ['loopx.hasDecidedGate', (g) => g.gates.some((x) => x.status === 'approved' || x.status === 'rejected')],
];

/**
 * The keys now. `seen`: the keys found true before, which stay true for the window (a walkthrough
 * step never unticks), so goals' states are read only while some answer is still no, each goal
 * once for all of them, and the search stops once every one is yes.
 */
export function walkthroughState(
  workspaces: LoopxWorkspaces,
  seen: Set<keyof WalkthroughState>,
): WalkthroughState {
  const goals = workspaces.goals();
  let open = FROM_STATE.filter(([key]) => !seen.has(key));
  for (const { ref } of goals) {
    if (open.length === 0) break;
    let state: GoalState;
    try {
      state = ref.store.load(ref.goalId).state;
    } catch {
      continue; // an unreadable goal is reported by the tree, not here
    }
    for (const [key, test] of open) if (test(state)) seen.add(key);
    open = open.filter(([key]) => !seen.has(key));
  }
  return {
    'loopx.hasWorkspace': workspaces.hasWorkspace,
    'loopx.hasGoal': goals.length > 0,
    // Counted from the index, as the tree's goal rows are: no goal's log is read for these.
    'loopx.hasTodo': goals.some((g) => g.entry.todosTotal > 0),
    'loopx.hasRun': seen.has('loopx.hasRun'),
    'loopx.hasDecidedGate': seen.has('loopx.hasDecidedGate'),
  };
}
