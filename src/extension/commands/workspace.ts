/**
 * Workspace-wide commands: initialize a folder, refresh, self-repair, install the agent hooks,
 * and open the dashboard or start and stop the status server.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import { LoopxError, plainText, repair, Store } from '../../core/index';
import { applyHooks, describeHookChanges, hookCommands, planHooks } from '../workspace/hooksInstaller';
import { reviewAndSignPolicy } from '../trust/policySigning';
import { confirmDecision, whole } from './decisionModal';
import type { Arg, CommandDeps, CommandTable } from './shared';
import { argsOf, guardTrust, pickFolder } from './shared';

export function workspaceCommands(deps: CommandDeps): CommandTable {
  return {
    'loopx.initWorkspace': (a) => initWorkspace(deps, a),
    'loopx.runSelfRepair': (a) => selfRepair(deps, a),
    'loopx.refresh': async () => deps.workspaces.refreshNow(),
    'loopx.installAgentHooks': (a) => installAgentHooks(deps, a),
    'loopx.signPolicy': (a) => signPolicy(deps, a),
    'loopx.openDashboard': () => deps.openDashboard(),
    'loopx.openDashboardInBrowser': () => guardTrust().then(() => deps.openDashboardInBrowser()),
    'loopx.startStatusServer': () => guardTrust().then(() => deps.startStatusServer()),
    'loopx.stopStatusServer': () => deps.stopStatusServer(),
  };
}

async function initWorkspace(deps: CommandDeps, a: Arg): Promise<string> {
  await guardTrust();
  const folder = await pickFolder(argsOf(a));
  const store = Store.init(folder.uri.fsPath);
  deps.log.info(`initialised ${store.root}`);
  void vscode.window
    .showInformationMessage(`LoopX: ${folder.name} is ready. Create a first goal?`, 'Create Goal')
    .then((c) => {
      if (c) void vscode.commands.executeCommand('loopx.createGoal', { folder: folder.uri.fsPath });
    });
  return store.root;
}

async function signPolicy(deps: CommandDeps, a: Arg) {
  const folder = await pickFolder(argsOf(a));
  const f = deps.workspaces.folders().find((x) => x.folder.uri.fsPath === folder.uri.fsPath);
  if (!f)
    throw new LoopxError('not_found', `${folder.name} has no .loopx/: run LoopX: Initialize Workspace first`);
  return reviewAndSignPolicy(f, deps.approver, deps.log);
}

async function selfRepair(deps: CommandDeps, a: Arg) {
  await guardTrust();
  const args = argsOf(a);
  const folders = deps.workspaces.folders();
  if (folders.length === 0) throw new LoopxError('not_found', 'no folder of this workspace has a .loopx/');
  return vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: 'LoopX: self-repair', cancellable: false },
    async (progress) => {
      const reports = [];
      for (const f of folders) {
        progress.report({ message: f.folder.name });
        reports.push(repair(f.store, { goalId: args.goalId }));
      }
      const findings = reports.flatMap((r) => r.findings);
      for (const f of findings)
        deps.log.info(
          `self-repair: ${f.fixed ? 'fixed' : 'found'} ${f.kind} ${f.goal_id ?? ''}: ${f.message}`,
        );
      const fixed = findings.filter((f) => f.fixed).length;
      void vscode.window.showInformationMessage(
        findings.length
          ? `LoopX self-repair: ${findings.length} finding${findings.length > 1 ? 's' : ''}, ${fixed} fixed (details in the LoopX output)`
          : 'LoopX self-repair: nothing to repair',
      );
      return reports;
    },
  );
}

/**
 * Shows what it will write in an editor, then writes it once the person confirms in a modal that
 * names each file and the commands the hooks run. Arguments only choose the folder: a `confirm`
 * argument (older callers) no longer skips the question.
 */
async function installAgentHooks(deps: CommandDeps, a: Arg): Promise<string[]> {
  await guardTrust();
  const folder = await pickFolder(argsOf(a));
  const root = folder.uri.fsPath;
  const plan = planHooks(root);
  const changes = plan.files.filter((f) => f.before !== f.after);
  if (changes.length === 0) {
    void vscode.window.showInformationMessage('LoopX agent hooks are already installed.');
    return [];
  }
  const preview = changes
    .map(
      (f) =>
        `── ${path.relative(root, f.path)} (${f.before === undefined ? 'new file' : 'merged into the existing file'}) ──\n${f.after}`,
    )
    .join('\n');
  const doc = await vscode.workspace.openTextDocument({ language: 'jsonc', content: preview });
  await vscode.window.showTextDocument(doc, { preview: true });
  await confirmDecision(a, () => ({
    message: `Write ${changes.length} file${changes.length > 1 ? 's' : ''} in ${plainText(folder.name)} so VS Code agent hooks and Claude Code call the LoopX hook (shown in the editor)?`,
    detail:
      `Files:\n${describeHookChanges(root, { files: changes })
        .map((l) => `  ${whole(l)}\n`)
        .join('')}` +
      `Each hook runs:\n${hookCommands()
        .map((c) => `  ${whole(c)}\n`)
        .join('')}` +
      'Agents in this folder then run their tools through LoopX.\n',
    action: 'Install',
    verb: 'install them',
  }));
  const written = applyHooks({ files: changes });
  deps.log.info(`installed agent hooks: ${written.join(', ')}`);
  return written;
}
