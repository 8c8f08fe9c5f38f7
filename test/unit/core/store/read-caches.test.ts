/**
 * What a long-lived process (a server, the editor, a writer) keeps between calls so that it does
 * not read and validate the same files again on every commit: the policy view, the snapshot's
 * header, and the goal `exec` replayed before it records its evidence. Each must follow every
 * change to what it was made from, and a caller must not be able to change it for the next one.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { after, describe, it } from 'node:test';
import { invoke } from '../../../../src/core/index';
import { Store } from '../../../../src/core/store/store';
import { PolicyViewCache, policyFiles, readPolicyView } from '../../../../src/core/trust/workspace-policy';
import { copyJson } from '../../../../src/core/store/json-file';
import { newKeyPair, pinKey } from '../../../../src/core/trust/keys';
import { agent, human, removeTempDirs, tempStore, writeSignedPolicy } from '../../../helpers/store';

after(removeTempDirs);

const writePolicy = (store: Store, policy: object) =>
  fs.writeFileSync(store.policyPath, JSON.stringify({ v: 1, ...policy }, null, 1));

/** Rewrites `file` in place with `text`, then puts its times back as they were. */
function rewriteKeepingTimes(file: string, text: string) {
  const st = fs.statSync(file);
  fs.writeFileSync(file, text);
  fs.utimesSync(file, st.atime, st.mtime);
}

describe('the policy view, kept between calls', () => {
  it('is read again after every edit of policy.json, even one of the same size with the old times', () => {
    const store = tempStore();
    writePolicy(store, { contractTtlMinutes: 30 });
    assert.equal(store.policy().contractTtlMinutes, 30);
    rewriteKeepingTimes(store.policyPath, fs.readFileSync(store.policyPath, 'utf8').replace('30', '20'));
    assert.equal(store.policy().contractTtlMinutes, 20, 'a stamp (size, mtime) alone would have missed it');
    fs.rmSync(store.policyPath);
    assert.equal(
      store.policy().contractTtlMinutes,
      readPolicyView(policyFiles(store.root, store.configDir, store.identity().id), store.trust()).effective
        .contractTtlMinutes,
    );
  });

  it('follows a signature, and a signed copy edited by hand', () => {
    const store = tempStore();
    writeSignedPolicy(store, { deniedActions: [{ pattern: 'curl *' }] });
    assert.ok(store.policyView().signed);
    const signedFile = policyFiles(store.root, store.configDir, store.identity().id).signed;
    const text = fs.readFileSync(signedFile, 'utf8');
    rewriteKeepingTimes(signedFile, text.replace('curl', 'wget'));
    const copy = policyFiles(store.root, store.configDir, store.identity().id).copy;
    rewriteKeepingTimes(copy, fs.readFileSync(copy, 'utf8').replace('curl', 'wget'));
    const view = store.policyView();
    assert.equal(view.signed, undefined, 'both signed files were altered: neither may count');
    assert.ok(view.ignored.length > 0, 'and the view says why');
  });

  it('is read again when the pinned keys change', () => {
    const store = tempStore();
    writeSignedPolicy(store, { contractTtlMinutes: 15 });
    const before = store.policyView();
    assert.ok(before.signed);
    const other = newKeyPair('bob', store.now());
    pinKey(store.configDir, other.pub);
    const after = store.policyView();
    assert.notEqual(after, before, 'another set of pinned keys gives another view');
    assert.equal(after.effective.contractTtlMinutes, 15);
  });

  it('gives each caller a copy: one that changes its own does not change the next one’s', () => {
    const store = tempStore();
    writePolicy(store, { deniedActions: [{ pattern: 'rm -rf *' }] });
    store.policy().deniedActions!.push({ pattern: 'x' });
    store.policyView().unsigned.push('x');
    assert.deepEqual(store.policy().deniedActions, [{ pattern: 'rm -rf *' }]);
    assert.deepEqual(store.policyView().unsigned, []);
  });

  it('a policy.json that does not parse is an error every time, and a fixed one is read', () => {
    const store = tempStore();
    const cache = new PolicyViewCache();
    const files = policyFiles(store.root, store.configDir, store.identity().id);
    fs.writeFileSync(store.policyPath, '{ "v": 1, "contractTtlMinutes": ');
    assert.throws(() => cache.view(files, store.trust()), /not valid JSON/);
    assert.throws(() => cache.view(files, store.trust()), /not valid JSON/);
    writePolicy(store, { contractTtlMinutes: 7 });
    assert.equal(cache.view(files, store.trust()).effective.contractTtlMinutes, 7);
  });
});

describe('the snapshot header, kept between commits', () => {
  it('a writer sees the snapshot another process wrote, and keeps to one snapshot every few events', () => {
    const a = tempStore();
    invoke(a, 'goal.create', { goalId: 'g', title: 'G' }, human);
    const b = Store.open(a.workspace);
    const revisionOf = () =>
      JSON.parse(fs.readFileSync(a.snapshotPath('g'), 'utf8').split('\n')[0]!).revision;
    for (let i = 0; i < 20; i++) {
      const s = i % 2 ? a : b;
      invoke(s, 'todo.add', { goalId: 'g', todoId: `t${i}`, title: `T ${i}` }, agent);
    }
    const revision = a.load('g').revision;
    const lag = revision - revisionOf();
    assert.ok(lag >= 0 && lag < 8, `the snapshot is ${lag} events behind the log (at most 7 expected)`);
    // Each process read the other's snapshots: a replay from the logs gives the same goal.
    assert.deepEqual(a.load('g').state, a.replayGoal('g').state);
  });
});

describe('the goal exec replayed, kept for its commit', () => {
  it('the claim and evidence commits resume from the replay instead of reading the goal again', () => {
    const store = tempStore();
    invoke(store, 'goal.create', { goalId: 'g', title: 'G' }, human);
    invoke(store, 'todo.add', { goalId: 'g', todoId: 't', title: 'T' }, human);
    // A new process, as a `loopx exec` call is: nothing kept from earlier commits.
    const cli = Store.open(store.workspace);
    const replayed = cli.replayGoal('g');
    cli.keepForCommit('g', replayed);
    let loads = 0;
    const load = cli.load.bind(cli);
    cli.load = (...args: Parameters<Store['load']>) => (loads++, load(...args));
    // exec's two commits: the claim, then the evidence.
    invoke(cli, 'todo.claim', { goalId: 'g', todoId: 't', by: 'codex' }, agent);
    const r = invoke(cli, 'todo.update', { goalId: 'g', todoId: 't', note: 'n' }, agent);
    assert.equal(loads, 0, 'a commit read the goal again');
    assert.equal(r.revision, replayed.revision + 2);
    assert.equal(
      replayed.state.todos[0]!.note,
      undefined,
      'the caller’s replayed state is not the one written to',
    );
    cli.load = load;
    assert.deepEqual(cli.load('g').state, cli.replayGoal('g').state);
  });

  it('a log that changed after the replay is read again, not written over', () => {
    const store = tempStore();
    invoke(store, 'goal.create', { goalId: 'g', title: 'G' }, human);
    store.keepForCommit('g', store.replayGoal('g'));
    const other = Store.open(store.workspace);
    invoke(other, 'todo.add', { goalId: 'g', todoId: 'from-other', title: 'T' }, agent);
    const r = invoke(store, 'todo.add', { goalId: 'g', todoId: 'mine', title: 'T' }, agent);
    assert.deepEqual(
      r.state.todos.map((t) => t.id),
      ['from-other', 'mine'],
    );
    assert.deepEqual(store.load('g').state, store.replayGoal('g').state);
  });
});

describe('copyJson: the copy a commit keeps of the goal state', () => {
  it('is equal, shares no object with the original, and keeps undefined properties', () => {
    const original = { a: [1, { b: 'x', c: null, d: undefined }], e: { f: [true, false] }, g: 0 };
    const copy = copyJson(original);
    assert.deepStrictEqual(copy, original);
    assert.ok('d' in (copy.a[1] as object), 'an undefined property is kept, as structuredClone keeps it');
    (copy.a[1] as { b: string }).b = 'changed';
    copy.e.f.push(true);
    assert.equal((original.a[1] as { b: string }).b, 'x');
    assert.deepEqual(original.e.f, [true, false]);
  });

  it('copies a replayed goal state exactly', () => {
    const store = tempStore();
    invoke(store, 'goal.create', { goalId: 'g', title: 'G' }, human);
    invoke(store, 'todo.add', { goalId: 'g', todoId: 't', title: 'T', action: 'echo hi' }, human);
    const state = store.replayGoal('g').state;
    assert.deepStrictEqual(copyJson(state), structuredClone(state));
  });
});
