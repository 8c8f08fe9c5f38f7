/**
 * A person's decisions count only when signed by a key pinned on this machine. These tests write
 * the log the way an agent with a shell would (a well-formed line with the right seq and prev)
 * and check that replay gives such a line no effect, names it, and leaves the gate decidable.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { KeyObject } from 'node:crypto';
import { invoke } from '../../../../src/core/capabilities/registry';
import { newKeyPair, pinKey, publishKey } from '../../../../src/core/trust/keys';
import { decisionStatement, signerFor } from '../../../../src/core/trust/signed-decisions';
import type { Store } from '../../../../src/core/store/store';
import type { LoopxEvent } from '../../../../src/core/model/events';
import { human, agent, removeTempDirs, signed, personSigner } from '../../../helpers/store';
import { goalFixture, quota, throwsLoopx } from '../../../helpers/contract-kit';
import { appendChained } from '../../../helpers/log-kit';
import { nextHlc } from '../../../../src/core/model/hlc';
import { readIndex, writeIndex, indexBytes } from '../../../helpers/goal-index';

const logLinesOf = (file: string) => fs.readFileSync(file, 'utf8').split('\n').filter(Boolean);

after(removeTempDirs);

/** Appends a line the way a forger would: right seq, prev and clock, whatever it likes inside. */
function forge(store: Store, goalId: string, ev: Partial<LoopxEvent> & { type: string; data: unknown }) {
  return appendChained(store.logPath(goalId), {
    actor: { kind: 'user', id: 'alice', channel: 'cli' },
    ...ev,
  });
}

function withPendingGate() {
  const f = goalFixture();
  invoke(f.store, 'gate.request', { goalId: f.goalId, gateId: 'prod', reason: 'deploys' }, agent);
  return f;
}

const gate = (store: Store, goalId: string) => store.load(goalId).state.gates.find((g) => g.id === 'prod')!;

/** Appends a `gate.approved` of gate prod signed with `privateKey` (a key pinned here or not). */
function signedApproval(
  store: Store,
  goalId: string,
  id: string,
  actorId: string,
  privateKey: KeyObject,
  keyId: string,
  keyName: string,
): void {
  const draft = {
    id,
    // The clock stamp is part of what is signed: stamped as the line that will follow.
    hlc: nextHlc(store.readLog(goalId).events.at(-1)!.hlc, new Date(0)),
    ts: new Date().toISOString(),
    writer: store.writerId(),
    actor: { kind: 'user' as const, id: actorId, channel: 'cli' as const },
    type: 'gate.approved',
    data: { gateId: 'prod' },
  };
  const ws = store.identity().id!;
  const sig = {
    keyId,
    ws,
    sig: signerFor(privateKey, keyId, keyName).sign(decisionStatement({ goalId, ...draft }, ws)),
  };
  forge(store, goalId, { ...draft, sig } as Partial<LoopxEvent> & { type: string; data: unknown });
}

describe('trust: only a pinned key makes a decision', () => {
  it('an unsigned approval appended to the log has no effect, is named, and the gate stays decidable', () => {
    const { store, goalId } = withPendingGate();
    forge(store, goalId, { type: 'gate.approved', data: { gateId: 'prod' } });
    const s = store.load(goalId).state;
    assert.equal(gate(store, goalId).status, 'pending');
    assert.deepEqual(
      s.ignored?.map((i) => [i.type, i.reason]),
      [['gate.approved', 'it is not signed']],
    );
    invoke(store, 'gate.approve', { goalId, gateId: 'prod' }, human, signed(store));
    assert.equal(gate(store, goalId).status, 'approved', 'a person still approves after the forgery');
  });

  it('a key the agent made and published in .loopx/approvers/ does not count; pinning it later does', () => {
    const { store, goalId } = withPendingGate();
    const { privateKey, pub: key } = newKeyPair('mallory', '2026-11-30T00:00:00Z');
    publishKey(store.root, key);
    signedApproval(store, goalId, 'ev-forgedsig', 'alice', privateKey, key.keyId, 'mallory');
    assert.equal(gate(store, goalId).status, 'pending');
    assert.match(store.load(goalId).state.ignored![0]!.reason, /not pinned on this machine/);
    // The snapshot was made under the old set of pinned keys: pinning a key replays the log.
    pinKey(store.configDir, key);
    assert.equal(
      gate(store, goalId).status,
      'approved',
      'a pinned key counts, without a stale snapshot hiding it',
    );
  });

  it('pinning a key updates the goal list: index.json made under other keys is rebuilt', () => {
    const { store, goalId } = withPendingGate();
    const { privateKey, pub: key } = newKeyPair('bob', '2026-11-30T00:00:00Z');
    signedApproval(store, goalId, 'ev-bobsapproval', 'bob', privateKey, key.keyId, 'bob');
    const pending = () => store.listGoals().goals.find((g) => g.id === goalId)!.pendingGates;
    assert.equal(pending(), 1, 'a key not pinned here decides nothing');
    pinKey(store.configDir, key);
    assert.equal(pending(), 0, 'the approval counts once its key is pinned, with no explicit rebuild');
    const index = readIndex(store);
    assert.equal(index.trust, store.trust().fingerprint, 'index.json names the keys it was made under');
    assert.equal(index.goals[0]?.pendingGates, 0);
  });

  it('a write after pinning a key does not pass the other entries of index.json off as current', () => {
    const { store, goalId } = withPendingGate();
    invoke(store, 'goal.create', { goalId: 'other', title: 'Other' }, human);
    const { pub: key } = newKeyPair('carol', '2026-11-30T00:00:00Z');
    pinKey(store.configDir, key);
    invoke(store, 'todo.add', { goalId: 'other', todoId: 't', title: 'one' }, agent);
    assert.equal(readIndex(store).trust, undefined);
    assert.deepEqual(
      store.listGoals().goals.map((g) => [g.id, g.pendingGates, g.todosTotal]),
      [
        [goalId, 1, 0],
        ['other', 0, 1],
      ],
    );
    assert.equal(readIndex(store).trust, store.trust().fingerprint);
  });

  it('an index.json without the keys it was made under (an older one) is rebuilt once', () => {
    const { store, goalId } = withPendingGate();
    const index = readIndex(store);
    writeIndex(store, JSON.stringify({ v: 1, goals: [{ ...index.goals[0], title: 'stale' }] }));
    assert.equal(store.listGoals().goals.find((g) => g.id === goalId)!.title, 'A goal');
    const rebuilt = indexBytes(store);
    assert.equal(readIndex(store).trust, store.trust().fingerprint);
    store.listGoals();
    assert.equal(indexBytes(store), rebuilt, 'listing again writes nothing');
  });

  it('a signed decision copied into the log again has no second effect (a grant is not doubled)', () => {
    const { store, goalId } = goalFixture({ quota: quota({ turns: 10 }) });
    invoke(store, 'quota.grant', { goalId, budgets: { turns: 5 } }, human, signed(store));
    const file = store.logPath(goalId);
    const grant = store.readLog('g').events.find((e) => e.type === 'quota.granted')!;
    // Copied as it is, its clock stamp is not after the line before: the log is refused.
    const { seq: _s, prev: _p, ...copy } = grant;
    forge(store, goalId, copy);
    throwsLoopx(() => store.load(goalId), 'corrupt', /field hlc: .* is not after the line before it/);
    fs.writeFileSync(file, logLinesOf(file).slice(0, -1).join('\n') + '\n');
    // Copied with a fresh stamp (which its signature does not cover), it is the same decision again.
    const { seq: _s2, prev: _p2, hlc: _h, ...rest } = grant;
    forge(store, goalId, rest);
    const s = store.load(goalId).state;
    assert.equal(s.granted.turns, 5);
    assert.match(s.ignored![0]!.reason, /repeats decision/);
  });

  it('a signature does not carry over to other data: an edited note or gate id fails to verify', () => {
    const { store, goalId } = withPendingGate();
    invoke(store, 'gate.request', { goalId, gateId: 'other' }, agent);
    invoke(store, 'gate.approve', { goalId, gateId: 'other', note: 'ok' }, human, signed(store));
    const approved = store.readLog('g').events.find((e) => e.type === 'gate.approved')!;
    const { seq: _s, prev: _p, hlc: _h, ...rest } = approved;
    forge(store, goalId, { ...rest, id: 'ev-retarget', data: { gateId: 'prod', note: 'ok' } });
    assert.equal(gate(store, goalId).status, 'pending');
    assert.match(store.load(goalId).state.ignored![0]!.reason, /does not verify/);
  });

  it("a person's decision without a key is refused before anything is written, naming what to do", () => {
    const { store, goalId } = withPendingGate();
    const before = fs.readFileSync(store.logPath(goalId));
    for (const [cap, input] of [
      ['gate.approve', { goalId, gateId: 'prod' }],
      ['gate.reject', { goalId, gateId: 'prod' }],
      ['quota.grant', { goalId, budgets: { turns: 1 } }],
    ] as const) {
      assert.throws(
        () => invoke(store, cap, input, human),
        (e: Error & { details?: { reason?: string } }) =>
          e.details?.reason === 'unsigned_decision' && /loopx key create/.test(e.message),
      );
    }
    assert.deepEqual(fs.readFileSync(store.logPath(goalId)), before);
  });

  it('a signer whose key is not pinned here is refused: its decision would be ignored', () => {
    const { store, goalId } = withPendingGate();
    const { privateKey, pub } = newKeyPair('x', '2026-11-30T00:00:00Z');
    const keyId = pub.keyId;
    assert.throws(
      () =>
        invoke(store, 'gate.approve', { goalId, gateId: 'prod' }, human, {
          signer: signerFor(privateKey, keyId, 'x'),
        }),
      (e: Error & { details?: { reason?: string } }) => e.details?.reason === 'untrusted_signer',
    );
    assert.equal(gate(store, goalId).status, 'pending');
  });

  it('loosening a quota is a decision: refused unsigned, ignored when forged; tightening needs no key', () => {
    const { store, goalId } = goalFixture({ quota: quota({ turns: 10 }) });
    assert.throws(
      () => invoke(store, 'quota.set', { goalId, quota: quota({ turns: 50 }) }, human),
      (e: Error & { details?: { reason?: string } }) => e.details?.reason === 'unsigned_decision',
    );
    forge(store, goalId, { type: 'quota.set', data: { quota: quota({ turns: 1000 }) } });
    assert.equal(store.load(goalId).state.quota.budgets.turns, 10);
    invoke(store, 'quota.set', { goalId, quota: quota({ turns: 5 }) }, agent);
    assert.equal(store.load(goalId).state.quota.budgets.turns, 5);
    invoke(store, 'quota.set', { goalId, quota: quota({ turns: 50 }) }, human, signed(store));
    assert.equal(store.load(goalId).state.quota.budgets.turns, 50);
  });

  it('no secret and no trust lives in the workspace: the pinned keys are in the config folder', () => {
    const { store } = withPendingGate();
    personSigner(store);
    assert.ok(fs.readdirSync(path.join(store.configDir, 'trusted')).length >= 1);
    assert.ok(!store.configDir.startsWith(store.workspace + path.sep));
  });
});
