/**
 * `loopx drive` with the real agent CLIs: a goal of five todos, the last behind a gate, runs to
 * done under the driver alone. The lane runs its runtime (the `claude-code` and `codex` presets of
 * the signed policy) one turn per todo, sleeps at the gate, wakes when a person approves, and its
 * next turn runs the gated command. The models are scripted: each turn's model does what the
 * driver's prompt says (run the listed commands, then the finish command), as a good agent would.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { effectiveStatus } from '../../src/core/model/goal-state';
import { agentBins, codexConfigLines, removeTempDirs, tempDir } from '../helpers/agents/agent-kit';
import { bash, startMessagesApi } from '../helpers/agents/scripted-messages';
import { startResponsesApi } from '../helpers/agents/scripted-responses';
import type { RecordingServer } from '../helpers/agents/agent-kit';
import { ok } from '../helpers/cli';
import {
  addTodo,
  driveWorkspace,
  linesOf,
  startDriver,
  until,
  type DriveWorkspace,
} from '../helpers/drive-kit';

/** The commands the driver's prompt lists, and its finish command. */
function promptedCommands(text: string): string[] {
  const listed = [...text.matchAll(/^\d+\. (loopx exec .+)$/gm)].map((m) => m[1]!);
  const finish = /^When you are done, run: (.+)$/m.exec(text)?.[1];
  return finish ? [...listed, finish] : listed;
}

/** Five todos appending to out.txt; the fifth behind the gate `prod`. */
async function fiveTodos(w: DriveWorkspace): Promise<void> {
  for (const n of [1, 2, 3, 4]) await addTodo(w, `t${n}`, `echo step ${n} >> out.txt`, '--priority', 'P1');
  await addTodo(w, 'ship', 'echo shipped >> out.txt', '--gate', 'prod');
}

/** Drives the goal to done: runs the driver, waits at the gate, approves, waits for the end. */
async function driveToDone(w: DriveWorkspace, env: Record<string, string>, api: RecordingServer) {
  const driver = startDriver(w, [], env);
  const laneLog = path.join(w.ws, '.loopx', 'local', 'drive', 'logs', 'main.log');
  const said = (e: Error) => {
    const log = fs.existsSync(laneLog) ? fs.readFileSync(laneLog, 'utf8').slice(-3000) : '(no lane log)';
    return new Error(
      `${e.message}\n--- loopx drive said:\n${driver.log()}\n--- the last turn's output:\n${log}`,
    );
  };
  try {
    const waiting = await until(
      'the lane to wait at the gate',
      async () => {
        const s = await w.status();
        return s.lanes[0]?.status === 'waiting_person' ? s.lanes[0] : undefined;
      },
      240_000,
    ).catch((e: Error) => {
      throw said(e);
    });
    assert.match(waiting.why ?? '', /gate prod/);
    assert.deepEqual(linesOf(w, 'out.txt'), ['step 1', 'step 2', 'step 3', 'step 4'], driver.log());
    assert.equal(w.state().runs.length, 4, 'one turn per todo');
    const approved = Date.now();
    ok(await w.asPerson('gate', 'approve', '--goal-id', w.goal, '--gate-id', 'prod'));
    await until('the gated command to run', () => linesOf(w, 'out.txt').includes('shipped'), 120_000).catch(
      (e: Error) => {
        throw said(e);
      },
    );
    process.stdout.write(`# woke and ran the gated command ${Date.now() - approved} ms after the approval\n`);
    await until('the lane to stop', async () => (await w.status()).lanes[0]?.status === 'stopped', 60_000);
  } finally {
    await driver.stop();
    await api.close();
  }
  const state = w.state();
  assert.equal(effectiveStatus(state), 'completed');
  assert.deepEqual(linesOf(w, 'out.txt'), ['step 1', 'step 2', 'step 3', 'step 4', 'shipped']);
  assert.equal(state.runs.length, 5);
  assert.deepEqual(
    state.runs.map((r) => [r.agent, r.outcome]),
    Array(5).fill(['lane:main', 'succeeded']),
    'every turn ran as the lane and ended succeeded',
  );
  assert.deepEqual(
    state.todos.map((t) => t.status),
    Array(5).fill('done'),
  );
}

describe('loopx drive runs the real agent CLIs', { concurrency: false }, () => {
  let bins: { claude: string; codex: string };
  before(async () => {
    bins = await agentBins();
  });
  after(removeTempDirs);

  it('Claude Code (the claude-code preset): five todos and a gate, to done', async () => {
    const w = await driveWorkspace('drive-claude');
    await fiveTodos(w);
    const api = await startMessagesApi((turn) => {
      const todo = promptedCommands(turn.allText());
      return turn.step < todo.length ? bash(todo[turn.step]!) : { text: 'Done.' };
    });
    await w.setRuntimes({
      claude: {
        preset: 'claude-code',
        env: {
          ANTHROPIC_BASE_URL: api.url,
          ANTHROPIC_API_KEY: 'sk-test',
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        },
        turnTimeoutMinutes: 3,
      },
    });
    ok(await w.run('lane', 'add', 'main', '--goal-id', w.goal, '--runtime', 'claude'));
    const home = tempDir('home');
    await driveToDone(w, { HOME: home, PATH: `${path.dirname(bins.claude)}:${process.env.PATH}` }, api);
    assert.ok(
      api.requests.some((r) => JSON.stringify(r.body).includes('an agent lane LoopX runs on goal g')),
      'the model saw the driver’s prompt',
    );
  });

  it('Codex (the codex preset): five todos and a gate, to done', async () => {
    const w = await driveWorkspace('drive-codex');
    await fiveTodos(w);
    const api = await startResponsesApi((turn) => {
      const todo = promptedCommands(turn.allText());
      return turn.step < todo.length
        ? { tool: 'exec_command', input: { cmd: todo[turn.step]! } }
        : { text: 'Done.' };
    });
    const codexHome = tempDir('codex');
    fs.writeFileSync(path.join(codexHome, 'config.toml'), `${codexConfigLines(api.url).join('\n')}\n`);
    await w.setRuntimes({
      codex: {
        preset: 'codex',
        env: { CODEX_HOME: codexHome, SCRIPTED_API_KEY: 'x' },
        turnTimeoutMinutes: 3,
      },
    });
    ok(await w.run('lane', 'add', 'main', '--goal-id', w.goal, '--runtime', 'codex'));
    const home = tempDir('home');
    await driveToDone(w, { HOME: home, PATH: `${path.dirname(bins.codex)}:${process.env.PATH}` }, api);
  });
});
