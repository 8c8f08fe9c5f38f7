/**
 * Asks the person as soon as a gate becomes pending, whoever requested it (an agent in a
 * terminal, the CLI, the MCP server): a notification in LoopX's own words, naming the gate, the
 * goal and who asked through which channel, with Approve, Reject and Show. The requester's reason
 * is not in it: a notification renders `[label](command:...)` as a link that runs a command, so
 * text an agent wrote goes only into the decision's modal, as plain text, with the full commands.
 */
import * as vscode from 'vscode';
import type { Gate, GateDecision } from '../../core/index';
import { describeActor, plainText } from '../../core/index';
import { reportFailure } from '../commands/shared';
import { Disposable } from '../common/disposable';
import type { GoalRef, LoopxWorkspaces } from '../workspace/workspaces';

export interface PendingGate {
  ref: GoalRef;
  goalTitle: string;
  gate: Gate;
}

export function pendingGates(workspaces: LoopxWorkspaces): PendingGate[] {
  const out: PendingGate[] = [];
  for (const { ref, entry } of workspaces.goals()) {
    if (entry.pendingGates === 0 || entry.status === 'closed' || entry.status === 'cancelled') continue;
    try {
      const g = ref.store.load(ref.goalId).state;
      for (const gate of g.gates.filter((x) => x.status === 'pending'))
        out.push({ ref, goalTitle: g.title, gate });
    } catch {
      /* the tree shows the broken goal */
    }
  }
  return out;
}

/** The notification's text: LoopX's words, and store text only as plain words (see the file comment). */
function notificationText(p: PendingGate): string {
  return `LoopX: gate ${p.gate.id} of goal "${plainText(p.goalTitle)}" waits for your decision, asked by ${plainText(describeActor(p.gate.requestedBy), 100)}. Approve or Reject shows what it guards before you decide.`;
}

export class GateNotifier extends Disposable {
  private readonly seen = new Set<string>();

  constructor(
    private readonly workspaces: LoopxWorkspaces,
    private readonly log: vscode.LogOutputChannel,
    /** Records the person's click on Approve or Reject: the click is the decision. */
    private readonly decide: (p: PendingGate, decision: GateDecision) => Promise<void>,
  ) {
    super();
    this._register(workspaces.onDidChange(() => this.scan()));
  }

  /** Notifies each gate that became pending since the last scan (each request once). */
  scan(): void {
    const level = vscode.workspace.getConfiguration('loopx').get<string>('notifications', 'all');
    for (const p of pendingGates(this.workspaces)) {
      const key = `${p.ref.folder.uri.fsPath}|${p.ref.goalId}|${p.gate.id}|${p.gate.requestedAt}`;
      if (this.seen.has(key)) continue;
      this.seen.add(key);
      this.log.info(
        `gate ${p.gate.id} of goal ${p.ref.goalId} is pending (requested by ${plainText(describeActor(p.gate.requestedBy), 100)})`,
      );
      if (level !== 'off') void this.ask(p);
    }
  }

  private async ask(p: PendingGate): Promise<void> {
    const choice = await vscode.window.showInformationMessage(
      notificationText(p),
      'Approve',
      'Reject',
      'Show',
    );
    const decided = choice === 'Approve' || choice === 'Reject';
    try {
      if (choice === 'Approve') await this.decide(p, 'approve');
      else if (choice === 'Reject') await this.decide(p, 'reject');
      else if (choice === 'Show') await vscode.commands.executeCommand('loopx.goals.focus');
    } catch (e) {
      reportFailure(this.log, `gate ${p.gate.id} of goal ${p.ref.goalId}`, e);
    } finally {
      // Only a decision changes what the views show: Show or a dismissal does not.
      if (decided) this.workspaces.refreshNow();
    }
  }
}
