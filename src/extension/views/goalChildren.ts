/**
 * What the Goals tree shows under a goal: its groups (Todos, Gates, Evidence, Runs, and Refused
 * once a hook refused an agent something) and their items. What each row says is in rowText.ts
 * and recordRowText.ts; store text reaches a tooltip only through markdown.ts.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { Denial, Evidence, Gate, GoalState, Run, Todo } from '../../core/index';
import { latestDenials, TRUST_DENY_CODES } from '../../core/index';
import { appendCode, appendPlain, tooltip } from './markdown';
import { denialRow, evidenceRow, runRow } from './recordRowText';
import type { GroupName, RowText, TipBlock } from './rowText';
import { gateRow, groupRow, todoRow } from './rowText';
import type { GoalRef } from '../workspace/workspaces';

export type { GroupName } from './rowText';

export type GoalChild =
  | { kind: 'group'; ref: GoalRef; group: GroupName; count: number }
  | { kind: 'todo'; ref: GoalRef; todo: Todo }
  | { kind: 'gate'; ref: GoalRef; gate: Gate }
  | { kind: 'evidence'; ref: GoalRef; evidence: Evidence }
  /** `writer`: the clone it ran on, named when the goal's runs come from more than one. */
  | { kind: 'run'; ref: GoalRef; run: Run; rewards: string; writer?: string }
  | { kind: 'denial'; ref: GoalRef; denial: Denial };

const TODO_ICON: Record<string, [string, string?]> = {
  open: ['circle-large-outline'],
  claimed: ['loading~spin', 'charts.blue'],
  done: ['pass', 'testing.iconPassed'],
  cancelled: ['circle-slash', 'disabledForeground'],
};
export const GATE_ICON: Record<string, [string, string?]> = {
  pending: ['shield', 'charts.orange'],
  approved: ['verified-filled', 'testing.iconPassed'],
  rejected: ['error', 'testing.iconFailed'],
  expired: ['watch', 'disabledForeground'],
};
const GROUP_ICON: Record<GroupName, string> = {
  todos: 'checklist',
  gates: 'shield',
  evidence: 'file-text',
  runs: 'history',
  denied: 'circle-slash',
};

export const icon = ([id, color]: [string, string?]) =>
  new vscode.ThemeIcon(id, color ? new vscode.ThemeColor(color) : undefined);

/** A goal's groups; Refused only once there is something in it (most goals never have any). */
export function goalGroups(ref: GoalRef, g: GoalState): GoalChild[] {
  const refused = latestDenials(g).length;
  return [
    { kind: 'group', ref, group: 'todos', count: g.todos.length },
    { kind: 'group', ref, group: 'gates', count: g.gates.length },
    { kind: 'group', ref, group: 'evidence', count: g.evidence.length },
    { kind: 'group', ref, group: 'runs', count: g.runs.length },
    ...(refused ? [{ kind: 'group', ref, group: 'denied', count: refused } as const] : []),
  ];
}

export function groupChildren(group: GroupName, ref: GoalRef, g: GoalState): GoalChild[] {
  switch (group) {
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
    case 'denied':
      return latestDenials(g).map((denial) => ({ kind: 'denial', ref, denial }));
  }
}

/** A tooltip made of `blocks` (rowText.ts): plain paragraphs and code blocks, store text as data. */
export function tooltipOf(blocks: TipBlock[]): vscode.MarkdownString {
  const md = tooltip();
  blocks.forEach((b, i) => {
    if ('code' in b) {
      appendCode(md, b.code, b.language);
      return;
    }
    if (i > 0) md.appendMarkdown('\n\n');
    if (b.bold) {
      md.appendMarkdown('**');
      appendPlain(md, b.bold);
      md.appendMarkdown('**');
      if (b.text) md.appendMarkdown(' ');
    }
    if (b.text) appendPlain(md, b.text);
  });
  return md;
}

/** A tree item with a row's label, description and tooltip. */
export function rowItem(row: RowText, state: vscode.TreeItemCollapsibleState): vscode.TreeItem {
  const item = new vscode.TreeItem(row.label, state);
  item.description = row.description;
  if (row.tooltip.length) item.tooltip = tooltipOf(row.tooltip);
  return item;
}

const OUTCOME_ICON: Record<string, [string, string?]> = {
  succeeded: ['pass', 'testing.iconPassed'],
  abandoned: ['debug-disconnect'],
};

/** The tree item of a goal's child; `g` is the goal's state (an Error when it cannot be read). */
export function goalChildItem(node: GoalChild, g: GoalState | Error): vscode.TreeItem {
  const C = vscode.TreeItemCollapsibleState;
  const base = `${node.ref.folder.uri.fsPath}/${node.ref.goalId}`;
  const now = Date.now();
  if (node.kind === 'group') {
    const item = rowItem(groupRow(node.group, node.count, g), node.count ? C.Collapsed : C.None);
    item.id = `${base}/${node.group}`;
    item.iconPath = new vscode.ThemeIcon(GROUP_ICON[node.group]);
    item.contextValue = `group.${node.group}`;
    // Gates waiting for a person are shown without a click. VS Code keeps an item's expansion by
    // its id, so the group has another id while something in it waits: it opens when a gate starts
    // waiting, even if it was collapsed (or empty) before.
    if (node.group === 'gates' && !(g instanceof Error) && g.gates.some((x) => x.status === 'pending')) {
      item.collapsibleState = C.Expanded;
      item.id = `${base}/gates/waiting`;
    }
    return item;
  }
  if (node.kind === 'denial')
    return denialItem(node.denial, node.ref, `${base}/denied/${node.denial.eventId}`);
  // A record's row needs the goal's state (its todos, gates); an unreadable goal has no records.
  if (g instanceof Error) return new vscode.TreeItem(g.message, C.None);
  switch (node.kind) {
    case 'todo': {
      const t = node.todo;
      const item = rowItem(todoRow(t, g, now), C.None);
      item.id = `${base}/todo/${t.id}`;
      item.iconPath = icon(TODO_ICON[t.status] ?? ['circle-outline']);
      // `.command`: an agent's todo with a command is done by running it, so no inline Complete.
      item.contextValue = `todo.${t.status}.${t.owner}${t.action && t.owner === 'agent' ? '.command' : ''}`;
      return item;
    }
    case 'gate': {
      const gate = node.gate;
      const item = rowItem(gateRow(gate, g, now), C.None);
      item.id = `${base}/gate/${gate.id}`;
      item.iconPath = icon(GATE_ICON[gate.status] ?? ['shield']);
      item.contextValue = `gate.${gate.status}`;
      return item;
    }
    case 'evidence': {
      const e = node.evidence;
      const item = rowItem(evidenceRow(e, g, now), C.None);
      item.id = `${base}/evidence/${e.id}`;
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
      return item;
    }
    case 'run': {
      const r = node.run;
      const item = rowItem(runRow(r, node.rewards, node.writer, now), C.None);
      item.id = `${base}/run/${r.id}`;
      item.iconPath = icon(
        r.outcome === undefined
          ? ['sync~spin', 'charts.blue']
          : (OUTCOME_ICON[r.outcome] ?? ['warning', 'charts.yellow']),
      );
      item.contextValue = `run.${r.outcome ?? 'open'}`;
      return item;
    }
  }
}

/** A refusal's row; a path inside the workspace is shown relative to it. */
function denialItem(d: Denial, ref: GoalRef, id: string): vscode.TreeItem {
  const rel = d.path === undefined ? undefined : path.relative(ref.folder.uri.fsPath, d.path);
  const shownPath = rel !== undefined && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : d.path;
  const item = rowItem(denialRow(d, shownPath, Date.now()), vscode.TreeItemCollapsibleState.None);
  item.id = id;
  item.iconPath = icon(
    !d.enforced
      ? ['eye', 'charts.yellow']
      : TRUST_DENY_CODES.includes(d.code)
        ? ['shield', 'testing.iconFailed']
        : ['circle-slash', 'testing.iconFailed'],
  );
  item.contextValue = `denial.${d.enforced ? 'enforced' : 'observed'}`;
  return item;
}
