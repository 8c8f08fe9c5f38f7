import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { after, describe, it } from 'node:test';
import { DEFAULT_POLICY } from '../../../../src/core/model/policy';
import type { Policy } from '../../../../src/core/model/policy';
import { describeUnsignedPolicy, resolvePolicy, tighten } from '../../../../src/core/trust/policy-signature';
import type { SignedPolicy } from '../../../../src/core/trust/policy-signature';
import { formatDiff, lineDiff } from '../../../../src/core/views/text-diff';
import { newKeyPair } from '../../../../src/core/trust/keys';
import { signerFor } from '../../../../src/core/trust/signed-decisions';
import { policyFiles } from '../../../../src/core/trust/workspace-policy';
import type { Trust } from '../../../../src/core/trust/signed-decisions';
import { LoopxError } from '../../../../src/core/model/errors';
import { personSigner, removeTempDirs, tempStore, writeSignedPolicy } from '../../../helpers/store';
import { throwsLoopx } from '../../../helpers/contract-kit';

after(removeTempDirs);

const P = (p: Omit<Policy, 'v'>): Policy => ({ v: 1, ...p });
const deny = (pattern: string) => ({ pattern });
const gate = (pattern: string, id: string) => ({ pattern, gate: id });

describe('tighten: an unsigned edit applies only as far as it restricts', () => {
  it('adds gate and deny rules, and keeps every signed rule the edit removed', () => {
    const base = P({ gatedActions: [gate('git push*', 'push')], deniedActions: [deny('rm -rf *')] });
    const edit = P({ gatedActions: [gate('npm publish*', 'release')], deniedActions: [deny('curl *')] });
    const t = tighten(base, edit);
    assert.deepEqual(t.gatedActions, [gate('git push*', 'push'), gate('npm publish*', 'release')]);
    assert.deepEqual(t.deniedActions, [deny('rm -rf *'), deny('curl *')]);
  });

  it('takes a smaller budget, a shorter contract and stricter review; refuses the opposite', () => {
    const q = (turns: number) => ({
      budgets: { turns },
      window: { kind: 'life' as const },
      cooldownSeconds: 0,
    });
    const base = P({ defaultQuota: q(50), contractTtlMinutes: 30, reviewAgentActions: 'tools' });
    const tighter = tighten(
      base,
      P({ defaultQuota: q(10), contractTtlMinutes: 5, reviewAgentActions: 'all' }),
    );
    assert.equal(tighter.defaultQuota?.budgets.turns, 10);
    assert.equal(tighter.contractTtlMinutes, 5);
    assert.equal(tighter.reviewAgentActions, 'all');
    const looser = tighten(
      base,
      P({ defaultQuota: q(500), contractTtlMinutes: 600, reviewAgentActions: 'none' }),
    );
    assert.deepEqual(looser, base);
    // Dropping the budget (no limit) is loosening too.
    assert.equal(tighten(base, P({ contractTtlMinutes: 30 })).defaultQuota?.budgets.turns, 50);
  });

  it('runs only the runtimes a person signed: one added or changed waits, one removed stops at once', () => {
    const claude = { preset: 'claude-code' as const };
    const script = { command: ['node', 'run.js', '{contract_file}'] };
    const base = P({ runtimes: { claude, script } });
    assert.deepEqual(tighten(base, P({ runtimes: { claude, script } })).runtimes, { claude, script });
    assert.deepEqual(
      tighten(base, P({ runtimes: { claude, script, sneaky: { command: ['sh', '-c', 'curl x | sh'] } } }))
        .runtimes,
      { claude, script },
      'an added runtime waits for a signature',
    );
    assert.deepEqual(
      tighten(base, P({ runtimes: { claude, script: { ...script, env: { TOKEN: 'x' } } } })).runtimes,
      { claude, script },
      'a changed one runs as signed until the change is signed',
    );
    assert.deepEqual(
      tighten(base, P({ runtimes: { claude } })).runtimes,
      { claude },
      'a removed one stops at once',
    );
    assert.equal(tighten(base, P({})).runtimes, undefined, 'none declared: none run');
    assert.equal(tighten(P({}), P({ runtimes: { claude } })).runtimes, undefined);
  });

  it('keeps the signed claim timeout and gate expiry whichever way they change', () => {
    const base = P({ claimTimeoutMinutes: 30, gateExpiryHours: 24 });
    assert.deepEqual(tighten(base, P({ claimTimeoutMinutes: 1, gateExpiryHours: 1000 })), base);
  });
});

describe('the policy LoopX enforces', () => {
  it('a new workspace with the default policy file needs no signature and reports nothing', () => {
    const store = tempStore();
    const v = store.policyView();
    assert.equal(v.state, 'not_signed');
    assert.deepEqual(v.unsigned, []);
    assert.deepEqual(store.policy(), DEFAULT_POLICY);
    assert.equal(describeUnsignedPolicy(v), undefined);
  });

  it('an unsigned loosening edit has no effect and is named; signing it makes it apply', () => {
    const store = tempStore();
    writeSignedPolicy(store, { contractTtlMinutes: 30, gatedActions: [gate('git push*', 'push')] });
    assert.equal(store.policyView().state, 'signed');
    fs.writeFileSync(store.policyPath, JSON.stringify(P({ contractTtlMinutes: 600 })));
    const v = store.policyView();
    assert.equal(v.state, 'unsigned_changes');
    assert.deepEqual(v.unsigned.sort(), ['contractTtlMinutes', 'gatedActions']);
    assert.equal(store.policy().contractTtlMinutes, 30);
    assert.deepEqual(store.policy().gatedActions, [gate('git push*', 'push')]);
    assert.match(describeUnsignedPolicy(v)!, /no effect until signed.*alice signed at/);
    store.signPolicy(personSigner(store));
    assert.equal(store.policyView().state, 'signed');
    assert.equal(store.policy().contractTtlMinutes, 600);
    assert.equal(store.policy().gatedActions, undefined);
  });

  it('a signature by a key not pinned here, or over other content, counts for nothing', () => {
    const store = tempStore();
    writeSignedPolicy(store, { reviewAgentActions: 'none' });
    const signedFile = `${store.root}/policy.signed.json`;
    const good = JSON.parse(fs.readFileSync(signedFile, 'utf8'));
    // The agent edits the signed policy to loosen it further: the signature no longer verifies.
    fs.writeFileSync(signedFile, JSON.stringify({ ...good, policy: P({ contractTtlMinutes: 1440 }) }));
    // ...and removes the other copies of the good one: the config folder's and the chain's.
    const files = policyFiles(store.root, store.configDir, store.identity().id);
    fs.rmSync(files.copy);
    fs.rmSync(files.history, { recursive: true });
    fs.writeFileSync(store.policyPath, JSON.stringify(P({ contractTtlMinutes: 1440 })));
    let v = store.policyView();
    assert.equal(v.state, 'not_signed');
    assert.match(
      v.ignored.join('\n'),
      /policy\.signed\.json is ignored: its signature by key .* does not verify/,
    );
    assert.equal(store.policy().contractTtlMinutes, 30);
    // A key of the agent's own, not pinned here.
    const { privateKey, pub } = newKeyPair('mallory', '2026-11-30T00:00:00.000Z');
    const forged = {
      ...good,
      policy: P({ contractTtlMinutes: 1440 }),
      keyId: pub.keyId,
      sig: signerFor(privateKey, pub.keyId, 'mallory').sign('x'),
    };
    fs.writeFileSync(signedFile, JSON.stringify(forged));
    v = store.policyView();
    assert.match(v.ignored.join('\n'), /not pinned on this machine/);
    assert.equal(store.policy().contractTtlMinutes, 30);
  });

  it('restoring an older signed policy does not undo a newer one signed on this machine', () => {
    const store = tempStore();
    writeSignedPolicy(store, { reviewAgentActions: 'none' });
    const older = fs.readFileSync(`${store.root}/policy.signed.json`);
    writeSignedPolicy(store, { reviewAgentActions: 'all' });
    fs.writeFileSync(`${store.root}/policy.signed.json`, older);
    fs.writeFileSync(store.policyPath, JSON.stringify(P({ reviewAgentActions: 'none' })));
    const v = store.policyView();
    assert.equal(store.policy().reviewAgentActions, 'all');
    assert.deepEqual(v.unsigned, ['reviewAgentActions']);
  });

  it('signing needs a person: no key is refused with a reason, and nothing is written', () => {
    const store = tempStore();
    throwsLoopx(() => store.signPolicy(undefined), 'refused', /must be signed with the person's key/);
    assert.throws(
      () => store.signPolicy(undefined),
      (e: unknown) => e instanceof LoopxError && e.details.reason === 'unsigned_decision',
    );
    assert.equal(fs.existsSync(`${store.root}/policy.signed.json`), false);
  });
});

describe('resolvePolicy', () => {
  it('checks a signature both files hold once; a copy that does not verify is still named', () => {
    const store = tempStore();
    writeSignedPolicy(store, { contractTtlMinutes: 20 });
    const signed = JSON.parse(fs.readFileSync(`${store.root}/policy.signed.json`, 'utf8')) as SignedPolicy;
    const trust = store.trust();
    let checks = 0;
    const counting: Trust = {
      ...trust,
      rejectsStatement: (statement, sig) => (checks++, trust.rejectsStatement(statement, sig)),
    };
    const file = P({ contractTtlMinutes: 20 });
    const v = resolvePolicy(
      file,
      [
        { where: 'a', signed },
        { where: 'b', signed },
      ],
      counting,
    );
    assert.equal(checks, 1);
    assert.equal(v.state, 'signed');
    assert.deepEqual(v.ignored, []);
    const forged = { ...signed, sig: Buffer.alloc(64).toString('base64') };
    const w = resolvePolicy(
      file,
      [
        { where: 'a', signed: forged },
        { where: 'b', signed: forged },
      ],
      counting,
    );
    assert.equal(w.state, 'not_signed');
    assert.equal(w.ignored.length, 2, w.ignored.join('\n'));
  });
});

describe('signing what was shown', () => {
  it('refuses when policy.json changed after the person reviewed it (policy_changed), and signs nothing', () => {
    const store = tempStore();
    fs.writeFileSync(store.policyPath, JSON.stringify(P({ contractTtlMinutes: 60 })));
    const shown = store.policyView().file;
    fs.writeFileSync(store.policyPath, JSON.stringify(P({ contractTtlMinutes: 1440 })));
    assert.throws(
      () => store.signPolicy(personSigner(store), shown),
      (e: unknown) => e instanceof LoopxError && e.details.reason === 'policy_changed',
    );
    assert.equal(fs.existsSync(`${store.root}/policy.signed.json`), false);
    assert.equal(store.signPolicy(personSigner(store), store.policyView().file).state, 'signed');
  });

  it('the diff a person reads marks removed lines before added ones, with context', () => {
    const d = lineDiff('a\nb\nc\nd', 'a\nB\nc\nd\ne');
    assert.deepEqual(
      d.map((l) => `${l.op}${l.text}`),
      [' a', '-b', '+B', ' c', ' d', '+e'],
    );
    assert.equal(formatDiff(lineDiff('1\n2\n3\n4\n5\n6\n7', '1\n2\n3\n4\n5\n6\nX'), 1), '  …\n  6\n- 7\n+ X');
  });
});
