/** Opening an evidence artifact from the dashboard: read-only, and only a file the store names. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { GoalRef } from '../workspace/workspaces';

/**
 * Opens the artifact of `evidenceId` read-only; returns why not, for the page, when it cannot.
 * The path comes from the store, never the webview, and must stay in the goal's artifacts folder.
 */
export async function openEvidence(ref: GoalRef, evidenceId: string): Promise<string | undefined> {
  const ev = ref.store.load(ref.goalId).state.evidence.find((e) => e.id === evidenceId);
  if (!ev?.artifact) return `Evidence ${evidenceId} of goal ${ref.goalId} has no artifact file.`;
  const dir = path.join(ref.store.goalDir(ref.goalId), 'artifacts');
  const file = path.resolve(ref.store.goalDir(ref.goalId), ev.artifact.path);
  if (path.dirname(file) !== dir || !fs.existsSync(file) || !fs.statSync(file).isFile())
    return `The artifact of evidence ${evidenceId} is missing.`;
  await vscode.window.showTextDocument(vscode.Uri.file(file), { preview: true });
  // Evidence is a record: this editor may not change it.
  await vscode.commands
    .executeCommand('workbench.action.files.setActiveEditorReadonlyInSession')
    .then(undefined, () => undefined);
  return undefined;
}
