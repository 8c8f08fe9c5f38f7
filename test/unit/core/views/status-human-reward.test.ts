/**
 * Two parts of the status documents: `human_reward` on each run (a person's latest reward on it,
 * with the lesson, who and when), and `status` reporting a policy.json that does not parse or
 * fails its schema in its `policy` field (the error with its reason code, file, line or field).
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { invoke } from '../../../../src/core/capabilities/registry';
import { goalStatus, statusAll } from '../../../../src/core/views/status';
import { GoalStatusDoc, StatusDoc } from '../../../../src/core/views/status-doc';
import { human, agent, removeTempDirs, signed } from '../../../helpers/store';
import { goalFixture } from '../../../helpers/contract-kit';

after(removeTempDirs);

describe('status: human_reward on each run', () => {
  it('null without a reward; else the latest a person gave, with its lesson, who, when, signed', () => {
    const { store, clock, goalId } = goalFixture();
    for (const runId of ['r1', 'r2']) {
      invoke(store, 'run.start', { goalId, runId, agent: 'codex' }, agent);
      invoke(store, 'run.end', { goalId, runId, outcome: 'succeeded' }, agent);
    }
    let doc = goalStatus(store, goalId);
    assert.ok(GoalStatusDoc.safeParse(doc).success);
    assert.deepEqual(
      doc.runs.map((r) => [r.id, r.human_reward]),
      [
        ['r2', null],
        ['r1', null],
      ],
    );
    invoke(store, 'reward.add', { goalId, runId: 'r1', score: -0.5, comment: 'flaky' }, human, signed(store));
    clock.advance(60_000);
    invoke(
      store,
      'reward.add',
      { goalId, runId: 'r1', score: 0.75, comment: 'fixed it', lesson: 'run the suite twice' },
      human,
      signed(store),
    );
    doc = goalStatus(store, goalId);
    assert.ok(GoalStatusDoc.safeParse(doc).success);
    const r1 = doc.runs.find((r) => r.id === 'r1')!;
    assert.deepEqual(r1.human_reward, {
      score: 0.75,
      comment: 'fixed it',
      lesson: 'run the suite twice',
      by: 'user:alice',
      at: '2026-11-30T10:01:00.000Z',
      signed: true,
    });
    // `rewards` is unchanged: every reward, in order.
    assert.deepEqual(
      r1.rewards.map((w) => w.score),
      [-0.5, 0.75],
    );
    assert.equal(doc.runs.find((r) => r.id === 'r2')!.human_reward, null);
  });

  it('an unsigned reward has no effect, so it never shows as the human reward', () => {
    const { store, goalId } = goalFixture();
    invoke(store, 'run.start', { goalId, runId: 'r1', agent: 'codex' }, agent);
    assert.throws(() => invoke(store, 'reward.add', { goalId, runId: 'r1', score: 1, comment: 'me' }, human));
    assert.equal(goalStatus(store, goalId).runs[0]!.human_reward, null);
  });
});

describe('status: an invalid policy.json', () => {
  it('does not parse: state invalid, the error with its reason code, file and line, and the fix', () => {
    const { store } = goalFixture();
    fs.writeFileSync(store.policyPath, '{\n  "v": 1,\n  oops\n}\n');
    const doc = statusAll(store);
    assert.ok(StatusDoc.safeParse(doc).success);
    assert.equal(doc.policy.state, 'invalid');
    assert.equal(doc.policy.error?.reason, 'corrupt');
    assert.equal(doc.policy.error?.kind, 'corrupt');
    assert.equal(doc.policy.error?.file, store.policyPath);
    assert.equal(doc.policy.error?.line, 3);
    assert.match(doc.policy.message!, /policy\.json \(line 3\): not valid JSON/);
    assert.match(doc.policy.message!, /no agent gets a contract/);
    assert.equal(doc.policy.fix, 'fix .loopx/policy.json by hand, then check it with `loopx policy show`');
    // The goals are still listed: status is a read.
    assert.equal(doc.goals.length, 1);
  });

  it('parses but fails the schema: the field is named', () => {
    const { store } = goalFixture();
    fs.writeFileSync(store.policyPath, JSON.stringify({ v: 1, reviewAgentActions: 'sometimes' }));
    const bad = statusAll(store).policy;
    assert.equal(bad.state, 'invalid');
    assert.equal(bad.error?.field, 'reviewAgentActions');
    assert.match(bad.message!, /field reviewAgentActions/);
    fs.writeFileSync(store.policyPath, JSON.stringify({ v: 1, surprise: true }));
    assert.equal(statusAll(store).policy.error?.field, 'surprise');
  });
});
