/**
 * What the capability modules share: the common input pieces and actor lists, and lookups that
 * refuse clearly. The policy and gate rules are in rules/gate-rules.ts.
 */
import type { Actor, Gate, GoalState, Policy, Todo } from '../model';
import { Id, notFound, quote, refused } from '../model';
import { awaitsDecision, notAwaitingDecision } from '../rules';

export const goalId = Id;

export const AllActors: Actor['kind'][] = ['user', 'agent', 'system'];
export const Humans: Actor['kind'][] = ['user'];

// -------------------------------------------------------------------------------------------
// Lookups that refuse clearly.

export function findTodo(state: GoalState, todoId: string): Todo {
  const t = state.todos.find((x) => x.id === todoId);
  if (!t) throw notFound(`goal ${state.id} has no todo ${quote(todoId)}`, { goalId: state.id, todoId });
  return t;
}
export function findGate(state: GoalState, gateId: string): Gate {
  const g = state.gates.find((x) => x.id === gateId);
  if (!g) throw notFound(`goal ${state.id} has no gate ${quote(gateId)}`, { goalId: state.id, gateId });
  return g;
}
/**
 * The gate a person is about to decide, looked at before anything is asked of them (a passphrase,
 * a note, a modal): refused `not_found` when missing, `gate_not_pending` when decided meanwhile.
 * `done` names the decision: `approved` or `rejected`.
 */
export function decidableGate(state: GoalState, policy: Policy, gateId: string, done: string): Gate {
  const g = findGate(state, gateId);
  if (!awaitsDecision(g, state, policy)) throw notAwaitingDecision(g, done);
  return g;
}
export function findRun(state: GoalState, runId: string) {
  const r = state.runs.find((x) => x.id === runId);
  if (!r) throw notFound(`goal ${state.id} has no run ${quote(runId)}`, { goalId: state.id, runId });
  return r;
}
export function openRun(state: GoalState, runId: string) {
  const r = findRun(state, runId);
  if (r.endedAt)
    throw refused(`run ${runId} of goal ${state.id} already ended (${r.outcome}) at ${r.endedAt}`, {
      runId,
      reason: 'run_ended',
    });
  return r;
}
