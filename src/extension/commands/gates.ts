/**
 * Gate commands: a person approves or rejects a pending gate, signed with their key. Whatever led
 * there (the gate's notification, the tree, the pickers, the dashboard, or other code calling the
 * command with arguments, which only pick the gate), the decision is the person's click in a
 * modal that shows the full facts (`decideGate`).
 */
import * as vscode from 'vscode';
import type { GateDecision, GoalState, Policy } from '../../core/index';
import { checkId, decidableGate, gateFacts, gatesAwaitingDecision, plainText } from '../../core/index';
import type { GoalRef } from '../workspace/workspaces';
import type { AskedBy } from './decisionModal';
import { askDecision, askedBy } from './decisionModal';
import { inFolderWords } from '../workspace/workspaces';
import type { Arg, CommandDeps, CommandTable } from './shared';
import {
  argsOf,
  calledWithArguments,
  Cancelled,
  guardTrust,
  input,
  invokeSigned,
  isNode,
  pickGoal,
} from './shared';

export function gateCommands(deps: CommandDeps): CommandTable {
  return {
    'loopx.approveGate': (a) => gateCommand(deps, a, 'approve'),
    'loopx.rejectGate': (a) => gateCommand(deps, a, 'reject'),
  };
}

/** The modal's button that opens a cut reason whole (and decides nothing). */
const SHOW_REASON = 'Show Reason';

/**
 * Shows the person the facts in a modal (every guarded command whole, who asked and through which
 * channel, then the requester's reason as a bounded quote), then signs and records the decision
 * covering exactly the work shown: if an agent changes that work meanwhile, the capability
 * refuses. The gate is looked at first: one decided elsewhere meanwhile is said so, not asked.
 * `opts.asked`: what led here (`askDecision`); the person's own click by default.
 */
export async function decideGate(
  deps: CommandDeps,
  ref: GoalRef,
  gateId: string,
  decision: GateDecision,
  opts: { note?: string; asked?: AskedBy } = {},
): Promise<void> {
  await guardTrust();
  const state = ref.store.load(ref.goalId).state;
  const policy = ref.store.policy();
  const done = decision === 'approve' ? 'approved' : 'rejected';
  const gate = decidableGate(state, policy, gateId, done);
  const facts = gateFacts(state, policy, gate, decision, {
    more: `${SHOW_REASON} opens it whole (and decides nothing)`,
  });
  const verb = decision === 'approve' ? 'Approve' : 'Reject';
  const choice = await askDecision(
    {
      message: `${verb} gate "${gate.id}" of goal "${plainText(state.title)}"${inFolderWords(ref.folder)}?`,
      // The last empty line sets a command call's sentence apart from the facts.
      detail: `${facts.text}${opts.note ? `\n\nYour note: ${opts.note}` : ''}\n\n`,
      action: verb,
      verb: verb.toLowerCase(),
    },
    opts.asked ?? 'person',
    facts.reasonCut ? [SHOW_REASON] : [],
  );
  if (choice === SHOW_REASON) {
    await deps.showGateReason(ref, gate.id);
    throw new Cancelled();
  }
  await invokeSigned(deps, ref, decision === 'approve' ? 'gate.approve' : 'gate.reject', {
    goalId: ref.goalId,
    gateId,
    note: opts.note,
    shown: facts.work,
  });
  deps.log.info(
    `${done} (signed) gate ${gateId} of goal ${ref.goalId}, covering ${facts.work.map((w) => w.todoId).join(', ') || 'no open work'}`,
  );
}

async function gateCommand(deps: CommandDeps, a: Arg, decision: GateDecision): Promise<boolean> {
  await guardTrust();
  const args = argsOf(a);
  // The policy, read once per workspace folder for this command: the picker looks at every goal.
  const policies = new Map<GoalRef['store'], Policy>();
  const policyOf = (r: GoalRef) =>
    policies.get(r.store) ?? policies.set(r.store, r.store.policy()).get(r.store)!;
  const awaiting = (ref: GoalRef, s: GoalState) => gatesAwaitingDecision(s, policyOf(ref));
  const ref = await pickGoal(
    deps.workspaces,
    a,
    (s, r) => awaiting(r, s).length > 0,
    'goal with a gate to decide',
  );
  const state = ref.store.load(ref.goalId).state;
  let gateId = isNode(a) && a.kind === 'gate' ? a.gate.id : args.gateId;
  if (!gateId) {
    const pick = await vscode.window.showQuickPick(
      awaiting(ref, state).map((g) => ({ label: g.id, description: g.title, detail: g.reason, g })),
      { placeHolder: `Which gate to ${decision}?` },
    );
    if (!pick) throw new Cancelled();
    gateId = pick.g.id;
  }
  checkId(gateId, 'gate id');
  // Said before asking for a note: the capability would refuse it anyway (the same rule).
  decidableGate(state, policyOf(ref), gateId, decision === 'approve' ? 'approved' : 'rejected');
  // Arguments from other code only pick the gate (and offer a note): the person decides in the modal.
  const byArguments = calledWithArguments(a);
  const note =
    args.note ??
    (byArguments
      ? undefined
      : await input({
          prompt: `${decision === 'approve' ? 'Approve' : 'Reject'} gate ${gateId}: a note for the record (optional)`,
          validateInput: (v) => (v.length > 2000 ? 'at most 2,000 characters' : undefined),
        }));
  await decideGate(deps, ref, gateId, decision, {
    note: note?.trim() ? note.trim() : undefined,
    asked: askedBy(a),
  });
  return true;
}
