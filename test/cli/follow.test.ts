/**
 * `loopx log --follow` on the built CLI: the history so far (its last --limit events), then every
 * event as it lands, from several processes on this clone and from another clone's log pulled in
 * (as git would bring it), each printed exactly once; SIGTERM and SIGINT end it with exit 0.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { BIN, Ws, cleanEnv, removeTempDirs, ok, tempDir } from '../helpers/cli';

after(removeTempDirs);

interface Follower {
  child: ChildProcess;
  out: () => string;
  err: () => string;
  exit: Promise<number | null>;
}

function follow(cwd: string, ...args: string[]): Follower {
  const child = spawn(process.execPath, [BIN, 'log', '--follow', ...args], {
    cwd,
    env: cleanEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (out += c));
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (err += c));
  const exit = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return { child, out: () => out, err: () => err, exit };
}

async function until(what: string, cond: () => boolean, f: Follower, ms = 20_000) {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) {
      f.child.kill('SIGKILL');
      assert.fail(`timed out waiting for ${what}; stdout:\n${f.out()}\nstderr:\n${f.err()}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Another clone of the workspace: its committed files, without `local/` (so a writer of its own). */
function cloneOf(ws: Ws): Ws {
  const dir = tempDir('loopx-clone-');
  fs.cpSync(ws.file('.loopx'), path.join(dir, '.loopx'), {
    recursive: true,
    filter: (src) => path.relative(ws.file('.loopx'), src).split(path.sep)[0] !== 'local',
  });
  return new Ws(dir);
}

/** A pull: every log of `from` that is longer than `to`'s copy replaces it (logs only grow). */
function pull(from: Ws, to: Ws, goalId: string) {
  const dir = (w: Ws) => w.file('.loopx', 'goals', goalId, 'events');
  for (const n of fs.readdirSync(dir(from))) {
    const src = path.join(dir(from), n);
    const dst = path.join(dir(to), n);
    if (!fs.existsSync(dst) || fs.statSync(dst).size < fs.statSync(src).size) fs.copyFileSync(src, dst);
  }
}

const ids = (ndjson: string) =>
  ndjson
    .split('\n')
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as { id: string }).id);

describe('log --follow', { concurrency: true }, () => {
  it('--json: NDJSON, each event of two clones and many processes exactly once; SIGTERM ends it with 0', async () => {
    const a = new Ws();
    ok(await a.run('goal', 'create', '--title', 'Followed', '--goal-id', 'g'));
    const b = cloneOf(a);
    const f = follow(a.dir, '--goal-id', 'g', '--json');
    await until('the history so far', () => ids(f.out()).length === 1, f);

    // Three processes on this clone at once, then the other clone's events pulled in, twice.
    const here = await Promise.all(
      ['one', 'two', 'three'].map((t) => a.run('todo', 'add', '--goal-id', 'g', '--title', `here ${t}`)),
    );
    here.forEach(ok);
    ok(await b.run('todo', 'add', '--goal-id', 'g', '--title', 'there one'));
    ok(await b.run('todo', 'add', '--goal-id', 'g', '--title', 'there two'));
    pull(b, a, 'g');
    ok(await a.run('evidence', 'add', '--goal-id', 'g', '--summary', 'here again'));
    ok(await b.run('evidence', 'add', '--goal-id', 'g', '--summary', 'there again'));
    pull(b, a, 'g');

    const logged = JSON.parse(ok(await a.run('--json', 'log', '--goal-id', 'g')).stdout) as {
      id: string;
      log: string;
    }[];
    assert.equal(logged.length, 8);
    assert.equal(new Set(logged.map((e) => e.log)).size, 2, 'events of two writers');
    await until('every event', () => ids(f.out()).length >= logged.length, f);
    await new Promise((r) => setTimeout(r, 600)); // a few more polls: nothing is printed twice
    const printed = ids(f.out());
    assert.equal(printed.length, logged.length, `each event once:\n${f.out()}`);
    assert.deepEqual([...printed].sort(), logged.map((e) => e.id).sort());
    for (const line of f.out().trim().split('\n')) {
      const ev = JSON.parse(line) as Record<string, unknown>;
      assert.deepEqual(
        ev,
        logged.find((e) => e.id === ev.id),
        'each line as `log --json` gives the event',
      );
    }
    f.child.kill('SIGTERM');
    assert.equal(await f.exit, 0, f.err());
    assert.equal(f.err(), '');
  });

  it('text: the last --limit events, then new ones as history lines; SIGINT ends it with 0', async () => {
    const ws = new Ws();
    ok(await ws.run('goal', 'create', '--title', 'Followed', '--goal-id', 'g'));
    for (const t of ['first', 'second', 'third'])
      ok(await ws.run('todo', 'add', '--goal-id', 'g', '--title', t));
    const f = follow(ws.dir, '--goal-id', 'g', '--limit', '2');
    await until('the last two events', () => f.out().split('\n').filter(Boolean).length === 2, f);
    assert.doesNotMatch(f.out(), /goal\.created|first/, 'older events are not shown');
    assert.match(f.out(), /todo\.added .*second/);
    ok(await ws.run('todo', 'add', '--goal-id', 'g', '--title', 'live'));
    await until('the new event', () => /live/.test(f.out()), f);
    const lines = f.out().trim().split('\n');
    assert.equal(lines.length, 3);
    assert.match(lines[2]!, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d +\S+ +agent \S+ \(cli\) +todo\.added +.*"live"/);
    f.child.kill('SIGINT');
    assert.equal(await f.exit, 0, f.err());
  });

  it('an unknown goal is exit 3 at once, naming --goal-id', async () => {
    const ws = new Ws();
    ok(await ws.run('init'));
    const f = follow(ws.dir, '--goal-id', 'ghost');
    assert.equal(await f.exit, 3);
    assert.match(f.err(), /^loopx: no goal "ghost" .*\(--goal-id\)/);
  });
});
