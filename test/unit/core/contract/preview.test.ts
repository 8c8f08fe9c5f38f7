/**
 * The contract preview (`previewContract`, behind `quota should-run --preview` and the editor's
 * Preview Contract): on the same state it decides what should-run decides, lists the commands
 * the contract would list and says what the call would write, while it writes nothing under
 * `.loopx/`: no event, no run, no turn, no gate request, no writer id.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { execUnderContract, previewContract, shouldRun } from '../../../../src/core';
import type { ContractPreview, ShouldRunOutput } from '../../../../src/core';
import { invoke } from '../../../../src/core/capabilities/registry';
import { summaryAll } from '../../../../src/core/contract/summary';
import { Store } from '../../../../src/core/store/store';
import type { Fixture } from '../../../helpers/contract-kit';
import { goalFixture, hashTree, parseWrapped, quota, writePolicy } from '../../../helpers/contract-kit';
import { agent, human, removeTempDirs } from '../../../helpers/store';

after(removeTempDirs);

const MIN = 60_000;

function addTodo(f: Fixture, todoId: string, more: Record<string, unknown> = {}) {
  invoke(
    f.store,
    'todo.add',
    { goalId: f.goalId, todoId, title: `do ${todoId}`, action: `echo ${todoId}`, ...more },
    human,
  );
}

/**
 * `.loopx/` but this clone's derived caches, which any read refreshes when they lag the logs (here:
 * a newly signed policy changes which decisions count); a writer id made would show.
 */
const stateFiles = (f: Fixture) =>
  Object.fromEntries(Object.entries(hashTree(f.store.root)).filter(([k]) => !k.startsWith('local/cache/')));

/** The preview, asserting it changed no state under `.loopx/`. */
function previewWritingNothing(f: Fixture): ContractPreview {
  const before = stateFiles(f);
  const p = previewContract(f.store, { goalId: f.goalId }, agent);
  assert.deepEqual(stateFiles(f), before, 'the preview wrote nothing under .loopx/');
  return p;
}

/** The todo ids an answer lets the agent run (its exec lines). */
const listed = (out: ShouldRunOutput) =>
  out.interaction_contract.cli_channel.next_cli_actions.map((l) => parseWrapped(l).todoId);

/** The preview, then should-run on the same state: the same decision, status, quota and gates. */
function sameAsShouldRun(f: Fixture): { p: ContractPreview; out: ShouldRunOutput } {
  const p = previewWritingNothing(f);
  const runsBefore = f.store.load(f.goalId).state.runs.length;
  const out = shouldRun(f.store, { goalId: f.goalId }, agent);
  assert.equal(p.answer.decision, out.decision);
  assert.equal(p.answer.status, out.status);
  const opened = f.store.load(f.goalId).state.runs.length - runsBefore;
  assert.equal(p.wouldWrite.openRun, opened === 1, 'openRun says whether should-run opened a run');
  // The run should-run opens is one turn more than the preview counted.
  const turns = p.answer.quota.turns;
  assert.deepEqual(
    p.answer.quota,
    opened && turns ? { ...out.quota, turns: { ...turns, used: turns.used, left: turns.left } } : out.quota,
  );
  if (opened && turns) assert.equal(out.quota.turns!.used, turns.used + 1);
  assert.deepEqual(
    p.answer.interaction_contract.user_channel.gates.map((g) => g.id),
    out.interaction_contract.user_channel.gates.map((g) => g.id),
  );
  assert.equal(p.answer.preview, true);
  return { p, out };
}

describe('previewContract decides as should-run does, and writes nothing', () => {
  it('runnable todos: the commands a new contract lists, a run and a turn it would open', () => {
    const f = goalFixture({ quota: quota({ turns: 5 }) });
    addTodo(f, 'a', { priority: 'P1' });
    addTodo(f, 'b', { priority: 'P0' });
    addTodo(f, 'think', { action: undefined, title: 'judge the design' });
    // With the caches current (as the editor keeps them), not one file changes, caches included.
    const before = hashTree(f.store.root);
    previewContract(f.store, { goalId: f.goalId }, agent);
    assert.deepEqual(hashTree(f.store.root), before);
    const { p, out } = sameAsShouldRun(f);
    assert.equal(p.answer.decision, 'run');
    assert.deepEqual(p.wouldWrite, { openRun: true, endRuns: [], requestGates: [] });
    assert.deepEqual(
      p.commands.map((c) => [c.todoId, c.command]),
      listed(out).map((id) => [id, `echo ${id}`]),
      'the commands the contract then listed, in its order',
    );
    assert.deepEqual(p.judgment, [{ todoId: 'think', title: 'judge the design' }]);
    assert.equal(p.answer.interaction_contract.id, null, 'no contract is minted');
    assert.equal(p.answer.quota.turns!.left, 5, 'the preview spent no turn');
    assert.equal(out.quota.turns!.left, 4, 'should-run spent one');
  });

  it('an open run to resume: its contract named, what is left of it listed, nothing to open', async () => {
    const f = goalFixture();
    addTodo(f, 'a');
    addTodo(f, 'b');
    const first = shouldRun(f.store, { goalId: f.goalId }, agent);
    await execUnderContract(f.store, {
      contractId: first.interaction_contract.id!,
      todoId: 'a',
      command: 'echo a',
      actor: agent,
    });
    const { p, out } = sameAsShouldRun(f);
    assert.equal(p.answer.interaction_contract.id, first.interaction_contract.id);
    assert.equal(p.wouldWrite.openRun, false);
    assert.deepEqual(
      p.commands.map((c) => c.todoId),
      listed(out),
    );
    assert.deepEqual(listed(out), ['b']);
  });

  it('a policy gate nobody asked for: wait, the gate it would request, no command', () => {
    const f = goalFixture();
    addTodo(f, 'ship', { action: 'deploy --prod' });
    // The policy came after the todo: nobody has asked for its gate yet.
    writePolicy(f.store, { gatedActions: [{ pattern: 'deploy*', gate: 'prod' }] });
    const { p } = sameAsShouldRun(f);
    assert.equal(p.answer.decision, 'wait');
    assert.deepEqual(p.wouldWrite.requestGates, ['prod']);
    assert.deepEqual(p.commands, []);
    assert.equal(f.store.load(f.goalId).state.gates[0]?.status, 'pending', 'should-run requested it');
  });

  it('a pending gate, a paused goal, no plan, a used-up budget, a finished goal: the same answer', () => {
    const gated = goalFixture();
    addTodo(gated, 'ship', { gate: 'prod' });
    assert.equal(sameAsShouldRun(gated).p.answer.decision, 'wait');

    const paused = goalFixture();
    addTodo(paused, 'a');
    invoke(paused.store, 'goal.pause', { goalId: paused.goalId }, human);
    assert.equal(sameAsShouldRun(paused).p.answer.decision, 'stop');

    const empty = goalFixture();
    assert.match(sameAsShouldRun(empty).p.answer.reasons[0]!, /no agent todos yet/);

    const spent = goalFixture({ quota: quota({ turns: 1 }) });
    addTodo(spent, 'a');
    addTodo(spent, 'b');
    shouldRun(spent.store, { goalId: spent.goalId }, agent);
    summaryAll(spent.store, spent.goalId, agent);
    const stop = sameAsShouldRun(spent).p;
    assert.equal(stop.answer.decision, 'stop');
    assert.match(stop.answer.reasons[0]!, /turns budget is used up/);

    const done = goalFixture();
    addTodo(done, 'j', { action: undefined });
    invoke(done.store, 'todo.complete', { goalId: done.goalId, todoId: 'j', summary: 'done' }, human);
    assert.equal(sameAsShouldRun(done).p.answer.decision, 'done');
  });

  it('an expired contract: says the run it would end first', () => {
    const f = goalFixture();
    addTodo(f, 'a');
    const first = shouldRun(f.store, { goalId: f.goalId, ttlMinutes: 5 }, agent);
    f.clock.advance(10 * MIN);
    const { p } = sameAsShouldRun(f);
    assert.deepEqual(
      p.wouldWrite.endRuns.map((e) => [e.runId, e.outcome]),
      [[first.run_id, 'abandoned']],
    );
    assert.match(p.wouldWrite.endRuns[0]!.why, /expired/);
  });

  it('a clone that never wrote: the preview makes no writer id, and decides as should-run there', () => {
    const f = goalFixture();
    addTodo(f, 'a');
    // A fresh clone: the same files without this clone's local/ (never committed).
    const clone = path.join(path.dirname(f.store.workspace), 'clone');
    fs.cpSync(f.store.workspace, clone, { recursive: true });
    fs.rmSync(path.join(clone, '.loopx', 'local'), { recursive: true, force: true });
    const store = new Store(clone, { clock: f.clock.now, configDir: f.store.configDir });
    const g: Fixture = { ...f, store };
    const { p } = sameAsShouldRun(g);
    assert.equal(p.answer.decision, 'wait', 'another clone’s command waits for a person’s review');
    assert.match(p.answer.reasons.join(' '), /gate review-a/);
    assert.ok(fs.existsSync(path.join(clone, '.loopx', 'local', 'writer-id')), 'should-run made one');
  });

  it('`shouldRun` with preview is this preview’s answer', () => {
    const f = goalFixture();
    addTodo(f, 'a');
    const before = hashTree(f.store.root);
    const viaOption = shouldRun(f.store, { goalId: f.goalId, preview: true }, agent);
    assert.deepEqual(viaOption, previewContract(f.store, { goalId: f.goalId }, agent).answer);
    assert.deepEqual(hashTree(f.store.root), before);
  });
});
