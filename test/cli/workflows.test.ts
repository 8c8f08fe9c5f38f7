/**
 * Workflow capabilities through the built CLI: `capability run` end to end into a contract, the
 * quota refusal, a workspace workflow file and a bad one, `loopx capabilities` listing both kinds,
 * and `--param` mistakes.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { z } from 'zod';
import { ShouldRunOutput } from '../../src/core/index';
import { WorkflowRunOutput } from '../../src/core/views/output-schemas';
import { Ws, removeTempDirs, ok, fails, json } from '../helpers/cli';

after(removeTempDirs);

const Catalog = z.array(
  z.object({
    kind: z.enum(['core', 'workflow']),
    id: z.string(),
    summary: z.string(),
    actors: z.array(z.string()),
    input: z.unknown(),
    source: z.string().optional(),
  }),
);

const deploy = {
  name: 'deploy',
  title: 'Deploy {env}',
  summary: 'Build and deploy to one environment.',
  params: { env: { description: 'where to', required: true, pattern: 'staging|production' } },
  todos: [
    { key: 'build', title: 'Build', action: 'npm run build', priority: 'P1' },
    { key: 'ship', title: 'Deploy to {env}', action: './deploy.sh {env}', dependsOn: ['build'], gate: 'go' },
  ],
  gates: [{ key: 'go', title: 'Deploy to {env}', reason: 'a person decides when {env} changes' }],
  quota: { turns: 2 },
};

describe('loopx capability', { concurrency: 1 }, () => {
  const ws = new Ws();
  before(async () => {
    ok(await ws.run('goal', 'create', '--title', 'Fix it', '--goal-id', 'g', '--turns', '50'));
  });

  it('run issue-fix adds its todos and gate; should-run then gives the first todo’s action', async () => {
    const out = await ws.json(
      WorkflowRunOutput,
      'capability',
      'run',
      'issue-fix',
      '--goal-id',
      'g',
      '--param',
      'issue=17',
    );
    assert.equal(out.name, 'issue-fix');
    assert.equal(out.source, 'builtin');
    assert.deepEqual(out.params, { issue: '17', base: 'main' });
    assert.equal(out.todo_ids.length, 6);
    assert.equal(out.gate_ids.length, 1);
    assert.equal(out.todos[0]!.action, 'gh issue view 17 --comments');
    assert.equal(out.gates[0]!.status, 'pending');
    assert.deepEqual(out.declared_quota, { turns: 12, tokens: 400000, costUsd: 5 });
    const sr = await ws.json(ShouldRunOutput, 'quota', 'should-run', '--goal-id', 'g');
    assert.equal(sr.decision, 'run');
    assert.equal(sr.interaction_contract.agent_channel.primary!.todo_id, out.todo_ids[0]);
    assert.deepEqual(sr.interaction_contract.cli_channel.next_cli_actions, [
      `loopx exec --contract ${sr.interaction_contract.id} --todo ${out.todo_ids[0]} -- 'gh issue view 17 --comments'`,
    ]);
    const text = ok(await ws.run('log', '--goal-id', 'g')).stdout;
    assert.match(
      text,
      new RegExp(`workflow\\.started +started workflow issue-fix \\(${out.instance_id}\\) with issue=17`),
    );
  });

  it('the text output lists the todos, the gate and the declared quota', async () => {
    const r = ok(await ws.run('capability', 'run', 'release', '--goal-id', 'g', '--param', 'version=1.2.3'));
    assert.match(r.stdout, /^started workflow release \(wf-[0-9a-z]{8}\) on goal g: 5 todos, 1 gate$/m);
    assert.match(r.stdout, /\$ npm version 1\.2\.3 --message v1\.2\.3/);
    assert.match(r.stdout, /a person approves it with loopx gate approve --goal-id g --gate-id publish-/);
    assert.match(r.stdout, /^declared quota: turns 10, tokens 300,000, cost \$4$/m);
  });

  it('refuses a workflow declaring more than is left: exit 4, the reason in JSON, each budget named', async () => {
    ok(await ws.run('goal', 'create', '--title', 'Small', '--goal-id', 'small', '--turns', '3'));
    fails(
      await ws.run('capability', 'run', 'issue-fix', '--goal-id', 'small', '--param', 'issue=1'),
      4,
      /turns: 12 declared, 3 left/,
    );
    const r = await ws.run(
      '--json',
      'capability',
      'run',
      'issue-fix',
      '--goal-id',
      'small',
      '--param',
      'issue=1',
    );
    assert.equal(r.code, 4);
    assert.equal(r.stdout, '');
    const err = JSON.parse(r.stderr) as { error: { reason: string; message: string } };
    assert.equal(err.error.reason, 'workflow_over_budget');
    assert.match(err.error.message, /turns: 12 declared, 3 left/);
    assert.match(err.error.message, /loopx quota grant --goal-id small --turns 9/);
  });

  it('--param mistakes are usage errors (exit 2) naming the parameter', async () => {
    const run = (...p: string[]) => ws.run('capability', 'run', 'issue-fix', '--goal-id', 'g', ...p);
    fails(await run('--param', 'issue'), 2, /--param "issue": give NAME=VALUE/);
    fails(await run('--param', 'issue=1', '--param', 'issue=2'), 2, /--param issue is given twice/);
    fails(
      await run('--param', 'issue=1', '--param', 'colour=red'),
      2,
      /--param colour: .*no parameter "colour"/,
    );
    fails(await run(), 2, /--param issue: is required/);
    fails(await run('--param', 'issue=1; rm -rf ~'), 2, /--param issue: "1; rm -rf ~" does not match/);
    fails(await ws.run('capability', 'run', 'nope', '--goal-id', 'g'), 3, /there is no workflow "nope"/);
  });

  it('a workspace workflow file runs, and is listed with the core capabilities', async () => {
    fs.mkdirSync(ws.file('.loopx', 'capabilities'), { recursive: true });
    fs.writeFileSync(ws.file('.loopx', 'capabilities', 'deploy.json'), JSON.stringify(deploy, null, 2));
    const out = await ws.json(
      WorkflowRunOutput,
      'capability',
      'run',
      'deploy',
      '--goal-id',
      'g',
      '--param',
      'env=staging',
    );
    assert.equal(out.source, 'workspace');
    assert.equal(out.todos[1]!.action, './deploy.sh staging');
    assert.equal(out.gates.find((g) => g.key === 'go')!.title, 'Deploy to staging');
    const cat = await ws.json(Catalog, 'capabilities');
    const ids = cat.map((c) => c.id);
    assert.ok(ids.includes('todo.add') && ids.includes('workflow.run'));
    assert.ok(ids.includes('workflow:issue-fix') && ids.includes('workflow:deploy'));
    assert.equal(cat.find((c) => c.id === 'todo.add')!.kind, 'core');
    const d = cat.find((c) => c.id === 'workflow:deploy')!;
    assert.equal(d.kind, 'workflow');
    assert.equal(d.source, 'workspace');
    assert.deepEqual((d.input as { required: string[] }).required, ['env']);
    const show = JSON.parse(ok(await ws.run('--json', 'capability', 'show', 'deploy')).stdout) as {
      schema: string;
      source: string;
    };
    assert.equal(show.schema, 'loopx.workflow/1');
    assert.equal(show.source, 'workspace');
    const text = ok(await ws.run('capabilities')).stdout;
    assert.match(text, /^ {2}deploy +\[workspace\] Build and deploy/m);
  });

  it('a bad file: run refused as corrupt (exit 6) with its line; capabilities warns and lists the rest', async () => {
    const text = JSON.stringify(
      { ...deploy, name: 'broken', todos: [{ key: 'a', title: 'A', dependsOn: ['ghost'] }], gates: [] },
      null,
      2,
    );
    fs.writeFileSync(ws.file('.loopx', 'capabilities', 'broken.json'), text);
    const line = text.split('\n').findIndex((l) => l.includes('"ghost"')) + 1;
    fails(
      await ws.run('capability', 'run', 'broken', '--goal-id', 'g'),
      6,
      new RegExp(
        `\\.loopx/capabilities/broken\\.json \\(line ${line}, column \\d+\\): field todos\\.0\\.dependsOn\\.0: no todo has the key "ghost"`,
      ),
    );
    const r = await ws.run('--json', 'capabilities');
    const cat = json(r, Catalog);
    assert.match(r.stderr, new RegExp(`loopx: warning: \\.loopx/capabilities/broken\\.json \\(line ${line}`));
    assert.ok(
      cat.some((c) => c.id === 'workflow:deploy'),
      'the good file is still listed',
    );
    assert.ok(!cat.some((c) => c.id === 'workflow:broken'));
    fs.writeFileSync(
      ws.file('.loopx', 'capabilities', 'broken.json'),
      '{\n  "name": "broken",\n  "title": "x",\n}\n',
    );
    fails(
      await ws.run('capability', 'run', 'broken', '--goal-id', 'g'),
      6,
      /broken\.json \(line 4, column 1\): not valid JSON/,
    );
  });

  it('capability schema prints the JSON schema of the files', async () => {
    const s = JSON.parse(ok(await ws.run('capability', 'schema')).stdout) as {
      type: string;
      additionalProperties: boolean;
    };
    assert.equal(s.type, 'object');
    assert.equal(s.additionalProperties, false);
  });
});
