/**
 * Recurring todos in a lane of `loopx drive`, on a fake clock: the todo runs at once, the lane
 * sleeps until its next slot, and each slot that comes runs it once more; a week off runs it once,
 * for the latest slot; the due times survive a restart of the driver. Then `loopx todo add --every`
 * as a person's script uses it.
 *
 * The clock: the driver runs in this process on a Store whose clock the test sets (and `wake()`
 * stands for its sleep timer firing). The lanes' turns are processes that run the built `loopx`,
 * which reads the machine's clock; a preload (NODE_OPTIONS=--require) gives them the test's time,
 * flowing on from the moment the test set it, so that every writer agrees on what time it is.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { z } from 'zod';
import { invoke } from '../../src/core/capabilities/registry';
import { Driver } from '../../src/core/drive/driver';
import type { DriveEvent } from '../../src/core/drive/lane-runner';
import { readLaneState } from '../../src/core/drive/lanes';
import { parseRecurrence } from '../../src/core/rules/recurrence';
import { Store } from '../../src/core/store/store';
import { BIN, cleanEnv, fails, json, ok, removeTempDirs, tempDir } from '../helpers/cli';
import { driveWorkspace, linesOf, scriptRuntime, until, type DriveWorkspace } from '../helpers/drive-kit';

after(removeTempDirs);

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const iso = (ms: number) => new Date(ms).toISOString();

/** Date in a child process: the test's time (FAKE_NOW_FILE: `<ms> <real ms when set>`), flowing on from then. */
const FAKE_DATE = `
const fs = require('node:fs');
const file = process.env.FAKE_NOW_FILE;
if (file) {
  const [base, at] = fs.readFileSync(file, 'utf8').trim().split(' ').map(Number);
  const RealDate = Date;
  const now = () => base + (RealDate.now() - at);
  globalThis.Date = class extends RealDate {
    constructor(...args) { if (args.length === 0) super(now()); else super(...args); }
    static now() { return now(); }
  };
}
`;

describe('a recurring todo in a lane (fake clock)', () => {
  let w: DriveWorkspace;
  let now: number;
  let nowFile: string;
  let env: NodeJS.ProcessEnv;
  /** The first slot: a whole hour, after every event the workspace's set-up wrote. */
  let start: number;
  let drive: { driver: Driver; running: Promise<void>; events: DriveEvent[] };

  /** Since when (real ms) the clock runs on from `now`; undefined: it stands still. */
  let flowingSince: number | undefined;
  const setNow = (ms: number, o: { flowing?: boolean } = {}) => {
    now = ms;
    flowingSince = o.flowing ? Date.now() : undefined;
    fs.writeFileSync(nowFile, `${ms} ${Date.now()}`);
  };
  const clock = () => new Date(now + (flowingSince === undefined ? 0 : Date.now() - flowingSince));
  const store = () => Store.open(w.ws, { configDir: w.env.LOOPX_CONFIG_DIR, clock });
  const startDriver = () => {
    const events: DriveEvent[] = [];
    const driver = new Driver({
      store: store(),
      env,
      loopx: { node: process.execPath, cli: BIN },
      onEvent: (e) => events.push(e),
    });
    drive = { driver, running: driver.run(), events };
  };
  const stopDriver = async () => {
    drive.driver.stop();
    await drive.running;
  };
  const log = () => drive.events.map((e) => `${e.lane}: ${e.kind}: ${e.message}`).join('\n');
  const ticks = () => linesOf(w, 'ticks.txt').length;
  const lane = () => readLaneState(store(), 'a', clock());
  const reopenedDue = () =>
    store()
      .readLog(w.goal)
      .events.flatMap((e) => (e.type === 'todo.reopened' ? [e.data.due] : []));

  /** Waits until the todo ran `n` times in all and the lane sleeps until `until`. */
  async function ranAndAsleep(n: number, until_: number) {
    await until(
      `run ${n} done and the lane asleep until ${iso(until_)}`,
      () => {
        const s = lane();
        return ticks() >= n && s.status === 'asleep' && s.until === iso(until_);
      },
      60_000,
    ).catch((e: Error) => assert.fail(`${e.message}\nlane: ${JSON.stringify(lane())}\n--- driver\n${log()}`));
    assert.equal(ticks(), n, `ran ${n} times, not more`);
    assert.match(
      lane().why ?? '',
      new RegExp(`recurring todo watch is next due at ${iso(until_).replace(/\./g, '\\.')}`),
    );
  }

  /** Asks every lane to look again without moving the clock: nothing runs, it sleeps on. */
  async function wakeChangesNothing() {
    const asleep = drive.events.filter((e) => e.kind === 'asleep').length;
    const ran = ticks();
    drive.driver.wake();
    await until(
      'the lane looked again',
      () => drive.events.filter((e) => e.kind === 'asleep').length > asleep,
      20_000,
    );
    assert.equal(ticks(), ran, 'a look before the slot runs nothing');
  }

  before(async () => {
    w = await driveWorkspace('sched');
    await w.setRuntimes({ script: scriptRuntime() });
    ok(await w.run('lane', 'add', 'a', '--goal-id', w.goal, '--runtime', 'script'));
    const dir = tempDir('lxd-sched-clock-');
    fs.writeFileSync(path.join(dir, 'fake-date.cjs'), FAKE_DATE);
    nowFile = path.join(dir, 'now');
    env = cleanEnv({
      ...w.env,
      NODE_OPTIONS: `--require ${path.join(dir, 'fake-date.cjs')}`,
      FAKE_NOW_FILE: nowFile,
    });
    start = Math.ceil(Date.now() / HOUR) * HOUR + HOUR;
    setNow(start);
    const recur = parseRecurrence({ every: '1h', tz: 'UTC' }, new Date(now));
    const person = { kind: 'user', id: 'alice', channel: 'cli' } as const;
    invoke(
      store(),
      'todo.add',
      { goalId: w.goal, todoId: 'watch', title: 'Watch', action: 'echo tick >> ticks.txt', recur },
      person,
    );
  });
  after(async () => {
    if (drive) await stopDriver();
  });

  it('runs at once, sleeps until the next slot, and runs again at each slot', async () => {
    startDriver();
    await ranAndAsleep(1, start + HOUR);
    const t = store().load(w.goal).state.todos[0]!;
    assert.equal(t.status, 'done');
    assert.deepEqual(t.recur, { kind: 'every', seconds: 3600, anchor: iso(start), tz: 'UTC' });
    assert.deepEqual(reopenedDue(), [], 'the first run is the todo as added, not a reopening');
    await wakeChangesNothing();

    setNow(start + HOUR);
    drive.driver.wake();
    await ranAndAsleep(2, start + 2 * HOUR);
    setNow(start + 2 * HOUR);
    drive.driver.wake();
    await ranAndAsleep(3, start + 3 * HOUR);
    assert.deepEqual(reopenedDue(), [iso(start + HOUR), iso(start + 2 * HOUR)]);
    const state = store().load(w.goal).state;
    assert.equal(state.runs.filter((r) => r.agent === 'lane:a').length, 3, 'one run per slot');
    assert.equal(state.status, 'active');
  });

  it('after a week off, runs once, for the latest slot', async () => {
    const latest = start + 7 * DAY + 2 * HOUR;
    setNow(latest + 30 * 60_000);
    drive.driver.wake();
    await ranAndAsleep(4, latest + HOUR);
    assert.deepEqual(reopenedDue().slice(2), [iso(latest)], 'one reopening, not 168');
    await wakeChangesNothing();
    const t = store().load(w.goal).state.todos[0]!;
    assert.equal(t.dueAt, iso(latest));
    assert.equal(t.evidence.length, 4);
  });

  it('due times survive a restart: a new driver past the slot runs it once', async () => {
    await stopDriver();
    const slot = start + 7 * DAY + 3 * HOUR;
    setNow(slot + 5 * 60_000);
    startDriver();
    await ranAndAsleep(5, slot + HOUR);
    assert.deepEqual(reopenedDue().slice(3), [iso(slot)]);
    assert.deepEqual(
      drive.events.filter((e) => e.kind === 'recovered'),
      [],
      'nothing was left mid-turn',
    );
    await wakeChangesNothing();
    assert.equal(store().load(w.goal).state.runs.length, 5);
  });
  it('a gate waiting for a person does not stop the schedule: the lane’s timer still fires at the next slot', async () => {
    const next = start + 7 * DAY + 4 * HOUR;
    const person = { kind: 'user', id: 'alice', channel: 'cli' } as const;
    invoke(
      store(),
      'todo.add',
      {
        goalId: w.goal,
        todoId: 'deploy',
        title: 'Deploy',
        action: 'echo deploy >> deploys.txt',
        gate: 'prod',
      },
      person,
    );
    await until('the lane waiting for the person', () => lane().status === 'waiting_person', 20_000).catch(
      (e: Error) => assert.fail(`${e.message}\nlane: ${JSON.stringify(lane())}\n--- driver\n${log()}`),
    );
    assert.equal(
      lane().until,
      iso(next),
      `asleep until the next slot, not until the person acts: ${JSON.stringify(lane())}`,
    );

    // Two seconds before the slot, the clock running: the lane looks (not due), then its own
    // timer, armed from the store's clock, wakes it at the slot. No wake() this time.
    setNow(next - 2000, { flowing: true });
    drive.driver.wake();
    await until(
      'the timer ran the todo at its slot',
      () => ticks() === 6 && lane().until === iso(next + HOUR),
      20_000,
    ).catch((e: Error) => assert.fail(`${e.message}\nlane: ${JSON.stringify(lane())}\n--- driver\n${log()}`));
    assert.deepEqual(reopenedDue().slice(4), [iso(next)]);
    const state = store().load(w.goal).state;
    assert.equal(
      state.todos.find((t) => t.id === 'deploy')?.status,
      'open',
      'the gated work waits for the person',
    );
    assert.equal(state.gates.find((g) => g.id === 'prod')?.status, 'pending');
    assert.equal(lane().status, 'waiting_person');
    assert.deepEqual(linesOf(w, 'deploys.txt'), []);
  });
});

describe('loopx todo add --every (a person’s script)', () => {
  let w: DriveWorkspace;
  before(async () => {
    w = await driveWorkspace('every');
  });
  const todoOf = (id: string) => w.state().todos.find((t) => t.id === id);

  it('--every 1d --at 09:00 --tz UTC stores the schedule on the todo', async () => {
    const before_ = Date.now();
    ok(
      await w.run(
        'todo',
        'add',
        '--goal-id',
        w.goal,
        '--todo-id',
        'daily',
        '--title',
        'Daily',
        '--action',
        'echo hi',
        '--every',
        '1d',
        '--at',
        '09:00',
        '--tz',
        'UTC',
      ),
    );
    const recur = todoOf('daily')?.recur;
    assert.ok(recur && recur.kind === 'every', JSON.stringify(recur));
    assert.deepEqual(
      { ...recur, anchor: undefined },
      { kind: 'every', seconds: 86_400, at: '09:00', tz: 'UTC', anchor: undefined },
    );
    assert.ok(
      Date.parse(recur.anchor) >= before_ - 1000 && Date.parse(recur.anchor) <= Date.now(),
      `anchored now: ${recur.anchor}`,
    );
    assert.equal(todoOf('daily')?.status, 'open');
  });

  it('loopx todo show, status --json and status show the schedule and when it is next due', async () => {
    const doc = z.object({ recurs: z.string(), next_due: z.string().optional() }).passthrough();
    const shown = json(await w.run('--json', 'todo', 'show', '--goal-id', w.goal, '--todo-id', 'daily'), doc);
    assert.equal(shown.recurs, 'every day at 09:00 (UTC)');
    const status = json(
      await w.run('--json', 'status', '--goal-id', w.goal),
      z.object({ todos: z.array(z.object({ id: z.string() }).passthrough()) }).passthrough(),
    );
    const daily = doc.parse(status.todos.find((t) => t.id === 'daily'));
    assert.equal(daily.recurs, 'every day at 09:00 (UTC)');
    const text = await w.run('status', '--goal-id', w.goal);
    assert.match(text.stdout, /daily .*every day at 09:00 \(UTC\)/);
  });

  it('--every 3x is a usage error naming the flag and the value, and writes nothing', async () => {
    const events = w.events().length;
    fails(
      await w.run(
        'todo',
        'add',
        '--goal-id',
        w.goal,
        '--todo-id',
        'bad',
        '--title',
        'Bad',
        '--action',
        'echo hi',
        '--every',
        '3x',
      ),
      2,
      /--every "3x"/,
      /expected a number and a unit \(m, h, d or w\)/,
    );
    assert.equal(todoOf('bad'), undefined);
    assert.equal(w.events().length, events, 'no event written');
  });
});
