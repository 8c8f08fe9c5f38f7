/**
 * `loopx drive` end to end, against the built CLI: one lane's life on a goal (its turns, a gate, a
 * budget, a time limit, failures), what it refuses to run (an unsigned or changed runtime), and the
 * one driver per workspace. Each test asserts the lane's state, the goal's runs and todos, and files
 * the todos' commands write.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readLaneState, writeLaneState } from '../../src/core/drive/lanes';
import { effectiveStatus } from '../../src/core/model/goal-state';
import { fails, ok, removeTempDirs } from '../helpers/cli';
import {
  addTodo,
  linesOf,
  scriptRuntime,
  startDriver,
  until,
  type DriveWorkspace,
  type DriverProcess,
} from '../helpers/drive-kit';
import {
  LANE,
  WAIT,
  laneWorkspace,
  lane,
  laneIs,
  openRuns,
  claimed,
  sleep,
  alive,
  kill,
} from '../helpers/drive-lane';

/**
 * Runs `fn` with a `loopx drive` on the workspace; a failure carries the driver's stderr, and the
 * driver's process group is killed whatever happens.
 */
async function withDriver(w: DriveWorkspace, fn: (d: DriverProcess) => Promise<void>): Promise<void> {
  const d = startDriver(w);
  try {
    await fn(d);
  } catch (e) {
    if (e instanceof Error) e.message += `\n--- loopx drive stderr\n${d.log()}`;
    throw e;
  } finally {
    kill(d);
  }
}

describe('loopx drive: a lane from start to finish', { concurrency: false }, () => {
  after(removeTempDirs);

  it('runs four todos one per turn, waits at a gate, wakes on the approval and completes the goal', async () => {
    const w = await laneWorkspace('life');
    for (const t of ['a', 'b', 'c', 'd']) await addTodo(w, t, `echo ${t} >> out.txt`);
    await addTodo(w, 'e', 'echo e >> out.txt', '--gate', 'prod');
    await withDriver(w, async () => {
      const waiting = await laneIs(w, 'waiting_person');
      assert.deepEqual(linesOf(w, 'out.txt'), ['a', 'b', 'c', 'd']);
      const runs = w.state().runs;
      assert.equal(runs.length, 4, 'one run per todo');
      assert.deepEqual(
        runs.map((r) => [r.agent, r.outcome, r.contract?.actions.map((a) => a.todoId)]),
        ['a', 'b', 'c', 'd'].map((t) => ['lane:l1', 'succeeded', [t]]),
      );
      assert.equal(waiting.needs_person, true);
      assert.match(waiting.why ?? '', /gate prod is pending/);
      assert.equal(waiting.failures, 0);

      const approved = await w.asPerson('gate', 'approve', '--goal-id', w.goal, '--gate-id', 'prod');
      const t0 = performance.now();
      ok(approved);
      await until('the gated line', () => linesOf(w, 'out.txt').includes('e'), WAIT);
      const wakeMs = performance.now() - t0;
      console.log(`# wake after approval: ${wakeMs.toFixed(0)} ms (approval returned -> gated line written)`);
      assert.ok(wakeMs < 5000, `the lane woke ${wakeMs} ms after the approval`);

      const done = await laneIs(w, 'stopped');
      assert.match(done.why ?? '', /every agent todo is done/);
      assert.equal(done.needs_person, false);
      const state = w.state();
      assert.equal(effectiveStatus(state), 'completed');
      assert.deepEqual(linesOf(w, 'out.txt'), ['a', 'b', 'c', 'd', 'e'], 'each line exactly once');
      assert.deepEqual(
        state.runs.map((r) => r.outcome),
        Array(5).fill('succeeded'),
      );
      assert.deepEqual(openRuns(w), [], 'no run left open');
      assert.deepEqual(claimed(w), [], 'no todo claimed');
      assert.deepEqual(
        state.todos.map((t) => [t.id, t.status]),
        ['a', 'b', 'c', 'd', 'e'].map((t) => [t, 'done']),
      );
    });
  });

  it('stops a turn past its time limit: its process group killed, the run timed_out, the claim released', async () => {
    const w = await laneWorkspace('timeout', scriptRuntime({ turnTimeoutMinutes: 0.05 }));
    await addTodo(w, 'slow', `sh -c 'echo $$ > sleep.pid; exec sleep 30'`);
    await withDriver(w, async (d) => {
      const pid = Number(await until('sleep.pid', () => linesOf(w, 'sleep.pid')[0], WAIT));
      // Read straight from the lane's state file: the turn lasts only 3 s.
      const { turn } = readLaneState(w.store(), LANE, new Date());
      assert.ok(turn, 'the lane is in a turn');
      assert.equal(Date.parse(turn.deadline) - Date.parse(turn.startedAt), 3000, 'a 3 s limit');
      assert.ok(alive(pid), 'the sleep runs');
      const died = await until('the sleep killed', () => !alive(pid) && Date.now(), 20_000);
      const late = died - Date.parse(turn.deadline);
      // SIGTERM at the deadline (SIGKILL after 5 s of grace), seen by a 50 ms poll.
      assert.ok(late >= 0 && late < 5000 + 1000, `the sleep died ${late} ms after the deadline`);
      const l = await laneIs(w, 'asleep', (x) => x.failures === 1);
      assert.equal(l.last?.outcome, 'timed_out');
      assert.match(l.why ?? '', /backing off after 1 failed turn/);
      const state = w.state();
      assert.deepEqual(
        state.runs.map((r) => [r.outcome, r.summary]),
        [['timed_out', 'ended by loopx drive: the turn ran past its limit of 0.05 min and was stopped']],
      );
      assert.equal(state.todos.find((t) => t.id === 'slow')?.status, 'open', 'its claim was released');
      assert.match(d.log(), /turn ended: run \S+ timed_out/);
    });
  });

  it('waits for a person when the turns budget is used up, and goes on when more is granted', async () => {
    const w = await laneWorkspace('budget');
    ok(await w.run('quota', 'set', '--goal-id', w.goal, '--turns', '2'));
    for (const t of ['a', 'b', 'c', 'd']) await addTodo(w, t, `echo ${t} >> out.txt`);
    await withDriver(w, async (d) => {
      const l = await laneIs(w, 'waiting_person');
      assert.equal(l.needs_person, true);
      assert.match(l.why ?? '', /turns budget is used up \(2 of 2\)/);
      assert.match(d.log(), /l1: waiting person: .*turns budget is used up \(2 of 2\)/);
      await sleep(1500);
      assert.equal(w.state().runs.length, 2, 'no third run');
      assert.deepEqual(linesOf(w, 'out.txt'), ['a', 'b']);

      ok(await w.asPerson('quota', 'grant', '--goal-id', w.goal, '--turns', '2'));
      const done = await laneIs(w, 'stopped');
      assert.match(done.why ?? '', /every agent todo is done/);
      assert.deepEqual(linesOf(w, 'out.txt'), ['a', 'b', 'c', 'd']);
      assert.deepEqual(
        w.state().runs.map((r) => r.outcome),
        Array(4).fill('succeeded'),
      );
    });
  });

  it('never starts a runtime the person did not sign, and starts it once they sign', async () => {
    const mark = 'sneaky.mark';
    const sneaky = scriptRuntime({ env: { SCRIPT_RUNTIME_MARK: mark } });
    const w = await laneWorkspace('unsigned', sneaky, { runtimeName: 'sneaky', sign: false });
    await addTodo(w, 'a', 'echo a >> out.txt');
    await withDriver(w, async () => {
      const l = await laneIs(w, 'waiting_person');
      assert.equal(l.needs_person, true);
      assert.match(l.why ?? '', /^no runtime sneaky in the signed policy/);
      await sleep(3000);
      assert.ok(!fs.existsSync(path.join(w.ws, mark)), 'the unsigned runtime never ran');
      assert.deepEqual(w.state().runs, [], 'no run opened');
      assert.equal((await lane(w)).status, 'waiting_person');

      ok(await w.asPerson('policy', 'sign'));
      await laneIs(w, 'stopped');
      assert.equal(linesOf(w, mark).length, 1, 'started once, once signed');
      assert.deepEqual(linesOf(w, 'out.txt'), ['a']);
    });
  });

  it('keeps running the signed command of a runtime changed after signing', async () => {
    const signedMark = 'signed.mark';
    const w = await laneWorkspace('changed', scriptRuntime({ env: { SCRIPT_RUNTIME_MARK: signedMark } }));
    await addTodo(w, 'a', 'echo a >> out.txt');
    await withDriver(w, async () => {
      await laneIs(w, 'stopped');
      assert.equal(linesOf(w, signedMark).length, 1);
      // Edited, not signed: another program, which would leave its own mark.
      await w.setRuntimes(
        { script: { command: ['/bin/sh', '-c', 'echo $$ >> edited.mark'] } },
        { sign: false },
      );
      await addTodo(w, 'b', 'echo b >> out.txt');
      await until('todo b done', () => linesOf(w, 'out.txt').includes('b'), WAIT);
      await laneIs(w, 'stopped');
      assert.equal(linesOf(w, signedMark).length, 2, 'the signed command ran the second turn');
      assert.ok(!fs.existsSync(path.join(w.ws, 'edited.mark')), 'the edited command never ran');
      assert.deepEqual(linesOf(w, 'out.txt'), ['a', 'b']);
    });
  });

  it('refuses a second driver on the same workspace, naming the first, which keeps going', async () => {
    const w = await laneWorkspace('second');
    await withDriver(w, async (d) => {
      await laneIs(w, 'waiting_person');
      const r = fails(await w.run('drive'), 4, new RegExp(`another loopx drive .*process ${d.child.pid}\\b`));
      assert.doesNotMatch(r.stderr, /turn started/);
      const j = await w.run('--json', 'drive');
      assert.equal(j.code, 4);
      assert.match(j.stdout + j.stderr, /drive_running/);
      assert.equal(d.child.exitCode, null, 'the first driver still runs');
      await addTodo(w, 'a', 'echo a >> out.txt');
      await laneIs(w, 'stopped');
      assert.deepEqual(linesOf(w, 'out.txt'), ['a'], 'the first driver ran the todo added after');
    });
  });

  it('drive status says whether a driver runs, and which process it is', async () => {
    const w = await laneWorkspace('status');
    assert.deepEqual((await w.status()).driver, { running: false });
    await withDriver(w, async (d) => {
      await laneIs(w, 'waiting_person');
      const s = await w.status();
      assert.equal(s.driver.running, true);
      assert.equal(s.driver.pid, d.child.pid);
      assert.equal(await d.stop(), 0);
      assert.deepEqual((await w.status()).driver, { running: false });
    });
  });

  it('backs off after failed turns: 10 s, then 20 s', async () => {
    const w = await laneWorkspace('failing');
    await addTodo(w, 'f', 'echo f >> tries.txt; exit 1');
    await withDriver(w, async (d) => {
      const one = await laneIs(w, 'asleep', (l) => l.failures === 1);
      assert.equal(one.last?.outcome, 'failed');
      assert.equal(one.last?.exit_code, 1);
      assert.equal(one.why, 'backing off after 1 failed turn');
      assert.equal(Date.parse(one.until!) - Date.parse(one.last!.ended_at), 10_000);
      assert.deepEqual(claimed(w), [], 'the claim was given back');
      const two = await until(
        'a second failed turn',
        async () => {
          const l = await lane(w);
          return l.failures === 2 && l.status === 'asleep' && l;
        },
        10_000 + WAIT,
      );
      assert.equal(two.why, 'backing off after 2 failed turns');
      assert.equal(Date.parse(two.until!) - Date.parse(two.last!.ended_at), 20_000);
      assert.ok(
        Date.parse(two.last!.ended_at) - Date.parse(one.last!.ended_at) >= 10_000,
        'the second turn came after the backoff',
      );
      assert.deepEqual(linesOf(w, 'tries.txt'), ['f', 'f']);
      assert.deepEqual(
        w.state().runs.map((r) => r.outcome),
        ['failed', 'failed'],
      );
      assert.equal(await d.stop(), 0);
      ok(await w.run('lane', 'resume', LANE));
      const resumed = await lane(w);
      assert.equal(resumed.failures, 0);
      assert.equal(resumed.status, 'idle');
      assert.equal(resumed.needs_person, false);
      assert.equal(resumed.until, undefined);
    });
  });

  it('a lane stopped after MAX_FAILURES waits for a person; `lane resume` starts it again', async () => {
    const w = await laneWorkspace('resume');
    await addTodo(w, 'a', 'echo a >> out.txt');
    const now = new Date().toISOString();
    writeLaneState(w.store(), LANE, {
      v: 1,
      status: 'idle',
      failures: 5,
      last: { outcome: 'failed', exitCode: 1, endedAt: now, summary: 'the runtime exited with code 1' },
      updatedAt: now,
    });
    await withDriver(w, async () => {
      const l = await laneIs(w, 'stopped');
      assert.equal(l.needs_person, true);
      assert.match(l.why ?? '', /^5 turns in a row failed .*loopx lane resume/);
      await sleep(1500);
      assert.deepEqual(w.state().runs, [], 'a stopped lane starts nothing');

      ok(await w.run('lane', 'resume', LANE));
      await until('todo a done', () => linesOf(w, 'out.txt').includes('a'), 10_000);
      const done = await laneIs(w, 'stopped', (x) => x.failures === 0 && !x.needs_person);
      assert.match(done.why ?? '', /every agent todo is done/);
    });
  });
});
