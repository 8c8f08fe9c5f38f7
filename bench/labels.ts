/**
 * The words the bench prints for its rows, shared with scripts/docs/performance-doc.ts, which
 * renders the same rows from a run's results. No side effects: the docs script imports it without
 * starting anything (measure.ts writes the shim when loaded).
 */

/** The per-goal calls bench.ts times, by key (the targets' names), with their rows' labels. */
export const PER_GOAL_LABELS = {
  'should-run': 'quota should-run --goal-id (open run)',
  'status --goal-id': 'status --goal-id --json',
  'todo add': 'todo add --goal-id --title',
  'exec true': 'exec --contract --todo -- true',
  'hook pre-tool-use': 'hook pre-tool-use (Bash ls)',
} as const;
export type PerGoal = keyof typeof PER_GOAL_LABELS;
/** The per-goal calls, in the order the table lists them. */
export const PER_GOAL = Object.keys(PER_GOAL_LABELS) as PerGoal[];

/** The context rows' labels: what the floor and should-run are made of on the run's machine. */
export const CONTEXT_LABELS = {
  noShim: "should-run as node bin/loopx.js (no shim, shim's env)",
  floorWithCa: 'node -e 0 with NODE_EXTRA_CA_CERTS (the inflated floor)',
  vsFloorWithCa: 'should-run vs node -e 0 with NODE_EXTRA_CA_CERTS',
} as const;
