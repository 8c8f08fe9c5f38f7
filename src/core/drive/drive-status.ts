/**
 * Where every lane is, as one versioned document: `loopx drive status --json` prints it, the
 * editor's Agents section and the dashboard show it, so every surface says the same.
 */
import { z } from 'zod';
import type { GoalState } from '../model';
import { lazy } from '../model';
import type { Store } from '../store';
import { runningDriver } from './driver';
import type { LaneSpec, LaneState } from './lanes';
import { laneAgent, LaneStatus, readLanes, readLaneState } from './lanes';

export const DRIVE_STATUS_SCHEMA = 'loopx.drive-status/1';

export const LaneReport = lazy(() =>
  z.strictObject({
    name: z.string(),
    /** The agent identity its turns run as (`lane:<name>`). */
    agent: z.string(),
    goal_id: z.string(),
    goal_title: z.string().optional(),
    runtime: z.string(),
    worktree: z.strictObject({ path: z.string(), branch: z.string() }).optional(),
    status: LaneStatus,
    /** Why it is in that status, in a person's words. */
    why: z.string().optional(),
    /** Asleep until then, unless woken sooner. */
    until: z.string().optional(),
    /** Only a person can move it on (a gate, a budget, a paused goal, failed turns). */
    needs_person: z.boolean(),
    turn: z
      .strictObject({ run_id: z.string(), started_at: z.string(), deadline: z.string(), pid: z.number() })
      .optional(),
    last: z
      .strictObject({
        run_id: z.string().optional(),
        outcome: z.string(),
        exit_code: z.number().optional(),
        ended_at: z.string(),
        summary: z.string().optional(),
      })
      .optional(),
    /** Turns in a row that failed. */
    failures: z.number(),
    /** What the lane's runs spent on its goal, over the goal's life. */
    spend: z.strictObject({
      turns: z.number(),
      tokens: z.number(),
      cost_usd: z.number(),
      wall_seconds: z.number(),
    }),
  }),
);
export type LaneReport = z.infer<typeof LaneReport>;

/** `loopx drive status`: every lane of the workspace and whether a driver runs. */
export const DriveStatus = lazy(() =>
  z.strictObject({
    schema: z.literal(DRIVE_STATUS_SCHEMA),
    /** Whether a driver runs now for this workspace (its process, since when). */
    driver: z.strictObject({
      running: z.boolean(),
      pid: z.number().optional(),
      since: z.string().optional(),
    }),
    lanes: z.array(LaneReport),
    /** Lanes in a turn now (the status bar's count). */
    working: z.number(),
    /** Lane files or goals that could not be read. */
    problems: z.array(z.string()),
  }),
);
export type DriveStatus = z.infer<typeof DriveStatus>;

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

/** A lane's state in a few words, as every surface shows it. */
export function laneStateWords(r: Pick<LaneReport, 'status' | 'until' | 'why' | 'needs_person'>): string {
  switch (r.status) {
    case 'working':
      return 'working';
    case 'asleep':
      return r.until ? `asleep until ${r.until}` : 'asleep';
    case 'waiting_person':
      return 'waiting for a person';
    case 'stopped':
      return `stopped${r.why ? `: ${r.why}` : ''}`;
    case 'idle':
      return 'not started';
  }
}
