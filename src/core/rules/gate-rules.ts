/**
 * The gate and policy rules, in one place: which gates a todo needs, whether a gate is approved,
 * which todos a gate guards, whether the policy denies or gates a command, and which todos a
 * contract covers. The capabilities (todo.add, todo.complete, gate.reject), contract issuing, the
 * should-run decision, exec and the agent tools all ask these functions, so the rules cannot drift
 * apart. Pure: no I/O, no clock, no store.
 */
import type { Contract, Gate, GuardedWork, LoopxError, Policy, Todo } from '../model';
import { refused } from '../model';
import { commandMatch, commandMatches } from '../shell';

/** A gate a todo needs; `pattern` is set when a policy rule for its action requires it. */
export interface NeededGate {
  id: string;
  pattern?: string;
}

// -------------------------------------------------------------------------------------------
// Policy

/**
 * The policy rule that denies a command, if any: its pattern matches the command as written or a
 * program it runs (shell/command-reader.ts). A command that cannot be read as plain words matches every
 * pattern; its reason then says so, so the agent can write it plainly.
 */
export function deniedBy(policy: Policy, command: string) {
  for (const rule of policy.deniedActions ?? []) {
    const how = commandMatch(rule.pattern, command);
    if (how === 'written') return rule;
    if (how === 'unreadable')
      return {
        ...rule,
        reason:
          'LoopX cannot read this command as plain words (an expansion, substitution, glob, heredoc, keyword or a program that runs other commands), so it counts as matching every pattern; write it as plain words',
      };
  }
  return undefined;
}

/**
 * The policy's gate rules for a command, one per gate: every rule whose pattern matches the command
 * as written, a piece of it or a program it runs (`git push && npm publish` needs both gates); a
 * command that cannot be read matches every pattern.
 */
export function policyGatesFor(policy: Policy, command: string) {
  const rules = (policy.gatedActions ?? []).filter((r) => commandMatches(r.pattern, command));
  return rules.filter((r, i) => rules.findIndex((x) => x.gate === r.gate) === i);
}

// -------------------------------------------------------------------------------------------
// Gates

/**
 * The gates a todo needs, each once: its own, any gate requested to guard it, and those the
 * policy requires for its action.
 */
export function gatesFor(
  todo: Pick<Todo, 'id' | 'gate' | 'action'>,
  policy: Policy,
  gates: readonly Gate[] = [],
): NeededGate[] {
  const out: NeededGate[] = [];
  if (todo.gate) out.push({ id: todo.gate });
  for (const g of gates)
    if (g.guards.includes(todo.id) && !out.some((x) => x.id === g.id)) out.push({ id: g.id });
  if (todo.action) {
    for (const rule of policyGatesFor(policy, todo.action))
      if (!out.some((x) => x.id === rule.gate)) out.push({ id: rule.gate, pattern: rule.pattern });
  }
  return out;
}

/** A todo as an approval lists it: id, title and its command in full. */
export function guardedWork(t: Pick<Todo, 'id' | 'title' | 'action'>): GuardedWork {
  return t.action === undefined
    ? { todoId: t.id, title: t.title }
    : { todoId: t.id, title: t.title, action: t.action };
}

/**
 * Whether a gate's approval covers a todo as it is now: the gate is approved, and the person's
 * approval listed this todo with this very command. Replay gives an approval effect only when a
 * pinned key signed it (trust/signed-decisions.ts), and the signature covers the list, so work added to
 * the gate later, or a command other than the one shown, is not approved by it.
 */
export function approvalCovers(gate: Gate, todo: Pick<Todo, 'id' | 'action'> | undefined): boolean {
  if (gate.status !== 'approved' || !todo) return false;
  return (gate.approvedFor ?? []).some((w) => w.todoId === todo.id && w.action === todo.action);
}

/** The review gate of the command todo `todoId` proposes: one id, for an agent's tool and another clone's command. */
export const reviewGateId = (todoId: string) => `review-${todoId}`.slice(0, 64);

/**
 * Whether a todo's command is a proposal for the clone `writer`: another clone's log gave it (a
 * teammate's push, or a file put there by hand), the person who added it did not sign it, and no
 * approval a person signed covers it yet.
 * Its review gate then stands between it and this clone's contracts. Undefined `writer`: a
 * preview, which answers for no clone.
 */
export function proposedElsewhere(
  todo: Pick<Todo, 'id' | 'action' | 'actionFrom' | 'actionSignedBy'>,
  gates: readonly Gate[],
  writer: string | undefined,
): boolean {
  if (todo.action === undefined || writer === undefined || todo.actionFrom === writer) return false;
  if (todo.actionSignedBy) return false;
  return !gates.some((g) => approvalCovers(g, todo));
}

/** The gates a todo needs that its approval does not cover (see approvalCovers), in `gatesFor` order. */
export function unapprovedGates(todo: Todo, policy: Policy, gates: readonly Gate[] = []): NeededGate[] {
  return gatesFor(todo, policy, gates).filter((need) => {
    const gate = gates.find((g) => g.id === need.id);
    return !gate || !approvalCovers(gate, todo);
  });
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

/** The work a decision on a gate is about: the open or claimed todos that need it. */
export function openWorkGuardedBy(
  gateId: string,
  todos: readonly Todo[],
  policy: Policy,
  gates: readonly Gate[] = [],
): Todo[] {
  return todosGuardedBy(gateId, todos, policy, gates).filter(
    (t) => t.status === 'open' || t.status === 'claimed',
  );
}

/**
 * Whether a gate waits for a person's decision: it is pending, or it is approved but its approval
 * does not cover all the open work it guards (work added under it, or a command changed, since).
 * The one rule for the decision capabilities, the CLI and the editor.
 */
export function awaitsDecision(
  gate: Gate,
  state: { todos: readonly Todo[]; gates: readonly Gate[] },
  policy: Policy,
): boolean {
  return (
    gate.status === 'pending' ||
    awaitsGiven(gate, openWorkGuardedBy(gate.id, state.todos, policy, state.gates))
  );
}

/** awaitsDecision for a caller that already has the gate's open work (`openWorkGuardedBy`). */
export function awaitsGiven(gate: Gate, openWork: readonly Todo[]): boolean {
  if (gate.status === 'pending') return true;
  return gate.status === 'approved' && openWork.some((t) => !approvalCovers(gate, t));
}

/** The gates of a goal that wait for a person's decision (see awaitsDecision), in the goal's order. */
export function gatesAwaitingDecision(
  state: { todos: readonly Todo[]; gates: readonly Gate[] },
  policy: Policy,
): Gate[] {
  return state.gates.filter((g) => awaitsDecision(g, state, policy));
}

/** The refusal of a decision on a gate that waits for none (`verb`: approved or rejected). */
export function notAwaitingDecision(gate: Gate, verb: string): LoopxError {
  return refused(
    `gate ${gate.id} is ${gate.status}${gate.decidedBy ? ` (by ${gate.decidedBy.id} at ${gate.decidedAt})` : ''}: only a pending gate can be ${verb}`,
    { gateId: gate.id, reason: 'gate_not_pending' },
  );
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
