/**
 * The Goals tree: folder (multi-root) -> goal -> Todos / Gates / Evidence / Runs (/ Refused) ->
 * items, and above them, while some folder has lanes, Agents -> a row per lane. What is under a
 * goal is in goalChildren.ts; the Agents node is agentsTree.ts.
 */
import * as vscode from 'vscode';
import type { GoalState, IndexEntry, InvalidPolicyStatus } from '../../core/index';
import { describeUnsignedPolicy, invalidPolicyStatus, LoopxError } from '../../core/index';
import { Disposable } from '../common/disposable';
import type { AgentsNode, LaneNode } from './agentsTree';
import { agentsItem, agentsNode, laneItem } from './agentsTree';
import type { GoalChild } from './goalChildren';
import { GATE_ICON, goalChildItem, goalGroups, groupChildren, icon, rowItem } from './goalChildren';
import { invalidPolicyRow, unsignedPolicyRow } from './recordRowText';
import { goalRow } from './rowText';
import type { WalkthroughState } from './walkthroughContext';
import { walkthroughState } from './walkthroughContext';
import type { GoalRef, LoopxFolder, LoopxWorkspaces } from '../workspace/workspaces';

export type Node =
  | { kind: 'folder'; folder: LoopxFolder }
  | { kind: 'goal'; ref: GoalRef; entry: IndexEntry }
  | GoalChild
  | AgentsNode
  | LaneNode
  | { kind: 'error'; message: string }
  | { kind: 'policy'; folder: LoopxFolder; unsigned: string[]; message: string }
  /** policy.json does not parse: no agent gets a contract until a person fixes it. */
  | { kind: 'policyInvalid'; folder: LoopxFolder; status: InvalidPolicyStatus };

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
  /** The Agents node of the last look at the root (a lane's parent, for `reveal`). */
  private agents: AgentsNode | undefined;

  constructor(private readonly workspaces: LoopxWorkspaces) {
    super();
    this._register(workspaces.onDidChange(() => this.refresh()));
  }

  refresh(): void {
    this.loaded.clear();
    this.changed.fire(undefined);
  }

  private readonly walkthroughSeen = new Set<keyof WalkthroughState>();
  /**
   * The context keys set from what the view shows: the welcome view's `loopx.hasWorkspace` and the
   * Get Started walkthrough's steps (walkthroughContext.ts).
   */
  contextKeys(): WalkthroughState {
    return walkthroughState(this.workspaces, this.walkthroughSeen);
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

  /** The Agents node as the tree shows it now (undefined: no folder has lanes). */
  agentsNode(): AgentsNode | undefined {
    this.agents = agentsNode(this.workspaces);
    return this.agents;
  }

  getParent(node: Node): Node | undefined {
    // Only the Agents node and its lanes are revealed (Show Agents); the root has no parent.
    return node.kind === 'lane' ? this.agents : undefined;
  }

  getChildren(node?: Node): Node[] {
    if (!node) {
      const folders = this.workspaces.folders();
      const agents = this.agentsNode();
      if (folders.length > 1)
        return [...(agents ? [agents] : []), ...folders.map((folder): Node => ({ kind: 'folder', folder }))];
      return this.goalNodes(folders[0], agents);
    }
    switch (node.kind) {
      case 'agents':
        return node.lanes;
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

  private goalNodes(folder: LoopxFolder | undefined, agents?: AgentsNode): Node[] {
    if (!folder) return [];
    const { goals, errors } = folder.store.listGoals();
    return [
      ...this.policyNodes(folder),
      ...(agents ? [agents] : []),
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
    if (v instanceof LoopxError)
      return [{ kind: 'policyInvalid', folder, status: invalidPolicyStatus(folder.store, v) }];
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
        const item = rowItem(goalRow(e, this.goal(node.ref), Date.now()), C.Collapsed);
        item.id = `${node.ref.folder.uri.fsPath}/${e.id}`;
        // An active goal whose gates wait for a person shows a pending gate's shield: an icon is
        // never cut, and a long title leaves the description little room.
        item.iconPath = icon(
          e.status === 'active' && e.pendingGates
            ? GATE_ICON.pending!
            : (STATUS_ICON[e.status] ?? ['circle-outline']),
        );
        item.contextValue = `goal.${e.status}`;
        return item;
      }
      case 'agents':
        return agentsItem(node);
      case 'lane':
        return laneItem(node);
      case 'group':
      case 'todo':
      case 'gate':
      case 'evidence':
      case 'run':
      case 'denial':
        return goalChildItem(node, this.goal(node.ref));
      case 'policy': {
        const item = rowItem(unsignedPolicyRow(node.unsigned, node.message), C.None);
        item.iconPath = new vscode.ThemeIcon(
          'shield',
          new vscode.ThemeColor('problemsWarningIcon.foreground'),
        );
        item.contextValue = 'policy.unsigned';
        item.command = {
          command: 'loopx.signPolicy',
          title: 'Review and Sign',
          arguments: [{ folder: node.folder.folder.uri.fsPath }],
        };
        return item;
      }
      case 'policyInvalid': {
        const { store } = node.folder;
        const item = rowItem(invalidPolicyRow(node.status), C.None);
        item.iconPath = new vscode.ThemeIcon('error', new vscode.ThemeColor('problemsErrorIcon.foreground'));
        item.contextValue = 'policy.invalid';
        // Fixing it is an edit by hand: the click opens the file where the JSON breaks.
        const line = Math.max(0, (node.status.error?.line ?? 1) - 1);
        item.command = {
          command: 'vscode.open',
          title: 'Open policy.json',
          arguments: [
            vscode.Uri.file(store.policyPath),
            { selection: new vscode.Range(line, 0, line, 0) } satisfies vscode.TextDocumentShowOptions,
          ],
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
