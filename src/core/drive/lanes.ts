/**
 * The lanes of `loopx drive`, as files in `.loopx/local/drive/`: what a person set up (a lane's
 * goal and runtime, `lanes/<name>.json`) and what the driver knows (its state and current turn,
 * `state/<name>.json`). They are this machine's: two machines driving one lane would run one agent
 * identity twice, so lanes never reach git; the goal's state they work on is the shared truth.
 * Everything the driver needs to resume after it was killed is here, written before it acts.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { checkId, Id, lazy, notFound, refused, RUNTIME_NAME, Text, Timestamp } from '../model';
import type { Store } from '../store';
import { LaneStatus } from '../views';
import {
  ensureLocalDir,
  mkdirStore,
  readdirStore,
  readJsonFile,
  storePathExists,
  writeJsonAtomic,
} from '../store';

export const LaneSpec = lazy(() =>
  z.strictObject({
    v: z.literal(1),
    name: Id,
    goalId: Id,
    runtime: z.string().regex(RUNTIME_NAME),
    /** Todos one turn's contract lists: 1 lets lanes on one goal share its work. */
    todosPerTurn: z.number().int().min(1).max(5).optional(),
    createdAt: Timestamp,
  }),
);
export type LaneSpec = z.infer<typeof LaneSpec>;

/** The turn a lane has running: enough to find and stop its process and end its run after a crash. */
export const LaneTurn = lazy(() =>
  z.strictObject({
    runId: Id,
    contractId: Id,
    /** The runtime's process, leader of its own process group. */
    pid: z.number().int().positive(),
    /** The process's start time as the kernel counts it (Linux), so a reused pid is not taken for it. */
    pidStart: z.string().max(40).optional(),
    startedAt: Timestamp,
    deadline: Timestamp,
    cwd: z.string().max(4096),
  }),
);
export type LaneTurn = z.infer<typeof LaneTurn>;

export const LaneState = lazy(() =>
  z.strictObject({
    v: z.literal(1),
    status: LaneStatus,
    /** Why it is in that status, for a person. */
    why: Text(2000).optional(),
    /** Asleep until then, unless something wakes it sooner. */
    until: Timestamp.optional(),
    /** A person is the one who can move it on (a gate, a budget, a paused goal, failures). */
    needsPerson: z.boolean().optional(),
    turn: LaneTurn.optional(),
    last: z
      .strictObject({
        runId: Id.optional(),
        outcome: z.string().max(40),
        exitCode: z.number().int().optional(),
        endedAt: Timestamp,
        summary: Text(2000).optional(),
      })
      .optional(),
    /** Turns in a row that failed: backoff grows with it, and at MAX_FAILURES the lane stops. */
    failures: z.number().int().nonnegative(),
    worktree: z.strictObject({ path: z.string().max(4096), branch: z.string().max(200) }).optional(),
    updatedAt: Timestamp,
  }),
);
export type LaneState = z.infer<typeof LaneState>;

/** The agent identity a lane's turns run as: its contracts, claims and runs carry it. */
export const laneAgent = (lane: string) => `lane:${lane}`;

export interface LaneFiles {
  dir: string;
  specs: string;
  states: string;
  logs: string;
}

export function laneFiles(store: Pick<Store, 'localDir'>): LaneFiles {
  const dir = path.join(store.localDir, 'drive');
  return {
    dir,
    specs: path.join(dir, 'lanes'),
    states: path.join(dir, 'state'),
    logs: path.join(dir, 'logs'),
  };
}

function ensureDirs(store: Pick<Store, 'localDir'>): LaneFiles {
  ensureLocalDir(store.localDir);
  const f = laneFiles(store);
  for (const d of [f.dir, f.specs, f.states, f.logs]) mkdirStore(d, 0o700);
  return f;
}

/** The lanes set up here, sorted by name, and the files that are not lanes (hand-edited, broken). */
export function readLanes(store: Pick<Store, 'localDir'>): { lanes: LaneSpec[]; problems: string[] } {
  const f = laneFiles(store);
  if (!storePathExists(f.specs)) return { lanes: [], problems: [] };
  const lanes: LaneSpec[] = [];
  const problems: string[] = [];
  for (const name of readdirStore(f.specs).sort()) {
    if (!name.endsWith('.json')) continue;
    try {
      const spec = readJsonFile(path.join(f.specs, name), LaneSpec);
      if (`${spec.name}.json` !== name)
        throw new Error(`it names lane ${spec.name}, not ${name.slice(0, -5)}`);
      lanes.push(spec);
    } catch (e) {
      problems.push(`${path.join(f.specs, name)}: ${(e as Error).message}`);
    }
  }
  return { lanes, problems };
}

export function readLane(store: Pick<Store, 'localDir'>, name: string): LaneSpec {
  checkId(name, 'lane name');
  const file = path.join(laneFiles(store).specs, `${name}.json`);
  if (!storePathExists(file))
    throw notFound(`no lane ${name} here: \`loopx lane list\` shows the lanes`, { reason: 'lane_not_found' });
  return readJsonFile(file, LaneSpec);
}

/** Adds a lane; refused when one of that name exists (a lane's identity is its name). */
export function addLane(store: Pick<Store, 'localDir'>, spec: LaneSpec): LaneSpec {
  const f = ensureDirs(store);
  const file = path.join(f.specs, `${checkId(spec.name, 'lane name')}.json`);
  if (storePathExists(file))
    throw refused(`lane ${spec.name} exists already: remove it first or choose another name`, {
      reason: 'lane_exists',
    });
  writeJsonAtomic(file, LaneSpec.parse(spec));
  return spec;
}

/** Removes a lane's set-up; its state stays for the record. */
export function removeLane(store: Pick<Store, 'localDir'>, name: string): void {
  readLane(store, name);
  fs.rmSync(path.join(laneFiles(store).specs, `${name}.json`));
}

const IDLE = (now: Date): LaneState => ({ v: 1, status: 'idle', failures: 0, updatedAt: now.toISOString() });

/** A lane's state; `idle` when the driver never ran it, and when its file is unreadable (said in `why`). */
export function readLaneState(store: Pick<Store, 'localDir'>, name: string, now: Date): LaneState {
  const file = path.join(laneFiles(store).states, `${name}.json`);
  if (!storePathExists(file)) return IDLE(now);
  try {
    return readJsonFile(file, LaneState);
  } catch (e) {
    return {
      ...IDLE(now),
      why: `its state file could not be read (${(e as Error).message}); started afresh`,
    };
  }
}

export function writeLaneState(store: Pick<Store, 'localDir'>, name: string, state: LaneState): void {
  const f = ensureDirs(store);
  writeJsonAtomic(path.join(f.states, `${name}.json`), LaneState.parse(state));
}

/** Where a lane's runtime writes its output (the last turn's, replaced each turn). */
export function laneLogFile(store: Pick<Store, 'localDir'>, name: string): string {
  return path.join(ensureDirs(store).logs, `${name}.log`);
}
