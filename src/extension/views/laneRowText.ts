/**
 * What the Agents node of the Goals tree and its lane rows say, without the editor API (so it is
 * tested as plain data, like rowText.ts): a lane's name, its state in a word or two, and in the
 * tooltip everything else, in the words every surface uses (core/views/lane-text.ts).
 */
import type { LaneReport } from '../../core/index';
import { laneGlance, laneTooltip, plural } from '../../core/index';
import type { LoopxFolder } from '../workspace/workspaces';
import type { RowText } from './rowText';

export interface LaneNode {
  kind: 'lane';
  folder: LoopxFolder;
  report: LaneReport;
  /** Whether a driver (this window's or another process's) keeps the folder's lanes going. */
  running: boolean;
  /** Its folder's name, when the window has several. */
  folderName?: string;
}

export interface AgentsNode {
  kind: 'agents';
  lanes: LaneNode[];
  /** Per folder with lanes: who drives them (`alpha: running in this window`). */
  drivers: string[];
  /** Lane files or folders that could not be read. */
  problems: string[];
}

/** `1 needs you`, `2 working`, `not running`, `3 lanes`: the most pressing first. */
function agentsSummary(node: AgentsNode, now: number): string {
  const glances = node.lanes.map((l) => laneGlance(l.report, l.running, now));
  const needs = glances.filter((g) => g.tone === 'needs' || g.tone === 'stopped').length;
  if (needs) return `${needs} need${needs === 1 ? 's' : ''} you`;
  const working = glances.filter((g) => g.tone === 'working').length;
  if (working) return `${working} working`;
  if (node.lanes.length && node.lanes.every((l) => !l.running)) return 'not running';
  return plural(node.lanes.length, 'lane');
}

export function agentsRow(node: AgentsNode, now: number): RowText {
  return {
    label: 'Agents',
    description: agentsSummary(node, now),
    tooltip: [
      { bold: 'Agents', text: `· ${plural(node.lanes.length, 'lane')} of loopx drive` },
      ...node.drivers.map((d) => ({ text: `Driver: ${d}` })),
      ...node.problems.map((p) => ({ text: `Could not read: ${p}` })),
    ],
  };
}

export function laneRow(node: LaneNode, now: number): RowText {
  return {
    label: node.report.name,
    description: laneGlance(node.report, node.running, now).words,
    tooltip: laneTooltip(node.report, node.running, now, node.folderName),
  };
}
