/** A read-only document per goal showing its event history (`loopx-log:` URIs). */
import * as vscode from 'vscode';
import type { GoalRef, LoopxWorkspaces } from './workspaces';
import { Disposable } from './disposable';

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
      const log = ref.store.readLog(goalId);
      const lines = log.events.map(
        (e) =>
          `${String(e.seq).padStart(5)}  ${e.ts}  ${`${e.actor.kind}:${e.actor.id}`.padEnd(22)} ${e.actor.channel.padEnd(7)} ${e.type.padEnd(16)} ${JSON.stringify(e.data)}`,
      );
      if (log.torn)
        lines.push(
          `(line ${log.torn.line}: an incomplete line of ${log.torn.bytes} bytes; run LoopX: Run Self-Repair)`,
        );
      return `# ${goalId}: ${log.events.length} events (events.jsonl, hash-chained)\n${lines.join('\n')}\n`;
    } catch (e) {
      return `# ${goalId}: the log cannot be read\n${(e as Error).message}\n`;
    }
  }
}
