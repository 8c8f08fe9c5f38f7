/**
 * `loopx drive` killed and started again, against the built CLI: a driver killed mid-turn leaves
 * its turn's processes running; the next one stops them, ends the run `interrupted`, gives back its
 * claims and runs the todo again, and nothing finished before the kill runs twice. A driver stopped
 * (SIGTERM) stops its turn itself.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ok, removeTempDirs } from '../helpers/cli';
import {
  addTodo,
  linesOf,
  startDriver,
  until,
  type DriveWorkspace,
  type DriverProcess,
} from '../helpers/drive-kit';
import {
  LANE,
  WAIT,
  laneWorkspace,
  laneIs,
  openRuns,
  claimed,
  sleep,
  alive,
  kill,
} from '../helpers/drive-lane';

/** Lane l1's state file, which the driver writes at each step. */
const laneStateFile = (w: DriveWorkspace) =>
  path.join(w.ws, '.loopx', 'local', 'drive', 'state', `${LANE}.json`);

/**
 * Runs `fn`, which starts drivers with `start()`: a failure carries each one's stderr, and those
 * still running are killed at the end, with the sleep a turn may have left (sleep.pid).
 */
async function withDrivers(
  w: DriveWorkspace,
  fn: (start: () => DriverProcess) => Promise<void>,
): Promise<void> {
  const started: DriverProcess[] = [];
  try {
    await fn(() => {
      const d = startDriver(w);
      started.push(d);
      return d;
    });
  } catch (e) {
    if (e instanceof Error)
      started.forEach(
        (d, i) => (e.message += `\n--- driver ${i + 1} (pid ${d.child.pid}) stderr\n${d.log()}`),
      );
    throw e;
  } finally {
    for (const d of started) if (d.child.exitCode === null && d.child.signalCode === null) kill(d);
    const pid = Number(linesOf(w, 'sleep.pid')[0]);
    if (pid && alive(pid)) process.kill(pid, 'SIGKILL');
  }
}

/**
 * A todo's action that sleeps 30 s the first time (its pid in sleep.pid) and, once a marker file
 * exists, writes `line` to out.txt at once: the second run of it finishes.
 */
const sleepsOnce = (line: string) =>
  `sh -c 'if [ -f slept ]; then echo ${line} >> out.txt; else touch slept; echo $$ > sleep.pid; exec sleep 30; fi'`;

/** Waits for the sleeping action's pid and the turn it runs in (its run, its process group). */
async function sleepingTurn(w: DriveWorkspace): Promise<{ pid: number; runId: string; group: number }> {
  const pid = Number(await until('sleep.pid', () => linesOf(w, 'sleep.pid')[0], WAIT));
  const l = await laneIs(w, 'working', (x) => !!x.turn);
  return { pid, runId: l.turn!.run_id, group: l.turn!.pid };
}

describe('loopx drive: killed and started again', { concurrency: false }, () => {
  after(removeTempDirs);

  it('SIGKILL mid-turn: the next driver stops the old turn, ends its run interrupted and runs the todo again', async () => {
    const w = await laneWorkspace('kill-turn');
    await addTodo(w, 'a', 'echo a >> out.txt');
    await addTodo(w, 's', sleepsOnce('s'));
    await withDrivers(w, async (start) => {
      const d1 = start();
      const turn = await sleepingTurn(w);
      assert.deepEqual(linesOf(w, 'out.txt'), ['a'], 'todo a finished before the kill');
      process.kill(d1.child.pid!, 'SIGKILL');
      assert.equal(await d1.exited, null);
      await sleep(300);
      assert.ok(alive(turn.pid), "the turn's processes outlive their driver");
      assert.equal((await w.status()).driver.running, false);

      const t0 = performance.now();
      const d2 = start();
      await until('the recovery notice', () => /l1: recovered: /.test(d2.log()), WAIT);
      console.log(`# recovery: ${(performance.now() - t0).toFixed(0)} ms from the new driver's start`);
      assert.match(
        d2.log(),
        new RegExp(
          `l1: recovered: run ${turn.runId} ended interrupted: its driver stopped during the turn; ` +
            `the turn's processes \\(group ${turn.group}\\) were stopped; released s\\n`,
        ),
      );
      await until('the old sleep gone', () => !alive(turn.pid), 2000);
      assert.ok(!alive(turn.group), "the old turn's runtime is gone too");

      const done = await laneIs(w, 'stopped');
      assert.match(done.why ?? '', /every agent todo is done/);
      assert.equal(done.failures, 0, 'an interrupted turn is not a failure');
      assert.deepEqual(linesOf(w, 'out.txt'), ['a', 's'], 'a ran once; s ran again and finished');
      const runs = w.state().runs;
      assert.deepEqual(
        runs.map((r) => [r.contract?.actions.map((x) => x.todoId), r.outcome]),
        [
          [['a'], 'succeeded'],
          [['s'], 'interrupted'],
          [['s'], 'succeeded'],
        ],
      );
      assert.equal(runs[1]!.id, turn.runId);
      assert.match(runs[1]!.summary ?? '', /^ended by loopx drive: its driver stopped during the turn/);
      assert.deepEqual(
        w
          .events()
          .filter((e) => e.type === 'todo.released')
          .map((e) => [e.actor.id, (e.data as { todoId: string }).todoId]),
        [['loopx-drive', 's']],
        'the recovery released the claim on s',
      );
      assert.deepEqual(openRuns(w), []);
      assert.deepEqual(claimed(w), []);
    });
  });

  it('SIGKILL while the lane waits at a gate: nothing runs twice, and the approval wakes the next driver', async () => {
    const w = await laneWorkspace('kill-gate');
    await addTodo(w, 'a', 'echo a >> out.txt');
    await addTodo(w, 'e', 'echo e >> out.txt', '--gate', 'prod');
    await withDrivers(w, async (start) => {
      const d1 = start();
      await laneIs(w, 'waiting_person');
      process.kill(d1.child.pid!, 'SIGKILL');
      await d1.exited;

      const restarted = Date.now();
      const d2 = start();
      // The new driver asks again (and writes the lane's state) and starts nothing.
      await until('the new driver to look', () => fs.statSync(laneStateFile(w)).mtimeMs >= restarted, WAIT);
      const l = await laneIs(w, 'waiting_person');
      assert.equal(l.needs_person, true);
      assert.match(l.why ?? '', /gate prod is pending/);
      await sleep(1500);
      assert.doesNotMatch(d2.log(), /recovered|turn started/);
      assert.deepEqual(linesOf(w, 'out.txt'), ['a']);
      assert.equal(w.state().runs.length, 1);
      assert.deepEqual(openRuns(w), []);
      assert.deepEqual(claimed(w), []);

      ok(await w.asPerson('gate', 'approve', '--goal-id', w.goal, '--gate-id', 'prod'));
      await laneIs(w, 'stopped');
      assert.deepEqual(linesOf(w, 'out.txt'), ['a', 'e']);
      assert.deepEqual(
        w.state().runs.map((r) => r.outcome),
        ['succeeded', 'succeeded'],
      );
      assert.match(d2.log(), /l1: turn started: /);
    });
  });

  it('SIGTERM mid-turn: the turn is stopped, its run ended interrupted, and loopx drive exits 0', async () => {
    const w = await laneWorkspace('term');
    await addTodo(w, 's', `sh -c 'echo $$ > sleep.pid; exec sleep 30'`);
    await withDrivers(w, async (start) => {
      const d = start();
      const turn = await sleepingTurn(w);
      const t0 = performance.now();
      assert.equal(await d.stop(), 0);
      assert.ok(performance.now() - t0 < 5000, 'the turn stopped on SIGTERM, within the SIGKILL grace');
      assert.ok(!alive(turn.pid), 'the sleep was stopped with its turn');
      const state = w.state();
      assert.deepEqual(
        state.runs.map((r) => [r.id, r.outcome, r.summary]),
        [[turn.runId, 'interrupted', 'ended by loopx drive: loopx drive was stopped mid-turn']],
      );
      assert.equal(state.todos.find((t) => t.id === 's')?.status, 'open', 'its claim was released');
      const s = await w.status();
      assert.deepEqual(s.driver, { running: false });
      assert.equal(s.working, 0);
      const l = s.lanes[0]!;
      assert.equal(l.status, 'idle', 'no lane works once its driver stopped');
      assert.equal(l.why, 'loopx drive was stopped mid-turn');
      assert.equal(l.last?.outcome, 'interrupted');
      assert.equal(l.turn, undefined);
      assert.equal(l.failures, 0);
    });
  });
});
