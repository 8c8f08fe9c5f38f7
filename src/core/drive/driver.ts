/**
 * `loopx drive`: keeps every lane of a workspace going, one LaneRunner each, until stopped. One
 * driver per workspace (a kernel lock, released by the kernel if the driver dies). On start it
 * first settles what a driver killed before it left: a turn whose process still runs is stopped,
 * its run ended `interrupted` and its claims given back, so no lane resumes on a half-known turn.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { refused } from '../model';
import type { Store } from '../store';
import { lockFile, readStoreFile, tryLock, writeJsonAtomic } from '../store';
import type { DriveEvent } from './lane-runner';
import { LaneRunner, writeLoopxShim } from './lane-runner';
import type { LaneSpec } from './lanes';
import { laneAgent, laneFiles, readLane, readLaneState, readLanes, writeLaneState } from './lanes';
import { settleTurn } from './turn-end';
import { groupAlive, processStart, stopGroup } from './turn-process';

/** How long a lane's claims last unless its live turn renews them. */
export const DEFAULT_LEASE_SECONDS = 600;

export interface DriverOptions {
  store: Store;
  /** Only these lanes (default: every lane set up here). */
  only?: string[];
  env?: NodeJS.ProcessEnv;
  /** This driver's own CLI, which the lanes' `loopx` runs. */
  loopx?: { node: string; cli: string };
  leaseSeconds?: number;
  onEvent?: (e: DriveEvent) => void;
  /**
   * Return once no lane can go on without a person (each waits for one, or is stopped): a
   * script's or CI job's `loopx drive --until-idle`.
   */
  untilIdle?: boolean;
}

/** What a lane is doing last it said: idle kinds are those only a person (or nothing) ends. */
const IDLE_KINDS = new Set<DriveEvent['kind']>(['waiting_person', 'stopped']);

const DRIVE_LOCK = 'drive';

/** Who drives the workspace now (pid, since), or undefined when no driver runs. */
export function runningDriver(store: Store): { pid?: number; since?: string } | undefined {
  const file = lockFile(store.localDir, DRIVE_LOCK);
  const release = tryLock(file);
  if (release) {
    release();
    return undefined;
  }
  try {
    const o = JSON.parse(readStoreFile(file, 'utf8')) as { pid?: number; at?: string };
    return { pid: o.pid, since: o.at };
  } catch {
    return {};
  }
}

/**
 * Settles a turn a dead driver left (its process stopped if it still runs, its run ended, its
 * claims released); returns what was said about it, or undefined when there was none.
 */
export async function recoverLane(store: Store, lane: LaneSpec): Promise<string | undefined> {
  const now = new Date(store.now());
  const state = readLaneState(store, lane.name, now);
  const turn = state.turn;
  if (!turn) return undefined;
  // The process is the turn's only if the kernel's start time still matches: a reused pid, or a
  // state file edited to name another process, is never signalled. Where there is no /proc to
  // tell (macOS), the pid alone is taken, as the driver recorded it.
  const startNow = processStart(turn.pid);
  const same = turn.pidStart === undefined ? startNow === undefined : startNow === turn.pidStart;
  let stopped = false;
  if (same && groupAlive(turn.pid)) {
    await stopGroup(turn.pid);
    stopped = true;
  }
  const why = `its driver stopped during the turn${stopped ? `; the turn's processes (group ${turn.pid}) were stopped` : ''}`;
  const settled = settleTurn(store, lane.goalId, laneAgent(lane.name), turn.runId, {
    kind: 'interrupted',
    why,
  });
  const { turn: _gone, ...rest } = state;
  writeLaneState(store, lane.name, {
    ...rest,
    status: 'idle',
    why: `resumed after ${why}`,
    last: { runId: turn.runId, outcome: settled.outcome, endedAt: now.toISOString(), summary: why },
    updatedAt: now.toISOString(),
  });
  return `run ${turn.runId} ended ${settled.outcome}: ${why}${settled.released.length ? `; released ${settled.released.join(', ')}` : ''}`;
}

/** How long a starting driver keeps asking for the lock a peeker may hold for an instant. */
const LOCK_PATIENCE_MS = 1000;

/**
 * The workspace's drive lock, or undefined when another driver holds it. `runningDriver` (drive
 * status, the queue of every workspace) takes the lock for an instant to learn whether a driver
 * runs: a driver that starts in that instant asks again for a while before it refuses.
 */
async function takeDriveLock(file: string): Promise<(() => void) | undefined> {
  const until = Date.now() + LOCK_PATIENCE_MS;
  for (;;) {
    const release = tryLock(file);
    if (release || Date.now() >= until) return release;
    await new Promise((r) => setTimeout(r, 20));
  }
}

export class Driver {
  private readonly runners = new Map<string, LaneRunner>();
  private release?: () => void;
  private stopping = false;
  private lanesWatch?: fs.FSWatcher;
  private finished?: () => void;

  constructor(private readonly o: DriverOptions) {}

  private readonly lastKind = new Map<string, DriveEvent['kind']>();

  private emit(e: DriveEvent) {
    this.o.onEvent?.(e);
    if (e.lane !== '-') this.lastKind.set(e.lane, e.kind);
    if (this.o.untilIdle && this.idle()) this.stop();
  }

  /** Every lane running here waits for a person or is stopped. */
  private idle(): boolean {
    const names = [...this.runners.keys()];
    return names.length > 0 && names.every((n) => IDLE_KINDS.has(this.lastKind.get(n) ?? 'turn_started'));
  }

  /** Runs until `stop()`: refused when another driver drives this workspace. */
  async run(): Promise<void> {
    const { store } = this.o;
    const lock = lockFile(store.localDir, DRIVE_LOCK);
    this.release = await takeDriveLock(lock);
    if (!this.release) {
      const who = runningDriver(store);
      throw refused(
        `another loopx drive already drives this workspace${who?.pid ? ` (process ${who.pid}, since ${who.since})` : ''}: stop it first, or use \`loopx drive status\``,
        { reason: 'drive_running' },
      );
    }
    try {
      const { lanes, problems } = readLanes(store);
      for (const p of problems) this.emit({ lane: '-', kind: 'error', message: p });
      for (const lane of this.selected(lanes)) {
        const said = await recoverLane(store, lane);
        if (said) this.emit({ lane: lane.name, kind: 'recovered', message: said });
      }
      const binDir = this.o.loopx
        ? writeLoopxShim(path.join(laneFiles(store).dir, 'bin'), this.o.loopx.node, this.o.loopx.cli)
        : undefined;
      const sync = () => {
        if (this.stopping) return;
        const wanted = this.selected(readLanes(store).lanes);
        for (const lane of wanted) {
          if (this.runners.has(lane.name)) continue;
          const runner = new LaneRunner(lane, {
            store,
            env: this.o.env ?? process.env,
            binDir,
            leaseSeconds: this.o.leaseSeconds ?? DEFAULT_LEASE_SECONDS,
            emit: (e) => this.emit(e),
          });
          this.runners.set(lane.name, runner);
          void runner.done.then(() => this.runners.delete(lane.name));
        }
      };
      sync();
      if (this.o.untilIdle && this.runners.size === 0) this.stop();
      // A lane added while the driver runs starts at once; a removed one ends its own loop.
      try {
        this.lanesWatch = fs.watch(laneFiles(store).specs, () => setTimeout(sync, 20));
      } catch {
        // No lanes folder: nothing set up, nothing to watch.
      }
      await new Promise<void>((resolve) => {
        this.finished = resolve;
        if (this.stopping) resolve();
      });
    } finally {
      this.lanesWatch?.close();
      await Promise.all([...this.runners.values()].map((r) => r.stop()));
      this.release?.();
      this.release = undefined;
    }
  }

  /** Every sleeping lane looks again now (SIGHUP to `loopx drive`, the editor's Wake Agents). */
  wake(): void {
    for (const r of this.runners.values()) r.poke();
  }

  /** Lanes running now, by name. */
  laneNames(): string[] {
    return [...this.runners.keys()].sort();
  }

  /** Stops every lane (a turn in progress is stopped and its run ended `interrupted`). */
  stop(): void {
    this.stopping = true;
    this.finished?.();
  }

  private selected(lanes: LaneSpec[]): LaneSpec[] {
    return this.o.only ? lanes.filter((l) => this.o.only!.includes(l.name)) : lanes;
  }
}

/** Lanes that are stopped for failures get another chance (`loopx lane resume`). */
export function resumeLane(store: Store, name: string): void {
  const now = new Date(store.now());
  const { needsPerson: _n, until: _u, ...state } = readLaneState(store, name, now);
  writeLaneState(store, name, {
    ...state,
    failures: 0,
    status: 'idle',
    why: 'resumed by a person',
    updatedAt: now.toISOString(),
  });
  // A running driver's lane sleeps until a file it watches changes, and its state is not one
  // (the driver writes it itself): rewriting the lane's set-up, unchanged, wakes it now.
  writeJsonAtomic(path.join(laneFiles(store).specs, `${name}.json`), readLane(store, name));
}
