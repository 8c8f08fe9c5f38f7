/**
 * The product brief's two shell scripts, run as written against the built CLI. The test plays
 * the person: it adds the plan while the script waits, and approves the gate from a terminal.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Store, effectiveStatus, readHistory } from '../../src/core/index';

const ROOT = path.resolve(__dirname, '../..');
const BIN = path.join(ROOT, 'bin', 'loopx.js');

const sandboxes: string[] = [];
after(() => {
  for (const d of sandboxes.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const PASSPHRASE = 'correct horse battery';

/**
 * A folder with a `loopx` on PATH, as an installed CLI would be, a fresh workspace, and a fresh
 * HOME whose LoopX config folder holds the person's key (made as a person makes it).
 */
function sandbox() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-brief-'));
  sandboxes.push(dir);
  const bin = path.join(dir, 'bin');
  const ws = path.join(dir, 'ws');
  fs.mkdirSync(bin);
  fs.mkdirSync(ws);
  fs.writeFileSync(path.join(bin, 'loopx'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`, {
    mode: 0o755,
  });
  const env: NodeJS.ProcessEnv = { PATH: `${bin}:${process.env.PATH}`, HOME: dir, LANG: 'C.UTF-8' };
  const made = spawnSync(
    process.execPath,
    [BIN, 'key', 'create', '--name', 'alice', '--passphrase-fd', '0'],
    {
      cwd: ws,
      env,
      encoding: 'utf8',
      input: `${PASSPHRASE}\n`,
    },
  );
  if (made.status !== 0) throw new Error(`loopx key create failed: ${made.stderr}`);
  return { dir, ws, env, configDir: path.join(dir, '.config', 'loopx') };
}

function loopx(env: NodeJS.ProcessEnv, cwd: string, args: string[]) {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd, env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`loopx ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}

/** Runs a command in a pseudo-terminal, as a person typing it and then the key's passphrase. */
function asPerson(env: NodeJS.ProcessEnv, cwd: string, command: string) {
  const r = spawnSync('script', ['-qec', command, '/dev/null'], {
    cwd,
    env,
    encoding: 'utf8',
    input: `${PASSPHRASE}\n`,
    timeout: 60_000,
  });
  if (r.status !== 0) throw new Error(`${command} exited ${r.status}: ${r.stdout}${r.stderr}`);
  return r.stdout;
}

async function until<T>(what: string, fn: () => T | undefined, timeoutMs = 60_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('the product brief, run as written', () => {
  it(
    '"Complete Workflow Example" ends by itself with the goal completed, evidenced and closed',
    { timeout: 180_000 },
    async () => {
      const { ws, env, configDir } = sandbox();
      const script = spawn('bash', [path.join(ROOT, 'test/fixtures/brief/complete-workflow.sh')], {
        cwd: ws,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      script.stdout.on('data', (b) => (out += b));
      script.stderr.on('data', (b) => (out += b));
      const exited = new Promise<number | null>((resolve) => script.on('close', resolve));

      // The person: once the goal exists, plan it (two plain todos, one gated) ...
      const goalId = await until('the goal', () => /Goal created: (\S+)/.exec(out)?.[1]);
      await until('the first wait for a plan', () =>
        out.includes('No actions authorized') ? true : undefined,
      );
      loopx(env, ws, [
        'todo',
        'add',
        '--goal-id',
        goalId,
        '--title',
        'Extract retry logic',
        '--todo-id',
        'retry',
        '--action',
        'echo retry > retry.txt',
        '--priority',
        'P1',
      ]);
      loopx(env, ws, [
        'todo',
        'add',
        '--goal-id',
        goalId,
        '--title',
        'Add circuit breaker',
        '--todo-id',
        'breaker',
        '--action',
        'echo breaker > breaker.txt',
      ]);
      loopx(env, ws, [
        'todo',
        'add',
        '--goal-id',
        goalId,
        '--title',
        'Update tests in CI',
        '--action',
        'cat retry.txt breaker.txt > tests.txt',
        '--gate',
        'ci',
        '--depends-on',
        'retry,breaker',
      ]);
      // ... and once the gate is pending, approve it at a terminal.
      const store = new Store(ws, { configDir });
      await until('the pending gate', () =>
        store.load(goalId).state.gates.some((g) => g.id === 'ci' && g.status === 'pending')
          ? true
          : undefined,
      );
      asPerson(
        env,
        ws,
        `${process.execPath} ${BIN} gate approve --goal-id ${goalId} --gate-id ci --note "looks safe"`,
      );

      let timer: NodeJS.Timeout | undefined;
      const code = await Promise.race([
        exited,
        new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), 150_000))),
      ]);
      clearTimeout(timer);
      if (code === 'timeout') script.kill('SIGKILL');
      assert.equal(code, 0, `the script should end by itself with 0; output:\n${out}`);
      assert.match(out, /Refactor complete/);

      const { state } = store.load(goalId);
      assert.equal(state.status, 'closed');
      assert.equal(state.todos.length, 3);
      assert.ok(
        state.todos.every((t) => t.status === 'done'),
        'every todo done',
      );
      const commands = state.evidence.filter((e) => e.kind === 'command');
      assert.equal(commands.length, 3, 'one evidence record per command');
      for (const e of commands) {
        assert.equal(e.exitCode, 0);
        assert.ok(e.artifact && fs.existsSync(path.join(store.goalDir(goalId), e.artifact.path)));
      }
      assert.equal(fs.readFileSync(path.join(ws, 'tests.txt'), 'utf8'), 'retry\nbreaker\n');
      const approval = readHistory(store, goalId)
        .events.map((m) => m.ev)
        .find((e) => e.type === 'gate.approved')!;
      assert.deepEqual([approval.actor.kind, approval.actor.channel], ['user', 'cli']);
      assert.ok(
        state.runs.every((r) => r.endedAt),
        'summary_all ended every run',
      );
      assert.equal(effectiveStatus(state), 'closed');
    },
  );

  it(
    '"Safe execution pattern" runs exactly the contract’s actions of the first goal',
    { timeout: 60_000 },
    () => {
      const { ws, env, configDir } = sandbox();
      const goalId = JSON.parse(
        loopx(env, ws, [
          'project_prompt',
          'create',
          '--title',
          'Migrate Database Schema v2',
          '--description',
          'zero downtime',
          '--json',
        ]),
      ).id;
      loopx(env, ws, [
        'todo',
        'add',
        '--goal-id',
        goalId,
        '--title',
        'dry run',
        '--action',
        "echo 'dry run' > dry.txt",
      ]);
      loopx(env, ws, [
        'todo',
        'add',
        '--goal-id',
        goalId,
        '--title',
        'prod',
        '--action',
        'touch prod.txt',
        '--gate',
        'prod',
      ]);
      const r = spawnSync('bash', [path.join(ROOT, 'test/fixtures/brief/safe-execution.sh')], {
        cwd: ws,
        env,
        encoding: 'utf8',
      });
      assert.equal(r.status, 0, r.stderr);
      assert.match(
        r.stdout,
        /Executing: loopx exec --contract c-\S+ --todo t-\S+ -- 'echo '\\''dry run'\\'' > dry.txt'/,
      );
      assert.equal(fs.readFileSync(path.join(ws, 'dry.txt'), 'utf8'), 'dry run\n');
      assert.equal(fs.existsSync(path.join(ws, 'prod.txt')), false, 'the gated action must not run');
      const { state } = new Store(ws, { configDir }).load(goalId);
      assert.deepEqual(
        state.todos.map((t) => t.status),
        ['done', 'open'],
      );
    },
  );
});
