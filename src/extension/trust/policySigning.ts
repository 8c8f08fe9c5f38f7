/**
 * The policy is a person's decision (docs/TRUST.md): an edit of `policy.json` has no effect
 * until a person signs it. When a folder's policy.json holds such an edit, a notification says so
 * with Review and Sign / Show Diff; signing always shows the diff first (policy in force against
 * the edit), then asks in a modal, and signs only the text that was shown.
 */
import * as vscode from 'vscode';
import type { PolicyView } from '../../core/index';
import { canonicalJson, describeUnsignedPolicy, LOOPX_DIR, prettyPolicy } from '../../core/index';
import type { Approver } from './approver';
import { confirmModal, guardTrust, reportFailure } from '../commands/shared';
import { Disposable } from '../common/disposable';
import type { LoopxFolder, LoopxWorkspaces } from '../workspace/workspaces';

const SCHEME = 'loopx-policy';

/** Read-only documents for the diff: `loopx-policy:/in-force.json?<folder>` and `/edited.json`. */
class PolicyDocuments implements vscode.TextDocumentContentProvider {
  constructor(private readonly workspaces: LoopxWorkspaces) {}

  static uri(folder: LoopxFolder, which: 'in-force' | 'edited'): vscode.Uri {
    return vscode.Uri.from({ scheme: SCHEME, path: `/${which}.json`, query: folder.folder.uri.fsPath });
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    const f = this.workspaces.folders().find((x) => x.folder.uri.fsPath === uri.query);
    if (!f) return `// ${uri.query} has no ${LOOPX_DIR}/\n`;
    const v = f.store.policyView();
    return prettyPolicy(uri.path === '/in-force.json' ? v.baseline : v.file) + '\n';
  }
}

async function showDiff(folder: LoopxFolder, v: PolicyView): Promise<void> {
  const before = v.signed ? `signed by ${v.signed.signedBy}` : 'default, nothing signed';
  await vscode.commands.executeCommand(
    'vscode.diff',
    PolicyDocuments.uri(folder, 'in-force'),
    PolicyDocuments.uri(folder, 'edited'),
    `${folder.folder.name}: policy in force (${before}) ↔ policy.json (unsigned)`,
    { preview: true },
  );
}

/**
 * Shows the diff, asks in a modal, and signs what was shown with the editor's key. Returns the
 * view after signing, or undefined when there was nothing to sign.
 */
export async function reviewAndSignPolicy(
  folder: LoopxFolder,
  approver: Approver,
  log: vscode.LogOutputChannel,
): Promise<PolicyView | undefined> {
  await guardTrust();
  const v = folder.store.policyView();
  if (v.state === 'signed') {
    void vscode.window.showInformationMessage(`policy.json in ${folder.folder.name} is already signed`);
    return undefined;
  }
  await showDiff(folder, v);
  const changes = v.unsigned.length
    ? `Signing makes these changes apply: ${v.unsigned.join(', ')}.`
    : 'The edit only adds restrictions, which already apply; signing records it as the policy.';
  await confirmModal(
    `Sign policy.json in ${folder.folder.name} as shown in the diff?`,
    `${changes}\n\nFrom then on LoopX enforces policy.json exactly as shown; agents cannot change it without a person signing again.`,
    'Sign',
  );
  const signer = await approver.signer(folder.store);
  const after = folder.store.signPolicy(signer, v.file);
  log.info(
    `${folder.folder.name}: policy.json signed by ${signer.name} (${v.unsigned.join(', ') || 'no loosening'})`,
  );
  void vscode.window.showInformationMessage(`policy.json in ${folder.folder.name} is signed and applies`);
  return after;
}

/** Notifies each unsigned edit of a folder's policy.json once (per content). */
export class PolicySignNotifier extends Disposable {
  private readonly asked = new Set<string>();

  constructor(
    private readonly workspaces: LoopxWorkspaces,
    private readonly log: vscode.LogOutputChannel,
    /** Signs with the editor's key what the person reviewed (Review and Sign). */
    private readonly approver: Approver,
  ) {
    super();
    this._register(
      vscode.workspace.registerTextDocumentContentProvider(SCHEME, new PolicyDocuments(workspaces)),
    );
    this._register(workspaces.onDidChange(() => this.scan()));
  }

  scan(): void {
    const level = vscode.workspace.getConfiguration('loopx').get<string>('notifications', 'all');
    for (const f of this.workspaces.folders()) {
      const v = this.workspaces.policyView(f);
      if (v instanceof Error) {
        this.log.warn(`${f.folder.name}: ${v.message}`);
        continue;
      }
      const why = describeUnsignedPolicy(v);
      if (!why) continue;
      const key = `${f.folder.uri.fsPath}|${canonicalJson(v.file)}`;
      if (this.asked.has(key)) continue;
      this.asked.add(key);
      this.log.warn(`${f.folder.name}: ${why}`);
      if (level !== 'off') void this.ask(f, v);
    }
  }

  private async ask(folder: LoopxFolder, v: PolicyView): Promise<void> {
    const choice = await vscode.window.showWarningMessage(
      `policy.json in ${folder.folder.name} has changes no person signed (${v.unsigned.join(', ')}). Until you sign them they have no effect.`,
      'Review and Sign',
      'Show Diff',
    );
    const decided = choice === 'Review and Sign';
    try {
      if (decided) await reviewAndSignPolicy(folder, this.approver, this.log);
      else if (choice === 'Show Diff') await showDiff(folder, v);
    } catch (e) {
      reportFailure(this.log, `${folder.folder.name}: policy`, e);
    } finally {
      // Only a decision changes what the views show: a look at the diff or a dismissal does not.
      if (decided) this.workspaces.refreshNow();
    }
  }
}
