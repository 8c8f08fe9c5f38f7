/**
 * The gate and policy rules, in one place: which gates a todo needs, whether a gate is approved,
 * which todos a gate guards, whether the policy denies or gates a command, and which todos a
 * contract covers. The capabilities (todo.add, todo.complete, gate.reject), contract issuing, the
 * should-run decision, exec and the agent tools all ask these functions, so the rules cannot drift
 * apart. Pure: no I/O, no clock, no store.
 */
import type { Contract, Gate, Policy, Todo } from './model';
import { matchesGlob } from './glob';

/** A gate a todo needs; `pattern` is set when a policy rule for its action requires it. */
export interface NeededGate {
  id: string;
  pattern?: string;
}

// -------------------------------------------------------------------------------------------
// Policy

/** The policy rule that denies a command, if any. */
export function deniedBy(policy: Policy, command: string) {
  return policy.deniedActions?.find((r) => matchesGlob(r.pattern, command));
}

/** The gate the policy requires for a command, if any. */
export function policyGateFor(policy: Policy, command: string) {
  return policy.gatedActions?.find((r) => matchesGlob(r.pattern, command));
}

// -------------------------------------------------------------------------------------------
// Gates

/**
 * The gates a todo needs, each once: its own, any gate requested to guard it, and the one the
 * policy requires for its action.
 */
export function gatesFor(todo: Todo, policy: Policy, gates: readonly Gate[] = []): NeededGate[] {
  const out: NeededGate[] = [];
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

/** The gates a todo needs that are not approved (missing, pending, rejected or expired), in `gatesFor` order. */
export function unapprovedGates(todo: Todo, policy: Policy, gates: readonly Gate[] = []): NeededGate[] {
  return gatesFor(todo, policy, gates).filter((g) => !gateApproved(gates, g.id));
}

/** The todos that need a gate: those whose `gatesFor` includes it, in the order given. */
export function todosGuardedBy(
  gateId: string,
  todos: readonly Todo[],
  policy: Policy,
  gates: readonly Gate[] = [],
): Todo[] {
  return todos.filter((t) => gatesFor(t, policy, gates).some((x) => x.id === gateId));
}

// -------------------------------------------------------------------------------------------
// Contracts

type ContractWork = Pick<Contract, 'actions' | 'judgment'>;

/** Every todo a contract lets its agent work on: the command actions' todos, then the judgment todos. */
export function contractTodoIds(contract: ContractWork): string[] {
  return [...contract.actions.map((a) => a.todoId), ...contract.judgment];
}

/** Whether a contract lists a todo, as a command action or as a judgment todo. */
export function contractCovers(contract: ContractWork, todoId: string): boolean {
  return contractTodoIds(contract).includes(todoId);
}

/** The command action a contract lists for a todo, if any. */
export function contractActionFor(
  contract: ContractWork,
  todoId: string,
): Contract['actions'][number] | undefined {
  return contract.actions.find((a) => a.todoId === todoId);
}
