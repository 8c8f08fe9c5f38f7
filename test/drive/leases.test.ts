/**
 * A lane's claims are leases: its driver renews them while the turn lives, so they never lapse
 * under a live turn; a holder that died without settling (its lease lapsed) loses the todo to the
 * next lane, and the replay agrees; a lease that has not lapsed is never taken; and one todo's
 * command runs once, however many lanes want it. The driver runs in this process (short leases,
 * its events at hand); the lanes' turns are real processes running the built `loopx`.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { z } from 'zod';
import { invoke } from '../../src/core/capabilities/registry';
import { Driver } from '../../src/core/drive/driver';
import type { DriveEvent } from '../../src/core/drive/lane-runner';
import { laneFiles, readLaneState } from '../../src/core/drive/lanes';
import type { LoopxEvent } from '../../src/core/model/events';
import { BIN, cleanEnv, json, loopx, ok, removeTempDirs, show } from '../helpers/cli';
import {
  addTodo,
  driveWorkspace,
  linesOf,
  scriptRuntime,
  until,
  type DriveWorkspace,
} from '../helpers/drive-kit';

after(removeTempDirs);

/** `new Driver(...)` run in this process; `stop()` stops it and waits for its lanes to end. */
function driveHere(w: DriveWorkspace, leaseSeconds: number) {
  const events: DriveEvent[] = [];
  const driver = new Driver({
    store: w.store(),
    env: cleanEnv(w.env),
    loopx: { node: process.execPath, cli: BIN },
    leaseSeconds,
    onEvent: (e) => events.push(e),
  });
  const running = driver.run();
  return {
    events,
    log: () => events.map((e) => `${e.lane}: ${e.kind}: ${e.message}`).join('\n'),
    async stop() {
      driver.stop();
      await running;
    },
  };
}

const laneStatus = (w: DriveWorkspace, lane: string) => readLaneState(w.store(), lane, new Date()).status;

/** The claim and renewal events of one todo, in log order. */
function leaseEvents(w: DriveWorkspace, todoId: string) {
  return w
    .events()
    .filter(
      (e): e is Extract<LoopxEvent, { type: 'todo.claimed' | 'todo.renewed' }> =>
        (e.type === 'todo.claimed' || e.type === 'todo.renewed') && e.data.todoId === todoId,
    );
}

const agentActor = (id: string) => ({ kind: 'agent', id, channel: 'cli' }) as const;

describe('a lane’s claims are leases', () => {
  it('are renewed while the turn lives, and never lapse under a live turn', async () => {
    const w = await driveWorkspace('renew');
    await w.setRuntimes({ script: scriptRuntime() });
    await addTodo(w, 'long', 'sleep 5; echo done >> long.txt');
    ok(await w.run('lane', 'add', 'a', '--goal-id', w.goal, '--runtime', 'script'));
    const d = driveHere(w, 3);
    let sampled = 0;
    try {
      await until(
        'the long todo done',
        () => {
          const t = w.state().todos[0]!;
          if (t.status === 'claimed') {
            sampled++;
            assert.equal(t.claimedBy, 'lane:a');
            assert.ok(t.leaseUntil, 'a lane’s claim is a lease');
            assert.ok(
              Date.parse(t.leaseUntil) > Date.now(),
              `the lease lapsed under a live turn: ${t.leaseUntil}`,
            );
          }
          return t.status === 'done';
        },
        60_000,
      ).catch((e: Error) => assert.fail(`${e.message}\n--- driver\n${d.log()}`));
      await until('the lane asleep or stopped', () => laneStatus(w, 'a') !== 'working', 20_000);
    } finally {
      await d.stop();
    }
    assert.ok(sampled >= 20, `the claim was watched through the turn (${sampled} looks)`);
    assert.deepEqual(linesOf(w, 'long.txt'), ['done']);

    const chain = leaseEvents(w, 'long');
    assert.equal(chain[0]?.type, 'todo.claimed', 'the contract claimed it');
    assert.equal(chain[0]?.data.by, 'lane:a');
    // The driver renewed it while the 5 s command ran (every second with a 3 s lease).
    const byDriver = chain.filter((e) => e.type === 'todo.renewed' && e.actor.id === 'loopx-drive');
    assert.ok(byDriver.length >= 3, `renewed by the driver ${byDriver.length} times:\n${d.log()}`);
    // No gap: each claim or renewal came before the lease it extends had lapsed.
    for (let i = 1; i < chain.length; i++)
      assert.ok(
        Date.parse(chain[i]!.ts) < Date.parse(chain[i - 1]!.data.until!),
        `event ${i} (${chain[i]!.type} at ${chain[i]!.ts}) came after the lease lapsed at ${chain[i - 1]!.data.until}`,
      );
    // Once done, nothing renews it and nothing holds it.
    const completed = w.events().find((e) => e.type === 'todo.completed')!;
    assert.ok(
      chain.every((e) => e.ts <= completed.ts),
      'no renewal after the todo was done',
    );
    const t = w.state().todos[0]!;
    assert.equal(t.leaseUntil, undefined);
    assert.equal(w.state().evidence.length, 1);
  });

  it('a dead holder’s lapsed lease goes to a live lane; a live lease is never taken', async () => {
    const w = await driveWorkspace('lapse');
    await w.setRuntimes({ script: scriptRuntime() });
    await addTodo(w, 'orphan', 'echo orphan >> took.txt');
    await addTodo(w, 'held', 'echo held >> held.txt');
    // Bob, an agent outside the driver, holds a contract that lists both todos.
    const bob = { ...w.env, LOOPX_AGENT: 'bob' };
    const answer = json(
      await loopx(['--json', 'quota', 'should-run', '--goal-id', w.goal], { cwd: w.ws, env: bob }),
      z
        .object({
          decision: z.literal('run'),
          interaction_contract: z.object({ id: z.string() }).passthrough(),
        })
        .passthrough(),
    );
    const bobContract = answer.interaction_contract.id;
    // A lane whose turn died without its driver settling it holds `orphan` for 1 s; another
    // holder, alive, keeps `held` for ten minutes.
    const store = w.store();
    invoke(
      store,
      'todo.claim',
      { goalId: w.goal, todoId: 'orphan', by: 'lane:ghost', leaseSeconds: 1 },
      agentActor('lane:ghost'),
    );
    invoke(
      store,
      'todo.claim',
      { goalId: w.goal, todoId: 'held', by: 'lane:other', leaseSeconds: 600 },
      agentActor('lane:other'),
    );

    // The live lease: exec under another contract is refused, and the command does not run.
    const refused = await loopx(
      ['exec', '--contract', bobContract, '--todo', 'held', '--', 'echo held >> held.txt'],
      { cwd: w.ws, env: bob },
    );
    assert.equal(refused.code, 4, show(refused));
    assert.match(refused.stderr, /todo held is claimed by lane:other, not by bob/);
    assert.deepEqual(linesOf(w, 'held.txt'), []);
    assert.ok(!leaseEvents(w, 'held').some((e) => e.data.by === 'bob'), 'bob claimed nothing');

    await new Promise((r) => setTimeout(r, 1500));
    ok(await w.run('lane', 'add', 'a', '--goal-id', w.goal, '--runtime', 'script'));
    const d = driveHere(w, 30);
    try {
      await until(
        'lane a done with the orphan, then asleep',
        () =>
          w.state().todos.find((t) => t.id === 'orphan')?.status === 'done' &&
          laneStatus(w, 'a') === 'asleep',
        60_000,
      ).catch((e: Error) => assert.fail(`${e.message}\n--- driver\n${d.log()}`));
    } finally {
      await d.stop();
    }
    const state = w.state();
    const orphan = state.todos.find((t) => t.id === 'orphan')!;
    assert.equal(orphan.claimedBy, 'lane:a', 'lane a took it over');
    assert.deepEqual(linesOf(w, 'took.txt'), ['orphan'], 'its command ran once, in lane a’s turn');
    assert.deepEqual(
      leaseEvents(w, 'orphan')
        .filter((e) => e.type === 'todo.claimed')
        .map((e) => e.data.by),
      ['lane:ghost', 'lane:a'],
    );
    assert.deepEqual(state.overruled ?? [], [], 'the takeover is not overruled on replay');
    const contracts = state.runs.filter((r) => r.agent === 'lane:a').map((r) => r.contract!);
    assert.deepEqual(
      contracts.flatMap((c) => c.actions.map((a) => a.todoId)),
      ['orphan'],
      'lane a was never given held',
    );

    const held = state.todos.find((t) => t.id === 'held')!;
    assert.equal(held.status, 'claimed');
    assert.equal(held.claimedBy, 'lane:other');
    assert.deepEqual(linesOf(w, 'held.txt'), []);
    assert.match(readLaneState(store, 'a', new Date()).why ?? '', /held is claimed by lane:other/);
  });

  it('one todo, two lanes: its command runs once, even when a runtime runs it twice', async () => {
    const w = await driveWorkspace('once');
    const stutterLog = path.join(w.env.LOOPX_CONFIG_DIR!, 'stutter.log');
    await w.setRuntimes({
      stutter: {
        command: [process.execPath, '-e', STUTTER, '{contract_file}'],
        env: { STUTTER_LOG: stutterLog },
      },
    });
    await addTodo(w, 'only', 'sleep 1; echo ran >> once.txt');
    for (const lane of ['a', 'b'])
      ok(await w.run('lane', 'add', lane, '--goal-id', w.goal, '--runtime', 'stutter'));
    const d = driveHere(w, 3);
    try {
      await until(
        'the todo done and both lanes stopped',
        () =>
          w.state().todos[0]?.status === 'done' && ['a', 'b'].every((l) => laneStatus(w, l) === 'stopped'),
        60_000,
      ).catch((e: Error) => assert.fail(`${e.message}\n--- driver\n${d.log()}`));
    } finally {
      await d.stop();
    }
    assert.deepEqual(linesOf(w, 'once.txt'), ['ran']);
    // The one turn that got the todo ran its command a second time: refused (exit 4), nothing ran.
    assert.deepEqual(fs.readFileSync(stutterLog, 'utf8').split('\n').filter(Boolean), ['second run: exit 4']);
    const state = w.state();
    assert.equal(state.evidence.filter((e) => e.todoId === 'only').length, 1);
    const listing = state.runs.filter((r) => r.contract?.actions.some((a) => a.todoId === 'only'));
    assert.equal(
      listing.length,
      1,
      `one contract listed the todo: ${listing.map((r) => r.agent).join(', ')}`,
    );
    const winner = listing[0]!.agent.replace(/^lane:/, '');

    // The winner's contract, as its runtime got it: its run ended, so nothing runs under it now.
    const file = path.join(laneFiles(w.store()).states, `${winner}.contract.json`);
    const contract = JSON.parse(fs.readFileSync(file, 'utf8')) as { interaction_contract: { id: string } };
    const again = await loopx(
      [
        'exec',
        '--contract',
        contract.interaction_contract.id,
        '--todo',
        'only',
        '--',
        'sleep 1; echo ran >> once.txt',
      ],
      { cwd: w.ws, env: { ...w.env, LOOPX_AGENT: `lane:${winner}` } },
    );
    assert.equal(again.code, 4, show(again));
    assert.match(again.stderr, /which ended \(succeeded\)/);
    assert.deepEqual(linesOf(w, 'once.txt'), ['ran'], 'the command did not run a second time');
    assert.equal(w.state().evidence.length, 1);
  });
});

/** A runtime that runs each listed command twice (an agent retrying), logging how the second went. */
const STUTTER = `
const { execSync } = require('node:child_process');
const fs = require('node:fs');
const c = JSON.parse(fs.readFileSync(process.argv[1], 'utf8')).interaction_contract;
for (const a of c.cli_channel.next_cli_actions) {
  execSync(a, { stdio: 'inherit', shell: '/bin/sh' });
  let code = 0;
  try { execSync(a, { stdio: 'inherit', shell: '/bin/sh' }); } catch (e) { code = e.status; }
  fs.appendFileSync(process.env.STUTTER_LOG, 'second run: exit ' + code + '\\n');
}
if (c.agent_channel.finish_with) execSync(c.agent_channel.finish_with, { stdio: 'inherit', shell: '/bin/sh' });
`;
