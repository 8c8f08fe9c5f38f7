/**
 * One goal through its life under the interaction contract: `quota should-run` (wait for a plan,
 * run, stop on an exhausted budget, done), `contract verify`, `exec` (streams, exits with the
 * command's code, records evidence, refuses what the contract does not list without running
 * it), judgment todos, `run spend`, `evidence add`, `summary_all`, `quota show|set|grant`; then
 * `log`, `verify` and `self-repair` on a workspace of their own.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { z } from 'zod';
import { GoalStatusDoc, ShouldRunOutput, LoopxEvent } from '../../src/core/index';
import {
  SummaryOutput,
  ContractCheckOutput,
  CommandCheckOutput,
  VerifyOutput,
  RepairOutput,
  RunChangeOutput,
  EvidenceChangeOutput,
} from '../../src/core/views/output-schemas';
import { Ws, removeTempDirs, loopx, sh, loopxOnPath, ok, fails, json } from '../helpers/cli';
import { writerLog } from '../helpers/log-kit';

after(removeTempDirs);

const STREAM = 'echo first; sleep 1; echo second';
const FAIL = 'echo out; echo err >&2; exit 7';
const FILE = 'touch made-by-exec.txt';
const GATED = 'touch gated.txt';

describe('contract and evidence', { concurrency: true }, () => {
  describe('a goal under the interaction contract', { concurrency: 1 }, () => {
    const ws = new Ws();
    let contract: ShouldRunOutput;
    let cid: string;
    let runId: string;
    before(async () => {
      ok(
        await ws.run(
          'project_prompt',
          'create',
          '--title',
          'Contract',
          '--goal-id',
          'c',
          '--description',
          'exercise the contract',
        ),
      );
    });

    it('should-run on a goal without todos: wait for a plan, no actions, the person asked to add todos', async () => {
      // As the brief writes it: the global --format before the command.
      const out = json(
        await ws.run('--format', 'json', 'quota', 'should-run', '--goal-id', 'c'),
        ShouldRunOutput,
      );
      assert.equal(out.decision, 'wait');
      assert.equal(out.run_id, null);
      assert.equal(out.retry_after_seconds, 30);
      assert.deepEqual(out.interaction_contract.cli_channel.next_cli_actions, []);
      assert.equal(out.interaction_contract.user_channel.action_required, true);
      assert.match(out.interaction_contract.user_channel.message!, /loopx todo add --goal-id c/);
    });

    it('with a plan, should-run opens a run under a signed contract listing exactly the runnable actions, wrapped in `loopx exec`', async () => {
      // Added at once from several processes: the goal's lock keeps every one.
      const todos = [
        ['stream', 'Stream', STREAM, 'P0', ''],
        ['fail', 'Fail', FAIL, 'P1', ''],
        ['file', 'Make a file', FILE, 'P2', ''],
        ['gated', 'Gated', GATED, 'P0', 'prod'],
      ] as const;
      await Promise.all([
        ...todos.map(([id, title, action, prio, gate]) =>
          ws
            .run(
              'todo',
              'add',
              '--goal-id',
              'c',
              '--todo-id',
              id,
              '--title',
              title,
              '--action',
              action,
              '--priority',
              prio,
              ...(gate ? ['--gate', gate] : []),
            )
            .then(ok),
        ),
        ws
          .run(
            'todo',
            'add',
            '--goal-id',
            'c',
            '--todo-id',
            'review',
            '--title',
            'Review the diff',
            '--priority',
            'P3',
          )
          .then(ok),
      ]);
      const preview = await ws.json(ShouldRunOutput, 'quota', 'should-run', '--goal-id', 'c', '--preview');
      assert.equal(preview.preview, true);
      assert.equal(preview.run_id, null, 'a preview opens no run');
      assert.ok(!ws.events('c').some((e) => e.type === 'run.started'));

      const r = await ws.run('--format', 'json', 'quota', 'should-run', '--goal-id', 'c');
      contract = json(r, ShouldRunOutput);
      assert.ok(
        JSON.stringify(contract).length < 2048,
        `the contract is not compact: ${JSON.stringify(contract).length} bytes`,
      );
      assert.equal(contract.decision, 'run');
      cid = contract.interaction_contract.id!;
      runId = contract.run_id!;
      assert.match(cid, /^c-[0-9a-z]{10}$/);
      assert.match(contract.interaction_contract.sig!, /^[0-9a-f]{64}$/);
      assert.ok(Date.parse(contract.interaction_contract.expires_at!) > Date.now());
      assert.deepEqual(contract.interaction_contract.cli_channel.next_cli_actions, [
        `loopx exec --contract ${cid} --todo stream -- 'echo first; sleep 1; echo second'`,
        `loopx exec --contract ${cid} --todo fail -- 'echo out; echo err >&2; exit 7'`,
        `loopx exec --contract ${cid} --todo file -- 'touch made-by-exec.txt'`,
      ]);
      const gates = contract.interaction_contract.user_channel.gates;
      assert.deepEqual(
        gates.map((g) => [g.id, g.status, g.approve]),
        [['prod', 'pending', 'loopx gate approve --goal-id c --gate-id prod']],
      );
      assert.equal(
        contract.interaction_contract.agent_channel.finish_with,
        `loopx summary_all --goal-id c --contract ${cid}`,
      );
      // Asked again (text this time), the open run and its contract are reused, not doubled.
      const text = ok(await ws.run('quota', 'should-run', '--goal-id', 'c')).stdout;
      assert.match(text, /^RUN {2}goal c \(active\)/);
      assert.match(text, new RegExp(`contract ${cid} for run ${runId}`));
      assert.match(text, /gate prod \(pending\)/);
      assert.equal(ws.events('c').filter((e) => e.type === 'run.started').length, 1);
    });

    it('contract verify checks the contract, a todo, or a command, without running anything', async () => {
      const [whole, todo, cmd, other, wrong, gated, forged] = await Promise.all([
        ws.run('contract', 'verify', '--contract', cid, '--json'),
        ws.run('contract', 'verify', '--contract', cid, '--todo', 'file'),
        ws.run('contract', 'verify', '--contract', cid, '--json', '--', FILE),
        ws.run('contract', 'verify', '--contract', cid, '--', 'touch pwned.txt'),
        ws.run('contract', 'verify', '--contract', cid, '--todo', 'stream', '--', 'echo first'),
        ws.run('contract', 'verify', '--contract', cid, '--todo', 'gated'),
        ws.run('contract', 'verify', '--contract', 'c-forged0000'),
      ]);
      const w = json(whole, ContractCheckOutput);
      assert.deepEqual([w.contract_id, w.goal_id, w.run_id], [cid, 'c', runId]);
      assert.deepEqual(
        w.actions.map((a) => a.todo_id),
        ['stream', 'fail', 'file'],
      );
      assert.deepEqual(w.judgment, ['review']);
      assert.match(
        ok(todo).stdout,
        new RegExp(`^ok: contract ${cid} allows todo file: touch made-by-exec.txt`),
      );
      assert.deepEqual(json(cmd, CommandCheckOutput).todo_id, 'file');
      fails(other, 4, new RegExp(`contract ${cid} does not list the command "touch pwned.txt"`));
      fails(
        wrong,
        4,
        /differs from what contract .* lists for todo stream \(first difference at character 11\)/,
      );
      fails(gated, 4, /todo gated is not in contract/);
      fails(forged, 3, /no contract "c-forged0000"/);
      assert.equal(fs.existsSync(ws.file('made-by-exec.txt')), false);
    });

    it('exec refuses what the contract does not list (exit 4) and does not run it', async () => {
      const [unlisted, otherTodo, gated, forged] = await Promise.all([
        ws.run('exec', '--contract', cid, '--todo', 'file', '--', 'touch pwned.txt'),
        ws.run('exec', '--contract', cid, '--todo', 'stream', '--', FILE),
        ws.run('exec', '--contract', cid, '--todo', 'gated', '--', GATED),
        ws.run('exec', '--contract', 'c-forged0000', '--todo', 'file', '--', 'touch pwned.txt'),
      ]);
      fails(unlisted, 4, /command differs from what contract .* lists for todo file/);
      fails(otherTodo, 4, /lists for todo stream/);
      fails(gated, 4, /todo gated is not in contract/);
      fails(forged, 3, /no contract "c-forged0000"/);
      for (const f of ['pwned.txt', 'gated.txt', 'made-by-exec.txt'])
        assert.equal(fs.existsSync(ws.file(f)), false, `${f} was created`);
      assert.ok(!ws.events('c').some((e) => e.type === 'evidence.added'), 'a refused exec recorded evidence');
    });

    it('exec runs a listed command, streams its output as it comes, exits 0, records evidence and marks the todo done', async () => {
      // Streamed, "first" arrives about a second before "second" (the command sleeps between
      // them); buffered until the command ends, they would arrive together.
      let firstAt = 0;
      let secondAt = 0;
      let seen = '';
      const r = await loopx(['exec', '--contract', cid, '--todo', 'stream', '--', STREAM], {
        cwd: ws.dir,
        onStdout: (c) => {
          seen += c;
          if (!firstAt && seen.includes('first')) firstAt = Date.now();
          if (!secondAt && seen.includes('second')) secondAt = Date.now();
        },
      });
      ok(r);
      assert.equal(r.stdout, 'first\nsecond\n');
      assert.ok(
        firstAt > 0 && secondAt - firstAt >= 500,
        `"first" came only ${secondAt - firstAt} ms before "second": the output was not streamed`,
      );
      assert.match(r.stderr, /^loopx: exit 0 in \d+\.\d\d s; evidence ev-[0-9a-z]{8}; todo stream done$/m);
      const doc = await ws.json(GoalStatusDoc, 'status', '--goal-id', 'c');
      assert.equal(doc.todos.find((t) => t.id === 'stream')!.status, 'done');
      const ev = doc.runs.find((x) => x.id === runId)!.evidence.find((e) => e.todo_id === 'stream')!;
      assert.equal(ev.exit_code, 0);
      // The output is kept as an artifact, referenced by its sha256 in the log.
      const added = ws.events('c').find((e) => e.type === 'evidence.added')!.data.evidence as {
        artifact: { path: string; sha256: string };
      };
      const bytes = fs.readFileSync(ws.file('.loopx', 'goals', 'c', added.artifact.path));
      assert.equal(bytes.toString(), 'first\nsecond\n');
      assert.equal(createHash('sha256').update(bytes).digest('hex'), added.artifact.sha256);
      assert.equal(ev.artifact, added.artifact.path);
    });

    it('exec of a failing command passes its output through and exits with its code; the todo stays open', async () => {
      const r = await ws.run('exec', '--contract', cid, '--todo', 'fail', '--', FAIL);
      assert.equal(r.code, 7, r.stderr);
      assert.equal(r.stdout, 'out\n');
      assert.match(r.stderr, /^err$/m);
      assert.match(r.stderr, /^loopx: exit 7 in /m);
      const doc = await ws.json(GoalStatusDoc, 'status', '--goal-id', 'c');
      assert.equal(doc.todos.find((t) => t.id === 'fail')!.status, 'open');
      assert.equal(doc.runs[0]!.evidence.find((e) => e.todo_id === 'fail')!.exit_code, 7);
    });

    it('an action from next_cli_actions runs as it is through a shell (`eval "$cmd"`) with loopx on PATH', async () => {
      const action = contract.interaction_contract.cli_channel.next_cli_actions[2]!;
      const r = await sh(`eval "$CMD"`, {
        cwd: ws.dir,
        env: { CMD: action, PATH: `${loopxOnPath()}:${process.env.PATH}` },
      });
      assert.equal(r.code, 0, r.stderr);
      assert.ok(fs.existsSync(ws.file('made-by-exec.txt')));
      assert.match(r.stderr, /todo file done/);
    });

    it('a judgment todo of the contract is finished with `todo done --contract`; a contract that does not list it is refused', async () => {
      fails(
        await ws.run('todo', 'done', '--goal-id', 'c', '--todo-id', 'fail', '--contract', cid),
        4,
        /todo fail is not a judgment todo of contract/,
      );
      const d = json(
        await ws.run(
          'todo',
          'done',
          '--goal-id',
          'c',
          '--todo-id',
          'review',
          '--contract',
          cid,
          '--summary',
          'looked fine',
          '--json',
        ),
        z.object({ todo: z.object({ status: z.string() }) }),
      );
      assert.equal(d.todo.status, 'done');
      const note = ws
        .events('c')
        .filter((e) => e.type === 'evidence.added')
        .at(-1)!.data.evidence as { runId?: string; summary: string };
      assert.deepEqual([note.runId, note.summary], [runId, 'looked fine']);
    });

    it('run spend reports tokens and cost on the open run; an unknown run is exit 3', async () => {
      const [spent, unknown] = await Promise.all([
        ws.run(
          'run',
          'spend',
          '--goal-id',
          'c',
          '--run-id',
          runId,
          '--tokens',
          '1200',
          '--cost',
          '0.04',
          '--json',
        ),
        ws.run('run', 'spend', '--goal-id', 'c', '--run-id', 'run-zzzzzzzz', '--tokens', '1'),
      ]);
      const s = json(spent, RunChangeOutput);
      assert.deepEqual(
        [s.run.id, s.run.spend.tokens, s.run.spend.costUsd, s.run.spend.turns],
        [runId, 1200, 0.04, 1],
      );
      fails(unknown, 3, /no run "run-zzzzzzzz"/);
    });

    it('evidence add records a note or a test result for a run and a todo; bad values are usage errors', async () => {
      const [added, kind, code] = await Promise.all([
        ws.run(
          'evidence',
          'add',
          '--goal-id',
          'c',
          '--run-id',
          runId,
          '--todo-id',
          'fail',
          '--kind',
          'test',
          '--summary',
          'flaky on CI',
          '--exit-code',
          '1',
          '--duration-ms',
          '5',
          '--json',
        ),
        ws.run('evidence', 'add', '--goal-id', 'c', '--summary', 'x', '--kind', 'rumour'),
        ws.run('evidence', 'add', '--goal-id', 'c', '--summary', 'x', '--exit-code', 'zero'),
      ]);
      const id = json(added, EvidenceChangeOutput).evidence_id;
      assert.match(id, /^ev-[0-9a-z]{8}$/);
      const ev = ws
        .events('c')
        .find((e) => e.type === 'evidence.added' && (e.data.evidence as { id: string }).id === id)!.data
        .evidence;
      assert.deepEqual(ev, {
        id,
        runId,
        todoId: 'fail',
        kind: 'test',
        summary: 'flaky on CI',
        exitCode: 1,
        durationMs: 5,
      });
      fails(kind, 2, /--kind/, /'rumour'/);
      fails(code, 2, /--exit-code must be a number, not "zero"/);
    });

    it('summary_all ends the open run, summarising its evidence; the next has no run to end; its contract is then spent', async () => {
      const s = json(await ws.run('summary_all', '--goal-id', 'c', '--json'), SummaryOutput);
      assert.equal(s.goal_id, 'c');
      assert.deepEqual(
        s.ended_runs.map((r) => [r.id, r.outcome]),
        [[runId, 'partial']],
        'one command passed, one failed',
      );
      assert.deepEqual(
        s.ended_runs[0]!.evidence.filter((e) => e.exit_code !== undefined).map((e) => [
          e.todo_id,
          e.exit_code,
        ]),
        [
          ['stream', 0],
          ['fail', 7],
          ['file', 0],
          ['fail', 1],
        ],
      );
      assert.deepEqual(s.progress, { done: 3, total: 5 });
      const [again, verify, exec] = await Promise.all([
        ws.run('summary-all', '--goal-id', 'c'),
        ws.run('contract', 'verify', '--contract', cid),
        ws.run('exec', '--contract', cid, '--todo', 'fail', '--', FAIL),
      ]);
      assert.match(ok(again).stdout, /^goal c: active, 3 of 5 todos done$/m);
      assert.match(again.stdout, /no open run to end/);
      fails(
        verify,
        4,
        new RegExp(`belongs to run ${runId}, which ended`),
        /loopx quota should-run --goal-id c/,
      );
      fails(exec, 4, /which ended/);
    });

    it('quota show and set: set changes only what it names; an agent may tighten the budget, not loosen it; an exhausted budget stops should-run; a person’s grant restarts it', async () => {
      const q = await ws.json(GoalStatusDoc.shape.quota, 'quota', 'show', '--goal-id', 'c');
      assert.deepEqual(q.budgets.turns, { used: 1, limit: 200, left: 199 });
      assert.equal(q.spend.tokens, 1200);
      assert.match(
        ok(await ws.run('quota', 'show', '--goal-id', 'c')).stdout,
        /^budget +used +limit +left\nturns +1 +200 +199$/m,
      );
      // A person adds a cost budget: the turn budget stays.
      const person = await ws.tty('quota', 'set', '--goal-id', 'c', '--cost', '10');
      assert.equal(person.code, 0, person.output);
      // An agent tightens the turns: the cost budget and the cooldown stay, so nothing is loosened.
      const set = await ws.json(GoalStatusDoc.shape.quota, 'quota', 'set', '--goal-id', 'c', '--turns', '1');
      assert.deepEqual(set.budgets.turns, { used: 1, limit: 1, left: 0 });
      assert.equal(set.budgets.costUsd?.limit, 10);
      const [loosen, nothing, stop] = await Promise.all([
        ws.run('quota', 'set', '--goal-id', 'c', '--turns', '500'),
        ws.run('quota', 'set', '--goal-id', 'c'),
        ws.json(ShouldRunOutput, 'quota', 'should-run', '--goal-id', 'c'),
      ]);
      fails(
        loosen,
        4,
        /may only tighten a quota, and this would raise the turns budget from 1 to 500; .*`loopx quota grant --goal-id c --turns N`/,
      );
      fails(nothing, 2, /nothing to set/);
      assert.equal(stop.decision, 'stop');
      assert.match(stop.reasons.join(' '), /budget is used up \(1 of 1\).*loopx quota grant/);
      const grant = await ws.tty('quota', 'grant', '--goal-id', 'c', '--turns', '5');
      assert.equal(grant.code, 0, grant.output);
      const again = await ws.json(ShouldRunOutput, 'quota', 'should-run', '--goal-id', 'c');
      assert.equal(again.decision, 'run');
      assert.notEqual(again.interaction_contract.id, cid, 'a new turn, a new contract');
      assert.deepEqual(
        again.interaction_contract.cli_channel.next_cli_actions.length,
        1,
        'only the failed todo is left to run',
      );
    });

    it('when every agent todo is done or cancelled and no gate waits, the goal is completed and should-run says done; then it closes', async () => {
      const reject = await ws.tty(
        'gate',
        'reject',
        '--goal-id',
        'c',
        '--gate-id',
        'prod',
        '--note',
        'not now',
      );
      assert.equal(reject.code, 0, reject.output);
      ok(await ws.run('todo', 'cancel', '--goal-id', 'c', '--todo-id', 'fail', '--reason', 'flaky'));
      const [status, sr] = await Promise.all([
        ws.run('status', '--goal-id', 'c', '--json'),
        ws.json(ShouldRunOutput, 'quota', 'should-run', '--goal-id', 'c'),
      ]);
      assert.equal(json(status, GoalStatusDoc).status, 'completed');
      assert.equal(sr.decision, 'done');
      assert.deepEqual(sr.interaction_contract.cli_channel.next_cli_actions, []);
      ok(await ws.run('project_prompt', 'close', '--goal-id', 'c'));
      assert.equal(
        (await ws.json(ShouldRunOutput, 'quota', 'should-run', '--goal-id', 'c')).decision,
        'stop',
      );
    });
  });

  describe('log, verify and self-repair', { concurrency: 1 }, () => {
    const ws = new Ws();
    before(async () => {
      ok(await ws.run('goal', 'create', '--title', 'Logged', '--goal-id', 'v'));
      ok(
        await ws.run(
          'todo',
          'add',
          '--goal-id',
          'v',
          '--title',
          'One',
          '--todo-id',
          'one',
          '--action',
          'true',
        ),
      );
      ok(await ws.run('quota', 'should-run', '--goal-id', 'v'));
    });

    it('log --json: every event, checked against the event schema, in order; --limit keeps the last ones; text one line each', async () => {
      const [all, last, text] = await Promise.all([
        ws.run('log', '--goal-id', 'v', '--json'),
        ws.run('--format', 'json', 'log', '--goal-id', 'v', '--limit', '1'),
        ws.run('log', '--goal-id', 'v'),
      ]);
      const events = json(all, z.array(LoopxEvent));
      assert.deepEqual(
        events.map((e) => e.seq),
        [1, 2, 3],
      );
      assert.deepEqual(
        events.map((e) => e.type),
        ['goal.created', 'todo.added', 'run.started'],
      );
      assert.deepEqual(
        json(last, z.array(LoopxEvent)).map((e) => e.type),
        ['run.started'],
      );
      const lines = ok(text).stdout.replace(/\n$/, '').split('\n');
      assert.equal(lines.length, 3);
      // The writer is shown by the name it recorded for this clone (writers/<id>.json).
      const writer = fs.readFileSync(ws.file('.loopx', 'local', 'writer-id'), 'utf8').trim();
      const { name } = JSON.parse(fs.readFileSync(ws.file('.loopx', 'writers', `${writer}.json`), 'utf8'));
      // Time (UTC, to the second), writer, who (and through what), event type, what in words.
      const first =
        /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d {2}(\S+) +agent \S+ \(cli\) +goal\.created +created goal "Logged"$/.exec(
          lines[0]!,
        );
      assert.ok(first, `time, writer, who, type, what: ${lines[0]}`);
      assert.equal(first[1], name);
      fails(await ws.run('log', '--goal-id', 'nope'), 3, /no goal "nope"/);
    });

    it('verify checks every goal’s hash chain (or one): ok; an unknown goal is exit 3', async () => {
      const [all, one, unknown] = await Promise.all([
        ws.run('verify', '--json'),
        ws.run('verify', '--goal-id', 'v'),
        ws.run('verify', '--goal-id', 'nope'),
      ]);
      const doc = json(all, VerifyOutput);
      const status = await ws.json(z.object({ state_hash: z.string() }), 'status', '--goal-id', 'v');
      const writer = fs.readFileSync(ws.file('.loopx', 'local', 'writer-id'), 'utf8').trim();
      assert.deepEqual(doc, {
        schema: 'loopx.verify/2',
        ok: true,
        goals: [
          {
            goal_id: 'v',
            ok: true,
            events: 3,
            state_hash: status.state_hash,
            writers: [{ writer, file: writerLog(ws.dir, 'v'), ok: true, events: 3 }],
          },
        ],
        policy: { state: 'not_signed', unsigned_changes: [] },
        // The identity `init` made, committed in .loopx/workspace.json.
        workspace: { id: JSON.parse(fs.readFileSync(ws.file('.loopx', 'workspace.json'), 'utf8')).id },
      });
      assert.match(ok(one).stdout, /^ok +v: 3 events from 1 writer, state [0-9a-f]{12}$/m);
      fails(unknown, 3, /no goal "nope"/);
    });

    it('self-repair (and self_repair) fixes what it finds, exit 0; a second pass finds nothing; --dry-run changes nothing', async () => {
      // A derived file deleted by hand (the index and its journal): rebuilt from the log.
      for (const f of ['index.json', 'index.log'])
        fs.rmSync(ws.file('.loopx', 'local', 'cache', f), { force: true });
      const first = json(await ws.run('self-repair', '--json'), RepairOutput);
      assert.equal(first.dry_run, false);
      assert.equal(first.checked_goals, 1);
      assert.ok(
        first.findings.some((f) => f.kind === 'index-stale' && f.fixed),
        JSON.stringify(first.findings),
      );
      assert.ok(
        first.findings.every((f) => f.fixed),
        JSON.stringify(first.findings),
      );
      assert.ok(fs.existsSync(ws.file('.loopx', 'local', 'cache', 'index.json')));
      const second = json(await ws.run('self_repair', '--goal-id', 'v', '--json'), RepairOutput);
      assert.deepEqual(second.findings, []);
      assert.match(
        ok(await ws.run('self-repair', '--goal-id', 'v')).stdout,
        /^checked 1 goal: nothing to repair$/m,
      );
      // A dry run reports without fixing.
      fs.rmSync(ws.file('.loopx', 'local', 'cache', 'index.json'));
      const dry = json(await ws.run('self-repair', '--dry-run', '--json'), RepairOutput);
      assert.equal(dry.dry_run, true);
      assert.ok(dry.findings.some((f) => f.kind === 'index-stale' && !f.fixed));
      assert.equal(fs.existsSync(ws.file('.loopx', 'local', 'cache', 'index.json')), false);
      assert.ok(fs.existsSync(writerLog(ws.dir, 'v')));
    });
  });
});
