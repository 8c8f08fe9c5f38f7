/**
 * A store opened read-only (`new Store(ws, { readOnly: true })`), as the editor opens an untrusted
 * workspace: listing and loading goals write nothing, neither under `.loopx/` (no index, no
 * snapshot, no lock folder, no writer id) nor in the config folder (no secret), even where a
 * writable store would; and every write refuses with reason `store_read_only` before it touches
 * the disk.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { goalStatus, invoke, LoopxError, shouldRun, statusAll, Store } from '../../../../src/core/index';
import { treeChanges, treeSnapshot } from '../../../helpers/fs-snapshot';
import { agent, human, removeTempDirs, tempDir } from '../../../helpers/store';

after(removeTempDirs);

/** A workspace with a goal, a todo and a pending gate, its own config folder, and its caches gone. */
function workspaceWithoutCaches() {
  const ws = tempDir();
  const configDir = tempDir('loopx-config-');
  const store = Store.init(ws, { configDir });
  invoke(store, 'goal.create', { goalId: 'g', title: 'Ship it' }, human);
  invoke(store, 'todo.add', { goalId: 'g', todoId: 't', title: 'Build', action: 'make' }, agent);
  invoke(store, 'gate.request', { goalId: 'g', gateId: 'deploy', guards: ['t'] }, agent);
  // What a reader would make again: the index, the snapshots, the lock folder.
  for (const d of ['cache', 'locks'])
    fs.rmSync(path.join(store.localDir, d), { recursive: true, force: true });
  return { ws, configDir };
}

/** Runs `fn`, which must refuse with `store_read_only`. */
function refusesReadOnly(what: string, fn: () => unknown): LoopxError {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  assert.ok(caught instanceof LoopxError, `${what}: expected a refusal, got ${String(caught ?? 'none')}`);
  assert.equal(caught.reason, 'store_read_only', `${what}: ${caught.message}`);
  assert.equal(caught.kind, 'refused');
  return caught;
}

describe('a read-only store', () => {
  it('reads goals, their state and the status documents, and writes nothing where a writable store would', () => {
    const { ws, configDir } = workspaceWithoutCaches();
    const before = treeSnapshot(ws, configDir);
    const ro = new Store(ws, { configDir, readOnly: true });
    const { goals, errors } = ro.listGoals();
    assert.deepEqual(errors, []);
    assert.deepEqual(
      goals.map((g) => [g.id, g.todosTotal, g.pendingGates]),
      [['g', 1, 1]],
    );
    const state = ro.load('g').state;
    assert.equal(state.gates.find((g) => g.id === 'deploy')?.status, 'pending');
    assert.equal(statusAll(ro).goals[0]?.pending_gates, 1);
    assert.equal(goalStatus(ro, 'g').todos.length, 1);
    assert.equal(ro.policyView().state, 'not_signed');
    ro.listGoals(); // a second look, with nothing cached by the first
    assert.deepEqual(treeChanges(before, treeSnapshot(ws, configDir)), []);

    // The same reads through a writable store keep the caches: the check above would see a write.
    const rw = new Store(ws, { configDir });
    rw.listGoals();
    rw.load('g');
    const made = treeChanges(before, treeSnapshot(ws, configDir)).join('\n');
    assert.match(made, /added .*local\/cache\/index\.json/);
    assert.match(made, /added .*local\/locks/);
    assert.match(made, /added .*local\/cache\/goals\/g\.json/);
  });

  it('makes no secret in a config folder that has none, where a writable store makes the snapshot key', () => {
    const { ws, configDir } = workspaceWithoutCaches();
    new Store(ws, { configDir }).load('g'); // a snapshot, under this config folder's key
    const otherConfig = tempDir('loopx-config-');
    const before = treeSnapshot(ws, otherConfig);
    const ro = new Store(ws, { configDir: otherConfig, readOnly: true });
    assert.equal(ro.load('g').state.title, 'Ship it', 'read from the logs (the snapshot is not ours)');
    assert.equal(ro.listGoals().goals.length, 1);
    assert.deepEqual(treeChanges(before, treeSnapshot(ws, otherConfig)), []);
    new Store(ws, { configDir: otherConfig }).load('g');
    assert.match(treeChanges(before, treeSnapshot(ws, otherConfig)).join('\n'), /snapshot-key/);
  });

  it('refuses every write with reason store_read_only, and nothing changes on disk', () => {
    const { ws, configDir } = workspaceWithoutCaches();
    // A clone that never wrote (no writer id) reads the same; writing would name it.
    fs.rmSync(path.join(ws, '.loopx', 'local', 'writer-id'));
    const before = treeSnapshot(ws, configDir);
    const ro = new Store(ws, { configDir, readOnly: true });
    const e = refusesReadOnly('todo.add', () =>
      invoke(ro, 'todo.add', { goalId: 'g', todoId: 'u', title: 'Test', action: 'make test' }, agent),
    );
    assert.match(e.message, /open read-only/);
    refusesReadOnly('goal.create', () => invoke(ro, 'goal.create', { goalId: 'h', title: 'New' }, human));
    refusesReadOnly('a contract (should-run opens a run)', () => shouldRun(ro, { goalId: 'g' }, agent));
    refusesReadOnly('the goal lock', () => ro.withGoalLock('g', () => undefined));
    refusesReadOnly('rebuilding the index', () => ro.rebuildIndex());
    refusesReadOnly('rebuilding a snapshot', () => ro.rebuildSnapshot('g'));
    refusesReadOnly('evidence', () => ro.writeArtifact('g', 'e1', 'output'));
    refusesReadOnly('signing the policy', () => ro.signPolicy(undefined));
    refusesReadOnly('a new secret', () => ro.secret('status-token'));
    refusesReadOnly('a writer id', () => ro.writerId());
    refusesReadOnly('local/', () => ro.ensureLocalDir());
    refusesReadOnly('init', () => Store.init(ws, { configDir, readOnly: true }));
    assert.deepEqual(treeChanges(before, treeSnapshot(ws, configDir)), []);
  });

  it('reads the secrets and the writer id that exist', () => {
    const { ws, configDir } = workspaceWithoutCaches();
    const rw = new Store(ws, { configDir });
    const key = rw.secret('contract-key');
    const ro = new Store(ws, { configDir, readOnly: true });
    assert.equal(ro.writerId(), rw.writerId());
    assert.deepEqual(ro.secret('contract-key'), key);
  });
});
