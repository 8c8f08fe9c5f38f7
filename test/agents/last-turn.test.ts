/**
 * The turn that completes a goal, with the real agent CLIs: once its last todo is done the goal
 * is no longer active, and that turn's spend, refusals and run must still be on record (Claude
 * Code through its hooks, Codex through `loopx mcp` and the contract's finish_with).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { hostSessionAgent } from '../../src/core/trust/identity';
import { effectiveStatus } from '../../src/core/model/goal-state';
import {
  agentBins,
  removeTempDirs,
  runClaude,
  runCodex,
  tempDir,
  type AgentResult,
  show,
} from '../helpers/agents/agent-kit';
import { TOKENS_PER_REPLY, bash, startMessagesApi, toolResults } from '../helpers/agents/scripted-messages';
import { startResponsesApi, type Step as ResponsesStep } from '../helpers/agents/scripted-responses';
import { CHECK, GOAL, contractIn, governedWorkspace } from '../helpers/agents/loopx-kit';

const UNLISTED = 'curl http://example.com';

describe('the turn that completes a goal', { concurrency: false }, () => {
  before(async () => {
    await agentBins();
  });
  after(removeTempDirs);

  it('Claude Code: the turn that runs the last todo has its tokens counted, its refusal recorded and its run ended', async () => {
    const g = await governedWorkspace('claude-last', { hooks: true, only: 'check' });
    const api = await startMessagesApi((turn) => {
      switch (turn.step) {
        case 0:
          return bash(`loopx --format json quota should-run --goal-id ${GOAL}`);
        case 1:
          return bash(
            contractIn(turn.lastToolResultText()).interaction_contract.cli_channel.next_cli_actions[0]!,
          );
        case 2:
          return bash(UNLISTED);
        default:
          return { text: 'The checks pass; the goal is done.' };
      }
    });
    let r: AgentResult;
    try {
      r = await runClaude({
        cwd: g.ws,
        home: tempDir('home'),
        baseUrl: api.url,
        prompt: 'Work.',
        env: g.env,
      });
    } finally {
      await api.close();
    }
    assert.equal(r.code, 0, show(r));
    const [contractText, execOut, refused] = toolResults(api);
    const contract = contractIn(contractText);
    assert.match(execOut!, /all checks passed/);
    assert.match(refused!, /LoopX: .*no active contract|LoopX: .*not allowed/);

    const state = g.state();
    assert.equal(effectiveStatus(state), 'completed', 'the turn completed the goal');
    const agent = hostSessionAgent('claude-code', String(r.json?.session_id));
    assert.deepEqual(
      state.runs.map((x) => [x.id, x.agent, x.outcome]),
      [[contract.run_id, agent, 'succeeded']],
      'one run, ended by Stop',
    );
    assert.equal(state.runs[0]!.spend.tokens, 4 * TOKENS_PER_REPLY, 'all four replies are counted');
    assert.deepEqual(
      state.denied!.map((d) => [d.command, d.agent, d.runId]),
      [[UNLISTED, agent, contract.run_id]],
      'the refusal is on the goal, naming the run',
    );
  });

  it('Codex through `loopx mcp`: the turn that runs the last todo reports its spend and ends its run', async () => {
    const g = await governedWorkspace('codex-last', { only: 'check' });
    const outputs: string[] = [];
    const contractOf = () => contractIn(outputs[0]);
    const api = await startResponsesApi((turn): ResponsesStep => {
      if (turn.step > 0) outputs.push(turn.lastToolOutputText() ?? '');
      const exec = (cmd: string): ResponsesStep => ({ tool: 'exec_command', input: { cmd } });
      switch (turn.step) {
        case 0:
          return { namespace: 'mcp__loopx', tool: 'loopx_get_contract', input: { goalId: GOAL } };
        case 1:
          return exec(contractOf().interaction_contract.cli_channel.next_cli_actions[0]!);
        case 2:
          // Off the contract, through the contract's own command form: refused by `loopx exec`.
          return exec(
            `loopx exec --contract ${contractOf().interaction_contract.id} --todo check -- ${UNLISTED}`,
          );
        case 3:
          return {
            namespace: 'mcp__loopx',
            tool: 'loopx_report_spend',
            input: { contractId: contractOf().interaction_contract.id, tokens: 3150 },
          };
        case 4:
          return exec(
            `loopx summary_all --goal-id ${GOAL} --contract ${contractOf().interaction_contract.id}`,
          );
        default:
          return { text: 'The checks pass; the goal is done.' };
      }
    });
    let r: AgentResult;
    try {
      r = await runCodex({
        cwd: g.ws,
        home: tempDir('home'),
        codexHome: `${tempDir('codex')}/home`,
        baseUrl: api.url,
        prompt: 'Work on the goal.',
        env: g.env,
        mcp: { name: 'loopx', command: 'loopx', args: ['--workspace', g.ws, 'mcp'] },
      });
    } finally {
      await api.close();
    }
    assert.equal(r.code, 0, show(r));
    const [, execOut, refused, spent, finished] = outputs;
    assert.match(execOut!, /Process exited with code 0[\s\S]*all checks passed/);
    assert.match(refused!, /Process exited with code [1-9]/, outputs.join('\n---\n'));
    assert.match(spent!, /"spend":\{"turns":1,"tokens":3150,/, outputs.join('\n---\n'));
    assert.match(finished!, /Process exited with code 0/, outputs.join('\n---\n'));

    const state = g.state();
    assert.equal(effectiveStatus(state), 'completed');
    assert.ok(state.evidence.some((e) => e.command === CHECK && e.exitCode === 0));
    const run = state.runs.find((x) => x.id === contractOf().run_id)!;
    assert.ok(run.endedAt, 'finish_with ended the run');
    assert.equal(run.spend.tokens, 3150);
    assert.equal(state.runs.filter((x) => !x.endedAt).length, 0, 'no run is left open');
  });
});
