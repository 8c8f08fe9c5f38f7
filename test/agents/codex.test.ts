/**
 * The real Codex CLI (pinned, from the registry) with `loopx mcp` as its MCP server, configured as
 * the README says. Its model is the scripted Responses API on loopback, which plays an agent: it
 * gets its contract through the MCP tool, runs the listed action with Codex's own exec_command,
 * and then tries to approve the gate that guards the deploy from a terminal Codex gives it
 * (`tty: true`), guessing the passphrase the CLI asks for. Only a person's key decides.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { hostSessionAgent } from '../../src/core/trust/identity';
import { ensurePersonKey } from '../helpers/cli';
import {
  agentBins,
  removeTempDirs,
  runCodex,
  tempDir,
  type AgentResult,
  show,
} from '../helpers/agents/agent-kit';
import { startResponsesApi, type ResponsesTurn, type Step } from '../helpers/agents/scripted-responses';
import { CHECK, GOAL, contractIn, governedWorkspace } from '../helpers/agents/loopx-kit';

describe('Codex with `loopx mcp`', () => {
  before(async () => {
    await agentBins();
  });
  after(removeTempDirs);

  it('gets its contract through the MCP tool, runs the listed action with exec_command, and cannot approve a gate from a terminal', async () => {
    const g = await governedWorkspace('codex');
    // The person has a key on this machine: the CLI asks its passphrase on the terminal.
    await ensurePersonKey({ cwd: g.ws, env: g.env });
    const outputs: string[] = [];
    const api = await startResponsesApi((turn: ResponsesTurn): Step => {
      if (turn.step > 0) outputs.push(turn.lastToolOutputText() ?? '');
      switch (turn.step) {
        case 0:
          return { namespace: 'mcp__loopx', tool: 'loopx_get_contract', input: { goalId: GOAL } };
        case 1:
          return {
            tool: 'exec_command',
            input: { cmd: contractIn(outputs[0]).interaction_contract.cli_channel.next_cli_actions[0]! },
          };
        case 2:
          return {
            tool: 'exec_command',
            input: {
              cmd: `loopx gate approve --goal-id ${GOAL} --gate-id staging --note "tests pass"`,
              tty: true,
              yield_time_ms: 3000,
            },
          };
        case 3: {
          // Still running in its terminal, waiting for the passphrase: type a guess.
          const session = /session ID (\d+)/i.exec(outputs[2]!)?.[1];
          if (session)
            return {
              tool: 'write_stdin',
              input: { session_id: Number(session), chars: 'hunter2\n', yield_time_ms: 3000 },
            };
          return { text: 'The checks pass; the staging gate waits for a person.' };
        }
        default:
          return { text: 'The checks pass; the staging gate waits for a person.' };
      }
    });
    let r: AgentResult;
    try {
      r = await runCodex({
        cwd: g.ws,
        home: tempDir('home'),
        codexHome: path.join(tempDir('codex'), 'home'),
        baseUrl: api.url,
        prompt: 'Work on the goal.',
        env: g.env,
        // The README's Codex setup: `loopx mcp` for this workspace.
        mcp: { name: 'loopx', command: 'loopx', args: ['--workspace', g.ws, 'mcp'] },
      });
    } finally {
      await api.close();
    }
    assert.equal(r.code, 0, show(r));
    const [contractOut, execOut, ttyOut, typedOut] = outputs;

    // The contract came from `loopx mcp`, for this Codex session.
    const contract = contractIn(contractOut);
    assert.equal(contract.decision, 'run');
    const session = String(api.requests[0]!.headers['session-id']);
    const agent = hostSessionAgent('codex', session);
    const state = g.state();
    assert.deepEqual(
      state.runs.map((x) => [x.id, x.agent]),
      [[contract.run_id, agent]],
      'one run: the MCP call opened it, and the shell (CODEX_SESSION_ID) worked under it as the same agent',
    );

    // The listed action ran through Codex's exec_command, and LoopX recorded it.
    assert.match(execOut!, /Process exited with code 0[\s\S]*all checks passed/);
    assert.ok(fs.existsSync(path.join(g.ws, 'checked.txt')));
    const check = state.todos.find((t) => t.id === 'check')!;
    assert.equal(check.status, 'done');
    assert.ok(
      state.evidence.some((e) => e.runId === contract.run_id && e.command === CHECK && e.exitCode === 0),
    );

    // In the terminal Codex made, the approval failed: the CLI reads a person's passphrase only
    // from the controlling terminal, which Codex's PTY is not, and said what a person does instead
    // (had it asked, the guess typed next would have been refused: see test/cli for that path).
    if (typedOut === undefined) {
      assert.match(ttyOut!, /Process exited with code 4\b/, outputs.join('\n---\n'));
      assert.match(
        ttyOut!,
        /there is no terminal here to ask it on.*Agents and scripts cannot approve a gate/s,
      );
    } else {
      assert.match(ttyOut!, /passphrase/i, outputs.join('\n---\n'));
      assert.match(typedOut, /Process exited with code 4\b[\s\S]*wrong passphrase/);
    }
    assert.equal(state.gates.find((x) => x.id === 'staging')?.status, 'pending');
    assert.equal(
      g.events().filter((e) => e.type === 'gate.approved').length,
      0,
      'no approval was written, signed or not',
    );
    assert.equal(fs.existsSync(path.join(g.ws, 'deployed.txt')), false);
  });
});
