/**
 * What is settled on the goal when a lane's turn ends, however it ended (the runtime exited, ran out
 * of time, or its driver died and a new one found it): the run is ended with its outcome if the
 * runtime did not end it, the lane's claims are given back, and a worktree's work is committed to
 * the lane's branch with a todo, behind a person's gate, that brings it back.
 */
import { invoke } from '../capabilities';
import type { Actor, GoalState, RunOutcome } from '../model';
import { outcomeOfRun } from '../rules';
import type { Store } from '../store';
import { bringBackCommand, branchAhead, commitTurn, hasRemote, laneBranch } from './worktree';

export const DRIVER_ACTOR: Actor = { kind: 'system', id: 'loopx-drive', channel: 'system' };

export type TurnEnding =
  | { kind: 'exited'; exitCode: number }
  | { kind: 'timed_out'; minutes: number }
  | { kind: 'interrupted'; why: string }
  | { kind: 'failed_to_start'; message: string };

/** The outcome the run is ended with, when the runtime left it open. */
function outcomeFor(goal: GoalState, runId: string, end: TurnEnding): RunOutcome {
  if (end.kind === 'timed_out') return 'timed_out';
  if (end.kind === 'interrupted') return 'interrupted';
  if (end.kind === 'failed_to_start') return 'failed';
  const run = goal.runs.find((r) => r.id === runId);
  const byEvidence = run ? outcomeOfRun(goal, run) : 'partial';
  return end.exitCode !== 0 && byEvidence !== 'succeeded' ? 'failed' : byEvidence;
}

function endingWords(end: TurnEnding): string {
  switch (end.kind) {
    case 'exited':
      return `the runtime exited with code ${end.exitCode}`;
    case 'timed_out':
      return `the turn ran past its limit of ${end.minutes} min and was stopped`;
    case 'interrupted':
      return end.why;
    case 'failed_to_start':
      return `the runtime could not start: ${end.message}`;
  }
}

export interface SettledTurn {
  outcome: string;
  summary: string;
  released: string[];
}

/** Ends `runId` (if still open) and gives back what `agent` still holds on the goal. */
export function settleTurn(
  store: Store,
  goalId: string,
  agent: string,
  runId: string,
  end: TurnEnding,
): SettledTurn {
  let goal = store.load(goalId).state;
  // Only the lane's own run: a state file edited to name another agent's run ends nothing of it.
  const run = goal.runs.find((r) => r.id === runId && r.agent === agent);
  const summary = endingWords(end);
  let outcome = run?.outcome ?? outcomeFor(goal, runId, end);
  if (run && !run.endedAt) {
    outcome = outcomeFor(goal, runId, end);
    goal = invoke(
      store,
      'run.end',
      { goalId, runId, outcome, summary: `ended by loopx drive: ${summary}` },
      DRIVER_ACTOR,
    ).state;
  }
  const released: string[] = [];
  for (const t of goal.todos.filter((x) => x.status === 'claimed' && x.claimedBy === agent)) {
    invoke(
      store,
      'todo.release',
      { goalId, todoId: t.id, reason: `the lane's turn ended: ${summary}` },
      DRIVER_ACTOR,
    );
    released.push(t.id);
  }
  return { outcome, summary, released };
}

/** Renews the lease on every todo `agent` holds on the goal; the ids renewed. */
export function renewLeases(store: Store, goalId: string, agent: string, leaseSeconds: number): string[] {
  const goal = store.load(goalId).state;
  const held = goal.todos.filter((t) => t.status === 'claimed' && t.claimedBy === agent && t.leaseUntil);
  for (const t of held)
    invoke(store, 'todo.renew', { goalId, todoId: t.id, by: agent, leaseSeconds }, DRIVER_ACTOR);
  return held.map((t) => t.id);
}

/** The id of the todo that brings `lane`'s branch back: `bring-back-<lane>`, numbered after the first. */
function bringBackId(goal: GoalState, lane: string): { id: string; open: boolean } {
  const base = `bring-back-${lane}`.slice(0, 58);
  const ours = goal.todos.filter((t) => t.id === base || t.id.startsWith(`${base}-`));
  const open = ours.find((t) => t.status === 'open' || t.status === 'claimed');
  if (open) return { id: open.id, open: true };
  return { id: ours.length ? `${base}-${ours.length + 1}` : base, open: false };
}

/**
 * Commits what the turn changed in the lane's worktree to its branch, and makes sure a todo brings
 * the branch back once a person approves it. The sha committed, and the todo added, if any.
 */
export function keepWorktreeWork(
  store: Store,
  goalId: string,
  lane: string,
  worktree: string,
  runId: string,
): { commit?: string; todo?: string } {
  const commit = commitTurn(worktree, `loopx drive: lane ${lane}, run ${runId}`, {
    name: `LoopX lane ${lane}`,
    email: `${lane}@loopx.invalid`,
  });
  const branch = laneBranch(lane);
  if (branchAhead(store.workspace, branch) === 0) return { commit };
  const goal = store.load(goalId).state;
  const next = bringBackId(goal, lane);
  if (next.open) return { commit };
  const remote = hasRemote(store.workspace);
  invoke(
    store,
    'todo.add',
    {
      goalId,
      todoId: next.id,
      title: `Bring lane ${lane}'s branch ${branch} back${remote ? ` (push to ${remote})` : ' (merge)'}`,
      owner: 'agent',
      priority: 'P3',
      action: bringBackCommand(store.workspace, branch, remote),
      gate: next.id,
    },
    DRIVER_ACTOR,
  );
  return { commit, todo: next.id };
}
