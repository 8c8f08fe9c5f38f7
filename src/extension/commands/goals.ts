/**
 * Goal commands: create one, pause, resume or close it, preview the contract an agent would get
 * for it, and open its event log or a piece of its evidence.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { ContractPreview, GoalState } from '../../core/index';
import {
  BUDGET_LABEL,
  BUDGET_NAMES,
  effectiveStatus,
  GOAL_TRANSITIONS,
  invoke,
  plainText,
  quotaUse,
  Store,
} from '../../core/index';
import type { Decision } from './decisionModal';
import { confirmDecision, whole } from './decisionModal';
import type { Arg, CommandDeps, CommandTable } from './shared';
import { argsOf, guardTrust, input, isNode, lineValidator, person, pickFolder, pickGoal } from './shared';

export function goalCommands(deps: CommandDeps): CommandTable {
  return {
    'loopx.createGoal': (a) => createGoal(deps, a),
    // The command id predates the preview (chat buttons and links name it): it opens nothing.
    'loopx.requestContract': (a) => previewContractOf(deps, a),
    'loopx.pauseGoal': (a) => transition(deps, a, 'pause'),
    'loopx.resumeGoal': (a) => transition(deps, a, 'resume'),
    'loopx.closeGoal': (a) => transition(deps, a, 'close'),
    'loopx.showEventLog': (a) => showEventLog(deps, a),
    'loopx.openEvidence': (a) => openEvidence(a),
  };
}

async function createGoal(deps: CommandDeps, a: Arg): Promise<string> {
  await guardTrust();
  const args = argsOf(a);
  const folder = isNode(a) && a.kind === 'folder' ? a.folder.folder : await pickFolder(args);
  const store = Store.init(folder.uri.fsPath);
  const title = await input({
    given: args.title,
    prompt: 'Goal title',
    placeHolder: 'Refactor the payment module',
    validateInput: lineValidator('The title', 200),
  });
  const objective = await input({
    given: args.objective ?? (args.title !== undefined ? '' : undefined),
    prompt: 'Objective (what done looks like)',
    placeHolder: 'Extract retry logic, add a circuit breaker, update tests',
    validateInput: (v) => (v.length > 10000 ? 'at most 10,000 characters' : undefined),
  });
  const res = invoke(store, 'goal.create', { title: title.trim(), objective }, person());
  deps.log.info(`created goal ${res.goalId}`);
  return res.goalId;
}

/**
 * Preview Contract: what an agent would get from should-run on the goal now, read-only. A person
 * exploring opens no run and spends no turn (docs/VSCODE.md); it writes nothing, so it needs no
 * trust either.
 */
async function previewContractOf(deps: CommandDeps, a: Arg): Promise<ContractPreview> {
  const open = (s: GoalState) => !['closed', 'cancelled'].includes(effectiveStatus(s));
  const ref = await pickGoal(deps.workspaces, a, open, 'goal to preview the contract of');
  return deps.showContractPreview(ref);
}

/** What resuming or closing does, for the modal that asks the person first. */
function transitionModal(state: GoalState, t: 'resume' | 'close'): Decision {
  const from = effectiveStatus(state);
  const use = quotaUse(state, new Date());
  const left = BUDGET_NAMES.filter((k) => use[k])
    .map((k) => `${use[k]!.left} ${BUDGET_LABEL[k]}`)
    .join(', ');
  return t === 'resume'
    ? {
        message: `Resume goal "${plainText(state.title)}"?`,
        detail:
          `Goal: ${whole(state.title)} (${state.id})\n` +
          `Status: ${from} → active\n` +
          `Agents may get contracts for it again and spend its quota${left ? ` (left: ${left})` : ''}.\n`,
        action: 'Resume Goal',
        verb: 'resume it',
      }
    : {
        message: `Close goal "${plainText(state.title)}"? A closed goal is read-only.`,
        detail:
          `Goal: ${whole(state.title)} (${state.id})\n` +
          `Status: ${from} → closed\n` +
          'Closing is final: no agent gets a contract for it again, and it cannot be resumed.\n',
        action: 'Close Goal',
        verb: 'close it',
      };
}

/**
 * Pause, resume or close a goal as the person. Resuming lets agents work and spend again and
 * closing is final, so both ask in a modal, however the command was started; pausing only stops
 * agents and asks nothing.
 */
async function transition(deps: CommandDeps, a: Arg, t: 'pause' | 'resume' | 'close'): Promise<string> {
  await guardTrust();
  // The state machine's own table: which goals the transition applies to.
  const allowed = (s: GoalState) => GOAL_TRANSITIONS[effectiveStatus(s)][t] !== undefined;
  const ref = await pickGoal(deps.workspaces, a, allowed, `goal to ${t}`);
  const state = ref.store.load(ref.goalId).state;
  // A transition the state machine refuses needs no question: the capability says why.
  if (t !== 'pause' && allowed(state)) await confirmDecision(a, () => transitionModal(state, t));
  const res = invoke(ref.store, `goal.${t}`, { goalId: ref.goalId }, person());
  return effectiveStatus(res.state);
}

async function showEventLog(deps: CommandDeps, a: Arg): Promise<vscode.Uri> {
  const ref = await pickGoal(deps.workspaces, a);
  const uri = deps.eventLog.uriFor(ref);
  const doc = await vscode.workspace.openTextDocument(uri);
  await vscode.window.showTextDocument(doc, { preview: true });
  return uri;
}

async function openEvidence(a: Arg): Promise<vscode.Uri | undefined> {
  if (!isNode(a) || a.kind !== 'evidence' || !a.evidence.artifact) return undefined;
  const uri = vscode.Uri.file(path.join(a.ref.store.goalDir(a.ref.goalId), a.evidence.artifact.path));
  await vscode.window.showTextDocument(uri, { preview: true });
  return uri;
}
