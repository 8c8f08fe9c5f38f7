/** A read-only document per goal showing its event history (`loopx-log:` URIs). */
import * as vscode from 'vscode';
import { historyLines, readHistory } from '../../core/index';
import { Disposable } from '../common/disposable';
import type { GoalRef, LoopxWorkspaces } from '../workspace/workspaces';

export const EVENT_LOG_SCHEME = 'loopx-log';

export class EventLogProvider extends Disposable implements vscode.TextDocumentContentProvider {
  private readonly changed = this._register(new vscode.EventEmitter<vscode.Uri>());
  readonly onDidChange = this.changed.event;
  private readonly open = new Set<string>();

  constructor(private readonly workspaces: LoopxWorkspaces) {
    super();
    this._register(
      workspaces.onDidChange(() => {
        for (const u of this.open) this.changed.fire(vscode.Uri.parse(u));
      }),
    );
  }

  uriFor(ref: GoalRef): vscode.Uri {
    return vscode.Uri.from({
      scheme: EVENT_LOG_SCHEME,
      path: `/${ref.goalId}.log`,
      query: new URLSearchParams({ folder: ref.folder.uri.fsPath }).toString(),
    });
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    this.open.add(uri.toString());
    const goalId = uri.path.replace(/^\//, '').replace(/\.log$/, '');
    const folder = new URLSearchParams(uri.query).get('folder') ?? undefined;
    const ref = this.workspaces.find(goalId, folder);
    if (!ref) return `no goal ${goalId} in this workspace`;
    try {
      const { events, torn } = readHistory(ref.store, goalId);
      const names = ref.store.writerNames();
      const lines = historyLines(events, names, 10_000);
      for (const t of torn)
        lines.push(
          `(${t.file}:${t.line}: an incomplete line of ${t.bytes} bytes; run LoopX: Run Self-Repair)`,
        );
      const writers = new Set(events.map((m) => m.log)).size;
      return `# ${goalId}: ${events.length} events from ${writers} writer${writers === 1 ? '' : 's'} (hash-chained logs, merged)\n${lines.join('\n')}\n`;
    } catch (e) {
      return `# ${goalId}: the log cannot be read\n${(e as Error).message}\n`;
    }
  }
}
