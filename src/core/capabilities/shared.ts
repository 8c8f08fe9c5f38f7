/**
 * What the capability modules share: the common input pieces and actor lists, lookups that
 * refuse clearly, and the policy and gate rules (the contract and exec modules use these too).
 */
import { refused, notFound, quote } from '../errors';
import { Id } from '../model';
import type { Actor, GoalState, Policy, Todo, Gate } from '../model';
import { matchesGlob } from '../glob';

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
export function findRun(state: GoalState, runId: string) {
  const r = state.runs.find((x) => x.id === runId);
  if (!r) throw notFound(`goal ${state.id} has no run ${quote(runId)}`, { goalId: state.id, runId });
  return r;
}
export function openRun(state: GoalState, runId: string) {
  const r = findRun(state, runId);
  if (r.endedAt)
    throw refused(`run ${runId} of goal ${state.id} already ended (${r.outcome}) at ${r.endedAt}`, { runId });
  return r;
}

// -------------------------------------------------------------------------------------------
// Policy and gate rules.

/** The policy rule that denies a command, if any. */
export function deniedBy(policy: Policy, command: string) {
  return policy.deniedActions?.find((r) => matchesGlob(r.pattern, command));
}
/** The gate the policy requires for a command, if any. */
export function policyGateFor(policy: Policy, command: string) {
  return policy.gatedActions?.find((r) => matchesGlob(r.pattern, command));
}

/**
 * The gates a todo needs: its own, any gate requested to guard it, and the one the policy
 * requires for its action.
 */
export function gatesFor(
  todo: Todo,
  policy: Policy,
  gates: readonly Gate[] = [],
): { id: string; pattern?: string }[] {
  const out: { id: string; pattern?: string }[] = [];
  if (todo.gate) out.push({ id: todo.gate });
  for (const g of gates)
    if (g.guards.includes(todo.id) && !out.some((x) => x.id === g.id)) out.push({ id: g.id });
  if (todo.action) {
    const rule = policyGateFor(policy, todo.action);
    if (rule && !out.some((x) => x.id === rule.gate)) out.push({ id: rule.gate, pattern: rule.pattern });
  }
  return out;
}

/**
 * Whether a gate is approved. Replay gives an approval effect only when a pinned key signed it
 * (trust/decisions.ts), so an approved gate in the state is a person's approval.
 */
export function gateApproved(gates: readonly Gate[], gateId: string): boolean {
  return gates.some((g) => g.id === gateId && g.status === 'approved');
}
