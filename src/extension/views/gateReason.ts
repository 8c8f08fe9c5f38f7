/**
 * A gate's reason whole, in a read-only document (`loopx-reason:` URIs): the decision modal shows
 * a bounded quote of it, and its Show Reason button opens this. Read from the store each time the
 * document is shown, so it is the reason as it is now.
 */
import * as vscode from 'vscode';
import { reasonWhose } from '../../core/index';
import type { GoalRef, LoopxWorkspaces } from '../workspace/workspaces';

export const GATE_REASON_SCHEME = 'loopx-reason';

export class GateReasonProvider implements vscode.TextDocumentContentProvider {
  constructor(private readonly workspaces: LoopxWorkspaces) {}

  uriFor(ref: GoalRef, gateId: string): vscode.Uri {
    return vscode.Uri.from({
      scheme: GATE_REASON_SCHEME,
      path: `/${ref.goalId}/${gateId}.txt`,
      query: new URLSearchParams({ folder: ref.folder.uri.fsPath }).toString(),
    });
  }

  async show(ref: GoalRef, gateId: string): Promise<void> {
    await vscode.window.showTextDocument(this.uriFor(ref, gateId), { preview: true });
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    const [, goalId = '', file = ''] = uri.path.split('/');
    const gateId = file.replace(/\.txt$/, '');
    const ref = this.workspaces.find(goalId, new URLSearchParams(uri.query).get('folder') ?? undefined);
    if (!ref) return `no goal ${goalId} in this workspace\n`;
    try {
      const gate = ref.store.load(goalId).state.gates.find((g) => g.id === gateId);
      if (!gate) return `goal ${goalId} has no gate ${gateId}\n`;
      return `# The reason for gate ${gate.id} of goal ${goalId}, in ${reasonWhose(gate)} (not LoopX’s), whole:\n\n${gate.reason}\n`;
    } catch (e) {
      return `# goal ${goalId} cannot be read\n${(e as Error).message}\n`;
    }
  }
}
