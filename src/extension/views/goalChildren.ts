/**
 * What the Goals tree shows under a goal: its groups (Todos, Gates, Evidence, Runs, and Refused
 * once a hook refused an agent something) and their items. Store text reaches a tooltip only
 * through markdown.ts.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { Denial, Evidence, Gate, GoalState, Run, Todo } from '../../core/index';
import { denialSubject, describeActor, latestDenials, TRUST_DENY_CODES } from '../../core/index';
import { appendCode, appendPlain, tooltip } from './markdown';
import type { GoalRef } from '../workspace/workspaces';

export type GroupName = 'todos' | 'gates' | 'evidence' | 'runs' | 'denied';

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
const GATE_ICON: Record<string, [string, string?]> = {
  pending: ['shield', 'charts.orange'],
  approved: ['verified-filled', 'testing.iconPassed'],
  rejected: ['error', 'testing.iconFailed'],
  expired: ['watch', 'disabledForeground'],
};
const GROUP_LABEL: Record<GroupName, string> = {
  todos: 'Todos',
  gates: 'Gates',
  evidence: 'Evidence',
  runs: 'Runs',
  denied: 'Refused',
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

/** The tree item of a goal's child; `g` is the goal's state (an Error when it cannot be read). */
export function goalChildItem(node: GoalChild, g: GoalState | Error): vscode.TreeItem {
  const C = vscode.TreeItemCollapsibleState;
  const base = `${node.ref.folder.uri.fsPath}/${node.ref.goalId}`;
  switch (node.kind) {
    case 'group': {
      const item = new vscode.TreeItem(GROUP_LABEL[node.group], node.count ? C.Collapsed : C.None);
      item.id = `${base}/${node.group}`;
      item.description = String(node.count);
      item.iconPath = new vscode.ThemeIcon(GROUP_ICON[node.group]);
      item.contextValue = `group.${node.group}`;
      if (node.group === 'gates') {
        const pending = g instanceof Error ? 0 : g.gates.filter((x) => x.status === 'pending').length;
        if (pending) {
          item.description = `${node.count} · ${pending} pending`;
          item.collapsibleState = C.Expanded;
        }
      }
      // The tree lists the latest; the goal's log (Show Event Log) has every one.
      const total = g instanceof Error ? 0 : (g.deniedTotal ?? 0);
      if (node.group === 'denied' && total > node.count)
        item.description = `${total} · the latest ${node.count}`;
      return item;
    }
    case 'todo': {
      const t = node.todo;
      const item = new vscode.TreeItem(t.title, C.None);
      item.id = `${base}/todo/${t.id}`;
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
      const gate = node.gate;
      const item = new vscode.TreeItem(gate.title, C.None);
      item.id = `${base}/gate/${gate.id}`;
      item.description = [
        gate.status,
        gate.decidedBy ? `by ${gate.decidedBy.id}` : '',
        gate.signature ? 'signed' : '',
      ]
        .filter(Boolean)
        .join(' · ');
      item.iconPath = icon(GATE_ICON[gate.status] ?? ['shield']);
      item.contextValue = `gate.${gate.status}`;
      const md = tooltip();
      appendPlain(md, `Gate ${gate.id}: ${gate.reason || gate.title}`);
      md.appendMarkdown('\n\n');
      appendPlain(md, `Requested by ${describeActor(gate.requestedBy)} at ${gate.requestedAt}`);
      if (gate.decidedBy) {
        md.appendMarkdown('\n\n');
        appendPlain(
          md,
          `${gate.status[0]!.toUpperCase()}${gate.status.slice(1)} by ${describeActor(gate.decidedBy)}${gate.decidedAt ? ` at ${gate.decidedAt}` : ''}${gate.signature ? ' (signed)' : ''}${gate.note ? `: ${gate.note}` : ''}`,
        );
      }
      item.tooltip = md;
      return item;
    }
    case 'evidence': {
      const e = node.evidence;
      const item = new vscode.TreeItem(e.summary.split('\n')[0]!.slice(0, 80) || e.kind, C.None);
      item.id = `${base}/evidence/${e.id}`;
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
      item.id = `${base}/run/${r.id}`;
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
      const u = r.usage;
      item.tooltip =
        `started ${r.startedAt}${r.endedAt ? `, ended ${r.endedAt}` : ''}\nspend: ${r.spend.turns} turn, ${r.spend.tokens} tokens, $${r.spend.costUsd}, ${r.spend.wallSeconds} s` +
        (u
          ? `\ntokens: ${u.input} input, ${u.output} output, ${u.cacheWrite} cache write, ${u.cacheRead} cache read`
          : '');
      return item;
    }
    case 'denial':
      return denialItem(node.denial, node.ref, `${base}/denied/${node.denial.eventId}`);
  }
}

/**
 * A refusal: what was tried as the label (a path inside the workspace relative to it), who and when
 * as the description, and the whole of it (command, path, the reason) in the tooltip, as data.
 */
function denialItem(d: Denial, ref: GoalRef, id: string): vscode.TreeItem {
  const rel = d.path === undefined ? undefined : path.relative(ref.folder.uri.fsPath, d.path);
  const shownPath = rel !== undefined && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : d.path;
  const item = new vscode.TreeItem(
    denialSubject({ ...d, path: shownPath }, 60),
    vscode.TreeItemCollapsibleState.None,
  );
  item.id = id;
  item.description = [d.agent, ago(d.at), d.enforced ? '' : 'observe'].filter(Boolean).join(' · ');
  item.iconPath = icon(
    !d.enforced
      ? ['eye', 'charts.yellow']
      : TRUST_DENY_CODES.includes(d.code)
        ? ['shield', 'testing.iconFailed']
        : ['circle-slash', 'testing.iconFailed'],
  );
  item.contextValue = `denial.${d.enforced ? 'enforced' : 'observed'}`;
  const md = tooltip();
  appendPlain(
    md,
    `${d.enforced ? 'Refused' : 'Would have refused (observe mode let it through)'}: ${d.tool} for agent ${d.agent}${d.runId ? ` in run ${d.runId}` : ''} at ${d.at}`,
  );
  if (d.command !== undefined) appendCode(md, d.command, 'sh');
  if (d.path !== undefined) {
    md.appendMarkdown('\n\n');
    appendPlain(md, d.path);
  }
  md.appendMarkdown('\n\n');
  appendPlain(md, `Why (${d.code}): ${d.reason}`);
  item.tooltip = md;
  return item;
}

/** `just now`, `5 min ago`, `3 h ago`, `2 d ago` (a time ahead of this clock is just now). */
function ago(iso: string, now = Date.now()): string {
  const s = Math.round((now - Date.parse(iso)) / 1000);
  if (!Number.isFinite(s)) return iso;
  if (s < 60) return 'just now';
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86400) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86400)} d ago`;
}
