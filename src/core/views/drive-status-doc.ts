/**
 * The `loopx.drive-status/1` document: every lane of a workspace and whether a driver runs
 * (drive/drive-status.ts builds it). Beside the other documents' schemas, so that the views and
 * the webview read it without the executor.
 */
import { z } from 'zod';
import { lazy } from '../model';

/** What a lane is doing: the one list, for its state file and every document that reports it. */
export const LaneStatus = lazy(() => z.enum(['idle', 'working', 'asleep', 'waiting_person', 'stopped']));
export type LaneStatus = z.infer<typeof LaneStatus>;

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
