/**
 * Asks the person as soon as a gate becomes pending, whoever requested it (an agent in a
 * terminal, the CLI, the MCP server): one notification per pending gate, in LoopX's own words,
 * naming the gate, the goal, the folder (when the window has several) and who asked through
 * which channel. The requester's reason is not in it: a notification renders
 * `[label](command:...)` as a link that runs a command, so text an agent wrote goes only into the
 * decision's modal, as plain text, with the full commands.
 *
 * VS Code cannot take back a message it showed, but it closes a progress notification when its
 * task ends: so each gate's notification is one, ended as soon as the gate is no longer pending,
 * whoever decided it (this window, another one, the CLI, a teammate's clone after a pull). Its
 * actions are links in the text (a progress notification has no buttons), each carrying a token
 * only this notification knows: a click on one is the person's, and other code calling the
 * command cannot pass for it. It is cancellable: its Cancel button (its one button, which also
 * keeps it expanded, so the links show) only closes it; the gate stays in the tree, the view's
 * badge and the status bar.
 */
import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import type { Gate, GateDecision } from '../../core/index';
import { describeActor, LoopxError, plainText } from '../../core/index';
import { reportFailure } from '../commands/shared';
import { Disposable } from '../common/disposable';
import type { GoalRef, LoopxWorkspaces } from '../workspace/workspaces';
import { inFolderWords } from '../workspace/workspaces';

export interface PendingGate {
  ref: GoalRef;
  goalTitle: string;
  gate: Gate;
}

/** The command a notification's links run: `[token, answer]`, never contributed to the palette. */
export const NOTIFICATION_ANSWER_COMMAND = 'loopx.gateNotification.answer';
type Answer = GateDecision | 'show';
const ANSWERS: readonly unknown[] = ['approve', 'reject', 'show'];

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

/** One request of one gate: a gate asked again after a decision is a new request. */
const requestKey = (p: PendingGate) =>
  `${p.ref.folder.uri.fsPath}|${p.ref.goalId}|${p.gate.id}|${p.gate.requestedAt}`;

function answerLink(label: string, token: string, answer: Answer): string {
  return `[${label}](command:${NOTIFICATION_ANSWER_COMMAND}?${encodeURIComponent(JSON.stringify([token, answer]))})`;
}

/**
 * The notification's text: LoopX's words, store text only as plain words (see the file comment),
 * and the three links, the only ones in it.
 */
export function notificationText(p: PendingGate, token: string, trusted = true): string {
  const asked =
    `Gate ${p.gate.id} of goal "${plainText(p.goalTitle)}"${inFolderWords(p.ref.folder)} waits for your decision, ` +
    `asked by ${describeActor({ ...p.gate.requestedBy, id: plainText(p.gate.requestedBy.id, 60) })}. `;
  // Restricted Mode decides nothing: no Approve or Reject to be refused when clicked.
  if (!trusted)
    return (
      asked +
      'This workspace is in Restricted Mode: trust it (Manage Workspace Trust) to decide. ' +
      answerLink('Show in LoopX', token, 'show')
    );
  return (
    asked +
    `${answerLink('Approve', token, 'approve')} or ${answerLink('Reject', token, 'reject')} shows what it guards before you decide; ` +
    `Cancel only closes this notification. ${answerLink('Show in LoopX', token, 'show')}`
  );
}

interface Shown {
  p: PendingGate;
  token: string;
  end: () => void;
}

export class GateNotifier extends Disposable {
  /** Requests already announced (each once, even after the person hid its notification). */
  private readonly seen = new Set<string>();
  /** Open notifications by request, and by the token their links carry. */
  private readonly open = new Map<string, Shown>();
  private readonly byToken = new Map<string, Shown>();

  constructor(
    private readonly workspaces: LoopxWorkspaces,
    private readonly log: vscode.LogOutputChannel,
    /** Asks the person in the decision's modal and records their answer there. */
    private readonly decide: (p: PendingGate, decision: GateDecision) => Promise<void>,
  ) {
    super();
    this._register(workspaces.onDidChange(() => this.scan()));
    this._register(
      vscode.commands.registerCommand(NOTIFICATION_ANSWER_COMMAND, (token: unknown, answer: unknown) =>
        this.answer(token, answer),
      ),
    );
    this._register({ dispose: () => [...this.open.values()].forEach((s) => this.end(s)) });
  }

  /**
   * Ends the notification of every gate no longer pending, then announces each gate that became
   * pending since the last scan.
   */
  scan(): void {
    const pending = pendingGates(this.workspaces);
    const now = new Set(pending.map(requestKey));
    for (const [key, s] of this.open) if (!now.has(key)) this.end(s);
    const level = vscode.workspace.getConfiguration('loopx').get<string>('notifications', 'all');
    const trusted = vscode.workspace.isTrusted;
    for (const p of pending) {
      const key = requestKey(p);
      // Once the workspace is trusted, a gate announced in Restricted Mode (with no way to decide
      // it) is announced again, with Approve and Reject.
      const announced = trusted ? key : `${key}|restricted`;
      if (this.seen.has(announced)) continue;
      this.seen.add(announced);
      const earlier = this.open.get(key);
      if (earlier) this.end(earlier);
      this.log.info(
        `gate ${p.gate.id} of goal ${p.ref.goalId} is pending (requested by ${plainText(describeActor(p.gate.requestedBy), 100)})`,
      );
      if (level !== 'off') this.show(key, p, trusted);
    }
  }

  private show(key: string, p: PendingGate, trusted: boolean): void {
    const token = randomBytes(16).toString('hex');
    void vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: notificationText(p, token, trusted),
        cancellable: true,
      },
      (_progress, cancel) =>
        new Promise<void>((resolve) => {
          const s: Shown = { p, token, end: resolve };
          this.open.set(key, s);
          this.byToken.set(token, s);
          cancel.onCancellationRequested(() => this.end(s));
        }),
    );
  }

  private end(s: Shown): void {
    this.open.delete(requestKey(s.p));
    this.byToken.delete(s.token);
    s.end();
  }

  /**
   * A click on a link of an open notification. The decision looks at the gate before it asks
   * anything: decided or gone meanwhile, it is said so, and this notification ends.
   */
  private async answer(token: unknown, answer: unknown): Promise<void> {
    const s = typeof token === 'string' ? this.byToken.get(token) : undefined;
    if (!s || !ANSWERS.includes(answer)) {
      this.log.warn(`a gate notification answer with an unknown token or answer was ignored`);
      return;
    }
    const { p } = s;
    const where = `gate ${p.gate.id} of goal ${p.ref.goalId}`;
    try {
      if (answer === 'show') {
        await vscode.commands.executeCommand('loopx.goals.focus');
        return;
      }
      await this.decide(p, answer as GateDecision);
    } catch (e) {
      // Decided or gone meanwhile (decideGate looks before it asks): said, and this one ends.
      if (e instanceof LoopxError && (e.reason === 'gate_not_pending' || e.kind === 'not_found')) {
        this.end(s);
        void vscode.window.showInformationMessage(`${e.message}.`);
      } else reportFailure(this.log, where, e);
    } finally {
      this.workspaces.refreshNow();
    }
  }
}
