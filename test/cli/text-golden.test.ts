/**
 * The text a person reads, compared whole with test/cli/golden/*.txt: one fixed scenario (a goal
 * with an action todo, a gated one, a judgment todo and a person's, one run with evidence, spend
 * and a refusal), every text output of it. Times, run, contract and evidence ids and the state hash
 * change from run to run: they are replaced by placeholders before the comparison.
 * `LOOPX_UPDATE_GOLDEN=1 node scripts/test/run-suite.mjs test/cli text-golden` rewrites the files.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loopx, ok, removeTempDirs, tempDir } from '../helpers/cli';
import type { Result } from '../helpers/cli';

after(removeTempDirs);

const GOLDEN = path.join(__dirname, 'golden');
const UPDATE = process.env.LOOPX_UPDATE_GOLDEN === '1';

/** What changes from run to run, as placeholders. */
export function normalise(text: string): string {
  return text
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, '<ISO>')
    .replace(/\d{4}-\d\d-\d\d \d\d:\d\d(:\d\d)?( UTC)?/g, (m) =>
      m.length > 16 && !m.endsWith('UTC') ? '<TIME-S>' : '<TIME>',
    )
    .replace(/\brun-[a-z0-9]{8}\b/g, '<RUN>')
    .replace(/\bc-[a-z0-9]{10}\b/g, '<CONTRACT>')
    .replace(/\bev-[a-z0-9]{8}\b/g, '<EV>')
    .replace(/\bstate [0-9a-f]{12}\b/g, 'state <HASH>');
}

function golden(name: string, r: Result): void {
  ok(r);
  const actual = normalise(r.stdout).replace(/\n*$/, '\n');
  const file = path.join(GOLDEN, `${name}.txt`);
  if (UPDATE) {
    fs.mkdirSync(GOLDEN, { recursive: true });
    fs.writeFileSync(file, actual);
    return;
  }
  assert.ok(fs.existsSync(file), `${file} is missing: run with LOOPX_UPDATE_GOLDEN=1 to write it`);
  assert.equal(actual, fs.readFileSync(file, 'utf8'), `${name}: the text differs from ${file}`);
}

describe('text outputs (golden files)', { concurrency: 1 }, () => {
  const dir = tempDir();
  const env = { LOOPX_AGENT: 'codex', LOOPX_WRITER_NAME: 'alice-laptop' };
  const run = (...args: string[]) => loopx(args, { cwd: dir, env });
  const out: Record<string, Result> = {};

  before(async () => {
    ok(await run('init'));
    ok(
      await run(
        'goal',
        'create',
        '--goal-id',
        'ship',
        '--title',
        'Ship the parser',
        '--description',
        'A parser that passes its tests',
      ),
    );
    ok(await run('quota', 'set', '--goal-id', 'ship', '--cost', '5', '--tokens', '100000'));
    const add = (id: string, title: string, ...more: string[]) =>
      run('todo', 'add', '--goal-id', 'ship', '--todo-id', id, '--title', title, ...more);
    ok(await add('build', 'Build', '--action', 'make build', '--priority', 'P1'));
    ok(
      await add('release', 'Release', '--action', './release.sh', '--gate', 'prod', '--depends-on', 'build'),
    );
    ok(await add('notes', 'Write the release notes'));
    ok(await add('review', 'Review the docs', '--owner', 'user'));
    out.shouldRun = await run('quota', 'should-run', '--goal-id', 'ship');
    const runId = /opened run (run-[a-z0-9]+)/.exec(out.shouldRun.stdout)?.[1];
    assert.ok(runId, out.shouldRun.stdout);
    const ev = /recorded evidence (ev-[a-z0-9]+)/.exec(
      ok(
        await run(
          'evidence',
          'add',
          '--goal-id',
          'ship',
          '--todo-id',
          'build',
          '--run-id',
          runId,
          '--kind',
          'command',
          '--exit-code',
          '0',
          '--summary',
          'built in 3 s',
        ),
      ).stdout,
    )?.[1];
    assert.ok(ev);
    ok(await run('todo', 'done', '--goal-id', 'ship', '--todo-id', 'build', '--evidence', ev));
    ok(
      await run(
        'run',
        'spend',
        '--goal-id',
        'ship',
        '--run-id',
        runId,
        '--tokens',
        '12400',
        '--cost',
        '0.42',
      ),
    );
    const hook = await loopx(['hook', 'pre-tool-use', '--goal-id', 'ship'], {
      cwd: dir,
      env,
      input: JSON.stringify({ cwd: dir, tool_name: 'Bash', tool_input: { command: 'rm -rf build' } }),
    });
    assert.equal(hook.code, 2, hook.stdout + hook.stderr);
    out.summary = await run('summary_all', '--goal-id', 'ship');
  });

  it('quota should-run: a new run says "opened", not "resuming"', () => {
    assert.match(out.shouldRun!.stdout, /^ {2}- opened run run-\S+ for 2 todos$/m);
    golden('should-run', out.shouldRun!);
  });
  it('summary_all', () => golden('summary', out.summary!));
  it('status', async () => golden('status', await run('status')));
  it('status --goal-id', async () => golden('status-goal', await run('status', '--goal-id', 'ship')));
  it('quota show: budgets as a table, spend in words', async () => {
    const r = await run('quota', 'show', '--goal-id', 'ship');
    assert.match(r.stdout, /^spent so far: 1 turn, 12,400 tokens, \$0\.42$/m);
    golden('quota-show', r);
  });
  it('quota should-run after summary_all opens a run for the judgment todo; asked again, it resumes it', async () => {
    golden('should-run-next', await run('quota', 'should-run', '--goal-id', 'ship'));
    const again = await run('quota', 'should-run', '--goal-id', 'ship');
    assert.match(again.stdout, /^ {2}- resuming run run-\S+: 1 todo of its contract still to do$/m);
    golden('should-run-resume', again);
  });
  it('log: time, writer, who, event, what in words', async () => {
    const r = await run('log', '--goal-id', 'ship');
    assert.doesNotMatch(r.stdout, /\{"/, 'no raw JSON in the text log');
    golden('log', r);
  });
  it('verify', async () => golden('verify', await run('verify')));
  it('gate list', async () => golden('gate-list', await run('gate', 'list', '--goal-id', 'ship')));
  it('todo list', async () => golden('todo-list', await run('todo', 'list', '--goal-id', 'ship')));
});
