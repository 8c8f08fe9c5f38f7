/**
 * Goals: the brief's `project_prompt create|list|close` (and `project-prompt`), `goal
 * create|list|show|pause|resume|close|cancel`, and `status` — their JSON shapes, their text,
 * the state machine's refusals (exit 4), duplicates (exit 5) and unknown goals (exit 3).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { GoalStatusDoc, StatusDoc, ShouldRunOutput } from '../../src/core/index';
import { Ws, removeTempDirs, ok, fails, json } from '../helpers/cli';

after(removeTempDirs);

const GoalList = z.array(StatusDoc.shape.goals.element);

describe('goals', { concurrency: true }, () => {
  describe('project_prompt (the brief’s spelling)', { concurrency: 1 }, () => {
    const ws = new Ws();
    let first: GoalStatusDoc;
    before(async () => {
      ok(await ws.run('init'));
    });

    it('create --json prints the goal; .id is a safe slug of the title', async () => {
      first = await ws.json(
        GoalStatusDoc,
        'project_prompt',
        'create',
        '--title',
        'Migrate Database Schema v2',
        '--description',
        'Plan, test, and execute zero-downtime migration.',
      );
      assert.match(first.id, /^migrate-database-schema-v2-[0-9a-z]{4}$/);
      assert.equal(first.title, 'Migrate Database Schema v2');
      assert.equal(first.objective, 'Plan, test, and execute zero-downtime migration.');
      assert.equal(first.status, 'active');
      assert.deepEqual(first.progress, { done: 0, total: 0 });
      assert.ok(
        first.attention.some((a) => a.kind === 'plan'),
        'a goal without todos asks for a plan',
      );
    });

    it('create in text speaks to a person and says what to do next; the kebab spelling works too', async () => {
      const r = ok(
        await ws.run(
          'project-prompt',
          'create',
          '--title',
          'Second',
          '--description',
          'two',
          '--goal-id',
          'second',
        ),
      );
      assert.match(r.stdout, /^created goal second: Second$/m);
      assert.match(r.stdout, /loopx todo add --goal-id second/);
    });

    it('list --json is an array whose .[0].id is the first goal, in both spellings', async () => {
      const [a, b] = await Promise.all([
        ws.run('project_prompt', 'list', '--json'),
        ws.run('--format', 'json', 'project-prompt', 'list'),
      ]);
      const list = json(a, GoalList);
      assert.deepEqual(
        list.map((g) => g.id),
        [first.id, 'second'],
      );
      assert.deepEqual(json(b, GoalList), list);
    });

    it('close --goal-id closes it; list hides it unless --all; closing again is refused (exit 4)', async () => {
      assert.match(
        ok(await ws.run('project_prompt', 'close', '--goal-id', 'second')).stdout,
        /goal second is closed/,
      );
      const [open, all, again, late] = await Promise.all([
        ws.run('project_prompt', 'list', '--json'),
        ws.run('project_prompt', 'list', '--all', '--json'),
        ws.run('project_prompt', 'close', '--goal-id', 'second'),
        ws.run('todo', 'add', '--goal-id', 'second', '--title', 'late'),
      ]);
      assert.deepEqual(
        json(open, GoalList).map((g) => g.id),
        [first.id],
      );
      assert.deepEqual(
        json(all, GoalList).map((g) => [g.id, g.status]),
        [
          [first.id, 'active'],
          ['second', 'closed'],
        ],
      );
      fails(again, 4, /goal second is closed/, /read-only/);
      fails(late, 4, /goal second is closed/, /read-only/, /todo\.add refused/);
    });

    it('close of a goal that does not exist: exit 3 naming it', async () => {
      fails(
        await ws.run('project_prompt', 'close', '--goal-id', 'no-such-goal'),
        3,
        /no goal "no-such-goal"/,
      );
    });
  });

  describe('goal lifecycle', { concurrency: 1 }, () => {
    const ws = new Ws();

    it('create with --goal-id and --turns; the same id again is a conflict (exit 5); a bad budget is exit 2', async () => {
      const g = await ws.json(
        GoalStatusDoc,
        'goal',
        'create',
        '--title',
        'Life',
        '--objective',
        'live it',
        '--goal-id',
        'life',
        '--turns',
        '5',
      );
      assert.equal(g.id, 'life');
      assert.equal(g.objective, 'live it');
      assert.deepEqual(g.quota.budgets.turns, { used: 0, limit: 5, left: 5 });
      const [dup, bad] = await Promise.all([
        ws.run('goal', 'create', '--title', 'Again', '--goal-id', 'life'),
        ws.run('goal', 'create', '--title', 'Bad turns', '--turns', '2.5'),
      ]);
      fails(dup, 5, /goal life already exists/);
      fails(bad, 2, /turns/);
    });

    it('show --json is the goal document; show in text has the title, the status and the todos', async () => {
      ok(
        await ws.run(
          'todo',
          'add',
          '--goal-id',
          'life',
          '--title',
          'Write the plan',
          '--todo-id',
          'plan',
          '--priority',
          'P1',
        ),
      );
      const [doc, text] = await Promise.all([
        ws.json(GoalStatusDoc, 'goal', 'show', '--goal-id', 'life'),
        ws.run('goal', 'show', '--goal-id', 'life'),
      ]);
      assert.equal(doc.schema, 'loopx.goal-status/1');
      assert.deepEqual(
        doc.todos.map((t) => [t.id, t.status, t.priority]),
        [['plan', 'open', 'P1']],
      );
      assert.match(ok(text).stdout, /^Life {2}\(life\)$/m);
      assert.match(text.stdout, /^status active, /m);
      assert.match(text.stdout, /\[ \] {2}P1 {2}plan {2}Write the plan/);
    });

    it('pause: should-run answers stop; pausing again is refused (exit 4) saying what is allowed', async () => {
      assert.equal(
        (await ws.json(GoalStatusDoc, 'goal', 'pause', '--goal-id', 'life', '--reason', 'lunch')).status,
        'paused',
      );
      const [sr, again] = await Promise.all([
        ws.json(ShouldRunOutput, 'quota', 'should-run', '--goal-id', 'life'),
        ws.run('goal', 'pause', '--goal-id', 'life'),
      ]);
      assert.equal(sr.decision, 'stop');
      assert.match(sr.reasons.join(' '), /paused/);
      assert.deepEqual(sr.interaction_contract.cli_channel.next_cli_actions, []);
      fails(again, 4, /cannot pause goal life: it is paused/, /resume/);
    });

    it('resume makes it active again; resuming an active goal is refused', async () => {
      assert.equal((await ws.json(GoalStatusDoc, 'goal', 'resume', '--goal-id', 'life')).status, 'active');
      fails(await ws.run('goal', 'resume', '--goal-id', 'life'), 4, /cannot resume goal life: it is active/);
    });

    it('cancel is final: nothing moves it afterwards, and should-run stops', async () => {
      assert.equal(
        (await ws.json(GoalStatusDoc, 'goal', 'cancel', '--goal-id', 'life', '--reason', 'not needed'))
          .status,
        'cancelled',
      );
      const [resume, close, sr] = await Promise.all([
        ws.run('goal', 'resume', '--goal-id', 'life'),
        ws.run('goal', 'close', '--goal-id', 'life'),
        ws.json(ShouldRunOutput, 'quota', 'should-run', '--goal-id', 'life'),
      ]);
      fails(resume, 4, /goal life is cancelled/);
      fails(close, 4, /goal life is cancelled/);
      assert.equal(sr.decision, 'stop');
    });

    it('goal list shows open goals only (--all for the rest); every transition is in the log, by an agent on the cli channel', async () => {
      ok(await ws.run('goal', 'create', '--title', 'Other', '--goal-id', 'other'));
      ok(await ws.run('goal', 'close', '--goal-id', 'other'));
      const [open, text, all] = await Promise.all([
        ws.run('goal', 'list', '--json'),
        ws.run('goal', 'list'),
        ws.run('goal', 'list', '--all', '--json'),
      ]);
      assert.deepEqual(json(open, GoalList), []);
      assert.match(ok(text).stdout, /^No goals/);
      assert.deepEqual(
        json(all, GoalList).map((g) => g.status),
        ['cancelled', 'closed'],
      );
      const events = ws.events('life');
      assert.deepEqual(
        events.map((e) => e.type).filter((t) => t.startsWith('goal.')),
        ['goal.created', 'goal.paused', 'goal.resumed', 'goal.cancelled'],
      );
      for (const e of events)
        assert.deepEqual(
          [e.actor.kind, e.actor.channel],
          ['agent', 'cli'],
          'stdin is not a TTY: the caller is an agent',
        );
    });

    it('show of an unknown goal: exit 3 naming it', async () => {
      fails(await ws.run('goal', 'show', '--goal-id', 'ghost'), 3, /no goal "ghost"/);
    });
  });

  describe('status', { concurrency: 1 }, () => {
    const ws = new Ws();
    before(async () => {
      ok(await ws.run('init'));
    });

    it('with no goals, says how to make one', async () => {
      const [text, doc] = await Promise.all([ws.run('status'), ws.json(StatusDoc, 'status')]);
      assert.match(ok(text).stdout, /^No goals yet\. Create one: loopx project_prompt create/);
      assert.deepEqual(doc.goals, []);
      assert.equal(doc.workspace, ws.dir);
    });

    it('every goal, readable by a person; --json is the status document', async () => {
      await Promise.all([
        ws.run('goal', 'create', '--title', 'Alpha', '--goal-id', 'alpha').then(ok),
        ws.run('goal', 'create', '--title', 'Beta', '--goal-id', 'beta').then(ok),
      ]);
      ok(await ws.run('todo', 'add', '--goal-id', 'beta', '--title', 'Gated', '--gate', 'prod'));
      const [text, doc] = await Promise.all([ws.run('status'), ws.json(StatusDoc, 'status')]);
      assert.match(ok(text).stdout, /^active\s+0\/0\s+alpha\s+Alpha$/m);
      assert.match(text.stdout, /^active\s+0\/1\s+beta\s+Beta\s+\(1 gate pending\)$/m);
      assert.match(text.stdout, /needs attention:/);
      assert.equal(doc.schema, 'loopx.status/1');
      assert.deepEqual(doc.goals.map((g) => [g.id, g.pending_gates]).sort(), [
        ['alpha', 0],
        ['beta', 1],
      ]);
      assert.equal(doc.counts.active, 2);
    });

    it('--goal-id G --json and --goal-id G --format json: the goal document, whose .status is its status', async () => {
      const [a, b] = await Promise.all([
        ws.json(GoalStatusDoc, 'status', '--goal-id', 'beta'),
        ws.run('status', '--goal-id', 'beta', '--format', 'json'),
      ]);
      assert.deepEqual(a, json(b, GoalStatusDoc));
      assert.equal(a.status, 'active');
      assert.deepEqual(
        a.gates.map((g) => [g.id, g.status]),
        [['prod', 'pending']],
      );
    });
  });
});
