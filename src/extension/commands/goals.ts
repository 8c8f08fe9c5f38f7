/**
 * Goal commands: create one, pause, resume or close it, request an agent's contract for it, and
 * open its event log or a piece of its evidence.
 */
import * as vscode from 'vscode';
import * as path from 'node:path';
import { Store, invoke, shouldRun, effectiveStatus } from '../../core/index';
import type { ShouldRunOutput } from '../../core/index';
import {
  argsOf,
  confirmModal,
  guardTrust,
  input,
  isNode,
  lineValidator,
  person,
  pickFolder,
  pickGoal,
} from './shared';
import type { Arg, CommandDeps, CommandTable } from './shared';

export function goalCommands(deps: CommandDeps): CommandTable {
  return {
    'loopx.createGoal': (a) => createGoal(deps, a),
    'loopx.requestContract': (a) => requestContract(deps, a),
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

async function requestContract(deps: CommandDeps, a: Arg): Promise<ShouldRunOutput> {
  await guardTrust();
  const ref = await pickGoal(deps.workspaces, a, (s) => s.status === 'active');
  const cfg = vscode.workspace.getConfiguration('loopx');
  const out = shouldRun(
    ref.store,
    {
      goalId: ref.goalId,
      agent: cfg.get<string>('agentName', 'vscode'),
      ttlMinutes: cfg.get<number>('contractTtlMinutes'),
    },
    person(),
  );
  const doc = await vscode.workspace.openTextDocument({
    language: 'json',
    content: JSON.stringify(out, null, 2),
  });
  await vscode.window.showTextDocument(doc, { preview: true });
  const actions = out.interaction_contract.cli_channel.next_cli_actions.length;
  void vscode.window
    .showInformationMessage(
      `LoopX: ${out.decision.toUpperCase()}: ${out.reasons[0] ?? ''}${actions ? ` (${actions} action${actions > 1 ? 's' : ''})` : ''}`,
      ...(out.interaction_contract.id ? ['Copy Contract'] : []),
    )
    .then((c) => {
      if (c) void vscode.env.clipboard.writeText(JSON.stringify(out.interaction_contract, null, 2));
    });
  return out;
}

async function transition(deps: CommandDeps, a: Arg, t: 'pause' | 'resume' | 'close'): Promise<string> {
  await guardTrust();
  const wanted = { pause: ['active'], resume: ['paused'], close: ['active', 'paused', 'completed'] }[t];
  const ref = await pickGoal(deps.workspaces, a, (s) => wanted.includes(effectiveStatus(s)), `goal to ${t}`);
  if (t === 'close' && !(a && !isNode(a) && a.goalId)) {
    await confirmModal(`Close goal ${ref.goalId}? A closed goal is read-only.`, undefined, 'Close Goal');
  }
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
