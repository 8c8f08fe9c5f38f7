/**
 * "Only a person decides what runs", against an agent with a shell in a workspace that `loopx
 * drive` serves: it declares a runtime of its own in policy.json, changes a signed one, plants a
 * signed-policy file, sets LOOPX_ variables for the lane, and edits a lane's state so that the next
 * driver kills a process or ends a run that is not the lane's. None of it may work.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { invoke } from '../../src/core/capabilities/registry';
import { openTurn } from '../../src/core/contract/issue';
import { laneFiles } from '../../src/core/drive/lanes';
import { removeTempDirs, ok, fails } from '../helpers/cli';
import { addTodo, cpuMsOf, driveWorkspace, scriptRuntime, startDriver, until } from '../helpers/drive-kit';

after(removeTempDirs);

const sleepFor = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('loopx drive starts only what a person signed', () => {
  it('a runtime an agent adds to policy.json, or a signed one it changes, never runs as the agent wrote it', async () => {
    const w = await driveWorkspace('sec-runtime');
    const good = path.join(w.ws, 'good.mark');
    const evil = path.join(w.ws, 'evil.mark');
    await w.setRuntimes({ ok: scriptRuntime({ env: { SCRIPT_RUNTIME_MARK: good } }) });
    await addTodo(w, 't1', 'true');
    // The agent: a runtime of its own, a lane on it, and the signed one pointed at its program.
    const file = path.join(w.ws, '.loopx', 'policy.json');
    const policy = JSON.parse(fs.readFileSync(file, 'utf8')) as { runtimes: Record<string, unknown> };
    const evilRuntime = { command: ['sh', '-c', `echo $$ >> '${evil}'`] };
    policy.runtimes = { ok: evilRuntime, mine: evilRuntime };
    fs.writeFileSync(file, JSON.stringify(policy, null, 2));
    // ...and a "signed" policy of its own beside the person's (its signature cannot verify).
    const signedFile = path.join(w.ws, '.loopx', 'policy.signed.json');
    const signed = JSON.parse(fs.readFileSync(signedFile, 'utf8')) as { policy: { runtimes: unknown } };
    signed.policy.runtimes = { ok: evilRuntime, mine: evilRuntime };
    fs.writeFileSync(signedFile, JSON.stringify(signed));
    ok(await w.run('lane', 'add', 'theirs', '--goal-id', w.goal, '--runtime', 'mine'));
    ok(await w.run('lane', 'add', 'ours', '--goal-id', w.goal, '--runtime', 'ok'));
    const d = startDriver(w);
    try {
      await until('the lanes to settle', async () => {
        const s = await w.status();
        const by = new Map(s.lanes.map((l) => [l.name, l]));
        return by.get('theirs')?.status === 'waiting_person' && by.get('ours')?.status === 'stopped';
      });
      // Refused lanes sleep like any other: no CPU while nothing changes.
      const before = cpuMsOf(d.child.pid!);
      await sleepFor(2000);
      assert.ok(cpuMsOf(d.child.pid!) - before <= 100, 'the driver does not spin on a refused lane');
    } finally {
      await d.stop();
    }
    assert.ok(!fs.existsSync(evil), 'the agent’s program never ran');
    assert.equal(
      fs.readFileSync(good, 'utf8').trim().split('\n').length,
      1,
      'the signed runtime ran, as signed',
    );
    const theirs = (await w.status()).lanes.find((l) => l.name === 'theirs')!;
    assert.match(theirs.why ?? '', /no runtime mine in the signed policy/);
  });

  it('a runtime cannot set the lane’s LOOPX_ variables, and the driver’s own never reach the lane', async () => {
    const w = await driveWorkspace('sec-env');
    const file = path.join(w.ws, '.loopx', 'policy.json');
    const policy = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
    fs.writeFileSync(
      file,
      JSON.stringify({ ...policy, runtimes: { r: scriptRuntime({ env: { LOOPX_AGENT: 'alice' } }) } }),
    );
    fails(await w.run('policy', 'show'), 6, /LOOPX_ variables are set by LoopX/);
    // A runtime that reports the identity it was given.
    const seen = path.join(w.ws, 'seen.txt');
    fs.writeFileSync(file, JSON.stringify(policy));
    await w.setRuntimes({
      r: {
        command: [
          'sh',
          '-c',
          `echo "$LOOPX_AGENT $LOOPX_ACTOR" >> '${seen}'; loopx summary_all --goal-id g --contract "$LOOPX_CONTRACT"`,
        ],
      },
    });
    await addTodo(w, 't1', 'true');
    ok(await w.run('lane', 'add', 'a', '--goal-id', w.goal, '--runtime', 'r'));
    const d = startDriver(w, [], { LOOPX_AGENT: 'the-person', LOOPX_ACTOR: 'the-person' });
    try {
      await until('the turn', () => fs.existsSync(seen));
    } finally {
      await d.stop();
    }
    assert.equal(
      fs.readFileSync(seen, 'utf8').split('\n')[0],
      'lane:a ',
      'the lane’s identity, and nothing of the driver’s',
    );
  });
});

describe('a lane’s state file is the driver’s record, not an order', () => {
  it('edited to name another process and another agent’s run, the next driver kills nothing and ends nothing of theirs', async () => {
    const w = await driveWorkspace('sec-state');
    await w.setRuntimes({ r: scriptRuntime() });
    await addTodo(w, 't1', 'true', '--gate', 'later');
    ok(await w.run('lane', 'add', 'a', '--goal-id', w.goal, '--runtime', 'r'));
    // A person's long job, and another agent's open run.
    const victim = spawn('sleep', ['60'], { detached: true, stdio: 'ignore' });
    const store = w.store();
    await addTodo(w, 'other', 'true');
    const theirs = openTurn(
      store,
      { goalId: w.goal, agent: 'codex' },
      { kind: 'agent', id: 'codex', channel: 'cli' },
    );
    const runId = theirs.contract!.runId;
    const states = laneFiles(store).states;
    fs.mkdirSync(states, { recursive: true });
    const now = new Date().toISOString();
    fs.writeFileSync(
      path.join(states, 'a.json'),
      JSON.stringify({
        v: 1,
        status: 'working',
        failures: 0,
        updatedAt: now,
        turn: {
          runId,
          contractId: theirs.contract!.id,
          pid: victim.pid,
          startedAt: now,
          deadline: now,
          cwd: w.ws,
        },
      }),
    );
    const d = startDriver(w);
    try {
      await until(
        'the driver to settle the lane',
        async () => (await w.status()).lanes[0]?.status === 'waiting_person',
      );
      await sleepFor(500);
    } finally {
      await d.stop();
    }
    let alive = true;
    try {
      process.kill(victim.pid!, 0);
    } catch {
      alive = false;
    }
    assert.ok(alive, 'the person’s process still runs');
    process.kill(victim.pid!, 'SIGKILL');
    const run = w.state().runs.find((r) => r.id === runId)!;
    assert.equal(run.endedAt, undefined, 'the other agent’s run is still open');
    invoke(
      store,
      'run.end',
      { goalId: w.goal, runId, outcome: 'succeeded' },
      { kind: 'agent', id: 'codex', channel: 'cli' },
    );
  });
});
