/**
 * Where every lane is, as one versioned document (its schema: views/drive-status-doc.ts): `loopx
 * drive status --json` prints it, the editor's Agents section and the dashboard show it, so every
 * surface says the same.
 */
import type { GoalState } from '../model';
import type { Store } from '../store';
import type { DriveStatus, LaneReport } from '../views';
import { DRIVE_STATUS_SCHEMA } from '../views';
import { runningDriver } from './driver';
import type { LaneSpec, LaneState } from './lanes';
import { laneAgent, readLanes, readLaneState } from './lanes';

/** One lane's report from its set-up, its state and its goal (undefined when the goal cannot be read). */
export function laneReport(spec: LaneSpec, state: LaneState, goal: GoalState | undefined): LaneReport {
  const agent = laneAgent(spec.name);
  const runs = goal?.runs.filter((r) => r.agent === agent) ?? [];
  const sum = (k: 'turns' | 'tokens' | 'costUsd' | 'wallSeconds') => runs.reduce((n, r) => n + r.spend[k], 0);
  return {
    name: spec.name,
    agent,
    goal_id: spec.goalId,
    ...(goal ? { goal_title: goal.title } : {}),
    runtime: spec.runtime,
    ...(state.worktree ? { worktree: state.worktree } : {}),
    status: state.status,
    ...(state.why ? { why: state.why } : {}),
    ...(state.until ? { until: state.until } : {}),
    needs_person: !!state.needsPerson,
    ...(state.turn
      ? {
          turn: {
            run_id: state.turn.runId,
            started_at: state.turn.startedAt,
            deadline: state.turn.deadline,
            pid: state.turn.pid,
          },
        }
      : {}),
    ...(state.last
      ? {
          last: {
            ...(state.last.runId ? { run_id: state.last.runId } : {}),
            outcome: state.last.outcome,
            ...(state.last.exitCode !== undefined ? { exit_code: state.last.exitCode } : {}),
            ended_at: state.last.endedAt,
            ...(state.last.summary ? { summary: state.last.summary } : {}),
          },
        }
      : {}),
    failures: state.failures,
    spend: {
      turns: sum('turns'),
      tokens: sum('tokens'),
      cost_usd: Math.round(sum('costUsd') * 1e6) / 1e6,
      wall_seconds: Math.round(sum('wallSeconds') * 1000) / 1000,
    },
  };
}

/** The document for `store`'s workspace now. */
export function driveStatus(store: Store): DriveStatus {
  const now = new Date(store.now());
  const { lanes, problems } = readLanes(store);
  const goals = new Map<string, GoalState | undefined>();
  const goalOf = (id: string) => {
    if (!goals.has(id)) {
      try {
        goals.set(id, store.load(id).state);
      } catch (e) {
        problems.push(`goal ${id}: ${(e as Error).message}`);
        goals.set(id, undefined);
      }
    }
    return goals.get(id);
  };
  const driver = store.readOnly ? undefined : runningDriver(store);
  const reports = lanes.map((l) => {
    const r = laneReport(l, readLaneState(store, l.name, now), goalOf(l.goalId));
    // A turn recorded by a driver that is gone is no lane working: the next driver settles it.
    if (!driver && r.status === 'working')
      return { ...r, why: 'its driver stopped during this turn: the next `loopx drive` ends it and goes on' };
    return r;
  });
  return {
    schema: DRIVE_STATUS_SCHEMA,
    driver: driver ? { running: true, ...driver } : { running: false },
    lanes: reports,
    working: driver ? reports.filter((r) => r.status === 'working').length : 0,
    problems,
  };
}
