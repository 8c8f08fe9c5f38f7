/**
 * `exec` authorises a gated command from the snapshot once the logs hold the person's signed
 * approval the command needs (contract/approval-proof.ts), without replaying every log; anything
 * else is decided by the replay, so a snapshot forged with its own key still runs nothing.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { invoke } from '../../../../src/core/capabilities/registry';
import { shouldRun } from '../../../../src/core/contract/issue';
import { verifyCommand } from '../../../../src/core/contract/exec';
import { approvalsProven } from '../../../../src/core/contract/approval-proof';
import type { GoalState } from '../../../../src/core/model/goal-state';
import { writeSnapshotFile } from '../../../../src/core/store/snapshot';
import type { Store } from '../../../../src/core/store/store';
import { human, agent, removeTempDirs, signed } from '../../../helpers/store';
import { goalFixture, rewriteLog, throwsLoopx } from '../../../helpers/contract-kit';

after(removeTempDirs);

/** A goal whose `deploy` todo (touching a marker) needs gate prod; `approve`: a person signs it. */
function gated(approve: boolean) {
  const f = goalFixture();
  const { store, goalId } = f;
  const deploy = `touch ${path.join(store.workspace, 'deployed')}`;
  invoke(
    store,
    'todo.add',
    { goalId, todoId: 'deploy', title: 'deploy', action: deploy, gate: 'prod', priority: 'P0' },
    human,
  );
  if (approve) invoke(store, 'gate.approve', { goalId, gateId: 'prod' }, human, signed(store));
  return { ...f, deploy };
}

/** Counts the full replays `store` makes from here on. */
function countReplays(store: Store): { count: number } {
  const seen = { count: 0 };
  const replay = store.replayGoal.bind(store);
  store.replayGoal = (...a: Parameters<Store['replayGoal']>) => {
    seen.count++;
    return replay(...a);
  };
  return seen;
}

/** What an agent with the snapshot key does: the current snapshot, edited, MAC'd again. */
function forgeSnapshot(store: Store, goalId: string, edit: (s: GoalState) => void) {
  store.rebuildSnapshot(goalId);
  const { snap } = store.readSnapshot(goalId);
  edit(snap!.state);
  writeSnapshotFile(store.snapshotPath(goalId), store.secret('snapshot-key'), snap!);
}

const markApproved = (s: GoalState, lastDecision?: string) => {
  const g = s.gates.find((x) => x.id === 'prod')!;
  g.status = 'approved';
  g.lastDecision = lastDecision;
  g.decidedBy = { kind: 'user', id: 'alice', channel: 'cli' };
  g.approvedFor = s.todos
    .filter((t) => t.id === 'deploy')
    .map((t) => ({ todoId: t.id, title: t.title, action: t.action }));
};

describe('a gated command under a person’s signed approval', () => {
  it('is authorised from the snapshot, without a replay of the logs', () => {
    const { store, goalId, deploy } = gated(true);
    const contractId = shouldRun(store, { goalId }, agent).interaction_contract.id!;
    const replays = countReplays(store);
    const v = verifyCommand(store, { contractId, todoId: 'deploy', command: deploy });
    assert.equal(v.command, deploy);
    assert.equal(replays.count, 0, 'the logs were replayed');
    const gate = v.goal.gates.find((g) => g.id === 'prod')!;
    assert.equal(approvalsProven(store, goalId, v.todo, deploy, v.policy, v.goal.gates, new Date()), true);
    // The same approval does not cover another command for the todo.
    assert.equal(approvalsProven(store, goalId, v.todo, 'touch else', v.policy, [gate], new Date()), false);
  });

  it('an ungated command needs no proof: no replay either', () => {
    const { store, goalId } = goalFixture();
    invoke(store, 'todo.add', { goalId, todoId: 'build', title: 'build', action: 'echo built' }, human);
    const contractId = shouldRun(store, { goalId }, agent).interaction_contract.id!;
    const replays = countReplays(store);
    verifyCommand(store, { contractId, todoId: 'build', command: 'echo built' });
    assert.equal(replays.count, 0);
  });
});

describe('a snapshot forged with its own key is not proof: the replay decides', () => {
  it('an approval the logs do not hold (no event, or another gate’s signed approval)', () => {
    const { store, goalId, deploy } = gated(false);
    invoke(
      store,
      'todo.add',
      { goalId, todoId: 'stage', title: 'stage', action: 'echo staged', gate: 'staging' },
      human,
    );
    const staging = invoke(store, 'gate.approve', { goalId, gateId: 'staging' }, human, signed(store));
    const stagingId = staging.events.find((e) => e.type === 'gate.approved')!.id;
    for (const named of [undefined, stagingId]) {
      forgeSnapshot(store, goalId, (s) => markApproved(s, named));
      const out = shouldRun(store, { goalId }, agent);
      const contractId = out.interaction_contract.id!;
      assert.ok(
        out.interaction_contract.cli_channel.next_cli_actions.some((a) => a.includes('--todo deploy')),
        'the forged snapshot got the command listed',
      );
      const replays = countReplays(store);
      throwsLoopx(
        () => verifyCommand(store, { contractId, todoId: 'deploy', command: deploy }),
        'refused',
        /needs gate prod approved/,
      );
      assert.equal(replays.count, 1, 'the replay decided');
    }
    assert.equal(fs.existsSync(path.join(store.workspace, 'deployed')), false);
  });

  it('a signed approval a later signed rejection overruled', () => {
    const { store, goalId, deploy } = gated(true);
    const approved = store.load(goalId).state.gates.find((g) => g.id === 'prod')!.lastDecision!;
    // More work under the gate asks again; the person rejects it.
    invoke(
      store,
      'todo.add',
      { goalId, todoId: 'more', title: 'more', action: 'echo more', gate: 'prod' },
      human,
    );
    invoke(store, 'gate.reject', { goalId, gateId: 'prod' }, human, signed(store));
    forgeSnapshot(store, goalId, (s) => {
      markApproved(s, approved);
      s.todos.find((t) => t.id === 'deploy')!.status = 'open';
    });
    const contractId = shouldRun(store, { goalId }, agent).interaction_contract.id!;
    throwsLoopx(() => verifyCommand(store, { contractId, todoId: 'deploy', command: deploy }), 'refused');
  });

  it('an approval whose listed work was altered in the log: its signature no longer verifies', () => {
    const { store, goalId } = gated(true);
    const hacked = `touch ${path.join(store.workspace, 'hacked')}`;
    // The agent rewrites its log (chained again): the todo's command and the approval's list.
    rewriteLog(store, goalId, (events) => {
      for (const ev of events) {
        if (ev.type === 'todo.added' && ev.data.todo.id === 'deploy') ev.data.todo.action = hacked;
        if (ev.type === 'gate.approved')
          ev.data.guarded = [{ todoId: 'deploy', title: 'deploy', action: hacked }];
      }
    });
    const approval = store.readLog(goalId).events.find((e) => e.type === 'gate.approved')!.id;
    forgeSnapshot(store, goalId, (s) => markApproved(s, approval));
    const contractId = shouldRun(store, { goalId }, agent).interaction_contract.id!;
    const v = store.load(goalId).state;
    const todo = v.todos.find((t) => t.id === 'deploy')!;
    assert.equal(todo.action, hacked);
    assert.equal(approvalsProven(store, goalId, todo, hacked, store.policy(), v.gates, new Date()), false);
    throwsLoopx(
      () => verifyCommand(store, { contractId, todoId: 'deploy', command: hacked }),
      'refused',
      /gate prod/,
    );
    assert.equal(fs.existsSync(path.join(store.workspace, 'hacked')), false);
  });
});
