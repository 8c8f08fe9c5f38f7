/**
 * The everyday read commands on the built CLI: `todo show`, `gate show`, `run list|show`,
 * `evidence list`, `reward list`. Each one's JSON shape (checked strictly against its zod schema),
 * its text (sentences and aligned columns, never raw JSON), and its errors: an unknown goal, todo,
 * gate or run is exit 3 naming the id and the flag; a bad flag is exit 2.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import {
  EvidenceOut,
  GateDoc,
  GoalStatusDoc,
  RewardOut,
  RunDoc,
  RunItem,
  TodoDoc,
} from '../../src/core/index';
import { Ws, loopx, removeTempDirs, ok, fails, json } from '../helpers/cli';

after(removeTempDirs);

const strict = <T extends z.ZodRawShape>(s: z.ZodObject<T>) => s.strict();
const RunList = z.array(RunItem.strict());

describe('everyday read commands', { concurrency: 1 }, () => {
  const ws = new Ws();
  const as = (agent: string, ...args: string[]) => loopx(args, { cwd: ws.dir, env: { LOOPX_AGENT: agent } });
  let codexRun = '';
  let claudeRun = '';

  before(async () => {
    ok(await ws.run('goal', 'create', '--title', 'Everyday', '--goal-id', 'g', '--description', 'ship it'));
    ok(await ws.addTodo('g', 'tests', 'Run the tests', 'npm test'));
    ok(
      await ws.addTodo(
        'g',
        'ship',
        'Deploy',
        './deploy.sh --env "prod" | tee log',
        '--gate',
        'prod',
        '--depends-on',
        'tests',
      ),
    );
    const sr = json(
      await as('codex', '--json', 'quota', 'should-run', '--goal-id', 'g'),
      z.object({ run_id: z.string() }),
    );
    codexRun = sr.run_id;
    ok(
      await as(
        'codex',
        'evidence',
        'add',
        '--goal-id',
        'g',
        '--run-id',
        codexRun,
        '--todo-id',
        'tests',
        '--kind',
        'test',
        '--summary',
        '42 passed\nand a second line',
        '--exit-code',
        '0',
        '--command',
        'npm test',
      ),
    );
    ok(
      await as(
        'codex',
        'run',
        'spend',
        '--goal-id',
        'g',
        '--run-id',
        codexRun,
        '--tokens',
        '12000',
        '--cost',
        '0.04',
      ),
    );
    ok(await as('codex', 'summary_all', '--goal-id', 'g'));
    ok(
      await ws.person(
        'reward',
        'add',
        '--goal-id',
        'g',
        '--run-id',
        codexRun,
        '--score',
        '0.8',
        '--comment',
        'Good',
      ),
    );
    ok(await ws.person('gate', 'approve', '--goal-id', 'g', '--gate-id', 'prod', '--note', 'reviewed'));
    claudeRun = json(
      await as('claude', '--json', 'quota', 'should-run', '--goal-id', 'g'),
      z.object({ run_id: z.string() }),
    ).run_id;
  });

  it('todo show --json: the todo as todo list gives it, plus its gates, dependencies, evidence and history', async () => {
    const doc = await ws.json(strict(TodoDoc), 'todo', 'show', '--goal-id', 'g', '--todo-id', 'ship');
    const listed = (await ws.json(GoalStatusDoc.shape.todos, 'todo', 'list', '--goal-id', 'g')).find(
      (t) => t.id === 'ship',
    )!;
    const {
      schema,
      goal_id,
      note,
      claimed_at,
      created_at,
      updated_at,
      added_by,
      added_via,
      gates,
      depends,
      evidence_records,
      history,
      ...item
    } = doc;
    void [note, claimed_at, created_at, updated_at, added_by, added_via];
    assert.deepEqual([schema, goal_id], ['loopx.todo/1', 'g']);
    assert.deepEqual(item, listed, 'the same fields as todo list, with the same values');
    assert.deepEqual(gates, [{ id: 'prod', status: 'approved', title: gates[0]!.title, covers: true }]);
    assert.deepEqual(depends, [{ id: 'tests', title: 'Run the tests', status: 'open' }]);
    assert.deepEqual(evidence_records, []);
    assert.deepEqual(
      history.map((h) => h.type),
      ['todo.added', 'gate.requested', 'gate.approved'],
    );
    const tests = await ws.json(strict(TodoDoc), 'todo', 'show', '--goal-id', 'g', '--todo-id', 'tests');
    assert.equal(tests.evidence_records.length, 1);
    assert.equal(tests.evidence_records[0]!.summary, '42 passed\nand a second line', 'the summary whole');
    assert.ok(tests.history.some((h) => h.type === 'evidence.added' && h.by === 'agent:codex'));
  });

  it('todo show text: sentences and aligned fields, the command whole, no JSON', async () => {
    const r = ok(await ws.run('todo', 'show', '--goal-id', 'g', '--todo-id', 'ship'));
    assert.match(r.stdout, /^todo ship of goal g: Deploy\n/);
    assert.ok(r.stdout.includes('$ ./deploy.sh --env "prod" | tee log'), r.stdout);
    assert.match(r.stdout, /^ {2}prod +approved +its approval covers this command/m);
    assert.match(r.stdout, /^after:\n {2}tests +open +Run the tests$/m);
    assert.doesNotMatch(r.stdout, /[{}]"|"\w+":/, 'no raw JSON');
    const labels = r.stdout.split('\n\n')[0]!.split('\n').slice(1);
    const at = labels.map((l) => l.search(/(?<=^ {2}\S+(?: \S+)* {2,})\S/));
    assert.ok(at.length >= 3 && at.every((x) => x === at[0]), `values line up:\n${labels.join('\n')}`);
  });

  it('gate show: who asked and whose words the reason is, the work whole, the signed decision', async () => {
    const doc = await ws.json(strict(GateDoc), 'gate', 'show', '--goal-id', 'g', '--gate-id', 'prod');
    assert.equal(doc.schema, 'loopx.gate/1');
    assert.equal(doc.status, 'approved');
    assert.match(doc.requested_by_words, /^OS user \S+ at the command line \(unsigned\)$/);
    assert.equal(doc.reason_whose, 'LoopX', 'a gate todo add asked for: the reason is LoopX’s words');
    assert.deepEqual(doc.work, [
      {
        id: 'ship',
        title: 'Deploy',
        status: 'open',
        action: './deploy.sh --env "prod" | tee log',
        covered: true,
      },
    ]);
    assert.deepEqual(doc.open_work, [
      { todo_id: 'ship', title: 'Deploy', action: './deploy.sh --env "prod" | tee log' },
    ]);
    assert.equal(doc.decision?.outcome, 'approved');
    assert.equal(doc.decision?.signed, true);
    assert.equal(doc.decision?.note, 'reviewed');
    assert.match(doc.decision?.by_words ?? '', /^person /);
    assert.deepEqual(
      doc.decision?.approved_for?.map((w) => w.todo_id),
      ['ship'],
    );
    const text = ok(await ws.run('gate', 'show', '--goal-id', 'g', '--gate-id', 'prod')).stdout;
    assert.match(text, /^gate prod of goal g: /);
    assert.match(text, /reason \(LoopX\) +todo ship names gate prod/);
    assert.match(
      text,
      /^decision: approved\n {2}by +person \S+ at the command line, signed with their key$/m,
    );
    assert.ok(text.includes('      $ ./deploy.sh --env "prod" | tee log'), text);
  });

  it('gate show of a pending gate asked by an agent marks the reason as the agent’s words', async () => {
    ok(
      await as(
        'codex',
        'gate',
        'request',
        '--goal-id',
        'g',
        '--gate-id',
        'wipe',
        '--reason',
        'drops the <b>table</b>',
        '--guards',
        'tests',
      ),
    );
    const doc = await ws.json(strict(GateDoc), 'gate', 'show', '--goal-id', 'g', '--gate-id', 'wipe');
    assert.deepEqual(
      [doc.status, doc.reason_whose, doc.decision],
      ['pending', 'the agent’s words', undefined],
    );
    assert.match(doc.requested_by_words, /^agent codex /);
    const text = ok(await ws.run('gate', 'show', '--goal-id', 'g', '--gate-id', 'wipe')).stdout;
    assert.match(text, /reason \(the agent’s words\) +drops the <b>table<\/b>/);
    assert.match(text, /waiting for a person: loopx gate approve\|reject --goal-id g --gate-id wipe/);
  });

  it('run list: newest first, as GoalStatusDoc.runs; --agent and --limit; aligned columns', async () => {
    const runs = await ws.json(RunList, 'run', 'list', '--goal-id', 'g');
    assert.deepEqual(
      runs.map((r) => r.id),
      [claudeRun, codexRun],
    );
    const status = await ws.json(GoalStatusDoc, 'status', '--goal-id', 'g');
    assert.deepEqual(runs, status.runs, 'the same items as the status document');
    assert.deepEqual(
      (await ws.json(RunList, 'run', 'list', '--goal-id', 'g', '--agent', 'codex')).map((r) => r.id),
      [codexRun],
    );
    assert.deepEqual(
      (await ws.json(RunList, 'run', 'list', '--goal-id', 'g', '--limit', '1')).map((r) => r.id),
      [claudeRun],
    );
    const lines = ok(await ws.run('run', 'list', '--goal-id', 'g'))
      .stdout.trimEnd()
      .split('\n');
    assert.match(lines[0]!, /^run +agent +started +outcome +evidence +spend +reward$/);
    const codex = lines.find((l) => l.startsWith(codexRun))!;
    assert.match(
      codex,
      /codex +\d{4}-\d\d-\d\d \d\d:\d\d UTC +succeeded +1 +1 turn, 12,000 tokens, \$0\.04 +0\.8$/,
    );
    assert.equal(lines[0]!.indexOf('agent'), codex.indexOf('codex'), 'the agent column lines up');
    assert.match(
      lines.find((l) => l.startsWith(claudeRun))!,
      / open /,
    );
    ok(await ws.run('run', 'list', '--goal-id', 'g', '--agent', 'nobody')).stdout.includes(
      'no runs of agent nobody',
    );
  });

  it('run show: agent, contract, outcome, evidence whole, spend and rewards', async () => {
    const doc = await ws.json(strict(RunDoc), 'run', 'show', '--goal-id', 'g', '--run-id', codexRun);
    assert.deepEqual(
      [doc.schema, doc.id, doc.agent, doc.outcome],
      ['loopx.run/1', codexRun, 'codex', 'succeeded'],
    );
    assert.deepEqual(doc.contract?.actions, [{ todo_id: 'tests', command: 'npm test' }]);
    assert.equal(doc.contract?.id, doc.contract_id);
    assert.deepEqual(doc.spend, {
      turns: 1,
      tokens: 12000,
      costUsd: 0.04,
      wallSeconds: doc.spend.wallSeconds,
    });
    assert.deepEqual(
      doc.evidence.map((e) => [e.todo_id, e.exit_code, e.summary, e.command, e.by]),
      [['tests', 0, '42 passed\nand a second line', 'npm test', 'agent:codex']],
    );
    assert.deepEqual(
      doc.rewards.map((w) => [w.score, w.comment, w.by.startsWith('user:')]),
      [[0.8, 'Good', true]],
    );
    const text = ok(await ws.run('run', 'show', '--goal-id', 'g', '--run-id', codexRun)).stdout;
    assert.match(text, new RegExp(`^run ${codexRun} of goal g: codex, succeeded\n`));
    assert.match(text, /^ {2}spent +1 turn, 12,000 tokens, \$0\.04/m);
    assert.match(
      text,
      new RegExp(
        `^contract ${doc.contract_id}, issued .* UTC, expires .* UTC:\n {2}tests  \\$ npm test$`,
        'm',
      ),
    );
    assert.match(
      text,
      /^evidence \(1\):\n {2}ev-\S+ +test +tests +exit 0 +.* UTC +42 passed and a second line$/m,
    );
    assert.match(text, /^rewards \(1\):\n {2}rw-\S+ +0\.8 /m);
  });

  it('evidence list and reward list: arrays in JSON, filtered by run or todo; aligned text', async () => {
    ok(await ws.run('evidence', 'add', '--goal-id', 'g', '--summary', 'a note of nobody’s run'));
    const all = await ws.json(z.array(EvidenceOut.strict()), 'evidence', 'list', '--goal-id', 'g');
    assert.equal(all.length, 2);
    const ofRun = await ws.json(
      z.array(EvidenceOut.strict()),
      'evidence',
      'list',
      '--goal-id',
      'g',
      '--run-id',
      codexRun,
    );
    assert.deepEqual(
      ofRun.map((e) => e.todo_id),
      ['tests'],
    );
    const ofTodo = await ws.json(
      z.array(EvidenceOut.strict()),
      'evidence',
      'list',
      '--goal-id',
      'g',
      '--todo-id',
      'ship',
    );
    assert.deepEqual(ofTodo, []);
    const text = ok(await ws.run('evidence', 'list', '--goal-id', 'g'))
      .stdout.trimEnd()
      .split('\n');
    assert.match(text[0]!, /^evidence +kind +todo +run +exit +at +summary$/);
    assert.equal(text[0]!.indexOf('summary'), text[1]!.indexOf('42 passed'), 'the summary column lines up');
    const rewards = await ws.json(z.array(RewardOut.strict()), 'reward', 'list', '--goal-id', 'g');
    assert.deepEqual(
      rewards.map((w) => [w.run_id, w.score, w.comment]),
      [[codexRun, 0.8, 'Good']],
    );
    assert.deepEqual(
      await ws.json(z.array(RewardOut), 'reward', 'list', '--goal-id', 'g', '--run-id', claudeRun),
      [],
    );
    const rtext = ok(await ws.run('reward', 'list', '--goal-id', 'g')).stdout;
    assert.match(
      rtext,
      new RegExp(
        `^reward +run +score +at +by +comment\nrw-\\S+ +${codexRun} +0\\.8 +.* UTC +user:\\S+ +Good$`,
        'm',
      ),
    );
    assert.equal(
      ok(await ws.run('reward', 'list', '--goal-id', 'g', '--run-id', claudeRun)).stdout,
      'no rewards yet\n',
    );
  });

  it('an unknown goal, todo, gate or run is exit 3 naming the id and the flag', async () => {
    const cases: [string[], RegExp][] = [
      [
        ['todo', 'show', '--goal-id', 'ghost', '--todo-id', 'tests'],
        /no goal "ghost" .*\(--goal-id\).*project_prompt list/,
      ],
      [
        ['todo', 'show', '--goal-id', 'g', '--todo-id', 'ghost'],
        /goal g has no todo "ghost" \(--todo-id\); list them with `loopx todo list --goal-id g`/,
      ],
      [['gate', 'show', '--goal-id', 'g', '--gate-id', 'ghost'], /goal g has no gate "ghost" \(--gate-id\)/],
      [
        ['run', 'show', '--goal-id', 'g', '--run-id', 'run-ghost'],
        /goal g has no run "run-ghost" \(--run-id\)/,
      ],
      [['run', 'list', '--goal-id', 'ghost'], /no goal "ghost".*\(--goal-id\)/],
      [['evidence', 'list', '--goal-id', 'g', '--run-id', 'run-ghost'], /no run "run-ghost" \(--run-id\)/],
      [['evidence', 'list', '--goal-id', 'g', '--todo-id', 'ghost'], /no todo "ghost" \(--todo-id\)/],
      [['reward', 'list', '--goal-id', 'g', '--run-id', 'run-ghost'], /no run "run-ghost" \(--run-id\)/],
      [['reward', 'list', '--goal-id', 'ghost'], /no goal "ghost"/],
    ];
    for (const [args, message] of cases) fails(await ws.run(...args), 3, message);
    const j = await ws.run('--json', 'run', 'show', '--goal-id', 'g', '--run-id', 'run-ghost');
    assert.equal(j.code, 3);
    const err = JSON.parse(j.stderr) as { error: { kind: string; reason: string; field: string } };
    assert.deepEqual(
      [err.error.kind, err.error.reason, err.error.field],
      ['not_found', 'run_not_found', '--run-id'],
    );
  });

  it('bad flags are exit 2; every new command has --help with an example', async () => {
    fails(await ws.run('todo', 'show', '--goal-id', 'g'), 2, /--todo-id/);
    fails(await ws.run('run', 'list', '--goal-id', 'g', '--limit', '0'), 2, /--limit must be a whole number/);
    fails(await ws.run('gate', 'show', '--goal-id', 'g', '--gate-id', 'bad id!'), 2, /--gate-id/);
    fails(await ws.run('evidence', 'list', '--goal-id', 'g', '--frob'), 2, /unknown option '--frob'/);
    for (const cmd of [
      ['todo', 'show'],
      ['gate', 'show'],
      ['run', 'list'],
      ['run', 'show'],
      ['evidence', 'list'],
      ['reward', 'list'],
    ]) {
      const h = ok(await ws.run(...cmd, '--help'));
      assert.match(h.stdout, new RegExp(`Examples?:\\n {2}\\$ loopx ${cmd.join(' ')} `), cmd.join(' '));
    }
  });
});
