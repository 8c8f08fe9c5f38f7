/**
 * A passkey's signature on a decision, checked the way replay checks it on every clone: plain
 * node:crypto over the stored authenticator data and client data. A P-256 key stands in for the
 * authenticator, and each byte a forger or a broken browser could get wrong is got wrong once.
 * Then the same through the store: a decision prepared, signed later, written exactly, or refused.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { invoke } from '../../../../src/core/capabilities/registry';
import { commitPreparedCall, prepareCall } from '../../../../src/core/capabilities/registry';
import { newKeyPair, pinKey } from '../../../../src/core/trust/keys';
import { decisionStatement, signerFor, trustOf } from '../../../../src/core/trust/signed-decisions';
import type { DecisionFacts } from '../../../../src/core/trust/signed-decisions';
import type { Actor } from '../../../../src/core/model/goal-state';
import { agent, removeTempDirs } from '../../../helpers/store';
import { goalFixture, throwsLoopx } from '../../../helpers/contract-kit';
import { softAssertion, softPasskey } from '../../../helpers/soft-passkey';

after(removeTempDirs);

const WS = 'ws_0123456789abcdef0123456789abcdef';
const facts: DecisionFacts = {
  goalId: 'g',
  id: 'ev-0123456789',
  ts: '2026-11-30T10:00:00.000Z',
  hlc: '2026-11-30T10:00:00.000Z-0000',
  writer: 'w-1',
  actor: { kind: 'user', id: 'ada-passkey', channel: 'browser' },
  type: 'gate.approved',
  data: { gateId: 'prod', guarded: [{ todoId: 't', title: 'Deploy', action: 'echo deployed' }] },
};
const statement = decisionStatement(facts, WS);

describe('a passkey signature on a decision', () => {
  const p = softPasskey();
  const trust = trustOf([p.key], WS);

  it('a valid assertion over the statement verifies, by the statement and by the facts', () => {
    const sig = softAssertion(p, statement, WS);
    assert.equal(trust.rejectsStatement(statement, sig), undefined);
    assert.equal(trust.rejects(facts, sig), undefined);
  });

  const cases: [string, () => ReturnType<typeof trust.rejectsStatement>, RegExp][] = [
    [
      'the statement altered (another command)',
      () =>
        trust.rejects(
          {
            ...facts,
            data: { ...(facts.data as object), guarded: [{ todoId: 't', title: 'x', action: 'rm -rf /' }] },
          },
          softAssertion(p, statement, WS),
        ),
      /another statement/,
    ],
    [
      'a challenge that is not the statement’s',
      () => trust.rejectsStatement(statement, softAssertion(p, statement, WS, { challenge: 'AAAA' })),
      /another statement/,
    ],
    [
      'UV clear',
      () => trust.rejectsStatement(statement, softAssertion(p, statement, WS, { flags: 0x01 })),
      /user verification \(UV flag clear\)/,
    ],
    [
      'UP clear',
      () => trust.rejectsStatement(statement, softAssertion(p, statement, WS, { flags: 0x04 })),
      /person present \(UP flag clear\)/,
    ],
    [
      'the RP ID hash of another site',
      () => trust.rejectsStatement(statement, softAssertion(p, statement, WS, { rpId: 'evil.example' })),
      /another relying party than localhost/,
    ],
    [
      'an origin at another site',
      () =>
        trust.rejectsStatement(
          statement,
          softAssertion(p, statement, WS, { origin: 'https://evil.example' }),
        ),
      /another site than localhost/,
    ],
    [
      'a registration (webauthn.create), not a sign-in',
      () => trust.rejectsStatement(statement, softAssertion(p, statement, WS, { type: 'webauthn.create' })),
      /not a WebAuthn sign-in/,
    ],
    [
      'a signature by another key',
      () =>
        trust.rejectsStatement(
          statement,
          softAssertion(p, statement, WS, {
            signWith: generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey,
          }),
        ),
      /does not verify/,
    ],
    [
      'no assertion with a passkey’s signature',
      () => {
        const { webauthn: _w, ...bare } = softAssertion(p, statement, WS);
        return trust.rejectsStatement(statement, bare);
      },
      /is a passkey, and this signature carries no WebAuthn assertion/,
    ],
    [
      'client data that is not JSON',
      () => {
        const sig = softAssertion(p, statement, WS);
        return trust.rejectsStatement(statement, {
          ...sig,
          webauthn: { ...sig.webauthn!, clientDataJSON: Buffer.from('not json').toString('base64url') },
        });
      },
      /not a JSON object/,
    ],
    [
      'authenticator data cut short',
      () => {
        const sig = softAssertion(p, statement, WS);
        return trust.rejectsStatement(statement, {
          ...sig,
          webauthn: { ...sig.webauthn!, authenticatorData: sig.webauthn!.authenticatorData.slice(0, 40) },
        });
      },
      /too short/,
    ],
    [
      'a passkey that is not pinned',
      () => trustOf([], WS).rejectsStatement(statement, softAssertion(p, statement, WS)),
      /not pinned on this machine/,
    ],
  ];
  for (const [what, check, why] of cases) {
    it(`${what}: rejected, with a reason`, () => {
      const reason = check();
      assert.ok(reason, 'rejected');
      assert.match(reason, why);
    });
  }

  it('an Ed25519 key given a WebAuthn assertion is rejected, even with a valid Ed25519 signature', () => {
    const { privateKey, pub } = newKeyPair('alice', '2026-11-30T00:00:00.000Z');
    const ed = trustOf([pub], WS);
    const good = { keyId: pub.keyId, ws: WS, sig: signerFor(privateKey, pub.keyId, 'alice').sign(statement) };
    assert.equal(ed.rejectsStatement(statement, good), undefined, 'the plain Ed25519 signature counts');
    const withAssertion = { ...good, webauthn: softAssertion(p, statement, WS).webauthn };
    assert.match(
      ed.rejectsStatement(statement, withAssertion) ?? '',
      /is an Ed25519 key, and this signature is a passkey/,
    );
  });

  it('a passkey key given an Ed25519 signature by the same id is rejected', () => {
    const { privateKey } = newKeyPair('x', '2026-11-30T00:00:00.000Z');
    const sig = { keyId: p.key.keyId, ws: WS, sig: signerFor(privateKey, p.key.keyId, 'x').sign(statement) };
    assert.match(trust.rejectsStatement(statement, sig) ?? '', /carries no WebAuthn assertion/);
  });
});

describe('a decision prepared, then signed by a passkey and written exactly', () => {
  const person: Actor = { kind: 'user', id: 'ada-passkey', channel: 'browser' };

  function pendingGate() {
    const f = goalFixture();
    invoke(
      f.store,
      'todo.add',
      { goalId: f.goalId, todoId: 't', title: 'Deploy', action: 'echo deployed', gate: 'prod' },
      agent,
    );
    invoke(
      f.store,
      'gate.request',
      { goalId: f.goalId, gateId: 'prod', reason: 'deploys', guards: ['t'] },
      agent,
    );
    const p = softPasskey();
    pinKey(f.store.configDir, p.key);
    return { ...f, p };
  }
  const gate = (f: ReturnType<typeof pendingGate>) =>
    f.store.load(f.goalId).state.gates.find((g) => g.id === 'prod')!;

  it('the event written is exactly the one prepared, and replay gives it its effect', () => {
    const f = pendingGate();
    const prepared = prepareCall(f.store, 'gate.approve', { goalId: f.goalId, gateId: 'prod' }, person);
    assert.equal(gate(f).status, 'pending', 'preparing writes nothing');
    const sig = softAssertion(f.p, decisionStatement(prepared.facts, prepared.workspace), prepared.workspace);
    const r = commitPreparedCall(f.store, prepared, sig);
    const ev = r.events[0]!;
    assert.equal(r.events.length, 1);
    assert.deepEqual(
      { id: ev.id, ts: ev.ts, hlc: ev.hlc, writer: ev.writer, actor: ev.actor, type: ev.type },
      {
        id: prepared.facts.id,
        ts: prepared.facts.ts,
        hlc: prepared.facts.hlc,
        writer: prepared.facts.writer,
        actor: person,
        type: 'gate.approved',
      },
    );
    assert.deepEqual(ev.sig, sig);
    assert.equal(gate(f).status, 'approved');
    assert.equal(f.store.replayGoal(f.goalId).state.gates.find((g) => g.id === 'prod')!.status, 'approved');
  });

  it('refused as decision_stale when the goal changed between preparing and writing', () => {
    const f = pendingGate();
    const prepared = prepareCall(f.store, 'gate.approve', { goalId: f.goalId, gateId: 'prod' }, person);
    const sig = softAssertion(f.p, decisionStatement(prepared.facts, prepared.workspace), prepared.workspace);
    invoke(
      f.store,
      'todo.add',
      { goalId: f.goalId, title: 'More', action: 'echo more', gate: 'prod' },
      agent,
    );
    const e = throwsLoopx(
      () => commitPreparedCall(f.store, prepared, sig),
      'conflict',
      /changed while you decided/,
    );
    assert.equal(e.reason, 'decision_stale');
    assert.equal(gate(f).status, 'pending');
  });

  it('refused as untrusted_signer when the assertion is not over its statement, and nothing is written', () => {
    const f = pendingGate();
    const prepared = prepareCall(f.store, 'gate.approve', { goalId: f.goalId, gateId: 'prod' }, person);
    const other = { ...prepared.facts, id: 'ev-another000' };
    const sig = softAssertion(f.p, decisionStatement(other, prepared.workspace), prepared.workspace);
    const before = f.store.readLog(f.goalId).events.length;
    const e = throwsLoopx(() => commitPreparedCall(f.store, prepared, sig), 'refused', /another statement/);
    assert.equal(e.reason, 'untrusted_signer');
    assert.equal(f.store.readLog(f.goalId).events.length, before);
    assert.equal(gate(f).status, 'pending');
  });

  it('an agent cannot prepare a decision (human-only), and a plan of no decision is refused', () => {
    const f = pendingGate();
    throwsLoopx(
      () =>
        prepareCall(
          f.store,
          'gate.approve',
          { goalId: f.goalId, gateId: 'prod' },
          { ...agent, channel: 'mcp' },
        ),
      'refused',
      /human-only/,
    );
    throwsLoopx(
      () => prepareCall(f.store, 'todo.add', { goalId: f.goalId, title: 'x' }, person),
      'usage',
      /only a single decision/,
    );
  });
});
