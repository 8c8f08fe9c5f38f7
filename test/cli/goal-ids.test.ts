/**
 * `--goal-id` as a person types it (cli/goal-option.ts over core/model/id-match.ts): the slug
 * without its random suffix finds the goal when only one goal starts with it, and the CLI says
 * which; otherwise nothing runs and the error lists the ids meant, by reason code.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { z } from 'zod';
import { GoalStatusDoc } from '../../src/core/index';
import { Ws, removeTempDirs, ok, fails } from '../helpers/cli';

after(removeTempDirs);

const ErrorLine = z.object({
  error: z.object({ kind: z.string(), reason: z.string(), message: z.string(), exit_code: z.number() }),
});

describe('goal ids as a person types them', { concurrency: 1 }, () => {
  const ws = new Ws();
  let payment: string;
  let billing: string;
  before(async () => {
    ok(await ws.run('init'));
    payment = (await ws.json(GoalStatusDoc, 'goal', 'create', '--title', 'Refactor payment module')).id;
    billing = (await ws.json(GoalStatusDoc, 'goal', 'create', '--title', 'Refactor billing')).id;
  });

  it('the slug without its suffix finds the goal, and stderr says which one', async () => {
    const r = ok(
      await ws.run('todo', 'add', '--goal-id', 'refactor-payment-module', '--title', 'x', '--action', 'true'),
    );
    assert.match(
      r.stderr,
      new RegExp(`--goal-id refactor-payment-module is goal ${payment}, the only goal id`),
    );
    const doc = await ws.json(GoalStatusDoc, 'status', '--goal-id', 'refactor-pay');
    assert.equal(doc.id, payment);
    assert.equal(doc.progress.total, 1, 'the todo went to that goal');
  });

  it('a prefix several ids share is refused listing them (exit 3, goal_id_ambiguous); nothing is written', async () => {
    const before = ws.events(payment).length;
    const r = fails(
      await ws.run('todo', 'add', '--goal-id', 'refactor', '--title', 'y', '--action', 'true'),
      3,
      /no goal "refactor" in .* \(--goal-id\): 2 goal ids start with it/,
    );
    assert.ok(r.stderr.includes(billing) && r.stderr.includes(payment), r.stderr);
    assert.equal(ws.events(payment).length, before);
    const json = await ws.run('--json', 'status', '--goal-id', 'refactor');
    assert.equal(ErrorLine.parse(JSON.parse(json.stderr)).error.reason, 'goal_id_ambiguous');
  });

  it('a mistyped id gets "did you mean"; one like no goal says how to list them (goal_not_found)', async () => {
    fails(
      await ws.run('status', '--goal-id', 'refactr-payment-modul'),
      3,
      new RegExp(`no goal "refactr-payment-modul" in .*; did you mean ${payment}\\?`),
    );
    const r = fails(
      await ws.run('goal', 'pause', '--goal-id', 'ghost'),
      3,
      /no goal "ghost" .*`loopx project_prompt list`/,
    );
    assert.doesNotMatch(r.stderr, /did you mean/);
    const json = await ws.run('--json', 'status', '--goal-id', 'ghost');
    assert.equal(ErrorLine.parse(JSON.parse(json.stderr)).error.reason, 'goal_not_found');
  });

  it('a goal whose folder is there but whose log is gone is reported as damaged, naming it, not as a typo', async () => {
    ok(await ws.run('goal', 'create', '--title', 'Damaged', '--goal-id', 'damaged'));
    fs.rmSync(ws.file('.loopx', 'goals', 'damaged', 'events'), { recursive: true, force: true });
    const r = await ws.run('status', '--goal-id', 'damaged');
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /goal damaged: its folder has no event log/);
    assert.doesNotMatch(r.stderr, /did you mean/);
  });

  it('two letters are never a prefix; create takes --goal-id as the new id, whatever it prefixes', async () => {
    fails(await ws.run('status', '--goal-id', 're'), 3, /no goal "re"/);
    const made = await ws.json(GoalStatusDoc, 'goal', 'create', '--title', 'Other', '--goal-id', 'refactor');
    assert.equal(made.id, 'refactor');
    const exact = await ws.json(GoalStatusDoc, 'status', '--goal-id', 'refactor');
    assert.equal(exact.id, 'refactor', 'a whole id is that goal, even when it prefixes others');
  });
});
