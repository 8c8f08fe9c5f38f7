/**
 * `exec` and `contract verify`: a command runs only under a found, untampered, unexpired
 * contract of an open run that lists it byte for byte for that todo; evidence capture of a
 * passing and a failing command.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { invoke } from '../../../../src/core/capabilities/registry';
import { shouldRun } from '../../../../src/core/contract/issue';
import {
  verifyCommand,
  execUnderContract,
  checkContract,
  checkJudgment,
} from '../../../../src/core/contract/exec';
import { summaryAll } from '../../../../src/core/contract/summary';
import type { Store } from '../../../../src/core/store/store';
import { human, agent, removeTempDirs } from '../../../helpers/store';
import {
  forgeSnapshotState,
  goalFixture,
  throwsLoopx,
  rejectsLoopx,
  rewriteLog,
  writePolicy,
  sha256,
} from '../../../helpers/contract-kit';

after(removeTempDirs);

const MIN = 60_000;
const BUILD = 'echo built';

/** A goal with a `build` todo (and whatever else) and an issued contract. */
function issued(extra: { todoId: string; action?: string; gate?: string }[] = []) {
  const f = goalFixture();
  const { store, goalId } = f;
  invoke(
    store,
    'todo.add',
    { goalId, todoId: 'build', title: 'build it', action: BUILD, priority: 'P0' },
    agent,
  );
  for (const t of extra) invoke(store, 'todo.add', { goalId, title: `do ${t.todoId}`, ...t }, agent);
  const out = shouldRun(store, { goalId }, agent);
  assert.equal(out.decision, 'run');
  return { ...f, contractId: out.interaction_contract.id!, runId: out.run_id!, out };
}

/** A command that leaves a trace if it ever runs. */
function marker(store: Store) {
  return path.join(store.workspace, 'it-ran');
}

describe('verify and exec refuse', () => {
  it('a missing or forged contract id', async () => {
    const { store } = issued();
    throwsLoopx(
      () => verifyCommand(store, { contractId: 'c-0000000000', todoId: 'build', command: BUILD }),
      'not_found',
      /no contract "c-0000000000"/,
      /forged, mistyped or from another workspace/,
    );
    throwsLoopx(
      () => verifyCommand(store, { contractId: 'c-1; touch it-ran', todoId: 'build' }),
      'usage',
      /contract id .* is not a valid id/,
    );
    await rejectsLoopx(
      () =>
        execUnderContract(store, {
          contractId: 'c-forged00000',
          todoId: 'build',
          command: `touch ${marker(store)}`,
          actor: agent,
        }),
      'not_found',
      /no contract/,
    );
    assert.equal(fs.existsSync(marker(store)), false);
  });

  it('a contract whose stored command was changed (hash chain rebuilt, so only the HMAC can tell)', async () => {
    const { store, goalId, contractId } = issued();
    const evil = `touch ${marker(store)}`;
    rewriteLog(store, goalId, (events) => {
      const started = events.find((e) => e.type === 'run.started');
      assert.ok(started?.type === 'run.started' && started.data.run.contract);
      started.data.run.contract.actions[0]!.command = evil;
      const added = events.find((e) => e.type === 'todo.added' && e.data.todo.id === 'build');
      assert.ok(added?.type === 'todo.added');
      added.data.todo.action = evil;
    });
    assert.equal(
      store.replayGoal(goalId).state.runs[0]!.contract!.actions[0]!.command,
      evil,
      'the forged log replays cleanly',
    );
    throwsLoopx(
      () => verifyCommand(store, { contractId, todoId: 'build', command: evil }),
      'refused',
      /fails signature verification/,
      /altered after it was issued/,
    );
    throwsLoopx(
      () => verifyCommand(store, { contractId, todoId: 'build', command: BUILD }),
      'refused',
      /signature/,
    );
    await rejectsLoopx(
      () => execUnderContract(store, { contractId, todoId: 'build', command: evil, actor: agent }),
      'refused',
      /signature/,
    );
    assert.equal(fs.existsSync(marker(store)), false, 'the forged command never ran');
  });

  it('a contract whose expiry was pushed back in the log', () => {
    const { store, goalId, contractId, clock } = issued();
    rewriteLog(store, goalId, (events) => {
      const started = events.find((e) => e.type === 'run.started');
      assert.ok(started?.type === 'run.started' && started.data.run.contract);
      started.data.run.contract.expiresAt = '2099-01-01T00:00:00.000Z';
    });
    clock.advance(31 * MIN);
    throwsLoopx(
      () => verifyCommand(store, { contractId, todoId: 'build' }),
      'refused',
      /fails signature verification/,
    );
  });

  it('an expired contract', async () => {
    const { store, contractId, clock, out } = issued();
    clock.advance(30 * MIN - 1);
    assert.equal(verifyCommand(store, { contractId, todoId: 'build', command: BUILD }).command, BUILD);
    clock.advance(1);
    throwsLoopx(
      () => verifyCommand(store, { contractId, todoId: 'build', command: BUILD }),
      'refused',
      new RegExp(`expired at ${out.interaction_contract.expires_at!.replace(/\./g, '\\.')}`),
      /quota should-run/,
    );
    await rejectsLoopx(
      () => execUnderContract(store, { contractId, todoId: 'build', command: BUILD, actor: agent }),
      'refused',
      /expired/,
    );
  });

  it('a contract whose run ended (summary_all)', () => {
    const { store, goalId, contractId, runId } = issued();
    summaryAll(store, goalId, agent);
    throwsLoopx(
      () => verifyCommand(store, { contractId, todoId: 'build', command: BUILD }),
      'refused',
      new RegExp(`run ${runId}, which ended`),
      /new contract/,
    );
  });

  it('a contract of a goal that was paused since', () => {
    const { store, goalId, contractId } = issued();
    invoke(store, 'goal.pause', { goalId }, human);
    throwsLoopx(() => checkContract(store, contractId), 'refused', /goal g is paused now/);
  });

  it('a todo the contract does not list (gated, or added after it was issued)', async () => {
    const { store, goalId, contractId } = issued([
      { todoId: 'deploy', action: 'sh deploy.sh', gate: 'prod' },
    ]);
    invoke(
      store,
      'todo.add',
      { goalId, todoId: 'late', title: 'late', action: `touch ${marker(store)}` },
      agent,
    );
    throwsLoopx(
      () => verifyCommand(store, { contractId, todoId: 'deploy', command: 'sh deploy.sh' }),
      'refused',
      /todo deploy is not in contract c-\S+ \(it lists build\)/,
    );
    await rejectsLoopx(
      () =>
        execUnderContract(store, {
          contractId,
          todoId: 'late',
          command: `touch ${marker(store)}`,
          actor: agent,
        }),
      'refused',
      /todo late is not in contract/,
    );
    throwsLoopx(
      () => verifyCommand(store, { contractId, command: 'sh deploy.sh' }),
      'refused',
      /does not list the command "sh deploy.sh"/,
    );
    assert.equal(fs.existsSync(marker(store)), false);
  });

  it('a command that differs from the listed one in any way', async () => {
    const { store, contractId } = issued();
    const variants = [
      `${BUILD} `, // trailing space
      `${BUILD}\n`, // trailing newline
      ` ${BUILD}`, // leading space
      `${BUILD}; touch ${marker(store)}`,
      `${BUILD} && touch ${marker(store)}`,
      `${BUILD} $(touch ${marker(store)})`,
      `${BUILD} \`touch ${marker(store)}\``,
      `echo 'built'`, // same output, different quoting
      `echo "built"`,
      `echo  built`, // two spaces
      'ECHO built',
    ];
    for (const command of variants) {
      const e = throwsLoopx(
        () => verifyCommand(store, { contractId, todoId: 'build', command }),
        'refused',
        /command differs from what contract c-\S+ lists for todo build/,
        /first difference at character \d+/,
      );
      assert.match(e.message, /listed "echo built"/);
      await rejectsLoopx(
        () => execUnderContract(store, { contractId, todoId: 'build', command, actor: agent }),
        'refused',
        /differs/,
      );
    }
    assert.equal(fs.existsSync(marker(store)), false, 'no variant ever ran');
    const e = throwsLoopx(
      () => verifyCommand(store, { contractId, todoId: 'build', command: `${BUILD} ` }),
      'refused',
    );
    assert.match(e.message, /first difference at character 11/);
    assert.equal(
      verifyCommand(store, { contractId, todoId: 'build', command: BUILD }).todo.id,
      'build',
      'the exact command is accepted',
    );
  });

  it('a contract of goal A used for a todo of goal B', async () => {
    const a = issued();
    const { store } = a;
    invoke(store, 'goal.create', { goalId: 'other', title: 'Other goal' }, human);
    invoke(
      store,
      'todo.add',
      { goalId: 'other', todoId: 'b-only', title: 'b', action: `touch ${marker(store)}` },
      agent,
    );
    invoke(
      store,
      'todo.add',
      { goalId: 'other', todoId: 'build', title: 'same id, other goal', action: 'echo built-b' },
      agent,
    );
    throwsLoopx(
      () =>
        verifyCommand(store, {
          contractId: a.contractId,
          todoId: 'b-only',
          command: `touch ${marker(store)}`,
        }),
      'refused',
      /todo b-only is not in contract/,
    );
    throwsLoopx(
      () => verifyCommand(store, { contractId: a.contractId, todoId: 'build', command: 'echo built-b' }),
      'refused',
      /differs/,
    );
    const res = await execUnderContract(store, {
      contractId: a.contractId,
      todoId: 'build',
      command: BUILD,
      actor: agent,
    });
    assert.equal(res.exitCode, 0);
    assert.equal(store.load(a.goalId).state.todos.find((t) => t.id === 'build')!.status, 'done');
    const b = store.load('other').state;
    assert.equal(b.todos.find((t) => t.id === 'build')!.status, 'open', 'goal B is untouched');
    assert.equal(b.evidence.length, 0);
    assert.equal(fs.existsSync(marker(store)), false);
  });

  it('a command the policy denies since the contract was issued', async () => {
    const { store, contractId } = issued();
    writePolicy(store, { deniedActions: [{ pattern: 'echo *' }] });
    throwsLoopx(
      () => verifyCommand(store, { contractId, todoId: 'build', command: BUILD }),
      'refused',
      /policy denies commands matching "echo \*"/,
    );
    await rejectsLoopx(
      () => execUnderContract(store, { contractId, todoId: 'build', command: BUILD, actor: agent }),
      'refused',
      /denies/,
    );
  });

  it('a todo another agent claimed, or one already done', async () => {
    const { store, goalId, contractId } = issued([{ todoId: 'other-one', action: 'echo other' }]);
    invoke(store, 'todo.claim', { goalId, todoId: 'other-one', by: 'claude' }, agent);
    throwsLoopx(
      () => verifyCommand(store, { contractId, todoId: 'other-one', command: 'echo other' }),
      'refused',
      /claimed by claude, not by codex/,
    );
    await execUnderContract(store, { contractId, todoId: 'build', command: BUILD, actor: agent });
    throwsLoopx(
      () => verifyCommand(store, { contractId, todoId: 'build', command: BUILD }),
      'refused',
      /already done: nothing to run/,
    );
  });

  it('a gate approval forged in goal.json (the derived snapshot), not in the log', () => {
    const { store, goalId } = goalFixture();
    invoke(
      store,
      'todo.add',
      { goalId, todoId: 'deploy', title: 'deploy', action: `touch ${marker(store)}`, gate: 'prod' },
      agent,
    );
    forgeSnapshotState(store, goalId, (s) => (s.gates[0]!.status = 'approved'));
    const out = shouldRun(store, { goalId }, agent);
    assert.equal(out.decision, 'wait', 'the forged snapshot is ignored: the log says the gate is pending');
    assert.equal(out.interaction_contract.id, null);
    assert.deepEqual(
      out.interaction_contract.user_channel.gates.map((g) => `${g.id}:${g.status}`),
      ['prod:pending'],
    );
    assert.equal(fs.existsSync(marker(store)), false, 'nothing ran');
  });

  it('verify runs nothing and writes nothing', () => {
    const { store, goalId, contractId, runId } = issued();
    const size = fs.statSync(store.logPath(goalId)).size;
    const v = verifyCommand(store, { contractId, todoId: 'build', command: BUILD });
    assert.equal(v.run.id, runId);
    assert.equal(v.contract.id, contractId);
    assert.equal(verifyCommand(store, { contractId, command: BUILD }).todo.id, 'build', 'by command alone');
    assert.equal(fs.statSync(store.logPath(goalId)).size, size);
  });
});

describe('evidence capture', () => {
  it('a passing command: todo done, evidence with exit code, duration and an artifact whose sha256 matches, wall time added', async () => {
    const action = 'sleep 0.05 && echo built-ok && echo warn >&2';
    const { store, goalId, contractId, runId } = issued([{ todoId: 'ok', action }]);
    const streamed: string[] = [];
    const res = await execUnderContract(store, {
      contractId,
      todoId: 'ok',
      command: action,
      actor: agent,
      onOutput: (c, s) => streamed.push(`${s}:${c.toString()}`),
    });
    assert.equal(res.exitCode, 0);
    assert.equal(res.todoDone, true);
    assert.ok(res.durationMs >= 50, `duration ${res.durationMs} ms`);
    assert.ok(streamed.some((s) => /^stdout:.*built-ok/s.test(s)));
    assert.ok(streamed.some((s) => /^stderr:warn/.test(s)));

    const state = store.load(goalId).state;
    const todo = state.todos.find((t) => t.id === 'ok')!;
    assert.equal(todo.status, 'done');
    assert.deepEqual(todo.evidence, [res.evidenceId]);
    const ev = state.evidence.find((e) => e.id === res.evidenceId)!;
    assert.equal(ev.kind, 'command');
    assert.equal(ev.runId, runId);
    assert.equal(ev.todoId, 'ok');
    assert.equal(ev.command, action);
    assert.equal(ev.exitCode, 0);
    assert.equal(ev.durationMs, res.durationMs);
    assert.match(ev.summary, /^exit 0 in \d+\.\d\d s\n.*built-ok/s);
    assert.ok(ev.artifact);
    const file = path.join(store.goalDir(goalId), ev.artifact.path);
    const content = fs.readFileSync(file);
    assert.equal(sha256(content), ev.artifact.sha256);
    assert.equal(content.length, ev.artifact.bytes);
    assert.match(content.toString(), /built-ok/);
    assert.match(content.toString(), /warn/);

    const run = state.runs.find((r) => r.id === runId)!;
    assert.equal(run.spend.wallSeconds, res.durationMs / 1000);
    assert.equal(run.spend.turns, 1);
    assert.ok(!run.endedAt, 'exec leaves the run open');
  });

  it('a failing command (exit 3): the todo stays open with its claim released, the evidence records 3, and 3 is returned', async () => {
    const action = 'echo oops >&2; exit 3';
    const { store, goalId, contractId, runId } = issued([{ todoId: 'bad', action }]);
    const res = await execUnderContract(store, { contractId, todoId: 'bad', command: action, actor: agent });
    assert.equal(res.exitCode, 3);
    assert.equal(res.todoDone, false);
    const state = store.load(goalId).state;
    const todo = state.todos.find((t) => t.id === 'bad')!;
    assert.equal(todo.status, 'open');
    assert.equal(todo.claimedBy, undefined);
    assert.deepEqual(todo.evidence, [res.evidenceId]);
    const ev = state.evidence.find((e) => e.id === res.evidenceId)!;
    assert.equal(ev.exitCode, 3);
    assert.match(ev.summary, /^exit 3 in .*\noops/s);
    const content = fs.readFileSync(path.join(store.goalDir(goalId), ev.artifact!.path));
    assert.equal(sha256(content), ev.artifact!.sha256);
    assert.match(content.toString(), /oops/);
    assert.equal(state.runs.find((r) => r.id === runId)!.spend.wallSeconds, res.durationMs / 1000);
    const released = store.readLog(goalId).events.filter((e) => e.type === 'todo.released');
    assert.equal(released.length, 1);
    assert.ok(released[0]!.type === 'todo.released' && /exit code 3/.test(released[0]!.data.reason));
    // Still listed: it can be tried again under the same contract.
    assert.equal(verifyCommand(store, { contractId, todoId: 'bad', command: action }).todo.status, 'open');
    const summary = summaryAll(store, goalId, agent);
    assert.equal(summary.ended_runs[0]!.outcome, 'failed');
  });
});

describe('verify refusals carry reason codes', () => {
  const reason = (fn: () => unknown, kind: 'refused' | 'not_found' = 'refused') =>
    throwsLoopx(fn, kind).reason;

  it('contract lookup, listing and command', () => {
    const { store, contractId } = issued([{ todoId: 'other', action: 'echo other' }]);
    const v = (q: { todoId?: string; command?: string }, id = contractId) =>
      verifyCommand(store, { contractId: id, ...q });
    assert.equal(
      reason(() => v({ todoId: 'build' }, 'c-0000000000'), 'not_found'),
      'contract_not_found',
    );
    assert.equal(
      reason(() => v({ todoId: 'nope', command: BUILD })),
      'todo_not_in_contract',
    );
    assert.equal(
      reason(() => v({ command: 'echo something else' })),
      'command_not_in_contract',
    );
    assert.equal(
      reason(() => v({ todoId: 'build', command: `${BUILD} ` })),
      'command_differs',
    );
    assert.equal(
      reason(() => v({})),
      'nothing_to_verify',
    );
  });

  it('the todo, the gates, the policy and the clock taking the permission back', () => {
    const { store, goalId, contractId, clock } = issued([{ todoId: 'other', action: 'echo other' }]);
    const v = (todoId: string) => verifyCommand(store, { contractId, todoId });
    invoke(store, 'todo.claim', { goalId, todoId: 'other', by: 'someone-else' }, agent);
    assert.equal(
      reason(() => v('other')),
      'claimed_by_other',
    );
    invoke(store, 'gate.request', { goalId, gateId: 'late', reason: 'wait', guards: ['build'] }, agent);
    assert.equal(
      reason(() => v('build')),
      'gate_not_approved',
    );
    writePolicy(store, { deniedActions: [{ pattern: 'echo *' }] });
    assert.equal(
      reason(() => v('build')),
      'policy_denied',
    );
    clock.advance(24 * 60 * MIN);
    assert.equal(
      reason(() => v('build')),
      'contract_expired',
    );
  });
});

describe('checkJudgment', () => {
  it('accepts a judgment todo of the contract; with a goal id, refuses a contract of another goal', () => {
    const { store, goalId, contractId, runId } = issued([{ todoId: 'review' }]);
    assert.equal(checkJudgment(store, contractId, 'review').run.id, runId);
    assert.equal(checkJudgment(store, contractId, 'review', goalId).run.id, runId);
    const e = throwsLoopx(
      () => checkJudgment(store, contractId, 'review', 'other'),
      'refused',
      new RegExp(`^contract ${contractId} belongs to goal ${goalId}, not other$`),
    );
    assert.deepEqual(e.details, { contractId, reason: 'contract_other_goal' });
    throwsLoopx(() => checkJudgment(store, contractId, 'build', goalId), 'refused', /not a judgment todo/);
  });
});
