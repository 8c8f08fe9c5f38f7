/**
 * Preview Contract: what an agent would get from `quota should-run` on a goal now, as a read-only
 * Markdown document (`loopx-contract:` URIs) shown in the Markdown preview. It reads the core's
 * `previewContract`, so it opens no run, spends no turn and writes nothing under `.loopx/`; it is
 * read again whenever `.loopx/` changes, so an open preview follows the goal. An agent still
 * starts its own turn (should-run or the loopx_get_contract tool): a preview authorises nothing,
 * and none is minted for it to copy.
 */
import * as vscode from 'vscode';
import type { ContractPreview } from '../../core/index';
import { BUDGET_LABEL, mdQuote, mdText, previewContract } from '../../core/index';
import type { GoalRef, LoopxWorkspaces } from '../workspace/workspaces';
import { Disposable } from '../common/disposable';
import { appendCode } from './markdown';

export const CONTRACT_PREVIEW_SCHEME = 'loopx-contract';

/**
 * What should-run would answer the agent of this editor (the setting `loopx.agentName`) on the
 * goal now. Agents in chat sessions add their session to that name: their open runs are theirs.
 */
function previewOf(ref: GoalRef): ContractPreview {
  const agent = vscode.workspace.getConfiguration('loopx').get<string>('agentName', 'vscode') || 'vscode';
  return previewContract(
    ref.store,
    { goalId: ref.goalId, agent },
    { kind: 'agent', id: agent, channel: 'vscode' },
  );
}

/** The preview as Markdown: every store text escaped (mdText), every command in a safe fence. */
export function previewMarkdown(
  ref: GoalRef,
  title: string,
  p: ContractPreview,
  manyFolders: boolean,
): string {
  const a = p.answer;
  const c = a.interaction_contract;
  const md = new vscode.MarkdownString();
  const line = (s = '') => md.appendMarkdown(`${s}\n`);
  line(`# Contract preview: ${mdText(title, 200)}`);
  line();
  line(
    `**${a.decision.toUpperCase()}** is what \`loopx quota should-run\` would answer agent ${mdText(p.agent)} ` +
      `on goal ${mdText(ref.goalId)} (${mdText(a.status)})${manyFolders ? ` in folder ${mdText(ref.folder.name)}` : ''} now.`,
  );
  line();
  line(
    '> A preview: no run was opened, no turn spent, nothing written. ' +
      `An agent starts its own turn with \`loopx quota should-run --goal-id ${ref.goalId}\` (or the loopx\\_get\\_contract tool) ` +
      'and runs only what that contract lists.',
  );
  line();
  line('## Why');
  line();
  for (const r of a.reasons) line(`- ${mdText(r)}`);
  if (a.retry_after_seconds) line(`- ask again in ${a.retry_after_seconds} s`);
  line();
  line(`## Commands the agent may run (${p.commands.length})`);
  line();
  if (p.commands.length === 0) line('None now.');
  for (const cmd of p.commands) {
    // A paragraph, not a list item: the command's fenced block cannot be indented into one.
    line(`**${mdText(cmd.todoId)}**: ${mdText(cmd.title)}`);
    appendCode(md, cmd.command, 'sh');
  }
  if (p.judgment.length) {
    line();
    line('Todos it would finish by its own judgment (no command):');
    line();
    for (const t of p.judgment) line(`- **${mdText(t.todoId)}** ${mdText(t.title)}`);
  }
  if (c.id) {
    line();
    line(
      `Under its open run ${mdText(a.run_id ?? '')}: contract ${mdText(c.id)}, until ${mdText(c.expires_at ?? '')}.`,
    );
  }
  line();
  line(`## Gates blocking other work (${c.user_channel.gates.length})`);
  line();
  if (c.user_channel.gates.length === 0) line('None.');
  for (const g of c.user_channel.gates) {
    line(`- **${mdText(g.id)}** (${mdText(g.status)}): ${mdText(g.title)}`);
    if (g.reason) line(mdQuote(g.reason, '  '));
  }
  if (c.user_channel.todos.length) {
    line();
    line('## Todos that are yours');
    line();
    for (const t of c.user_channel.todos) line(`- **${mdText(t.id)}** ${mdText(t.title)}`);
  }
  line();
  line('## Quota left');
  line();
  const budgets = Object.entries(a.quota);
  if (budgets.length === 0) line('No budget is set.');
  for (const [k, u] of budgets)
    line(
      `- ${mdText(BUDGET_LABEL[k as keyof typeof BUDGET_LABEL] ?? k)}: ${u.left} left of ${u.limit} (${u.used} used)`,
    );
  const w = p.wouldWrite;
  const writes = [
    ...(w.openRun ? ['open a run with a signed contract: one turn of the budget'] : []),
    ...w.endRuns.map((e) => `end run ${e.runId} as ${e.outcome}: ${e.why}`),
    ...w.requestGates.map((g) => `ask a person for gate ${g}`),
  ];
  line();
  line('## What the agent’s should-run call would write');
  line();
  if (writes.length === 0) line('Nothing.');
  for (const x of writes) line(`- ${mdText(x)}`);
  for (const x of a.warnings ?? []) line(`\n_${mdText(x)}_`);
  return md.value;
}

/**
 * Reads each `loopx-contract:` document from the store when it is shown, and again on every change
 * while it is open. Built once in `activate`, like the other document providers.
 */
export class ContractPreviewProvider extends Disposable implements vscode.TextDocumentContentProvider {
  private readonly changed = this._register(new vscode.EventEmitter<vscode.Uri>());
  readonly onDidChange = this.changed.event;
  private readonly shown = new Set<string>();

  constructor(private readonly workspaces: LoopxWorkspaces) {
    super();
    this._register(
      workspaces.onDidChange(() => {
        for (const u of this.shown) this.changed.fire(vscode.Uri.parse(u, true));
      }),
    );
    this._register(vscode.workspace.onDidCloseTextDocument((d) => this.shown.delete(d.uri.toString())));
  }

  uriFor(ref: GoalRef): vscode.Uri {
    return vscode.Uri.from({
      scheme: CONTRACT_PREVIEW_SCHEME,
      path: `/contract-${ref.goalId}.md`,
      query: new URLSearchParams({ folder: ref.folder.uri.fsPath }).toString(),
    });
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    this.shown.add(uri.toString());
    const goalId = /^\/contract-(.+)\.md$/.exec(uri.path)?.[1] ?? '';
    const ref = this.workspaces.find(goalId, new URLSearchParams(uri.query).get('folder') ?? undefined);
    if (!ref) return `# Contract preview\n\nNo goal ${mdText(goalId)} in this workspace.\n`;
    try {
      const p = previewOf(ref);
      const title = ref.store.load(goalId).state.title;
      return previewMarkdown(ref, title, p, (vscode.workspace.workspaceFolders?.length ?? 0) > 1);
    } catch (e) {
      return `# Contract preview\n\nGoal ${mdText(goalId)} cannot be read: ${mdText((e as Error).message)}\n`;
    }
  }

  /**
   * Shows the preview of `ref`'s contract in the Markdown preview (the document itself when this
   * VS Code has no Markdown preview).
   */
  async show(ref: GoalRef): Promise<ContractPreview> {
    // Read once here too: a goal that cannot be read is the command's failure, shown to the person.
    const shown = previewOf(ref);
    const uri = this.uriFor(ref);
    try {
      await vscode.commands.executeCommand('markdown.showPreview', uri);
    } catch {
      await vscode.window.showTextDocument(uri, { preview: true });
    }
    return shown;
  }
}
