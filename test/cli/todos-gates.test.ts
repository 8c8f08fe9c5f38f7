/**
 * Todos (add|list|claim|done|cancel|update), gates (request|approve|reject|list), and the
 * human-only commands (gate approve/reject, reward add, quota grant): refused with exit 4 and a
 * message saying how a person does it when stdin is not a terminal, accepted under a
 * pseudo-terminal (`script`), where the event log records a user on the cli channel.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { GoalStatusDoc, ShouldRunOutput } from '../../src/core/index';
import { TodoChangeOutput, GateChangeOutput } from '../../src/core/views/output-schemas';
import { Ws, removeTempDirs, loopx, loopxTty, ok, fails, json } from '../helpers/cli';

after(removeTempDirs);

const TodoList = GoalStatusDoc.shape.todos;
const GateList = GoalStatusDoc.shape.gates;

describe('todos and gates', { concurrency: true }, () => {
  describe('todo add|list|claim|done|cancel|update', { concurrency: 1 }, () => {
    const ws = new Ws();
    before(async () => {
      ok(await ws.run('goal', 'create', '--title', 'Todos', '--goal-id', 'g'));
    });

    it('add --json: the todo as stored, with its defaults (owner agent, P2) or what was asked', async () => {
      const [a, b] = await Promise.all([
        ws.json(
          TodoChangeOutput,
          'todo',
          'add',
          '--goal-id',
          'g',
          '--title',
          'Run the tests',
          '--action',
          'npm test',
          '--todo-id',
          'tests',
          '--priority',
          'P1',
        ),
        ws.json(
          TodoChangeOutput,
          'todo',
          'add',
          '--goal-id',
          'g',
          '--title',
          'Read the report',
          '--owner',
          'user',
        ),
      ]);
      assert.equal(a.goal_id, 'g');
      assert.deepEqual(
        [a.todo.id, a.todo.owner, a.todo.priority, a.todo.status, a.todo.action],
        ['tests', 'agent', 'P1', 'open', 'npm test'],
      );
      assert.match(b.todo.id, /^t-[0-9a-z]{6}$/, 'a generated todo id');
      assert.deepEqual([b.todo.owner, b.todo.priority], ['user', 'P2']);
      const dep = await ws.json(
        TodoChangeOutput,
        'todo',
        'add',
        '--goal-id',
        'g',
        '--title',
        'Ship',
        '--todo-id',
        'ship',
        '--depends-on',
        'tests',
        '--action',
        'echo ship',
      );
      assert.deepEqual(dep.todo.dependsOn, ['tests']);
    });

    it('add refuses a dependency that does not exist (exit 3) and an id taken (exit 4), naming them', async () => {
      const [missing, taken] = await Promise.all([
        ws.run('todo', 'add', '--goal-id', 'g', '--title', 'x', '--depends-on', 'tests,nope'),
        ws.run('todo', 'add', '--goal-id', 'g', '--title', 'x', '--todo-id', 'tests'),
      ]);
      fails(missing, 3, /no todo "nope"/);
      fails(taken, 4, /already has a todo tests/);
    });

    it('list --json is the goal’s todos; list in text marks each with its status and priority', async () => {
      const [list, text] = await Promise.all([
        ws.run('todo', 'list', '--goal-id', 'g', '--json'),
        ws.run('todo', 'list', '--goal-id', 'g'),
      ]);
      const todos = json(list, TodoList);
      assert.deepEqual(
        todos.map((t) => t.id).filter((id) => !id.startsWith('t-')),
        ['tests', 'ship'],
      );
      assert.deepEqual(todos.find((t) => t.id === 'ship')!.depends_on, ['tests']);
      assert.match(ok(text).stdout, /^ {2}\[ \] {2}P1 {2}tests +Run the tests +\$ npm test$/m);
      assert.match(text.stdout, /ship +Ship .*\(after tests\)/);
    });

    it('claim --by: the todo is held; another claim is refused (exit 4) saying by whom', async () => {
      const c = await ws.json(
        TodoChangeOutput,
        'todo',
        'claim',
        '--goal-id',
        'g',
        '--todo-id',
        'tests',
        '--by',
        'bot-1',
      );
      assert.deepEqual([c.todo.status, c.todo.claimedBy], ['claimed', 'bot-1']);
      const [again, unknown] = await Promise.all([
        ws.run('todo', 'claim', '--goal-id', 'g', '--todo-id', 'tests', '--by', 'bot-2'),
        ws.run('todo', 'claim', '--goal-id', 'g', '--todo-id', 'ghost'),
      ]);
      fails(again, 4, /todo tests is claimed by bot-1/);
      fails(unknown, 3, /goal g has no todo "ghost"/);
    });

    it('done --summary marks it done and records the summary as evidence; done twice is refused', async () => {
      const d = await ws.json(
        TodoChangeOutput,
        'todo',
        'done',
        '--goal-id',
        'g',
        '--todo-id',
        'tests',
        '--summary',
        '42 passed',
      );
      assert.equal(d.todo.status, 'done');
      assert.equal(d.todo.evidence.length, 1);
      const ev = ws.events('g').find((e) => e.type === 'evidence.added')!;
      assert.deepEqual((ev.data.evidence as { summary: string; todoId: string }).summary, '42 passed');
      fails(
        await ws.run('todo', 'done', '--goal-id', 'g', '--todo-id', 'tests'),
        4,
        /todo tests is already done/,
      );
    });

    it('an agent (no terminal) cannot complete a person’s todo (exit 4)', async () => {
      const userTodo = json(await ws.run('todo', 'list', '--goal-id', 'g', '--json'), TodoList).find(
        (t) => t.owner === 'user',
      )!;
      fails(
        await ws.run('todo', 'done', '--goal-id', 'g', '--todo-id', userTodo.id),
        4,
        /belongs to a person/,
      );
    });

    it('update changes the title and priority; with nothing to change it is a usage error', async () => {
      const u = await ws.json(
        TodoChangeOutput,
        'todo',
        'update',
        '--goal-id',
        'g',
        '--todo-id',
        'ship',
        '--priority',
        'P0',
        '--title',
        'Ship it',
      );
      assert.deepEqual([u.todo.title, u.todo.priority], ['Ship it', 'P0']);
      fails(await ws.run('todo', 'update', '--goal-id', 'g', '--todo-id', 'ship'), 2, /nothing to update/);
    });

    it('cancel --reason: cancelled; cancelling again is refused', async () => {
      const c = await ws.json(
        TodoChangeOutput,
        'todo',
        'cancel',
        '--goal-id',
        'g',
        '--todo-id',
        'ship',
        '--reason',
        'not needed',
      );
      assert.equal(c.todo.status, 'cancelled');
      fails(
        await ws.run('todo', 'cancel', '--goal-id', 'g', '--todo-id', 'ship'),
        4,
        /todo ship is already cancelled/,
      );
    });
  });

  describe('gates and the human-only commands', { concurrency: 1 }, () => {
    const ws = new Ws();
    let runId: string;
    before(async () => {
      ok(await ws.run('goal', 'create', '--title', 'Gates', '--goal-id', 'h'));
      await Promise.all([
        ws
          .run(
            'todo',
            'add',
            '--goal-id',
            'h',
            '--title',
            'Deploy',
            '--todo-id',
            'deploy',
            '--action',
            'echo deploy',
            '--gate',
            'prod',
          )
          .then(ok),
        ws
          .run(
            'todo',
            'add',
            '--goal-id',
            'h',
            '--title',
            'Risky',
            '--todo-id',
            'risky',
            '--action',
            'echo risky',
            '--gate',
            'risky',
          )
          .then(ok),
        ws
          .run(
            'todo',
            'add',
            '--goal-id',
            'h',
            '--title',
            'Plain',
            '--todo-id',
            'plain',
            '--action',
            'echo plain',
          )
          .then(ok),
      ]);
    });

    it('a todo naming a new gate requests it at once; add in text says how a person approves it', async () => {
      const r = ok(
        await ws.run(
          'todo',
          'add',
          '--goal-id',
          'h',
          '--title',
          'Migrate',
          '--todo-id',
          'migrate',
          '--gate',
          'db',
        ),
      );
      assert.match(
        r.stdout,
        /gate db is pending: a person approves it with loopx gate approve --goal-id h --gate-id db/,
      );
      const gates = await ws.json(GateList, 'gate', 'list', '--goal-id', 'h');
      assert.deepEqual(gates.map((g) => [g.id, g.status]).sort(), [
        ['db', 'pending'],
        ['prod', 'pending'],
        ['risky', 'pending'],
      ]);
      assert.deepEqual(gates.find((g) => g.id === 'prod')!.guards, ['deploy']);
    });

    it('gate request --json: the gate as stored; guards that do not exist are exit 3', async () => {
      const g = await ws.json(
        GateChangeOutput,
        'gate',
        'request',
        '--goal-id',
        'h',
        '--gate-id',
        'review',
        '--title',
        'Review the plan',
        '--reason',
        'a person reads it first',
        '--guards',
        'plain',
      );
      assert.deepEqual(
        [g.gate.id, g.gate.status, g.gate.title, g.gate.reason, g.gate.guards],
        ['review', 'pending', 'Review the plan', 'a person reads it first', ['plain']],
      );
      assert.deepEqual([g.gate.requestedBy.kind, g.gate.requestedBy.channel], ['agent', 'cli']);
      fails(
        await ws.run('gate', 'request', '--goal-id', 'h', '--gate-id', 'x', '--guards', 'ghost'),
        3,
        /no todo "ghost"/,
      );
    });

    it('without a terminal or key passphrase, gate approve/reject, reward add and quota grant are refused (exit 4), say how a person does it, and change nothing', async () => {
      const before_ = ws.events('h').length;
      const runs = await Promise.all([
        ws.run('gate', 'approve', '--goal-id', 'h', '--gate-id', 'prod', '--note', 'sneaky'),
        ws.run('gate', 'reject', '--goal-id', 'h', '--gate-id', 'prod'),
        ws.run(
          'reward',
          'add',
          '--goal-id',
          'h',
          '--run-id',
          'run-00000000',
          '--score',
          '1',
          '--comment',
          'self-praise',
        ),
        ws.run('quota', 'grant', '--goal-id', 'h', '--turns', '1000'),
      ]);
      const what = ['approve a gate', 'reject a gate', 'record a reward', 'grant quota'];
      const vscode = [
        'LoopX: Approve Gate',
        'LoopX: Reject Gate',
        'LoopX: Record Reward',
        'LoopX: Grant Quota',
      ];
      runs.forEach((r, i) =>
        fails(
          r,
          4,
          new RegExp(`Agents and scripts cannot ${what[i]}`),
          /passphrase|loopx key create/,
          new RegExp(vscode[i]!),
        ),
      );
      assert.equal(ws.events('h').length, before_, 'a refused command appended to the log');
      // Naming yourself a person proves nothing.
      fails(
        await loopx(['gate', 'approve', '--goal-id', 'h', '--gate-id', 'prod'], {
          cwd: ws.dir,
          env: { LOOPX_ACTOR: 'alice' },
        }),
        4,
        /Agents and scripts cannot approve a gate/,
      );
    });

    it('at a terminal, gate approve works; the log records a user on the cli channel; approving twice is refused', async () => {
      const r = await ws.tty('gate', 'approve', '--goal-id', 'h', '--gate-id', 'prod', '--note', 'reviewed');
      assert.equal(r.code, 0, r.output);
      assert.match(r.output, /approved gate prod \(approved\)/);
      const ev = ws.events('h').at(-1)!;
      assert.equal(ev.type, 'gate.approved');
      assert.deepEqual([ev.actor.kind, ev.actor.channel], ['user', 'cli']);
      const { guarded, ...decided } = ev.data as { guarded: { todoId: string }[] };
      assert.deepEqual(decided, { gateId: 'prod', note: 'reviewed', basis: null });
      assert.ok(Array.isArray(guarded), 'the approval lists the work it covers');
      assert.match(
        r.output,
        /Approving lets agents do \d+ todos?, exactly as listed/,
        'shown before signing',
      );
      const gates = await ws.json(GateList, 'gate', 'list', '--goal-id', 'h');
      const statuses = gates.map((x) => x.status);
      assert.deepEqual(
        statuses,
        [...statuses].sort((a, b) => Number(b === 'pending') - Number(a === 'pending')),
        'pending gates come first',
      );
      assert.equal(statuses.at(-1), 'approved');
      const g = gates.find((x) => x.id === 'prod')!;
      assert.equal(g.status, 'approved');
      assert.match(g.decided_by!, /^user:/);
      const again = await ws.tty('gate', 'approve', '--goal-id', 'h', '--gate-id', 'prod');
      assert.equal(again.code, 4, again.output);
      assert.match(again.output, /gate prod is approved .*only a pending gate can be approved/);
    });

    it('at a terminal, gate reject cancels the open todos it guards; new work needing it is refused', async () => {
      const r = await ws.tty('gate', 'reject', '--goal-id', 'h', '--gate-id', 'risky', '--note', 'too risky');
      assert.equal(r.code, 0, r.output);
      const ev = ws.events('h').at(-1)!;
      assert.deepEqual([ev.type, ev.actor.kind, ev.actor.channel], ['gate.rejected', 'user', 'cli']);
      const todos = await ws.json(TodoList, 'todo', 'list', '--goal-id', 'h');
      assert.equal(todos.find((t) => t.id === 'risky')!.status, 'cancelled');
      fails(
        await ws.run('todo', 'add', '--goal-id', 'h', '--title', 'again', '--gate', 'risky'),
        4,
        /gate risky of goal h was rejected/,
      );
    });

    it('at a terminal, reward add scores a run (as LOOPX_ACTOR says); out of range is exit 2, an unknown run exit 3', async () => {
      const sr = await ws.json(ShouldRunOutput, 'quota', 'should-run', '--goal-id', 'h');
      assert.equal(sr.decision, 'run');
      runId = sr.run_id!;
      const r = await loopxTty(
        [
          'reward',
          'add',
          '--goal-id',
          'h',
          '--run-id',
          runId,
          '--score',
          '0.8',
          '--comment',
          'Good approach but needs more edge case handling.',
        ],
        { cwd: ws.dir, env: { LOOPX_ACTOR: 'alice' } },
      );
      assert.equal(r.code, 0, r.output);
      assert.match(r.output, new RegExp(`recorded reward rw-[0-9a-z]{8} \\(0\\.8\\) for run ${runId}`));
      const ev = ws.events('h').at(-1)!;
      assert.equal(ev.type, 'reward.added');
      assert.deepEqual(ev.actor, { kind: 'user', id: 'alice', channel: 'cli' });
      const doc = await ws.json(GoalStatusDoc, 'status', '--goal-id', 'h');
      assert.deepEqual([doc.rewards.count, doc.rewards.mean], [1, 0.8]);
      const [range, unknown] = await Promise.all([
        ws.tty('reward', 'add', '--goal-id', 'h', '--run-id', runId, '--score', '1.5'),
        ws.tty('reward', 'add', '--goal-id', 'h', '--run-id', 'run-zzzzzzzz', '--score', '0.5'),
      ]);
      assert.equal(range.code, 2, range.output);
      assert.match(range.output, /score/);
      assert.equal(unknown.code, 3, unknown.output);
      assert.match(unknown.output, /no run "run-zzzzzzzz"/);
    });

    it('at a terminal, quota grant adds budget; a grant of nothing is a usage error', async () => {
      const r = await ws.tty('quota', 'grant', '--goal-id', 'h', '--turns', '10', '--note', 'one more day');
      assert.equal(r.code, 0, r.output);
      const ev = ws.events('h').at(-1)!;
      assert.deepEqual([ev.type, ev.actor.kind, ev.actor.channel], ['quota.granted', 'user', 'cli']);
      const q = await ws.json(GoalStatusDoc.shape.quota, 'quota', 'show', '--goal-id', 'h');
      assert.equal(q.budgets.turns!.limit, 210, 'the default 200 turns and 10 granted');
      const none = await ws.tty('quota', 'grant', '--goal-id', 'h');
      assert.equal(none.code, 2, none.output);
      assert.match(none.output, /at least one positive amount/);
    });
  });
});
