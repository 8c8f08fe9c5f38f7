/**
 * Two writers never hold one goal (issue 35): a writer of the built CLI is stopped (SIGSTOP, by
 * test/fixtures/fault-preload.cjs) at an exact point while it holds the goal's lock, and a second
 * writer comes along in each of the ways that once made it break a live lock: its clock hours
 * ahead or minutes behind, in another PID namespace (same host name, the holder's pid invisible),
 * or finding the lock file still empty. The second must wait for the first; both must end with
 * exit 0, and the goal must stay readable with both todos, its log one valid chain.
 *
 * With the exclusive-file lock this suite replaced, the second writer broke the lock at once (or
 * after 2 s for the empty file), both appended the same seq, and every later command exited 6.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  figure,
  loopx,
  removeTempDirs,
  sleep,
  startFaulted,
  tempDir,
  verifiedTodoIds,
  waitForFile,
} from '../helpers/reliability';

after(removeTempDirs);

/** How long the second writer gets while the first is stopped: past every stale rule of the old lock (2 s). */
const STOPPED_MS = 3500;

const canUnsharePid = spawnSync('unshare', ['--pid', '--fork', 'true']).status === 0;

/** `loopx todo add` of todo `id` in goal g. */
const todoAdd = (id: string) => ['todo', 'add', '--goal-id', 'g', '--todo-id', id, '--title', `todo ${id}`];

interface Case {
  name: string;
  /** Where the first writer stops, holding the lock. */
  pause: 'append' | 'lock-body';
  /** The second writer's environment, and what it is run under. */
  env?: Record<string, string>;
  wrap?: string[];
  /** Done to the workspace while the holder is stopped, before the second writer starts. */
  meanwhile?: (ws: string) => void;
}

/**
 * The lock file as it would read after its holder had been stopped for an hour: its time an hour
 * back, in the form its writer gave it (the exclusive-file lock wrote a number, the kernel lock
 * writes an ISO time).
 */
function agedAnHour(ws: string): void {
  const file = path.join(ws, '.loopx', 'local', 'locks', 'goal-g.lock');
  const body = JSON.parse(fs.readFileSync(file, 'utf8')) as { at: number | string };
  const hourAgo = Date.now() - 3_600_000;
  body.at = typeof body.at === 'number' ? hourAgo : new Date(hourAgo).toISOString();
  fs.writeFileSync(file, JSON.stringify(body));
}

const CASES: Case[] = [
  {
    name: 'a second writer whose clock is 6 hours ahead (a laptop waking, NTP stepping)',
    pause: 'append',
    env: { LOOPX_FAULT_CLOCK_MS: String(6 * 3600_000) },
  },
  {
    name: 'a second writer whose clock is 2 minutes behind',
    pause: 'append',
    env: { LOOPX_FAULT_CLOCK_MS: String(-120_000) },
  },
  {
    name: 'a second writer in another PID namespace with the same host name',
    pause: 'append',
    wrap: ['unshare', '--pid', '--fork'],
  },
  { name: 'a holder stopped before it wrote anything into the lock file', pause: 'lock-body' },
  {
    name: 'a holder stopped for longer than any call takes (its lock file an hour old)',
    pause: 'append',
    meanwhile: agedAnHour,
  },
];

describe('two writers never hold one goal', () => {
  for (const c of CASES) {
    it(
      `${c.name}: waits for the stopped holder; both todos are written once, the goal stays readable`,
      { timeout: 60_000 },
      async (t) => {
        if (c.wrap) assert.ok(canUnsharePid, 'this test needs `unshare --pid` (run as root, as CI does)');
        const ws = tempDir();
        const run = (args: string[]) => loopx(args, { cwd: ws });
        assert.equal((await run(['init'])).code, 0);
        assert.equal((await run(['goal', 'create', '--goal-id', 'g', '--title', 'G'])).code, 0);
        const marker = path.join(ws, 'stopped');
        const first = startFaulted(todoAdd('a'), ws, {
          LOOPX_FAULT_PAUSE: c.pause,
          LOOPX_FAULT_MARKER: marker,
        });
        try {
          await waitForFile(marker);
          c.meanwhile?.(ws);
          const startedAt = Date.now();
          const second = startFaulted(todoAdd('b'), ws, c.env ?? {}, c.wrap);
          await sleep(STOPPED_MS);
          const resumedAt = Date.now();
          process.kill(first.pid, 'SIGCONT');
          const [a, b] = await Promise.all([first.exited, second.exited]);
          assert.equal(a.code, 0, `the stopped writer: ${a.stderr}`);
          assert.equal(b.code, 0, `the second writer: ${b.stderr}`);
          assert.ok(
            b.at >= resumedAt,
            `the second writer finished ${b.at - startedAt} ms after it started, while the first still held the lock`,
          );
          figure(t, `${c.name}: the second writer waited ${b.at - startedAt} ms, until the holder went on`);
        } finally {
          try {
            process.kill(first.pid, 'SIGKILL');
          } catch {
            /* gone */
          }
        }
        assert.deepEqual((await verifiedTodoIds(ws)).sort(), ['a', 'b']);
      },
    );
  }

  it(
    'the exclusive-file stand-in, fooled by a clock 6 hours ahead, forks nothing: the stopped holder’s append is refused (exit 5), its retry succeeds',
    { timeout: 60_000 },
    async () => {
      const ws = tempDir();
      const run = (args: string[]) => loopx(args, { cwd: ws, env: { LOOPX_LOCK: 'file' } });
      assert.equal((await run(['init'])).code, 0);
      assert.equal((await run(['goal', 'create', '--goal-id', 'g', '--title', 'G'])).code, 0);
      const marker = path.join(ws, 'stopped');
      const first = startFaulted(todoAdd('a'), ws, {
        LOOPX_LOCK: 'file',
        LOOPX_FAULT_PAUSE: 'append',
        LOOPX_FAULT_MARKER: marker,
      });
      try {
        await waitForFile(marker);
        const second = startFaulted(todoAdd('b'), ws, {
          LOOPX_LOCK: 'file',
          LOOPX_FAULT_CLOCK_MS: String(6 * 3600_000),
        });
        const b = await second.exited;
        assert.equal(b.code, 0, `the second writer broke the stand-in's lock and wrote: ${b.stderr}`);
        process.kill(first.pid, 'SIGCONT');
        const a = await first.exited;
        assert.equal(a.code, 5, `the stopped holder: ${a.stderr}`);
        assert.match(a.stderr, /another process wrote to it meanwhile; nothing was written/);
      } finally {
        try {
          process.kill(first.pid, 'SIGKILL');
        } catch {
          /* gone */
        }
      }
      assert.deepEqual(await verifiedTodoIds(ws), ['b']);
      assert.equal(
        (await run(['todo', 'add', '--goal-id', 'g', '--todo-id', 'a', '--title', 'todo a'])).code,
        0,
      );
      assert.deepEqual((await verifiedTodoIds(ws)).sort(), ['a', 'b']);
    },
  );
});
