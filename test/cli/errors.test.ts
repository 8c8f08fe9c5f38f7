/**
 * Hostile input and broken files: ids that try to leave `.loopx/` or reach a shell are refused
 * (exit 2) naming the flag, and nothing is created anywhere; a corrupt policy or event log is
 * reported naming the file and the line (exit 6); never a stack trace.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { GoalStatusDoc, StatusDoc } from '../../src/core/index';
import { spawn } from 'node:child_process';
import * as net from 'node:net';
import {
  Ws,
  tempDir,
  removeTempDirs,
  loopxMany,
  listTree,
  ok,
  fails,
  json,
  BIN,
  cleanEnv,
  loopx,
  ensurePersonKey,
  loopxAsPerson,
} from '../helpers/cli';
import { writerLog } from '../helpers/log-kit';
import { z } from 'zod';

const QuotaShown = z.object({ cooldown_seconds: z.number() });
const LoggedEvents = z.array(
  z.object({ actor: z.object({ kind: z.string() }), sig: z.unknown().optional() }),
);

after(removeTempDirs);

const HOSTILE = ['../x', 'a/b', '$(touch pwned)', 'x'.repeat(10_000)];
const show = (id: string) => (id.length > 40 ? `${id.slice(0, 8)}… (${id.length} chars)` : id);

describe('errors', { concurrency: true }, () => {
  describe('hostile ids', { concurrency: 1 }, () => {
    // The workspace sits in a folder of its own, so "nothing created outside .loopx" is checkable.
    const parent = tempDir();
    const ws = new Ws(path.join(parent, 'ws'));
    let treeBefore: string[];
    let goalsBefore: string[];
    before(async () => {
      fs.mkdirSync(ws.dir);
      ok(await ws.run('goal', 'create', '--title', 'Target', '--goal-id', 'g'));
      ok(
        await ws.run(
          'todo',
          'add',
          '--goal-id',
          'g',
          '--title',
          'Real',
          '--todo-id',
          't1',
          '--action',
          'true',
        ),
      );
      treeBefore = listTree(parent, ['ws/.loopx']);
      goalsBefore = fs.readdirSync(ws.file('.loopx', 'goals'));
    });

    it('every id flag refuses each hostile id with exit 2, naming the flag; nothing is created in or outside .loopx', async () => {
      const calls: { flag: string; id: string; args: string[] }[] = [];
      const each = (flag: string, make: (id: string) => string[], ids = HOSTILE) =>
        ids.forEach((id) => calls.push({ flag, id, args: make(id) }));
      // Every hostile id on a read and on the brief's goal creation; then one on each command
      // that takes --goal-id, and one or two on every other id flag (the check is shared).
      const [dots, slash, subst, long] = HOSTILE as [string, string, string, string];
      each('--goal-id', (id) => ['status', '--goal-id', id]);
      each('--goal-id', (id) => ['project_prompt', 'create', '--title', 'T', '--goal-id', id], [subst, long]);
      each('--goal-id', (id) => ['todo', 'add', '--goal-id', id, '--title', 'T'], [subst]);
      each('--goal-id', (id) => ['quota', 'should-run', '--goal-id', id], [dots]);
      each('--goal-id', (id) => ['gate', 'approve', '--goal-id', id, '--gate-id', 'prod'], [slash]);
      each('--goal-id', (id) => ['summary_all', '--goal-id', id], [subst]);
      each('--goal-id', (id) => ['self-repair', '--goal-id', id], [dots]);
      each('--goal-id', (id) => ['verify', '--goal-id', id], [subst]);
      each('--goal-id', (id) => ['log', '--goal-id', id], [long]);
      each('--goal-id', (id) => ['project_prompt', 'close', '--goal-id', id], [dots]);
      each('--todo-id', (id) => ['todo', 'add', '--goal-id', 'g', '--title', 'T', '--todo-id', id], [dots]);
      each('--gate', (id) => ['todo', 'add', '--goal-id', 'g', '--title', 'T', '--gate', id], [slash]);
      each(
        '--depends-on',
        (id) => ['todo', 'add', '--goal-id', 'g', '--title', 'T', '--depends-on', `t1,${id}`],
        [subst],
      );
      each('--gate-id', (id) => ['gate', 'request', '--goal-id', 'g', '--gate-id', id], [subst]);
      each('--guards', (id) => ['gate', 'request', '--goal-id', 'g', '--gate-id', 'ok', '--guards', id], [
        slash,
      ]);
      each('--run-id', (id) => ['run', 'spend', '--goal-id', 'g', '--run-id', id, '--tokens', '1'], [dots]);
      each('--run-id', (id) => ['evidence', 'add', '--goal-id', 'g', '--summary', 's', '--run-id', id], [
        subst,
      ]);
      each('--evidence', (id) => ['todo', 'done', '--goal-id', 'g', '--todo-id', 't1', '--evidence', id], [
        slash,
      ]);
      each('--contract', (id) => ['exec', '--contract', id, '--todo', 't1', '--', 'touch pwned'], [subst]);
      each('--todo', (id) => ['exec', '--contract', 'c-0000000000', '--todo', id, '--', 'touch pwned'], [
        dots,
      ]);
      each('--contract', (id) => ['contract', 'verify', '--contract', id], [long]);

      const results = await loopxMany(calls.map((c) => ({ args: c.args, o: { cwd: ws.dir } })));
      const problems: string[] = [];
      results.forEach((r, i) => {
        const { flag, id, args } = calls[i]!;
        const name = `${args.slice(0, 2).join(' ')} ${flag} ${show(id)}`;
        try {
          fails(r, 2, new RegExp(`^loopx: ${flag} `), /is (not a valid id|too long)/, /ids are 1-64 letters/);
          assert.ok(r.stderr.length < 600, `the message repeats the whole id (${r.stderr.length} chars)`);
        } catch (e) {
          problems.push(`${name}: ${(e as Error).message.split('\n').slice(0, 6).join(' | ')}`);
        }
      });
      assert.deepEqual(problems, []);
      assert.deepEqual(listTree(parent, ['ws/.loopx']), treeBefore, 'a file appeared outside .loopx');
      assert.deepEqual(fs.readdirSync(ws.file('.loopx', 'goals')), goalsBefore, 'a goal folder appeared');
      assert.equal(fs.existsSync(path.join(parent, 'x')), false);
      assert.equal(fs.existsSync(ws.file('pwned')), false);
    });

    it('a hostile title or objective is kept as text, never run; the goal id made from it is a safe slug', async () => {
      const doc = await ws.json(
        GoalStatusDoc,
        'project_prompt',
        'create',
        '--title',
        '$(touch pwned) `touch pwned2`; ../../x',
        '--description',
        '$(touch pwned3)',
      );
      assert.match(doc.id, /^touch-pwned-touch-pwned2-x-[0-9a-z]{4}$/);
      assert.equal(doc.title, '$(touch pwned) `touch pwned2`; ../../x');
      const text = ok(await ws.run('status', '--goal-id', doc.id)).stdout;
      assert.ok(text.includes('$(touch pwned) `touch pwned2`; ../../x'));
      for (const f of ['pwned', 'pwned2', 'pwned3']) assert.equal(fs.existsSync(ws.file(f)), false);
      assert.deepEqual(listTree(parent, ['ws/.loopx']), treeBefore);
    });

    it('a title with control characters (a terminal escape) is refused, naming the field', async () => {
      fails(
        await ws.run('todo', 'add', '--goal-id', 'g', '--title', 'evil\u001b[2Jtitle'),
        2,
        /title/,
        /control characters/,
      );
    });
  });

  describe('broken files', { concurrency: 1 }, () => {
    const ws = new Ws();
    before(async () => {
      ok(await ws.run('goal', 'create', '--title', 'Healthy', '--goal-id', 'healthy'));
      ok(await ws.run('goal', 'create', '--title', 'Broken', '--goal-id', 'broken'));
      ok(await ws.run('todo', 'add', '--goal-id', 'broken', '--title', 'Something', '--todo-id', 't1'));
    });

    it('a policy.json that is not JSON: exit 6 naming the file and the line; one with an unknown key: naming the key', async () => {
      const policy = ws.file('.loopx', 'policy.json');
      const good = fs.readFileSync(policy, 'utf8');
      fs.writeFileSync(policy, '{\n  "v": 1,\n  oops\n}\n');
      const syntax = await ws.run('todo', 'add', '--goal-id', 'healthy', '--title', 'x');
      fs.writeFileSync(policy, '{ "v": 1, "deniedActionz": [] }\n');
      const key = await ws.run('quota', 'should-run', '--goal-id', 'healthy');
      fs.writeFileSync(policy, good);
      fails(syntax, 6, new RegExp(`${policy.replace(/[.]/g, '\\.')} \\(line 3\\): not valid JSON`));
      fails(key, 6, /policy\.json/, /deniedActionz/);
      assert.equal(ws.events('healthy').length, 1, 'nothing was written under a broken policy');
    });

    it('a tampered event log: exit 6 naming events.jsonl and the line, from status, log, verify and self-repair; other goals still work', async () => {
      const file = writerLog(ws.dir, 'broken');
      const lines = fs.readFileSync(file, 'utf8').split('\n');
      // Edit the first event in place: the second line's `prev` hash no longer matches.
      lines[0] = lines[0]!.replace('"title":"Broken"', '"title":"Hacked"');
      fs.writeFileSync(file, lines.join('\n'));
      fs.rmSync(ws.file('.loopx', 'local', 'cache', 'goals', 'broken.json'));
      const [status, log, verify, repair, healthy, all] = await Promise.all([
        ws.run('status', '--goal-id', 'broken'),
        ws.run('log', '--goal-id', 'broken'),
        ws.run('verify', '--json'),
        ws.run('self-repair', '--goal-id', 'broken'),
        ws.run('status', '--goal-id', 'healthy', '--json'),
        ws.run('status', '--json'),
      ]);
      const where = /events\/w-[\w-]+\.jsonl:2: field prev/;
      fails(status, 6, where);
      fails(log, 6, where);
      assert.equal(verify.code, 6, verify.stderr);
      const v = JSON.parse(verify.stdout) as {
        ok: boolean;
        goals: { goal_id: string; ok: boolean; error?: string }[];
      };
      assert.equal(v.ok, false);
      assert.deepEqual(
        v.goals.map((g) => [g.goal_id, g.ok]),
        [
          ['broken', false],
          ['healthy', true],
        ],
      );
      assert.match(v.goals[0]!.error!, where);
      assert.equal(repair.code, 6, repair.stdout + repair.stderr);
      assert.match(repair.stdout, /found +corrupt-log broken: .*events\/w-[\w-]+\.jsonl:2/);
      assert.match(repair.stdout, /never rewritten/);
      assert.equal(json(healthy, GoalStatusDoc).status, 'active');
      json(all, StatusDoc);
    });

    it('an unknown goal is exit 3 and an unknown todo or gate names the goal and the id', async () => {
      const [goal, todo, gate] = await Promise.all([
        ws.run('todo', 'claim', '--goal-id', 'ghost', '--todo-id', 't1'),
        ws.run('todo', 'cancel', '--goal-id', 'healthy', '--todo-id', 'ghost'),
        ws.tty('gate', 'approve', '--goal-id', 'healthy', '--gate-id', 'ghost'),
      ]);
      fails(goal, 3, /no goal "ghost"/);
      fails(todo, 3, /goal healthy has no todo "ghost"/);
      assert.equal(gate.code, 3, gate.output);
      assert.match(gate.output, /goal healthy has no gate "ghost"/);
      assert.doesNotMatch(gate.output, /^\s{4}at /m);
    });
  });
});

describe('--json errors', { concurrency: 1 }, () => {
  const ws = new Ws();
  /** The one JSON line on stderr of a failed `--json` call (stdout stays empty). */
  function jsonError(r: { code: number; stdout: string; stderr: string }, code: number) {
    assert.equal(r.code, code, `expected exit ${code}, got ${r.code}: ${r.stderr}`);
    assert.equal(r.stdout, '', 'stdout stays empty on an error');
    assert.equal(r.stderr.trimEnd().split('\n').length, 1, `one line on stderr, got:\n${r.stderr}`);
    const e = (JSON.parse(r.stderr) as { error: Record<string, unknown> }).error;
    assert.equal(e.exit_code, code);
    assert.equal(typeof e.message, 'string');
    return e as { kind: string; reason: string; message: string; exit_code: number; goal_id?: string };
  }

  before(async () => {
    ok(await ws.run('goal', 'create', '--title', 'Target', '--goal-id', 'g'));
    ok(await ws.run('todo', 'add', '--goal-id', 'g', '--title', 'Judge', '--todo-id', 't1'));
    ok(await ws.run('todo', 'done', '--goal-id', 'g', '--todo-id', 't1', '--summary', 'done'));
  });

  it('a refusal is one JSON line on stderr with its kind, reason code and message', async () => {
    const [json, format, text] = await Promise.all([
      ws.run('--json', 'todo', 'done', '--goal-id', 'g', '--todo-id', 't1'),
      ws.run('--format', 'json', 'todo', 'cancel', '--goal-id', 'g', '--todo-id', 't1'),
      ws.run('todo', 'done', '--goal-id', 'g', '--todo-id', 't1'),
    ]);
    const e = jsonError(json, 4);
    assert.equal(e.kind, 'refused');
    assert.equal(e.reason, 'todo_finished');
    assert.match(e.message, /todo t1 is already done/);
    assert.equal(jsonError(format, 4).reason, 'todo_finished');
    // Text output is unchanged: the message on one `loopx:` line.
    fails(text, 4, /^loopx: todo t1 is already done\n$/);
  });

  it('an error without a code of its own has its kind as the reason', async () => {
    const [missing, badId] = await Promise.all([
      ws.run('--json', 'todo', 'claim', '--goal-id', 'g', '--todo-id', 'ghost'),
      ws.run('--json', 'status', '--goal-id', '../x'),
    ]);
    const m = jsonError(missing, 3);
    assert.deepEqual([m.kind, m.reason], ['not_found', 'not_found']);
    assert.match(m.message, /goal g has no todo "ghost"/);
    const u = jsonError(badId, 2);
    assert.deepEqual([u.kind, u.reason], ['usage', 'usage']);
    assert.match(u.message, /--goal-id/);
  });
});

describe('a reader that goes away', () => {
  it('`loopx ... | head`: the closed pipe is not an error; the exit code is the command’s, no stack trace', async () => {
    const child = spawn(process.execPath, [BIN, 'capabilities', '--json'], {
      env: cleanEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // The reader closes its end before loopx writes a byte, as `head -0` would.
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    assert.equal(code, 0, stderr);
    assert.equal(stderr, '', 'nothing on stderr: no EPIPE, no stack trace');
  });
});

describe('errors that name the flag and the next step', { concurrency: true }, () => {
  const ws = new Ws();
  before(async () => {
    ok(await ws.run('goal', 'create', '--goal-id', 'g', '--title', 'T'));
  });

  it('status-server on a non-loopback host names the flag as the CLI spells it', async () => {
    fails(
      await ws.run('status-server', '--host', '0.0.0.0', '--port', '0'),
      4,
      /pass --unsafe-allow-non-loopback only if you mean that/,
    );
  });

  it('status-server on a port in use: exit 1, names the port and --port; --json gives reason port_in_use', async () => {
    const holder = net.createServer();
    await new Promise<void>((r) => holder.listen(0, '127.0.0.1', () => r()));
    const port = (holder.address() as net.AddressInfo).port;
    try {
      const [text, asJson] = await Promise.all([
        ws.run('status-server', '--port', String(port)),
        ws.run('--json', 'status-server', '--port', String(port)),
      ]);
      fails(
        text,
        1,
        new RegExp(
          `^loopx: port ${port} is in use: pick another with --port N, or --port 0 for a free one\\n$`,
        ),
      );
      assert.doesNotMatch(text.stderr, /EADDRINUSE/);
      const e = (JSON.parse(asJson.stderr) as { error: { reason: string; exit_code: number } }).error;
      assert.deepEqual([e.reason, e.exit_code], ['port_in_use', 1]);
    } finally {
      holder.close();
    }
  });

  it('a person’s command without a key names itself and `loopx key create`; without a terminal, --passphrase-fd', async () => {
    const noKeys = { LOOPX_CONFIG_DIR: tempDir('loopx-nokeys-') };
    const r = await loopx(
      ['reward', 'add', '--goal-id', 'g', '--run-id', 'run-x', '--score', '1', '--comment', 'c'],
      {
        cwd: ws.dir,
        env: noKeys,
      },
    );
    fails(
      r,
      4,
      /to record a reward you sign it with your LoopX key, and this machine has none: run `loopx key create` once at a terminal/,
      /then `loopx reward add` again there \(or from your own script with --passphrase-fd N\)/,
      /Agents and scripts cannot record a reward\./,
    );
    await ensurePersonKey({ cwd: ws.dir });
    fails(
      await ws.run('quota', 'grant', '--goal-id', 'g', '--turns', '5'),
      4,
      /there is no terminal here to ask it on: run `loopx quota grant` at a terminal, or from your own script with --passphrase-fd N/,
    );
  });

  it('an agent may only tighten: a shorter cooldown is refused naming who can do it, and the person’s signed quota set does it', async () => {
    const q = new Ws();
    ok(await q.run('goal', 'create', '--goal-id', 'q', '--title', 'T'));
    ok(await q.run('quota', 'set', '--goal-id', 'q', '--cooldown', '60'));
    fails(
      await q.run('quota', 'set', '--goal-id', 'q', '--cooldown', '10'),
      4,
      /an agent may only tighten a quota, and this would shorten the cooldown from 1 min to 10 s; /,
      /a person’s change: they run this `loopx quota set` at a terminal/,
    );
    // The person does it with the same command, signed with their key; replay keeps it.
    ok(await loopxAsPerson(['quota', 'set', '--goal-id', 'q', '--cooldown', '10'], { cwd: q.dir }));
    const shown = json(await q.run('--json', 'quota', 'show', '--goal-id', 'q'), QuotaShown);
    assert.equal(shown.cooldown_seconds, 10);
    const log = json(await q.run('--json', 'log', '--goal-id', 'q', '--limit', '1'), LoggedEvents);
    assert.equal(log[0]!.actor.kind, 'user', 'the loosening is recorded as the person’s');
    assert.ok(log[0]!.sig, 'and signed');
    fails(
      await q.run('quota', 'set', '--goal-id', 'q', '--turns', '500'),
      4,
      /raise the turns budget from 200 to 500; more budget is a person's grant, at a terminal: `loopx quota grant --goal-id q --turns N`/,
    );
  });

  it('an unknown command with --help is a usage error naming it (with a suggestion); real help still exits 0', async () => {
    const [key2, frob, short, top, todo, leaf] = await Promise.all([
      ws.run('key2', 'create', '--help'),
      ws.run('todo', 'frob', '--help'),
      ws.run('--workspace', ws.dir, 'key2', '-h'),
      ws.run('--help'),
      ws.run('todo', '--help'),
      ws.run('todo', 'list', '--help'),
    ]);
    fails(key2, 2, /^loopx: unknown command 'key2'\n\(Did you mean key\?\)/);
    fails(frob, 2, /^loopx: unknown command 'frob'/);
    fails(short, 2, /^loopx: unknown command 'key2'/);
    assert.match(ok(top).stdout, /^Usage: loopx /);
    assert.match(ok(todo).stdout, /^Usage: loopx todo /);
    assert.match(ok(leaf).stdout, /^Usage: loopx todo list /);
  });
});
