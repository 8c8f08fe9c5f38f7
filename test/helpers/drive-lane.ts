/**
 * One lane, `l1`, as the drive tests watch it: a workspace whose policy declares its runtime, its
 * report in `loopx drive status`, waiting for it to reach a state, and killing a driver with
 * everything left in its process group.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import type { LaneReport } from '../../src/core/views/drive-status-doc';
import { ok } from './cli';
import { driveWorkspace, scriptRuntime, until, type DriveWorkspace, type DriverProcess } from './drive-kit';

export const LANE = 'l1';
/** How long a step may take: generous, as other suites may share this machine's two cores. */
export const WAIT = 45_000;

/** A workspace whose policy declares runtime `name` (signed unless told) and lane l1 on it. */
export async function laneWorkspace(
  name: string,
  runtime = scriptRuntime(),
  o: { runtimeName?: string; sign?: boolean } = {},
): Promise<DriveWorkspace> {
  const w = await driveWorkspace(name);
  const rt = o.runtimeName ?? 'script';
  await w.setRuntimes({ [rt]: runtime }, { sign: o.sign });
  ok(await w.run('lane', 'add', LANE, '--goal-id', w.goal, '--runtime', rt));
  return w;
}

/** Lane l1 as `loopx drive status --json` reports it. */
export async function lane(w: DriveWorkspace): Promise<LaneReport> {
  const l = (await w.status()).lanes.find((x) => x.name === LANE);
  assert.ok(l, 'lane l1 is in drive status');
  return l;
}

/** Waits until lane l1 is in `status` (and `also` holds), returning its report. */
export const laneIs = (w: DriveWorkspace, status: LaneReport['status'], also = (_l: LaneReport) => true) =>
  until(
    `lane ${LANE} ${status}`,
    async () => {
      const l = await lane(w);
      return l.status === status && also(l) && l;
    },
    WAIT,
  );

export const openRuns = (w: DriveWorkspace) => w.state().runs.filter((r) => !r.endedAt);
export const claimed = (w: DriveWorkspace) => w.state().todos.filter((t) => t.status === 'claimed');
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Whether `pid` is a live process (a zombie counts as gone). */
export function alive(pid: number): boolean {
  try {
    return !/^\S+ \(.*\) Z /s.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** Kills a driver and everything left in its process group (a lane's turn has a group of its own). */
export function kill(d: DriverProcess | undefined): void {
  try {
    if (d?.child.pid) process.kill(-d.child.pid, 'SIGKILL');
  } catch {
    // Gone already.
  }
}
