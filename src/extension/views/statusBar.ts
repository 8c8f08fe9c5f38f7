/** The status bar item: gates waiting for the person, and the active goal's quota left. */
import * as vscode from 'vscode';
import { Disposable } from '../common/disposable';
import { quotaLeftText } from './rowText';
import type { LoopxWorkspaces } from '../workspace/workspaces';

export class LoopxStatusBar extends Disposable {
  private readonly item = this._register(
    vscode.window.createStatusBarItem('loopx.status', vscode.StatusBarAlignment.Left, 50),
  );
  /** The goal the person last selected in the tree. */
  focusedGoal: string | undefined;

  constructor(private readonly workspaces: LoopxWorkspaces) {
    super();
    this.item.name = 'LoopX';
    this.item.command = 'loopx.goals.focus';
    this._register(workspaces.onDidChange(() => this.update()));
    // The first update reads the store: left to the caller, after activation has returned.
  }

  update(): void {
    if (!this.workspaces.hasWorkspace) {
      this.item.hide();
      return;
    }
    const goals = this.workspaces.goals();
    const pending = goals.reduce(
      (n, g) =>
        n + (g.entry.status === 'closed' || g.entry.status === 'cancelled' ? 0 : g.entry.pendingGates),
      0,
    );
    const active = goals.filter((g) => g.entry.status === 'active');
    // The goal the person picked in the tree; else one that waits for them; else the newest.
    const focus =
      goals.find((g) => g.entry.id === this.focusedGoal) ??
      active.find((g) => g.entry.pendingGates > 0) ??
      active[active.length - 1];
    let quota = '';
    if (focus) {
      try {
        quota = quotaLeftText(focus.ref.store.load(focus.ref.goalId).state, Date.now());
      } catch {
        quota = 'unreadable';
      }
    }
    const parts = [
      `$(loopx-shield) ${pending} gate${pending === 1 ? '' : 's'}`.replace(
        '$(loopx-shield)',
        pending ? '$(shield)' : '$(pass)',
      ),
    ];
    if (quota) parts.push(quota);
    this.item.text = `LoopX ${parts.join(' · ')}`;
    this.item.tooltip = `${pending} gate${pending === 1 ? '' : 's'} waiting for approval${focus ? `\n${focus.entry.title}: ${quota}` : ''}\nClick to open the LoopX view`;
    this.item.backgroundColor = pending
      ? new vscode.ThemeColor('statusBarItem.warningBackground')
      : undefined;
    this.item.show();
  }

  get text(): string {
    return this.item.text;
  }
}
