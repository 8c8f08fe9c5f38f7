/**
 * The turn that finishes a goal is a turn like any other: its spend is counted, its refusals are
 * recorded on its run, and its run ends at Stop, although the goal is no longer active once its
 * last todo is done (hooks/open-runs.ts reads the goals whose index counts open runs).
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { invoke } from '../../../../src/core/capabilities/registry';
import { shouldRun } from '../../../../src/core/contract/issue';
import { checkContract } from '../../../../src/core/contract/exec';
import { AGENT_TOOLS } from '../../../../src/core/agent-tools/tools';
import type { LoopxError } from '../../../../src/core/model/errors';
import { preToolUse, recordDenial, stop } from '../../../../src/core/hooks/session-events';
import { openRunsByGoal } from '../../../../src/core/hooks/open-runs';
import { effectiveStatus } from '../../../../src/core/model/goal-state';
import type { Actor } from '../../../../src/core/model/goal-state';
import { parseLoopx } from '../../../../src/cli/main';
import type { Store } from '../../../../src/core/store/store';
import { human, removeTempDirs, tempDir, tempStore } from '../../../helpers/store';

after(removeTempDirs);

const AGENT = 'claude-code-5e6f7a8b';
const hookActor: Actor = { kind: 'agent', id: AGENT, channel: 'hook' };

/** A Claude Code transcript of one session: each assistant message with its usage. */
function transcript(messages: [id: string, input: number, output: number][]): string {
  const file = path.join(tempDir('loopx-last-turn-'), 's9.jsonl');
  const lines = messages.map(([id, input, output]) =>
    JSON.stringify({
      type: 'assistant',
      sessionId: 's9',
      message: {
        id,
        model: 'claude-sonnet-4-5',
        role: 'assistant',
        usage: { input_tokens: input, output_tokens: output },
      },
    }),
  );
  fs.writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

/** A goal of `todos` todos; the agent's turn opens a run and completes the first. */
function turnThatDoes(todos: number): { store: Store; runId: string } {
  const store = tempStore();
  invoke(store, 'goal.create', { goalId: 'g', title: 'G' }, human);
  for (let i = 1; i <= todos; i++)
    invoke(store, 'todo.add', { goalId: 'g', todoId: `t${i}`, title: `t${i}`, action: `echo ${i}` }, human);
  const out = shouldRun(store, { goalId: 'g', agent: AGENT }, hookActor);
  assert.equal(out.decision, 'run');
  invoke(store, 'todo.complete', { goalId: 'g', todoId: 't1', summary: 'ok' }, hookActor);
  return { store, runId: out.run_id! };
}

const curl = (store: Store) =>
  preToolUse(
    store,
    { tool_name: 'Bash', tool_input: { command: 'curl http://example.com' }, cwd: store.workspace },
    { parseLoopx, agent: AGENT, cwd: store.workspace, env: { HOME: '/nonexistent-home' } },
  );

describe('the turn that completes a goal', () => {
  for (const todos of [1, 2]) {
    const which = todos === 1 ? 'completes the goal' : 'leaves a todo open';
    it(`a turn that ${which}: its refusal is recorded on its run, its spend counted, its run ended`, () => {
      const { store, runId } = turnThatDoes(todos);
      const before = store.load('g').state;
      assert.equal(effectiveStatus(before), todos === 1 ? 'completed' : 'active');

      const denied = curl(store);
      assert.equal(denied.exitCode, 2, 'a completed goal authorises nothing more');
      assert.deepEqual(recordDenial(store, denied.denied!, { agent: AGENT }), { goalId: 'g', runId });

      const answer = stop(
        store,
        { agent: AGENT, sessionId: 's9', transcriptPath: transcript([['m1', 200, 25]]) },
        hookActor,
      );
      assert.match(String(answer.output.systemMessage), /ended 1 run\(s\) of goal g/);
      const after = store.load('g').state;
      const run = after.runs.find((r) => r.id === runId)!;
      assert.ok(run.endedAt, 'the run ended');
      assert.equal(run.spend.tokens, 225, 'the session’s tokens are counted on the run');
      assert.deepEqual(
        after.denied!.map((d) => [d.runId, d.command, d.code]),
        // A completed goal's contract authorises nothing any more: no contract stands.
        [[runId, 'curl http://example.com', todos === 1 ? 'no_contract' : 'not_listed']],
      );
      assert.equal(store.listGoals().goals[0]!.openRuns, 0, 'the index counts no open run');
    });
  }

  it('a paused goal’s open run is found; goals with no open run are not read', () => {
    const { store, runId } = turnThatDoes(2);
    invoke(store, 'goal.pause', { goalId: 'g' }, human);
    invoke(store, 'goal.create', { goalId: 'idle', title: 'Idle' }, human);
    // The listing as the index gives it (a fresh index re-reads recent goals to vouch for them).
    const listed = store.listGoals();
    store.listGoals = () => listed;
    const loads: string[] = [];
    const load = store.load.bind(store);
    store.load = (id: string) => (loads.push(id), load(id));
    const found = openRunsByGoal(store, AGENT);
    assert.deepEqual(
      found.map((g) => [g.goalId, g.runs.map((r) => r.id)]),
      [['g', [runId]]],
    );
    assert.deepEqual(loads, ['g'], 'only the goal whose index entry counts an open run is loaded');
  });
});

describe('the record of a turn after its goal stopped being active', () => {
  const tool = (name: string) => AGENT_TOOLS.find((t) => t.name === name)!;
  it('its spend and evidence are taken while its run is open; work is not', () => {
    const { store, runId } = turnThatDoes(1);
    const contractId = store.load('g').state.runs.find((r) => r.id === runId)!.contract!.id;
    tool('loopx_report_spend').run(store, { contractId, tokens: 40 }, hookActor);
    tool('loopx_record_evidence').run(store, { contractId, summary: 'all checks passed' }, hookActor);
    const run = store.load('g').state.runs.find((r) => r.id === runId)!;
    assert.equal(run.spend.tokens, 40);
    assert.ok(
      store.load('g').state.evidence.some((e) => e.runId === runId && e.summary === 'all checks passed'),
    );
    assert.throws(
      () => checkContract(store, contractId, { agent: AGENT }),
      (e: LoopxError) => e.details.reason === 'goal_not_active',
      'the contract authorises no more work',
    );
    invoke(store, 'run.end', { goalId: 'g', runId, outcome: 'succeeded', summary: 'done' }, hookActor);
    assert.throws(
      () => tool('loopx_report_spend').run(store, { contractId, tokens: 1 }, hookActor),
      (e: LoopxError) => e.details.reason === 'contract_run_ended',
    );
  });
});
