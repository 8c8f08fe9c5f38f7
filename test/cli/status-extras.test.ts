/**
 * `loopx status` as a program and a person read it: each run's `human_reward` (the person's
 * latest reward on it), and a policy.json that is broken by hand reported on status's first line
 * and in its `policy` field, while status still lists the goals and exits 0.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { GoalStatusDoc, ShouldRunOutput, StatusDoc } from '../../src/core/index';
import { Ws, removeTempDirs, ok, fails } from '../helpers/cli';

after(removeTempDirs);

describe('status --json: human_reward on each run', () => {
  const ws = new Ws();
  let runId: string;
  before(async () => {
    ok(await ws.run('init'));
    ok(
      await ws.run('project_prompt', 'create', '--title', 'Rewarded', '--description', 'd', '--goal-id', 'h'),
    );
    ok(await ws.run('todo', 'add', '--goal-id', 'h', '--title', 'think'));
    runId = (await ws.json(ShouldRunOutput, 'quota', 'should-run', '--goal-id', 'h')).run_id!;
  });

  it('null before a person rewards the run; then their reward with the lesson, signed', async () => {
    let doc = await ws.json(GoalStatusDoc, 'status', '--goal-id', 'h');
    assert.equal(doc.runs.find((r) => r.id === runId)!.human_reward, null);
    ok(
      await ws.person(
        'reward',
        'add',
        '--goal-id',
        'h',
        '--run-id',
        runId,
        '--score',
        '0.5',
        '--comment',
        'solid',
        '--lesson',
        'write the test first',
      ),
    );
    doc = await ws.json(GoalStatusDoc, 'status', '--goal-id', 'h');
    const hr = doc.runs.find((r) => r.id === runId)!.human_reward;
    assert.ok(hr);
    assert.deepEqual(
      { ...hr, at: typeof hr.at },
      {
        score: 0.5,
        comment: 'solid',
        lesson: 'write the test first',
        by: 'user:alice',
        at: 'string',
        signed: true,
      },
    );
  });
});

describe('status: a policy.json broken by hand', () => {
  const ws = new Ws();
  before(async () => {
    ok(await ws.run('init'));
    ok(await ws.run('project_prompt', 'create', '--title', 'Listed', '--description', 'd', '--goal-id', 'g'));
  });

  it('that does not parse: the first line names the file, the line and the fix; exit 0, the goals still listed', async () => {
    fs.writeFileSync(ws.file('.loopx', 'policy.json'), '{\n  "v": 1,\n  oops\n}\n');
    const r = ok(await ws.run('status'));
    const [first, ...rest] = r.stdout.split('\n');
    assert.match(first!, /^policy:? +.*\.loopx\/policy\.json \(line 3\): not valid JSON/);
    assert.match(first!, /fix \.loopx\/policy\.json by hand, then check it with `loopx policy show`/);
    assert.ok(
      rest.some((l) => /\bg\b.*Listed/.test(l)),
      r.stdout,
    );
    const doc = await ws.json(StatusDoc, 'status');
    assert.equal(doc.policy.state, 'invalid');
    assert.deepEqual(
      { reason: doc.policy.error?.reason, file: doc.policy.error?.file, line: doc.policy.error?.line },
      { reason: 'corrupt', file: ws.file('.loopx', 'policy.json'), line: 3 },
    );
    // A goal's own status needs the policy: it fails as the other corrupt files do (exit 6).
    fails(await ws.run('status', '--goal-id', 'g'), 6, /policy\.json \(line 3\)/);
  });

  it('that parses but fails the schema: the field is named', async () => {
    fs.writeFileSync(
      ws.file('.loopx', 'policy.json'),
      JSON.stringify({ v: 1, reviewAgentActions: 'sometimes' }),
    );
    const r = ok(await ws.run('status'));
    assert.match(r.stdout.split('\n')[0]!, /^policy:? +.*policy\.json: field reviewAgentActions/);
    const doc = await ws.json(StatusDoc, 'status');
    assert.equal(doc.policy.error?.field, 'reviewAgentActions');
  });
});
