/**
 * A full disk never eats an acknowledged event (issue 35), on a real small file system: a 1 MiB
 * tmpfs mounted for the test (root, as CI runs), and a file size limit (`ulimit -f`). The built CLI
 * is run as a user would.
 *
 * - The disk fills part-way through an append: the part that fitted is cut off again, the call
 *   exits 7 naming the log and the space needed, the log is byte for byte what it was, and once
 *   space is free the next write goes on from there.
 * - The log reaches the file size limit part-way through an append: the same (EFBIG). Before,
 *   the call exited 0 with half its line written, and the next write moved that aside: an
 *   acknowledged todo was gone.
 * - The events fit but the caches (snapshot, goal index) do not: the call succeeds (exit 0, the
 *   events are durable) with a warning, and the next read rebuilds the caches.
 */
import { describe, it, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  BIN,
  cleanEnv,
  loopx,
  removeTempDirs,
  sleep,
  startFaulted,
  tempDir,
  verifiedTodoIds,
  waitForFile,
} from '../helpers/reliability';
import type { Result } from '../helpers/reliability';

const mounts: string[] = [];
after(() => {
  for (const m of mounts.splice(0)) spawnSync('umount', ['-l', m]);
  removeTempDirs();
});

/** A fresh 1 MiB tmpfs (the test fails, clearly, where it cannot be mounted). */
function smallDisk(): string {
  const dir = tempDir('loopx-disk-');
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir], { encoding: 'utf8' });
  assert.equal(r.status, 0, `cannot mount a tmpfs (run as root, as CI does): ${r.stderr}`);
  mounts.push(dir);
  return dir;
}

/** Fills the file system of `dir` to the last byte with `filler`. */
function fill(dir: string): string {
  const filler = path.join(dir, 'filler');
  const fd = fs.openSync(filler, 'w');
  const page = Buffer.alloc(4096);
  try {
    for (;;) fs.writeSync(fd, page);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e;
  } finally {
    fs.closeSync(fd);
  }
  // Bytes a page already holds can still be written; take those too.
  try {
    for (;;) fs.appendFileSync(filler, 'x');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e;
  }
  return filler;
}

const logOf = (ws: string) => {
  const dir = path.join(ws, '.loopx', 'goals', 'g', 'events');
  return path.join(
    dir,
    fs.readdirSync(dir).find((n) => n.endsWith('.jsonl'))!,
  );
};

/** Adds todos until the log's last page has less than `slack` bytes free (a page is 4096). */
async function logNearPageEnd(ws: string, maxSlack: number, page = 4096): Promise<void> {
  for (let i = 0; ; i++) {
    const size = fs.statSync(logOf(ws)).size;
    if (page - (size % page) < maxSlack) return;
    assert.ok(i < 200, 'the log never came near a page end');
    const r = await loopx(
      [
        'todo',
        'add',
        '--goal-id',
        'g',
        '--todo-id',
        `f${i}`,
        '--title',
        `filler ${i} ${'x'.repeat(40 + ((i * 37) % 120))}`,
      ],
      { cwd: ws },
    );
    assert.equal(r.code, 0, r.stderr);
  }
}

async function goal(ws: string): Promise<void> {
  assert.equal((await loopx(['init'], { cwd: ws })).code, 0);
  const r = await loopx(['goal', 'create', '--goal-id', 'g', '--title', 'Disk'], { cwd: ws });
  assert.equal(r.code, 0, r.stderr);
}

const bigTitle = (id: string) => `${id} ${'y'.repeat(180)}`;

function assertStorage(r: Result, log: string, reason: RegExp): void {
  assert.equal(r.code, 7, `exit ${r.code}: ${r.stderr}`);
  assert.ok(r.stderr.includes(log), `the message does not name the log: ${r.stderr}`);
  assert.match(r.stderr, reason);
  assert.doesNotMatch(r.stderr, /^\s+at /m, 'a stack trace');
}

describe('a full disk never eats an acknowledged event', () => {
  let root = false;
  before(() => {
    root = process.getuid?.() === 0;
  });

  it('the disk fills part-way through an append: cut back, exit 7 naming the log and the space, nothing lost', async () => {
    assert.ok(root, 'this test mounts a tmpfs: run it as root, as CI does');
    const ws = smallDisk();
    await goal(ws);
    await logNearPageEnd(ws, 300);
    const log = logOf(ws);
    const before = fs.readFileSync(log);
    const filler = fill(ws);
    const r = await loopx(['todo', 'add', '--goal-id', 'g', '--todo-id', 'big', '--title', bigTitle('big')], {
      cwd: ws,
    });
    assertStorage(r, log, /the disk is full \(ENOSPC\): \d+ bytes are needed, 0 bytes are free/);
    assert.deepEqual(fs.readFileSync(log), before, 'the log is not what it was');
    fs.rmSync(filler);
    const again = await loopx(
      ['todo', 'add', '--goal-id', 'g', '--todo-id', 'big', '--title', bigTitle('big')],
      { cwd: ws },
    );
    assert.equal(again.code, 0, again.stderr);
    assert.ok((await verifiedTodoIds(ws)).includes('big'));
  });

  it('the events fit but the caches do not: exit 0 with a warning, and the next read has everything', async () => {
    assert.ok(root, 'this test mounts a tmpfs: run it as root, as CI does');
    const ws = smallDisk();
    await goal(ws);
    // Room for the event in the log's last page, none for a new snapshot file.
    for (let i = 0; i < 3; i++)
      assert.equal((await loopx(['todo', 'add', '--goal-id', 'g', '--title', `t${i}`], { cwd: ws })).code, 0);
    const size = fs.statSync(logOf(ws)).size;
    assert.ok(4096 - (size % 4096) > 1000, `the log's last page is nearly full (${size} bytes)`);
    const filler = fill(ws);
    const r = await loopx(['todo', 'add', '--goal-id', 'g', '--todo-id', 'fits', '--title', 'fits'], {
      cwd: ws,
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stderr,
      /warning: goal g: the events are written, but its snapshot could not be updated .*ENOSPC/,
    );
    fs.rmSync(filler);
    assert.ok((await verifiedTodoIds(ws)).includes('fits'));
  });

  it('a holder and a waiter in one group commit on a full disk: neither is told its todo is written unless it is', async () => {
    assert.ok(root, 'this test mounts a tmpfs: run it as root, as CI does');
    const ws = smallDisk();
    await goal(ws);
    await logNearPageEnd(ws, 300);
    const marker = path.join(ws, 'stopped');
    const add = (id: string, env: Record<string, string>) =>
      startFaulted(['todo', 'add', '--goal-id', 'g', '--todo-id', id, '--title', bigTitle(id)], ws, env)
        .exited;
    // The holder takes the lock and stops; the waiter queues its call for it; then the disk fills.
    const holder = add('held', { LOOPX_FAULT_PAUSE: 'lock-body', LOOPX_FAULT_MARKER: marker });
    await waitForFile(marker);
    const waiter = add('queued', {});
    const queue = path.join(ws, '.loopx', 'local', 'queue', 'g');
    while (!(fs.existsSync(queue) && fs.readdirSync(queue).some((n) => n.endsWith('.req')))) await sleep(10);
    const filler = fill(ws);
    process.kill(Number(fs.readFileSync(marker, 'utf8')), 'SIGCONT');
    const results = { held: await holder, queued: await waiter };
    fs.rmSync(filler);
    const log = fs.readFileSync(logOf(ws));
    assert.equal(log.at(-1), 10, 'the log ends in the middle of a line');
    const ids = await verifiedTodoIds(ws);
    for (const [id, r] of Object.entries(results)) {
      if (r.code === 0) assert.ok(ids.includes(id), `${id} was acknowledged but is not in the log`);
      else {
        assert.equal(r.code, 7, `${id}: exit ${r.code}: ${r.stderr}`);
        assert.ok(!ids.includes(id), `${id} failed but is in the log`);
      }
    }
    assert.ok(
      Object.values(results).some((r) => r.code === 7),
      'the disk never refused a write',
    );
  });

  it('the log reaches the file size limit part-way through an append (ulimit -f): exit 7, and the acknowledged todos stay', async () => {
    const ws = tempDir();
    await goal(ws);
    await logNearPageEnd(ws, 200, 1024);
    const log = logOf(ws);
    const before = fs.readFileSync(log);
    const blocks = Math.ceil(before.length / 1024);
    const script = `ulimit -f ${blocks}; exec "$0" "$@"`;
    const limited = spawnSync(
      'bash',
      [
        '-c',
        script,
        process.execPath,
        BIN,
        'todo',
        'add',
        '--goal-id',
        'g',
        '--todo-id',
        'big',
        '--title',
        bigTitle('big'),
      ],
      { cwd: ws, env: cleanEnv(), encoding: 'utf8' },
    );
    assertStorage(
      { code: limited.status ?? -1, signal: null, stdout: limited.stdout, stderr: limited.stderr, ms: 0 },
      log,
      /EFBIG/,
    );
    assert.deepEqual(fs.readFileSync(log), before, 'the log is not what it was');
    const next = await loopx(['todo', 'add', '--goal-id', 'g', '--todo-id', 'next', '--title', 'next'], {
      cwd: ws,
    });
    assert.equal(next.code, 0, next.stderr);
    const ids = await verifiedTodoIds(ws);
    assert.ok(ids.includes('next'));
    assert.ok(!ids.includes('big'), 'the refused todo is there');
    const quarantined = fs
      .readdirSync(path.join(ws, '.loopx', 'goals', 'g'))
      .filter((n) => n.includes('torn'));
    assert.deepEqual(quarantined, [], 'a torn line was left for the next write to move aside');
  });
});
