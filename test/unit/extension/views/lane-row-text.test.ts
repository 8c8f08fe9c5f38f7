/**
 * What the Agents node and its lane rows say (src/extension/views/laneRowText.ts): the lane's name,
 * its state in a word or two that fits the side bar's default width, the Agents row the most
 * pressing count, and the detail in the tooltips.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { LaneReport } from '../../../../src/core/views/drive-status-doc';
import type { TipBlock } from '../../../../src/extension/views/rowText';
import type { AgentsNode, LaneNode } from '../../../../src/extension/views/laneRowText';
import { agentsRow, laneRow } from '../../../../src/extension/views/laneRowText';
import type { LoopxFolder } from '../../../../src/extension/workspace/workspaces';

const NOW = new Date(2026, 11, 5, 14, 3, 0).getTime();
const tipText = (t: TipBlock[]) =>
  t.map((b) => ('code' in b ? `$ ${b.code}` : [b.bold, b.text].filter(Boolean).join(' '))).join('\n');

function node(over: Partial<LaneReport>, running = true): LaneNode {
  const report: LaneReport = {
    name: 'docs',
    agent: 'lane:docs',
    goal_id: 'g',
    goal_title: 'Write the docs',
    runtime: 'script',
    status: 'idle',
    needs_person: false,
    failures: 0,
    spend: { turns: 1, tokens: 0, cost_usd: 0, wall_seconds: 1 },
    ...over,
  };
  return { kind: 'lane', folder: {} as LoopxFolder, report, running };
}
const agents = (lanes: LaneNode[]): AgentsNode => ({
  kind: 'agents',
  lanes,
  drivers: ['running in this window'],
  problems: [],
});

describe('the Agents node and its lanes', () => {
  it('a lane row: its name, its state in a word or two, the rest in the tooltip', () => {
    const rows = [
      node({ status: 'working', why: 'turn of run r1' }),
      node({ name: 'ops', status: 'asleep', until: new Date(2026, 11, 5, 10, 42).toISOString() }),
      node({ name: 'qa', status: 'waiting_person', needs_person: true, why: 'gate prod is pending' }),
      node({ name: 'fix', status: 'stopped', needs_person: true, failures: 5 }),
      node({ name: 'old', status: 'stopped', why: 'every agent todo is done and no gate is pending' }),
    ].map((n) => laneRow(n, NOW));
    assert.deepEqual(
      rows.map((r) => [r.label, r.description]),
      [
        ['docs', 'working'],
        ['ops', 'asleep · 10:42'],
        ['qa', 'needs you'],
        ['fix', 'stopped · needs you'],
        ['old', 'stopped'],
      ],
    );
    // At the default width a level-2 row has room for about 30 characters of label and description.
    for (const r of rows) assert.ok(`${r.label} ${r.description}`.length <= 30, r.description);
    const tip = tipText(rows[2]!.tooltip);
    assert.match(tip, /^Goal: Write the docs \(g\)$/m);
    assert.match(tip, /^Runtime script, in the workspace folder$/m);
    assert.match(tip, /^Needs you: gate prod is pending$/m);
    assert.match(tip, /^Spent on the goal: 1 turn$/m);
  });

  it('the Agents row: who needs you first, then how many work, else whether a driver runs', () => {
    const d = (lanes: LaneNode[]) => agentsRow(agents(lanes), NOW).description;
    assert.equal(
      d([node({ status: 'working' }), node({ status: 'waiting_person', needs_person: true })]),
      '1 needs you',
    );
    assert.equal(d([node({ status: 'working' }), node({ status: 'working' })]), '2 working');
    assert.equal(d([node({ status: 'asleep' }, false)]), 'not running');
    assert.equal(d([node({ status: 'asleep' }), node({ status: 'stopped' })]), '2 lanes');
    assert.match(tipText(agentsRow(agents([node({})]), NOW).tooltip), /^Driver: running in this window$/m);
  });
});
