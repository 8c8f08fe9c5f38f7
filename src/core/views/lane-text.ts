/**
 * How a lane of `loopx drive` reads in the editor, the same on every surface: its state in a word
 * or two (a tree row, the dashboard), the facts its tooltip gives, what only a person can do for it
 * (the warning notification) and the rows of the dashboard's Agents section. Pure: a lane's report
 * (`loopx.drive-status/1`), whether a driver keeps it going, and the time in; text out. Times read
 * as everywhere else (when-text.ts). Store text (a goal's title, a lane's why) enters the
 * notification's sentence only through `plainText`: a notification renders links.
 */
import type { DriveStatus, LaneReport } from './drive-status-doc';
import type { BudgetName, GoalState } from '../model';
import { oneLine, plainText } from '../model';
import { exhaustedBudget, quotaUse } from '../rules';
import type { AgentRow, AgentsSection, LaneTone } from './dashboard-protocol';
import { budgetAmount, budgetLabel, plural, spendWords } from './people-text';
import { clockOrDate, relativeTime, whenText } from './when-text';

/** A lane's state at a glance: a word or two, and the tone its icon or dot takes. */
export interface LaneGlance {
  words: string;
  tone: LaneTone;
}

/**
 * `working`, `asleep · 10:42`, `needs you`, `stopped`: what a person scans the list for. Without a
 * driver nothing works, sleeps or starts, so those states read `not running` (what the lane's file
 * last said is in the tooltip); a lane that needs a person needs them either way.
 */
export function laneGlance(r: LaneReport, running: boolean, now: number): LaneGlance {
  if (!running && (r.status === 'working' || r.status === 'asleep' || r.status === 'idle'))
    return { words: 'not running', tone: 'off' };
  switch (r.status) {
    case 'working':
      return { words: 'working', tone: 'working' };
    case 'asleep':
      return { words: r.until ? `asleep · ${clockOrDate(r.until, now)}` : 'asleep', tone: 'asleep' };
    case 'waiting_person':
      return r.needs_person ? { words: 'needs you', tone: 'needs' } : { words: 'waiting', tone: 'asleep' };
    case 'stopped':
      return r.needs_person
        ? { words: 'stopped · needs you', tone: 'stopped' }
        : { words: 'stopped', tone: 'done' };
    case 'idle':
      return { words: 'starting', tone: 'idle' };
  }
}

/** The state as a sentence, with its why whole and its times exact. */
function stateSentence(r: LaneReport, running: boolean, now: number): string {
  const why = r.why ? `: ${r.why}` : '';
  const said = (() => {
    switch (r.status) {
      case 'working':
        return `Working${why}`;
      case 'asleep':
        return `Asleep until ${r.until ? whenText(r.until, now) : 'something changes'}${why}`;
      case 'waiting_person':
        return `${r.needs_person ? 'Needs you' : 'Waiting'}${why}`;
      case 'stopped':
        return `Stopped${why}`;
      case 'idle':
        return `Not started yet${why}`;
    }
  })();
  if (running || r.status === 'waiting_person' || r.status === 'stopped') return said;
  return `Not running: no driver keeps it going (LoopX: Start Agents, or \`loopx drive\`). Last known: ${said}`;
}

/** `3 turns, 12,400 tokens, $0.42`, or `nothing yet`. */
export function laneSpendWords(r: Pick<LaneReport, 'spend'>): string {
  const s = r.spend;
  const words = spendWords({ turns: s.turns, tokens: s.tokens, costUsd: s.cost_usd });
  return words === 'nothing' ? 'nothing yet' : words;
}

/** `succeeded 2 min ago`: the last turn's outcome and when it ended. */
export function lastTurnWords(r: Pick<LaneReport, 'last'>, now: number): string | undefined {
  return r.last ? `${r.last.outcome} ${relativeTime(r.last.ended_at, now)}` : undefined;
}

/** One paragraph of a tooltip: plain text, after `bold` shown in bold (the tree's TipBlock). */
export interface LaneTipLine {
  bold?: string;
  text?: string;
}

/**
 * Everything about a lane, a paragraph each: its goal, runtime, worktree and branch, its state and
 * why in full, the turn it is in, its last turn and what it spent. `folder` names its folder when
 * the window has several.
 */
export function laneTooltip(r: LaneReport, running: boolean, now: number, folder?: string): LaneTipLine[] {
  const lines: LaneTipLine[] = [
    { bold: `Lane ${r.name}`, text: `· ${r.agent}${folder ? ` · in folder ${folder}` : ''}` },
    { text: `Goal: ${r.goal_title ?? '(it could not be read)'} (${r.goal_id})` },
    {
      text: `Runtime ${r.runtime}${r.worktree ? `, in worktree ${r.worktree.path} on branch ${r.worktree.branch}` : ', in the workspace folder'}`,
    },
    { text: stateSentence(r, running, now) },
  ];
  if (r.turn)
    lines.push({
      text: `Turn: run ${r.turn.run_id} since ${whenText(r.turn.started_at, now)}, stopped at ${whenText(r.turn.deadline, now)} at the latest`,
    });
  if (r.last)
    lines.push({
      text: `Last turn: ${r.last.run_id ? `run ${r.last.run_id} ` : ''}${r.last.outcome} ${whenText(r.last.ended_at, now)}${r.last.summary ? `: ${oneLine(r.last.summary, 400)}` : ''}`,
    });
  lines.push({
    text: `Spent on the goal: ${laneSpendWords(r)}${r.failures ? `; ${plural(r.failures, 'failed turn')} in a row` : ''}`,
  });
  return lines;
}

/**
 * Why only a person can move a lane on, when it is not a pending gate (a gate has a notification of
 * its own): its turns failed too often, its runtime is not signed, its goal is paused or closed, a
 * budget is used up, or anything else the lane said (a plan to add, a todo that is a person's).
 */
export type LaneNeed =
  | { kind: 'failures'; failures: number }
  | { kind: 'runtime'; runtime: string }
  | { kind: 'paused'; goalTitle: string }
  | { kind: 'closed'; goalTitle: string; status: string }
  | { kind: 'budget'; budget: BudgetName; used: number; limit: number }
  | { kind: 'other'; why: string };

/**
 * What a lane that needs a person needs, judged from the facts rather than its words, in the order
 * the driver meets them (a failed-turns stop, the runtime, then the contract's answer: a paused or
 * closed goal, a spent budget, gates). Undefined: it needs nobody, or only a gate's decision.
 */
export function laneNeed(
  r: LaneReport,
  goal: GoalState | undefined,
  runtimeSigned: boolean,
  now: Date,
): LaneNeed | undefined {
  if (!r.needs_person || (r.status !== 'waiting_person' && r.status !== 'stopped')) return undefined;
  if (r.status === 'stopped') return { kind: 'failures', failures: r.failures };
  if (!runtimeSigned) return { kind: 'runtime', runtime: r.runtime };
  const why = r.why ?? 'it waits for a person';
  if (!goal) return { kind: 'other', why };
  if (goal.status === 'paused') return { kind: 'paused', goalTitle: goal.title };
  if (goal.status === 'closed' || goal.status === 'cancelled')
    return { kind: 'closed', goalTitle: goal.title, status: goal.status };
  const use = quotaUse(goal, now);
  const spent = exhaustedBudget(use);
  if (spent) return { kind: 'budget', budget: spent, used: use[spent]!.used, limit: use[spent]!.limit };
  if (goal.gates.some((g) => g.status === 'pending')) return undefined;
  return { kind: 'other', why };
}

/**
 * The warning a person reads: `Lane docs stopped: the turns budget is used up (4 of 4)`. LoopX's
 * words around store text made plain (no link, no markup).
 */
export function laneNeedText(lane: string, need: LaneNeed): string {
  const name = plainText(lane, 60);
  switch (need.kind) {
    case 'failures':
      return `Lane ${name} stopped: ${need.failures} turns in a row failed. Look at its log, then run loopx lane resume ${name}.`;
    case 'runtime':
      return `Lane ${name} stopped: runtime ${plainText(need.runtime, 60)} is not in the signed policy. A person declares it under runtimes in .loopx/policy.json and signs it.`;
    case 'paused':
      return `Lane ${name} stopped: goal "${plainText(need.goalTitle)}" is paused.`;
    case 'closed':
      return `Lane ${name} stopped: goal "${plainText(need.goalTitle)}" is ${need.status}.`;
    case 'budget':
      return `Lane ${name} stopped: the ${budgetLabel(need.budget)} budget is used up (${budgetAmount(need.budget, need.used)} of ${budgetAmount(need.budget, need.limit)})`;
    case 'other':
      return `Lane ${name} waits for you: ${plainText(need.why, 200)}`;
  }
}

/** A lane as a row of the dashboard's Agents section. */
export function agentRow(r: LaneReport, running: boolean, now: number, folder?: string): AgentRow {
  const state = laneGlance(r, running, now);
  const last = lastTurnWords(r, now);
  return {
    name: r.name,
    ...(folder ? { folder } : {}),
    goal_id: r.goal_id,
    goal: r.goal_title ?? r.goal_id,
    runtime: r.runtime,
    ...(r.worktree ? { branch: r.worktree.branch } : {}),
    state: state.words,
    tone: state.tone,
    ...(r.why ? { why: r.why } : {}),
    ...(last ? { last } : {}),
    spend: laneSpendWords(r),
  };
}

/** Who keeps a folder's lanes going: this process (the editor's window), another one, or nobody. */
export function driverWords(d: DriveStatus['driver'], ownPid: number): string {
  if (!d.running) return 'not running';
  return d.pid === ownPid ? 'running in this window' : `loopx drive runs them (process ${d.pid ?? '?'})`;
}

/**
 * The dashboard's Agents section over the folders' lanes (each folder's `name` shown when `named`:
 * the window has several); undefined when no folder has a lane. `ownPid`: this process, whose
 * driver runs "in this window".
 */
export function agentsSection(
  parts: readonly { name: string; doc: DriveStatus }[],
  o: { ownPid: number; now: number; named: boolean },
): AgentsSection | undefined {
  const { ownPid, now, named } = o;
  const withLanes = parts.filter((p) => p.doc.lanes.length > 0);
  if (withLanes.length === 0) return undefined;
  return {
    driver: withLanes
      .map((p) => `${named ? `${p.name}: ` : ''}${driverWords(p.doc.driver, ownPid)}`)
      .join('; '),
    rows: withLanes.flatMap((p) =>
      p.doc.lanes.map((r) => agentRow(r, p.doc.driver.running, now, named ? p.name : undefined)),
    ),
  };
}
