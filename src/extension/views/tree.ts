/**
 * The Goals tree: folder (multi-root) -> goal -> Todos / Gates / Evidence / Runs (/ Refused) ->
 * items. What is under a goal is in goalChildren.ts.
 */
import * as vscode from 'vscode';
import type { GoalState, IndexEntry } from '../../core/index';
import { describeUnsignedPolicy, quotaUse } from '../../core/index';
import { Disposable } from '../common/disposable';
import type { GoalChild } from './goalChildren';
import { goalChildItem, goalGroups, groupChildren, icon } from './goalChildren';
import { appendPlain, tooltip } from './markdown';
import type { GoalRef, LoopxFolder, LoopxWorkspaces } from '../workspace/workspaces';

export type Node =
  | { kind: 'folder'; folder: LoopxFolder }
  | { kind: 'goal'; ref: GoalRef; entry: IndexEntry }
  | GoalChild
  | { kind: 'error'; message: string }
  | { kind: 'policy'; folder: LoopxFolder; unsigned: string[]; message: string };

const STATUS_ICON: Record<string, [string, string?]> = {
  active: ['play-circle', 'charts.blue'],
  paused: ['debug-pause', 'charts.yellow'],
  completed: ['pass-filled', 'testing.iconPassed'],
  closed: ['archive'],
  cancelled: ['circle-slash'],
};

export class GoalsTreeProvider extends Disposable implements vscode.TreeDataProvider<Node> {
  private readonly changed = this._register(new vscode.EventEmitter<Node | undefined>());
  readonly onDidChangeTreeData = this.changed.event;
  /** Goal states loaded for expanded goals during one refresh; cleared on every change. */
  private loaded = new Map<string, GoalState | Error>();

  constructor(private readonly workspaces: LoopxWorkspaces) {
    super();
    this._register(workspaces.onDidChange(() => this.refresh()));
  }

  refresh(): void {
    this.loaded.clear();
    this.changed.fire(undefined);
  }

  private goal(ref: GoalRef): GoalState | Error {
    const key = `${ref.folder.uri.fsPath}\0${ref.goalId}`;
    let g = this.loaded.get(key);
    if (!g) {
      try {
        g = ref.store.load(ref.goalId).state;
      } catch (e) {
        g = e as Error;
      }
      this.loaded.set(key, g);
    }
    return g;
  }

  getChildren(node?: Node): Node[] {
    if (!node) {
      const folders = this.workspaces.folders();
      if (folders.length > 1) return folders.map((folder) => ({ kind: 'folder', folder }));
      return this.goalNodes(folders[0]);
    }
    switch (node.kind) {
      case 'folder':
        return this.goalNodes(node.folder);
      case 'goal': {
        const g = this.goal(node.ref);
        if (g instanceof Error) return [{ kind: 'error', message: g.message }];
        return goalGroups(node.ref, g);
      }
      case 'group': {
        const g = this.goal(node.ref);
        if (g instanceof Error) return [{ kind: 'error', message: g.message }];
        return groupChildren(node.group, node.ref, g);
      }
      default:
        return [];
    }
  }

  private goalNodes(folder: LoopxFolder | undefined): Node[] {
    if (!folder) return [];
    const { goals, errors } = folder.store.listGoals();
    return [
      ...this.policyNodes(folder),
      ...goals.map((entry): Node => ({
        kind: 'goal',
        ref: { store: folder.store, goalId: entry.id, folder: folder.folder },
        entry,
      })),
      ...errors.map((e): Node => ({ kind: 'error', message: `${e.goalId}: ${e.message}` })),
    ];
  }

  /** An edit of policy.json that waits for a person's signature, shown above the goals. */
  private policyNodes(folder: LoopxFolder): Node[] {
    const v = this.workspaces.policyView(folder);
    if (v instanceof Error) return [{ kind: 'error', message: v.message }];
    const message = describeUnsignedPolicy(v);
    return message ? [{ kind: 'policy', folder, unsigned: v.unsigned, message }] : [];
  }

  getTreeItem(node: Node): vscode.TreeItem {
    const C = vscode.TreeItemCollapsibleState;
    switch (node.kind) {
      case 'folder': {
        const item = new vscode.TreeItem(node.folder.folder.name, C.Expanded);
        item.iconPath = new vscode.ThemeIcon('root-folder');
        item.contextValue = 'folder';
        return item;
      }
      case 'goal': {
        const e = node.entry;
        const item = new vscode.TreeItem(e.title, C.Collapsed);
        item.id = `${node.ref.folder.uri.fsPath}/${e.id}`;
        const g = this.goal(node.ref);
        const quota = g instanceof Error ? '' : quotaBadge(g);
        item.description = [
          e.status,
          `${e.todosDone}/${e.todosTotal}`,
          e.pendingGates ? `${e.pendingGates} gate${e.pendingGates > 1 ? 's' : ''} pending` : '',
          quota,
        ]
          .filter(Boolean)
          .join(' · ');
        item.iconPath = icon(STATUS_ICON[e.status] ?? ['circle-outline']);
        item.contextValue = `goal.${e.status}`;
        const md = tooltip();
        md.appendMarkdown('**');
        appendPlain(md, e.title);
        md.appendMarkdown('** · ');
        appendPlain(md, e.id);
        md.appendMarkdown('\n\n');
        appendPlain(md, g instanceof Error ? g.message : g.objective);
        item.tooltip = md;
        return item;
      }
      case 'group':
      case 'todo':
      case 'gate':
      case 'evidence':
      case 'run':
      case 'denial':
        return goalChildItem(node, this.goal(node.ref));
      case 'policy': {
        const item = new vscode.TreeItem(`Policy: unsigned changes (${node.unsigned.join(', ')})`, C.None);
        item.iconPath = new vscode.ThemeIcon(
          'shield',
          new vscode.ThemeColor('problemsWarningIcon.foreground'),
        );
        item.description = 'no effect until signed';
        item.tooltip = node.message;
        item.contextValue = 'policy.unsigned';
        item.command = {
          command: 'loopx.signPolicy',
          title: 'Review and Sign',
          arguments: [{ folder: node.folder.folder.uri.fsPath }],
        };
        return item;
      }
      case 'error': {
        const item = new vscode.TreeItem(node.message.slice(0, 120), C.None);
        item.iconPath = new vscode.ThemeIcon(
          'warning',
          new vscode.ThemeColor('problemsWarningIcon.foreground'),
        );
        item.tooltip = node.message;
        item.contextValue = 'error';
        return item;
      }
    }
  }
}

export function quotaBadge(g: GoalState): string {
  const use = quotaUse(g, new Date());
  const t = use.turns ?? use.costUsd ?? use.tokens ?? use.wallSeconds;
  if (!t) return '';
  const k = use.turns ? 'turns' : use.costUsd ? '$' : use.tokens ? 'tokens' : 's';
  return `${t.left} ${k} left`;
}
