/**
 * The status bar item: gates waiting for the person, the active goal's quota left, and how many
 * lanes of `loopx drive` are in a turn now (its tooltip names the lanes that wait for a person).
 */
import * as vscode from 'vscode';
import { oneLine, plural } from '../../core/index';
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
    const lanes = this.lanes();
    if (lanes.working) parts.push(`$(sync~spin) ${plural(lanes.working, 'agent')} working`);
    this.item.text = `LoopX ${parts.join(' · ')}`;
    this.item.tooltip = [
      `${pending} gate${pending === 1 ? '' : 's'} waiting for approval`,
      ...(focus ? [`${focus.entry.title}: ${quota}`] : []),
      ...(lanes.working ? [`${plural(lanes.working, 'lane')} of loopx drive in a turn`] : []),
      ...(lanes.needs.length ? ['Lanes waiting for you:', ...lanes.needs.map((l) => `  ${l}`)] : []),
      'Click to open the LoopX view',
    ].join('\n');
    this.item.backgroundColor = pending
      ? new vscode.ThemeColor('statusBarItem.warningBackground')
      : undefined;
    this.item.show();
  }

  /** Lanes in a turn now, and `name: why` of each that only a person can move on. */
  private lanes(): { working: number; needs: string[] } {
    let working = 0;
    const needs: string[] = [];
    for (const f of this.workspaces.folders()) {
      const doc = this.workspaces.driveStatus(f);
      if (!doc || doc instanceof Error) continue;
      // A lane's file says `working` after its driver died; only a running driver's count.
      if (doc.driver.running) working += doc.working;
      for (const l of doc.lanes)
        if (l.needs_person) needs.push(`${l.name}: ${oneLine(l.why ?? 'it waits for a person', 120)}`);
    }
    return { working, needs };
  }

  /** The item's tooltip (for tests). */
  get tooltip(): string {
    return typeof this.item.tooltip === 'string' ? this.item.tooltip : '';
  }

  get text(): string {
    return this.item.text;
  }
}
