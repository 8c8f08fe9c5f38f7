/**
 * Gate commands: a person approves or rejects a pending gate, signed with their key. A decision
 * is the person's click on something LoopX showed at that moment: the gate's notification (which
 * calls `decideGate` directly), the tree, or the pickers. Called with arguments by other code (an
 * extension, an agent tool that runs commands), the command asks in a modal dialog first.
 */
import * as vscode from 'vscode';
import { LoopxError, checkId, refused, todosGuardedBy } from '../../core/index';
import type { Gate, GoalState, Policy } from '../../core/index';
import type { GoalRef } from '../workspaces';
import {
  argsOf,
  Cancelled,
  confirmIfCalledWithArguments,
  guardTrust,
  input,
  invokeSigned,
  isNode,
  pickGoal,
} from './shared';
import type { Arg, CommandDeps, CommandTable } from './shared';

type GateDecision = 'approve' | 'reject';

export function gateCommands(deps: CommandDeps): CommandTable {
  return {
    'loopx.approveGate': (a) => gateCommand(deps, a, 'approve'),
    'loopx.rejectGate': (a) => gateCommand(deps, a, 'reject'),
  };
}

/** Signs and records the decision. Only for a person's own click (see the file comment). */
export async function decideGate(
  deps: CommandDeps,
  ref: GoalRef,
  gateId: string,
  decision: GateDecision,
  note?: string,
): Promise<void> {
  await guardTrust();
  await invokeSigned(deps, ref, decision === 'approve' ? 'gate.approve' : 'gate.reject', {
    goalId: ref.goalId,
    gateId,
    note,
  });
  deps.log.info(
    `${decision === 'approve' ? 'approved' : 'rejected'} (signed) gate ${gateId} of goal ${ref.goalId}`,
  );
}

/** What a modal says before a decision that other code asked for: goal, gate, and the effect. */
function modalText(
  state: GoalState,
  policy: Policy,
  gate: Gate,
  decision: GateDecision,
): { message: string; detail: string; action: string; verb: string } {
  const verb = decision === 'approve' ? 'Approve' : 'Reject';
  // The same rule the capability applies: own gate, guards, and the policy's gate for an action.
  const guarded = todosGuardedBy(gate.id, state.todos, policy, state.gates).filter(
    (t) => t.status !== 'done' && t.status !== 'cancelled',
  );
  const effect =
    decision === 'approve'
      ? `Agents may then run the work it guards${guarded.length ? `: ${guarded.map((t) => t.id).join(', ')}` : ''}.`
      : `The open todos it guards are cancelled${guarded.length ? `: ${guarded.map((t) => t.id).join(', ')}` : ''}.`;
  return {
    message: `${verb} gate "${gate.id}" of goal "${state.title}"?`,
    detail:
      `Requested by ${gate.requestedBy.kind} ${gate.requestedBy.id} via ${gate.requestedBy.channel}.\n` +
      `${gate.reason ? `Reason: ${gate.reason}\n` : ''}${effect}\n`,
    action: verb,
    verb: verb.toLowerCase(),
  };
}

async function gateCommand(deps: CommandDeps, a: Arg, decision: GateDecision): Promise<boolean> {
  await guardTrust();
  const args = argsOf(a);
  const hasPending = (s: GoalState) => s.gates.some((g) => g.status === 'pending');
  const ref = await pickGoal(deps.workspaces, a, hasPending, 'goal with a pending gate');
  const state = ref.store.load(ref.goalId).state;
  let gateId = isNode(a) && a.kind === 'gate' ? a.gate.id : args.gateId;
  if (!gateId) {
    const pending = state.gates.filter((g) => g.status === 'pending');
    const pick = await vscode.window.showQuickPick(
      pending.map((g) => ({ label: g.id, description: g.title, detail: g.reason, g })),
      { placeHolder: `Which gate to ${decision}?` },
    );
    if (!pick) throw new Cancelled();
    gateId = pick.g.id;
  }
  checkId(gateId, 'gate id');
  const gate = state.gates.find((g) => g.id === gateId);
  if (!gate) throw new LoopxError('not_found', `goal ${ref.goalId} has no gate ${gateId}`);
  if (gate.status !== 'pending') {
    // Say so before asking for a note: the capability would refuse it anyway.
    throw refused(
      `gate ${gateId} is ${gate.status}${gate.decidedBy ? ` (by ${gate.decidedBy.id} at ${gate.decidedAt})` : ''}: only a pending gate can be ${decision === 'approve' ? 'approved' : 'rejected'}`,
      { reason: 'gate_not_pending', gateId },
    );
  }
  // Arguments from other code decide nothing by themselves: the person answers a modal.
  const byArguments = await confirmIfCalledWithArguments(a, () =>
    modalText(state, ref.store.policy(), gate, decision),
  );
  const note =
    args.note ??
    (byArguments
      ? undefined
      : await input({
          prompt: `${decision === 'approve' ? 'Approve' : 'Reject'} gate ${gateId}: a note for the record (optional)`,
          validateInput: (v) => (v.length > 2000 ? 'at most 2,000 characters' : undefined),
        }));
  await decideGate(deps, ref, gateId, decision, note?.trim() ? note.trim() : undefined);
  return true;
}
