/**
 * Workspace-wide commands: initialize a folder, refresh, self-repair, install the agent hooks,
 * and open the dashboard or start and stop the status server.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { RepairReport } from '../../core/index';
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
    .showInformationMessage(`${folder.name} is ready for LoopX. Create a first goal?`, 'Create Goal')
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

/** One folder's self-repair: its report, or why it could not be repaired. */
export type FolderRepair = { folder: string; path: string } & (
  { report: RepairReport } | { error: string; reason?: string }
);

/**
 * Self-repair, folder by folder: one folder that cannot be repaired (a policy.json that is not
 * JSON, a goal that cannot be read) is reported with why, and the others are repaired all the same.
 * With a goal id, only the folders that have that goal.
 */
async function selfRepair(deps: CommandDeps, a: Arg): Promise<FolderRepair[]> {
  await guardTrust();
  const args = argsOf(a);
  const all = deps.workspaces.folders();
  if (all.length === 0) throw new LoopxError('not_found', 'no folder of this workspace has a .loopx/');
  const folders = all.filter(
    (f) =>
      (args.folder === undefined || f.folder.uri.fsPath === args.folder) &&
      (args.goalId === undefined || f.store.exists(args.goalId)),
  );
  if (folders.length === 0)
    throw new LoopxError(
      'not_found',
      args.goalId === undefined
        ? `${args.folder} is not a LoopX folder of this workspace`
        : `no LoopX folder of this workspace has goal ${JSON.stringify(args.goalId)}`,
    );
  return vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: 'Self-repair', cancellable: false },
    async (progress) => {
      const results: FolderRepair[] = [];
      for (const f of folders) {
        progress.report({ message: f.folder.name });
        const where = { folder: f.folder.name, path: f.folder.uri.fsPath };
        try {
          results.push({ ...where, report: repair(f.store, { goalId: args.goalId }) });
        } catch (e) {
          const reason = e instanceof LoopxError ? e.reason : undefined;
          const error = e instanceof Error ? e.message : String(e);
          deps.log.error(`self-repair of folder ${f.folder.name}: ${reason ? `[${reason}] ` : ''}${error}`);
          results.push({ ...where, error, ...(reason ? { reason } : {}) });
        }
      }
      showRepairOutcome(deps, results, folders.length > 1 || all.length > 1);
      return results;
    },
  );
}

/** Logs every finding and tells the person what was found and fixed, and which folder was not repaired and why. */
function showRepairOutcome(deps: CommandDeps, results: FolderRepair[], named: boolean): void {
  const findings = results.flatMap((r) =>
    'report' in r ? r.report.findings.map((f) => ({ ...f, folder: r.folder })) : [],
  );
  for (const f of findings)
    deps.log.info(
      `self-repair${named ? ` of folder ${f.folder}` : ''}: ${f.fixed ? 'fixed' : 'found'} ${f.kind} ${f.goal_id ?? ''}: ${f.message}`,
    );
  const fixed = findings.filter((f) => f.fixed).length;
  const failed = results.filter((r): r is FolderRepair & { error: string } => 'error' in r);
  const repaired = results.length - failed.length;
  const summary = findings.length
    ? `${findings.length} finding${findings.length > 1 ? 's' : ''}, ${fixed} fixed${named ? ` in ${repaired} folder${repaired === 1 ? '' : 's'}` : ''} (details in the LoopX output)`
    : `nothing to repair${named && repaired ? ` in ${repaired} folder${repaired === 1 ? '' : 's'}` : ''}`;
  if (failed.length === 0) {
    void vscode.window.showInformationMessage(`Self-repair: ${summary}`);
    return;
  }
  const why = failed.map((r) => `${plainText(r.folder, 80)} (${r.error})`).join('; ');
  void vscode.window
    .showWarningMessage(
      `Self-repair could not repair ${failed.length === 1 ? 'folder' : `${failed.length} folders:`} ${why}.` +
        (repaired ? ` The other${repaired > 1 ? 's' : ''}: ${summary}.` : ''),
      'Show Log',
    )
    .then((c) => c && deps.log.show());
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
    void vscode.window.showInformationMessage('The LoopX agent hooks are already installed.');
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
