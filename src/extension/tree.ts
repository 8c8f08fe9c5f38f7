/** The Goals tree: folder (multi-root) -> goal -> Todos / Gates / Evidence / Runs -> items. */
import * as vscode from 'vscode';
import * as path from 'node:path';
import { describeActor, describeUnsignedPolicy, quotaUse } from '../core/index';
import type { GoalState, IndexEntry, Todo, Gate, Evidence, Run } from '../core/index';
import { Disposable } from './disposable';
import type { GoalRef, LoopxWorkspaces, LoopxFolder } from './workspaces';

export type Node =
  | { kind: 'folder'; folder: LoopxFolder }
  | { kind: 'goal'; ref: GoalRef; entry: IndexEntry }
  | { kind: 'group'; ref: GoalRef; group: 'todos' | 'gates' | 'evidence' | 'runs'; count: number }
  | { kind: 'todo'; ref: GoalRef; todo: Todo }
  | { kind: 'gate'; ref: GoalRef; gate: Gate }
  | { kind: 'evidence'; ref: GoalRef; evidence: Evidence }
  /** `writer`: the clone it ran on, named when the goal's runs come from more than one. */
  | { kind: 'run'; ref: GoalRef; run: Run; rewards: string; writer?: string }
  | { kind: 'error'; message: string }
  | { kind: 'policy'; folder: LoopxFolder; unsigned: string[]; message: string };

const STATUS_ICON: Record<string, [string, string?]> = {
  active: ['play-circle', 'charts.blue'],
  paused: ['debug-pause', 'charts.yellow'],
  completed: ['pass-filled', 'testing.iconPassed'],
  closed: ['archive'],
  cancelled: ['circle-slash'],
};
const TODO_ICON: Record<string, [string, string?]> = {
  open: ['circle-large-outline'],
  claimed: ['loading~spin', 'charts.blue'],
  done: ['pass', 'testing.iconPassed'],
  cancelled: ['circle-slash', 'disabledForeground'],
};
const GATE_ICON: Record<string, [string, string?]> = {
  pending: ['shield', 'charts.orange'],
  approved: ['verified-filled', 'testing.iconPassed'],
  rejected: ['error', 'testing.iconFailed'],
  expired: ['watch', 'disabledForeground'],
};

const icon = ([id, color]: [string, string?]) =>
  new vscode.ThemeIcon(id, color ? new vscode.ThemeColor(color) : undefined);

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
        return [
          { kind: 'group', ref: node.ref, group: 'todos', count: g.todos.length },
          { kind: 'group', ref: node.ref, group: 'gates', count: g.gates.length },
          { kind: 'group', ref: node.ref, group: 'evidence', count: g.evidence.length },
          { kind: 'group', ref: node.ref, group: 'runs', count: g.runs.length },
        ];
      }
      case 'group': {
        const g = this.goal(node.ref);
        if (g instanceof Error) return [{ kind: 'error', message: g.message }];
        const ref = node.ref;
        switch (node.group) {
          case 'todos':
            return g.todos.map((todo) => ({ kind: 'todo', ref, todo }));
          case 'gates':
            return [...g.gates]
              .sort((a, b) => Number(b.status === 'pending') - Number(a.status === 'pending'))
              .map((gate) => ({ kind: 'gate', ref, gate }));
          case 'evidence':
            return [...g.evidence].reverse().map((evidence) => ({ kind: 'evidence', ref, evidence }));
          case 'runs': {
            // In a team, say where each run ran; alone, that is noise.
            const team = new Set(g.runs.map((r) => r.writer)).size > 1;
            const names = team ? ref.store.writerNames() : new Map<string, string>();
            return [...g.runs].reverse().map((run) => ({
              kind: 'run',
              ref,
              run,
              rewards: g.rewards
                .filter((w) => w.runId === run.id)
                .map((w) => `★ ${w.score}`)
                .join(' '),
              writer: team && run.writer ? `on ${names.get(run.writer) ?? run.writer}` : undefined,
            }));
          }
        }
        return [];
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
      case 'group': {
        const labels = { todos: 'Todos', gates: 'Gates', evidence: 'Evidence', runs: 'Runs' } as const;
        const icons = {
          todos: 'checklist',
          gates: 'shield',
          evidence: 'file-text',
          runs: 'history',
        } as const;
        const item = new vscode.TreeItem(labels[node.group], node.count ? C.Collapsed : C.None);
        item.id = `${node.ref.folder.uri.fsPath}/${node.ref.goalId}/${node.group}`;
        item.description = String(node.count);
        item.iconPath = new vscode.ThemeIcon(icons[node.group]);
        item.contextValue = `group.${node.group}`;
        if (node.group === 'gates') {
          const g = this.goal(node.ref);
          const pending = g instanceof Error ? 0 : g.gates.filter((x) => x.status === 'pending').length;
          if (pending) {
            item.description = `${node.count} · ${pending} pending`;
            item.collapsibleState = C.Expanded;
          }
        }
        return item;
      }
      case 'todo': {
        const t = node.todo;
        const item = new vscode.TreeItem(t.title, C.None);
        item.id = `${node.ref.folder.uri.fsPath}/${node.ref.goalId}/todo/${t.id}`;
        item.description = [
          t.priority,
          t.owner,
          t.status === 'claimed' ? `claimed by ${t.claimedBy}` : t.status,
          t.gate ? `gate ${t.gate}` : '',
        ]
          .filter(Boolean)
          .join(' · ');
        item.iconPath = icon(TODO_ICON[t.status] ?? ['circle-outline']);
        // `.command`: an agent's todo with a command is done by running it, so no inline Complete.
        item.contextValue = `todo.${t.status}.${t.owner}${t.action && t.owner === 'agent' ? '.command' : ''}`;
        const md = tooltip();
        appendPlain(md, `${t.id} · ${t.title}`);
        md.appendMarkdown('\n\n');
        if (t.action) appendCode(md, t.action, 'sh');
        else md.appendMarkdown('(judgment todo: no command)');
        if (t.note) {
          md.appendMarkdown('\n\n');
          appendPlain(md, t.note);
        }
        item.tooltip = md;
        return item;
      }
      case 'gate': {
        const g = node.gate;
        const item = new vscode.TreeItem(g.title, C.None);
        item.id = `${node.ref.folder.uri.fsPath}/${node.ref.goalId}/gate/${g.id}`;
        item.description = [g.status, g.decidedBy ? `by ${g.decidedBy.id}` : '', g.signature ? 'signed' : '']
          .filter(Boolean)
          .join(' · ');
        item.iconPath = icon(GATE_ICON[g.status] ?? ['shield']);
        item.contextValue = `gate.${g.status}`;
        const md = tooltip();
        appendPlain(md, `Gate ${g.id}: ${g.reason || g.title}`);
        md.appendMarkdown('\n\n');
        appendPlain(md, `Requested by ${describeActor(g.requestedBy)} at ${g.requestedAt}`);
        if (g.decidedBy) {
          md.appendMarkdown('\n\n');
          appendPlain(
            md,
            `${g.status[0]!.toUpperCase()}${g.status.slice(1)} by ${describeActor(g.decidedBy)}${g.decidedAt ? ` at ${g.decidedAt}` : ''}${g.signature ? ' (signed)' : ''}${g.note ? `: ${g.note}` : ''}`,
          );
        }
        item.tooltip = md;
        return item;
      }
      case 'evidence': {
        const e = node.evidence;
        const item = new vscode.TreeItem(e.summary.split('\n')[0]!.slice(0, 80) || e.kind, C.None);
        item.id = `${node.ref.folder.uri.fsPath}/${node.ref.goalId}/evidence/${e.id}`;
        item.description = [e.kind, e.todoId ?? '', e.exitCode !== undefined ? `exit ${e.exitCode}` : '']
          .filter(Boolean)
          .join(' · ');
        item.iconPath = icon(
          e.exitCode === undefined
            ? ['note']
            : e.exitCode === 0
              ? ['pass', 'testing.iconPassed']
              : ['error', 'testing.iconFailed'],
        );
        item.contextValue = e.artifact ? 'evidence.artifact' : 'evidence';
        if (e.artifact) {
          item.command = { command: 'loopx.openEvidence', title: 'Open Evidence', arguments: [node] };
          item.resourceUri = vscode.Uri.file(
            path.join(node.ref.store.goalDir(node.ref.goalId), e.artifact.path),
          );
        }
        const md = tooltip();
        appendPlain(md, `${e.id} · ${e.kind} by ${describeActor(e.by)} at ${e.at}`);
        if (e.command) appendCode(md, e.command, 'sh');
        appendCode(md, e.summary);
        item.tooltip = md;
        return item;
      }
      case 'run': {
        const r = node.run;
        const item = new vscode.TreeItem(r.id, C.None);
        item.id = `${node.ref.folder.uri.fsPath}/${node.ref.goalId}/run/${r.id}`;
        item.description = [r.agent, node.writer, r.outcome ?? 'open', node.rewards]
          .filter(Boolean)
          .join(' · ');
        item.iconPath = icon(
          r.outcome === undefined
            ? ['sync~spin', 'charts.blue']
            : r.outcome === 'succeeded'
              ? ['pass', 'testing.iconPassed']
              : r.outcome === 'abandoned'
                ? ['debug-disconnect']
                : ['warning', 'charts.yellow'],
        );
        item.contextValue = `run.${r.outcome ?? 'open'}`;
        item.tooltip = `started ${r.startedAt}${r.endedAt ? `, ended ${r.endedAt}` : ''}\nspend: ${r.spend.turns} turn, ${r.spend.tokens} tokens, $${r.spend.costUsd}, ${r.spend.wallSeconds} s`;
        return item;
      }
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

/**
 * A tooltip for store text: untrusted (no command links), no HTML, no theme icons. Store text only
 * goes in through `appendPlain` and `appendCode`, never into Markdown source directly: a title,
 * reason or command output could otherwise close a code block and show links or load images.
 */
function tooltip(): vscode.MarkdownString {
  const md = new vscode.MarkdownString();
  md.isTrusted = false;
  md.supportHtml = false;
  md.supportThemeIcons = false;
  return md;
}

/**
 * Store text as plain text: `appendText` escapes Markdown syntax; `<` and `&` (which it leaves, so
 * `<https://…>` would be a link and `&#91;` a bracket) are written as entities.
 */
function appendPlain(md: vscode.MarkdownString, s: string): vscode.MarkdownString {
  for (const part of s.split(/([<&])/)) {
    if (part === '<') md.appendMarkdown('&lt;');
    else if (part === '&') md.appendMarkdown('&amp;');
    else if (part) md.appendText(part);
  }
  return md;
}

/**
 * Text shown verbatim in a fenced code block (a command, a command's output). `appendCodeblock`
 * makes its fence longer than every run of backticks that starts a line; a closing fence may also
 * be indented by up to three spaces (CommonMark), which it does not count, so text with such a
 * line gets a fence longer than those too.
 */
function appendCode(md: vscode.MarkdownString, code: string, language = ''): vscode.MarkdownString {
  if (!/^ {1,3}`{3,}/m.test(code)) return md.appendCodeblock(code, language);
  const longest = Math.max(...(code.match(/^ {0,3}`+/gm) ?? []).map((r) => r.trimStart().length));
  const fence = '`'.repeat(Math.max(3, longest + 1));
  return md.appendMarkdown(`\n${fence}${language}\n${code}\n${fence}\n`);
}

/** Markdown syntax escaped, for text inside Markdown built elsewhere (chat). */
export function escapeMd(s: string): string {
  return s.replace(/[\\`*_{}[\]()#+\-.!<>|]/g, '\\$&');
}
