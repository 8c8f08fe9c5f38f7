/**
 * The Agents node of the Goals tree: a row per lane of `loopx drive` in the window's folders, its
 * state in a word or two, everything else in its tooltip (the words are core/views/lane-text.ts's,
 * which the dashboard shows too). There only while some folder has lanes. It stands above the
 * goals: what runs now and what waits for the person is seen without scrolling past every goal.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { LaneTone } from '../../core/index';
import { driverWords, laneFiles, laneGlance } from '../../core/index';
import type { LoopxWorkspaces } from '../workspace/workspaces';
import { icon, rowItem } from './goalChildren';
import type { AgentsNode, LaneNode } from './laneRowText';
import { agentsRow, laneRow } from './laneRowText';

export type { AgentsNode, LaneNode } from './laneRowText';

const TONE_ICON: Record<LaneTone, [string, string?]> = {
  working: ['sync~spin', 'charts.blue'],
  asleep: ['clock'],
  needs: ['bell', 'charts.orange'],
  stopped: ['circle-slash', 'problemsErrorIcon.foreground'],
  done: ['check', 'testing.iconPassed'],
  idle: ['circle-outline'],
  off: ['debug-pause', 'disabledForeground'],
};

/** The Agents node over every folder's lanes, or undefined when no folder has one. */
export function agentsNode(workspaces: LoopxWorkspaces): AgentsNode | undefined {
  const folders = workspaces.folders();
  const named = folders.length > 1;
  const node: AgentsNode = { kind: 'agents', lanes: [], drivers: [], problems: [] };
  for (const folder of folders) {
    const doc = workspaces.driveStatus(folder);
    if (!doc) continue;
    const where = named ? `${folder.folder.name}: ` : '';
    if (doc instanceof Error) {
      node.problems.push(`${where}${doc.message}`);
      continue;
    }
    node.problems.push(...doc.problems.map((p) => `${where}${p}`));
    if (doc.lanes.length === 0) continue;
    node.drivers.push(`${where}${driverWords(doc.driver, process.pid)}`);
    for (const report of doc.lanes)
      node.lanes.push({
        kind: 'lane',
        folder,
        report,
        running: doc.driver.running,
        ...(named ? { folderName: folder.folder.name } : {}),
      });
  }
  return node.lanes.length || node.problems.length ? node : undefined;
}

export function agentsItem(node: AgentsNode): vscode.TreeItem {
  const item = rowItem(agentsRow(node, Date.now()), vscode.TreeItemCollapsibleState.Expanded);
  item.id = 'loopx/agents';
  item.iconPath = new vscode.ThemeIcon('hubot');
  item.contextValue = 'agents';
  return item;
}

/** A lane's row; a click opens its last turn's output, when there is one. */
export function laneItem(node: LaneNode): vscode.TreeItem {
  const now = Date.now();
  const r = node.report;
  const item = rowItem(laneRow(node, now), vscode.TreeItemCollapsibleState.None);
  item.id = `loopx/agents/${node.folder.folder.uri.fsPath}/${r.name}`;
  item.iconPath = icon(TONE_ICON[laneGlance(r, node.running, now).tone]);
  item.contextValue = `lane.${r.status}`;
  const log = path.join(laneFiles(node.folder.store).logs, `${r.name}.log`);
  if (fs.existsSync(log))
    item.command = {
      command: 'vscode.open',
      title: 'Open the Last Turn’s Output',
      arguments: [vscode.Uri.file(log), { preview: true } satisfies vscode.TextDocumentShowOptions],
    };
  return item;
}
