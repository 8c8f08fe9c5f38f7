/**
 * `loopx turn` on the built CLI: one process that takes a whole turn (should-run, the contract's
 * commands through exec, summary_all). Its JSON answer and text, the commands' output on stderr,
 * its exit code (the first failing command's), and its errors.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { Ws, loopx, removeTempDirs, ok, fails } from '../helpers/cli';

after(removeTempDirs);

interface TurnOut {
  schema: string;
  decision: string;
  contract_id: string | null;
  ran: { todo_id: string; command: string; exit_code: number; evidence_id: string; todo_done: boolean }[];
  not_run: { todo_id: string }[];
  summary: {
    ended_runs: { id: string; outcome: string }[];
    progress: { done: number; total: number };
  } | null;
}

async function workspace(...todos: [string, string][]) {
  const ws = new Ws();
  ok(await ws.run('goal', 'create', '--title', 'Turns', '--goal-id', 'g'));
  for (const [id, action] of todos) ok(await ws.addTodo('g', id, `Todo ${id}`, action));
  return ws;
}

const turn = (ws: Ws, ...args: string[]) =>
  loopx(['turn', '--goal-id', 'g', ...args], { cwd: ws.dir, env: { LOOPX_AGENT: 'codex' } });

describe('loopx turn', () => {
  it('--json: what ran, with evidence, and the run it ended; the commands’ output on stderr', async () => {
    const ws = await workspace(['one', 'echo first'], ['two', 'echo second']);
    const r = ok(await turn(ws, '--json'));
    const out = JSON.parse(r.stdout) as TurnOut;
    assert.equal(out.schema, 'loopx.turn/1');
    assert.equal(out.decision, 'run');
    assert.deepEqual(
      out.ran.map((s) => [s.todo_id, s.command, s.exit_code, s.todo_done]),
      [
        ['one', 'echo first', 0, true],
        ['two', 'echo second', 0, true],
      ],
    );
    assert.match(r.stderr, /first\n[\s\S]*second\n/);
    assert.equal(out.summary?.ended_runs.length, 1);
    assert.equal(out.summary?.ended_runs[0]?.outcome, 'succeeded');
    assert.deepEqual(out.summary?.progress, { done: 2, total: 2 });
    // The run is over: the next turn has nothing left to run.
    const next = JSON.parse(ok(await turn(ws, '--json')).stdout) as TurnOut;
    assert.notEqual(next.decision, 'run');
    assert.deepEqual(next.ran, []);
  });

  it('exits with the failing command’s code, runs nothing after it, and says so in text', async () => {
    const ws = await workspace(['bad', 'exit 5'], ['after', 'touch after-ran']);
    const r = await turn(ws);
    assert.equal(r.code, 5, r.stderr);
    assert.match(r.stdout, /turn under contract c-\S+: ran 1 command/);
    assert.match(r.stdout, /bad\s+exit 5/);
    assert.match(r.stdout, /not run: after/);
    assert.match(r.stdout, /ended run run-\S+: failed/);
    assert.equal(fs.existsSync(ws.file('after-ran')), false);
  });

  it('--max 1 runs one command; a bad --max is a usage error', async () => {
    const ws = await workspace(['a', 'echo a'], ['b', 'echo b']);
    const out = JSON.parse(ok(await turn(ws, '--json', '--max', '1')).stdout) as TurnOut;
    assert.deepEqual(
      out.ran.map((s) => s.todo_id),
      ['a'],
    );
    assert.deepEqual(
      out.not_run.map((s) => s.todo_id),
      ['b'],
    );
    fails(await turn(ws, '--max', 'many'), 2, /--max must be a number/);
    fails(await turn(ws, '--max', '0'), 2, /--max must be a whole number of 1 or more, not 0/);
  });

  it('an unknown goal is exit 3 naming it', async () => {
    const ws = await workspace();
    fails(await loopx(['turn', '--goal-id', 'nope'], { cwd: ws.dir }), 3, /nope/);
  });
});
