/**
 * How a lane of `loopx drive` reads in the editor (src/core/views/lane-text.ts): its state in a
 * word or two, its tooltip's facts, what only a person can do for it (judged from the goal, the
 * policy and the lane, not from its words), the warning's sentence with store text made plain, and
 * the dashboard's Agents section. Times are built from local dates, so they hold in any time zone.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { invoke } from '../../../../src/core/capabilities/registry';
import type { DriveStatus, LaneReport } from '../../../../src/core/views/drive-status-doc';
import type { GoalState } from '../../../../src/core/model';
import {
  agentsSection,
  laneGlance,
  laneNeed,
  laneNeedText,
  laneTooltip,
} from '../../../../src/core/views/lane-text';
import { clockOrDate, whenText } from '../../../../src/core/views/when-text';
import { goalFixture, quota } from '../../../helpers/contract-kit';
import { agent, human, removeTempDirs } from '../../../helpers/store';

after(removeTempDirs);

/** Dec 5 2026, 14:03:00 on this machine's clock. */
const NOW = new Date(2026, 11, 5, 14, 3, 0).getTime();
const at = (h: number, m: number, day = 5) => new Date(2026, 11, day, h, m).toISOString();

function lane(over: Partial<LaneReport> = {}): LaneReport {
  return {
    name: 'docs',
    agent: 'lane:docs',
    goal_id: 'g',
    goal_title: 'Write the docs',
    runtime: 'claude',
    status: 'idle',
    needs_person: false,
    failures: 0,
    spend: { turns: 0, tokens: 0, cost_usd: 0, wall_seconds: 0 },
    ...over,
  };
}

describe('a lane at a glance', () => {
  it('says working, asleep until when, needs you, stopped, in a word or two', () => {
    const cases: [Partial<LaneReport>, string, string][] = [
      [{ status: 'working', why: 'turn of run r1' }, 'working', 'working'],
      [{ status: 'asleep', until: at(10, 42) }, 'asleep · 10:42', 'asleep'],
      [{ status: 'asleep', until: at(9, 0, 7) }, 'asleep · Dec 7', 'asleep'],
      [{ status: 'asleep' }, 'asleep', 'asleep'],
      [{ status: 'waiting_person', needs_person: true, why: 'gate prod is pending' }, 'needs you', 'needs'],
      [{ status: 'stopped', needs_person: false, why: 'every agent todo is done' }, 'stopped', 'done'],
      [{ status: 'stopped', needs_person: true, failures: 5 }, 'stopped · needs you', 'stopped'],
      [{ status: 'idle' }, 'starting', 'idle'],
    ];
    for (const [over, words, tone] of cases)
      assert.deepEqual(laneGlance(lane(over), true, NOW), { words, tone }, JSON.stringify(over));
  });

  it('without a driver, what would be working, asleep or starting reads "not running"; a person’s need stays', () => {
    for (const status of ['working', 'asleep', 'idle'] as const)
      assert.deepEqual(laneGlance(lane({ status }), false, NOW), { words: 'not running', tone: 'off' });
    assert.equal(
      laneGlance(lane({ status: 'waiting_person', needs_person: true }), false, NOW).words,
      'needs you',
    );
    assert.equal(laneGlance(lane({ status: 'stopped' }), false, NOW).words, 'stopped');
  });

  it('clockOrDate: the time on the same day, the date on another', () => {
    assert.equal(clockOrDate(at(10, 42), NOW), '10:42');
    assert.equal(clockOrDate(at(23, 5, 4), NOW), 'Dec 4');
    assert.equal(clockOrDate('not a time', NOW), 'not a time');
  });
});

describe('a lane’s tooltip', () => {
  it('gives its goal, runtime, worktree and branch, its why whole, its turn, last turn and spend', () => {
    const why = `turn of run r2 ${'and a long why '.repeat(20)}`;
    const r = lane({
      status: 'working',
      why,
      worktree: { path: '/w/.loopx-worktrees/docs', branch: 'loopx/lane/docs' },
      turn: { run_id: 'r2', started_at: at(14, 1), deadline: at(14, 31), pid: 42 },
      last: {
        run_id: 'r1',
        outcome: 'succeeded',
        ended_at: at(13, 50),
        summary: 'the runtime exited with code 0',
      },
      failures: 1,
      spend: { turns: 3, tokens: 12400, cost_usd: 0.42, wall_seconds: 30 },
    });
    const text = laneTooltip(r, true, NOW).map((l) => [l.bold, l.text].filter(Boolean).join(' '));
    assert.deepEqual(text, [
      'Lane docs · lane:docs',
      'Goal: Write the docs (g)',
      'Runtime claude, in worktree /w/.loopx-worktrees/docs on branch loopx/lane/docs',
      `Working: ${why}`,
      `Turn: run r2 since ${whenText(at(14, 1), NOW)}, stopped at ${whenText(at(14, 31), NOW)} at the latest`,
      `Last turn: run r1 succeeded ${whenText(at(13, 50), NOW)}: the runtime exited with code 0`,
      'Spent on the goal: 3 turns, 12,400 tokens, $0.42; 1 failed turn in a row',
    ]);
  });

  it('says when no driver keeps it going, and names its folder in a window of several', () => {
    const tip = laneTooltip(lane({ status: 'asleep', until: at(15, 0) }), false, NOW, 'alpha');
    assert.equal(tip[0]!.text, '· lane:docs · in folder alpha');
    assert.match(tip[2]!.text!, /in the workspace folder$/);
    assert.match(
      tip[3]!.text!,
      /^Not running: no driver keeps it going .*Last known: Asleep until Dec 5, 15:00/,
    );
    assert.equal(tip.at(-1)!.text, 'Spent on the goal: nothing yet');
  });
});

describe('what only a person can do for a lane', () => {
  const waiting = (why = 'x') => lane({ status: 'waiting_person', needs_person: true, why });
  const goal = (fn?: (f: ReturnType<typeof goalFixture>) => void): GoalState => {
    const f = goalFixture({ quota: quota({ turns: 1 }) });
    fn?.(f);
    return f.store.load(f.goalId).state;
  };
  const now = new Date();

  it('a spent budget: "Lane docs stopped: the turns budget is used up (1 of 1)"', () => {
    const g = goal(({ store, goalId }) => {
      invoke(store, 'todo.add', { goalId, todoId: 'a', title: 'A', action: 'echo a' }, human);
      invoke(store, 'run.start', { goalId, runId: 'r1', agent: 'lane:docs' }, agent);
      invoke(store, 'run.end', { goalId, runId: 'r1', outcome: 'succeeded' }, agent);
    });
    const need = laneNeed(waiting(), g, true, now);
    assert.deepEqual(need, { kind: 'budget', budget: 'turns', used: 1, limit: 1 });
    assert.equal(laneNeedText('docs', need!), 'Lane docs stopped: the turns budget is used up (1 of 1)');
  });

  it('a pending gate is the gate notification’s: no lane warning', () => {
    const g = goal(({ store, goalId }) =>
      invoke(store, 'todo.add', { goalId, todoId: 'p', title: 'P', action: 'echo p', gate: 'prod' }, human),
    );
    assert.equal(g.gates[0]?.status, 'pending');
    assert.equal(laneNeed(waiting('only gated work is left: gate prod is pending'), g, true, now), undefined);
  });

  it('failed turns, an unsigned runtime, a paused or closed goal, and anything else', () => {
    const g = goal();
    const stopped = lane({ status: 'stopped', needs_person: true, failures: 5 });
    assert.deepEqual(laneNeed(stopped, g, true, now), { kind: 'failures', failures: 5 });
    assert.match(
      laneNeedText('docs', laneNeed(stopped, g, true, now)!),
      /^Lane docs stopped: 5 turns in a row failed/,
    );
    assert.deepEqual(laneNeed(waiting(), g, false, now), { kind: 'runtime', runtime: 'claude' });
    assert.deepEqual(laneNeed(waiting(), { ...g, status: 'paused' }, true, now), {
      kind: 'paused',
      goalTitle: 'A goal',
    });
    assert.equal(
      laneNeedText('docs', { kind: 'paused', goalTitle: 'A goal' }),
      'Lane docs stopped: goal "A goal" is paused.',
    );
    assert.equal(laneNeed(waiting(), { ...g, status: 'closed' }, true, now)?.kind, 'closed');
    assert.deepEqual(laneNeed(waiting('the goal waits for a plan'), g, true, now), {
      kind: 'other',
      why: 'the goal waits for a plan',
    });
    // Needing nobody, or done: nothing to say.
    assert.equal(laneNeed(lane({ status: 'asleep' }), g, true, now), undefined);
    assert.equal(laneNeed(lane({ status: 'stopped', needs_person: false }), g, true, now), undefined);
  });

  it('store text in the sentence is plain: no link, no markup a notification would render', () => {
    const text = laneNeedText('docs', {
      kind: 'other',
      why: 'see [Approve](command:loopx.approveGate?%5B%5D) and `code` "quoted"',
    });
    assert.doesNotMatch(text, /\[|\]|\(|\)|`|"/);
    assert.match(text, /^Lane docs waits for you: see Approve command:loopx\.approveGate/);
    const paused = laneNeedText('docs', { kind: 'paused', goalTitle: '[x](command:evil)' });
    assert.equal(paused, 'Lane docs stopped: goal "x command:evil" is paused.');
  });
});

describe('the dashboard’s Agents section', () => {
  const doc = (lanes: LaneReport[], driver: DriveStatus['driver']): DriveStatus => ({
    schema: 'loopx.drive-status/1',
    driver,
    lanes,
    working: lanes.filter((l) => l.status === 'working').length,
    problems: [],
  });

  it('is absent without lanes; says who drives them; a row per lane in the tree’s words', () => {
    assert.equal(
      agentsSection([{ name: 'w', doc: doc([], { running: false }) }], { ownPid: 1, now: NOW, named: false }),
      undefined,
    );
    const r = lane({
      status: 'asleep',
      until: at(10, 42),
      why: 'recurring todo t is next due',
      worktree: { path: '/p', branch: 'loopx/lane/docs' },
      last: { run_id: 'r1', outcome: 'succeeded', ended_at: at(14, 1) },
      spend: { turns: 2, tokens: 0, cost_usd: 0.01, wall_seconds: 1 },
    });
    const one = agentsSection([{ name: 'w', doc: doc([r], { running: true, pid: 7 }) }], {
      ownPid: 7,
      now: NOW,
      named: false,
    });
    assert.deepEqual(one, {
      driver: 'running in this window',
      rows: [
        {
          name: 'docs',
          goal_id: 'g',
          goal: 'Write the docs',
          runtime: 'claude',
          branch: 'loopx/lane/docs',
          state: 'asleep · 10:42',
          tone: 'asleep',
          why: 'recurring todo t is next due',
          last: 'succeeded 2 min ago',
          spend: '2 turns, $0.01',
        },
      ],
    });
    const two = agentsSection(
      [
        { name: 'alpha', doc: doc([r], { running: true, pid: 9 }) },
        { name: 'beta', doc: doc([lane({ name: 'ops' })], { running: false }) },
      ],
      { ownPid: 7, now: NOW, named: true },
    );
    assert.equal(two?.driver, 'alpha: loopx drive runs them (process 9); beta: not running');
    assert.deepEqual(
      two?.rows.map((x) => [x.folder, x.name, x.state]),
      [
        ['alpha', 'docs', 'asleep · 10:42'],
        ['beta', 'ops', 'not running'],
      ],
    );
  });
});
