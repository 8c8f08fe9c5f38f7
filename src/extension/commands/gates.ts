/** Gate commands: a person approves (signed) or rejects a pending gate. */
import * as vscode from 'vscode';
import { invoke, LoopxError, checkId } from '../../core/index';
import type { GoalState } from '../../core/index';
import { argsOf, Cancelled, guardTrust, input, isNode, person, pickGoal } from './shared';
import type { Arg, CommandDeps, CommandTable } from './shared';

export function gateCommands(deps: CommandDeps): CommandTable {
  return {
    'loopx.approveGate': (a) => decideGate(deps, a, 'approve'),
    'loopx.rejectGate': (a) => decideGate(deps, a, 'reject'),
  };
}

async function decideGate(deps: CommandDeps, a: Arg, decision: 'approve' | 'reject'): Promise<boolean> {
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
    throw new LoopxError(
      'refused',
      `gate ${gateId} is ${gate.status}${gate.decidedBy ? ` (by ${gate.decidedBy.id} at ${gate.decidedAt})` : ''}: only a pending gate can be ${decision === 'approve' ? 'approved' : 'rejected'}`,
    );
  }
  // A click on the notification's button is the decision itself; elsewhere ask for a note.
  const note =
    args.note ??
    (args.fromNotification
      ? undefined
      : await input({
          prompt: `${decision === 'approve' ? 'Approve' : 'Reject'} gate ${gateId}: a note for the record (optional)`,
          validateInput: (v) => (v.length > 2000 ? 'at most 2,000 characters' : undefined),
        }));
  const cleanNote = note?.trim() ? note.trim() : undefined;
  if (decision === 'approve') {
    const signature = await deps.approver.sign(ref.store, ref.goalId, gate, cleanNote);
    invoke(ref.store, 'gate.approve', { goalId: ref.goalId, gateId, note: cleanNote, signature }, person());
  } else {
    invoke(ref.store, 'gate.reject', { goalId: ref.goalId, gateId, note: cleanNote }, person());
  }
  deps.log.info(
    `${decision === 'approve' ? 'approved (signed)' : 'rejected'} gate ${gateId} of goal ${ref.goalId}`,
  );
  return true;
}
