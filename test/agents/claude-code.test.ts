/**
 * The real Claude Code CLI (pinned, from the registry) under LoopX's hooks, as the README sets it
 * up: `loopx hooks install` in the workspace, `claude mcp add loopx -- loopx --workspace "$PWD"
 * mcp` for the tools. Its model is the scripted Messages API on loopback, which plays an agent:
 * it takes its contract, runs the listed action, reads the code, and tries what it must not.
 * Everything else is real: Claude Code's hooks, its Bash and Write tools, its transcript, its MCP
 * client, and the built `loopx`.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { hostSessionAgent } from '../../src/core/trust/identity';
import { costOf, priceOf } from '../../src/core/rules/prices';
import { DEFAULT_POLICY } from '../../src/core/model/policy';
import {
  agentBins,
  claudeTranscript,
  removeTempDirs,
  runClaude,
  tempDir,
  type AgentResult,
  show,
} from '../helpers/agents/agent-kit';
import {
  MESSAGES_USAGE,
  TOKENS_PER_REPLY,
  bash,
  startMessagesApi,
  toolResults,
  type MessagesTurn,
  type Step,
} from '../helpers/agents/scripted-messages';
import {
  CHECK,
  GOAL,
  contractIn,
  governedWorkspace,
  signPolicy,
  type Governed,
} from '../helpers/agents/loopx-kit';
import type { RecordingServer } from '../helpers/agents/agent-kit';

/** What n scripted replies cost as the Stop hook prices them (Claude Code's default model). */
const costOfReplies = (model: string, n: number) =>
  Math.round(
    n *
      costOf(
        {
          input: MESSAGES_USAGE.input_tokens,
          output: MESSAGES_USAGE.output_tokens,
          cacheWrite: MESSAGES_USAGE.cache_creation_input_tokens,
          cacheRead: MESSAGES_USAGE.cache_read_input_tokens,
        },
        priceOf(model, DEFAULT_POLICY).price,
      ) *
      1e6,
  ) / 1e6;

/**
 * An agent's turn, in replies: ask for the contract, run its first listed action, read the code
 * with allowed commands, then try an unlisted command, a person's decision and a write into
 * `.loopx/`, and stop.
 */
function wholeTurn(ws: string) {
  return (turn: MessagesTurn): Step | Step[] => {
    switch (turn.step) {
      case 0:
        return bash(`loopx --format json quota should-run --goal-id ${GOAL}`);
      case 1:
        return bash(
          contractIn(turn.lastToolResultText()).interaction_contract.cli_channel.next_cli_actions[0]!,
        );
      case 2:
        return [bash('cat README.md'), bash('git status --short'), bash('ls src')];
      case 3:
        return bash('rm -rf src');
      case 4:
        return bash(`loopx gate approve --goal-id ${GOAL} --gate-id staging --note "looks fine"`);
      case 5:
        return {
          tool: 'Write',
          input: { file_path: path.join(ws, '.loopx', 'policy.json'), content: '{"v":1}\n' },
        };
      default:
        return { text: 'Checks pass; the deploy waits for the staging gate.' };
    }
  };
}
const REPLIES_OF_WHOLE_TURN = 7;

type Block = { type: string; text?: string; content?: string | Block[] };
type Body = { messages: { role: string; content: string | Block[] }[] };
const textOf = (c: string | Block[] | undefined): string =>
  typeof c === 'string' ? c : (c ?? []).map((b) => b.text ?? textOf(b.content)).join('\n');

/** Every text the model was shown in a request: messages of every role, the system prompt aside. */
const shown = (api: RecordingServer, i: number) =>
  (api.requests[i]!.body as Body).messages.map((m) => textOf(m.content)).join('\n');

describe('Claude Code under LoopX hooks', { concurrency: false }, () => {
  before(async () => {
    await agentBins();
  });
  after(removeTempDirs);

  let g: Governed;
  let home: string;

  it('gets its contract, runs the listed action, reads with allowed commands, is refused the rest, and Stop records the spend', async () => {
    g = await governedWorkspace('claude', {
      hooks: true,
      tokens: REPLIES_OF_WHOLE_TURN * TOKENS_PER_REPLY - 1,
    });
    home = tempDir('home');
    const settings = JSON.parse(fs.readFileSync(path.join(g.ws, '.claude', 'settings.local.json'), 'utf8'));
    assert.deepEqual(Object.keys(settings.hooks).sort(), ['PreToolUse', 'SessionStart', 'Stop']);

    const api = await startMessagesApi(wholeTurn(g.ws));
    let r: AgentResult;
    try {
      // No --allowedTools: what runs, runs because LoopX's hook allowed it.
      r = await runClaude({ cwd: g.ws, home, baseUrl: api.url, prompt: 'Work on the goal.', env: g.env });
    } finally {
      await api.close();
    }
    assert.equal(r.code, 0, show(r));
    const session = String(r.json?.session_id);
    const agent = hostSessionAgent('claude-code', session);

    // SessionStart gave the contract as context, before the model's first reply.
    assert.match(shown(api, 0), /LoopX governs this workspace\. Your contract for goal ship/);

    const results = toolResults(api);
    assert.equal(results.length, 8, results.join('\n---\n'));
    const [contractText, execOut, readme, gitStatus, ls, rm, approve, write] = results;
    const contract = contractIn(contractText);
    assert.equal(contract.decision, 'run');
    assert.match(execOut!, /all checks passed/);
    assert.match(readme!, /The payment module of the shop/);
    assert.doesNotMatch(gitStatus!, /LoopX/);
    assert.match(ls!, /app\.js/);
    assert.match(rm!, /LoopX: `rm -rf src` is not allowed: the active contract .* does not list it/);
    assert.match(approve!, /is a person's decision; agents cannot approve/);
    assert.match(write!, /is LoopX state; it changes only through loopx commands/);

    // What the refused calls would have done did not happen.
    assert.ok(fs.existsSync(path.join(g.ws, 'src', 'app.js')), 'src is still there');
    assert.ok(fs.existsSync(path.join(g.ws, 'checked.txt')), 'the listed action ran');
    const state = g.state();
    assert.equal(state.gates.find((x) => x.id === 'staging')?.status, 'pending');
    assert.equal(state.todos.find((t) => t.id === 'check')?.status, 'done');

    // One run for the session: SessionStart opened it, the CLI's should-run reused it, Stop ended it.
    assert.equal(state.runs.length, 1);
    const run = state.runs[0]!;
    assert.equal(run.agent, agent);
    assert.equal(run.id, contract.run_id);
    assert.ok(run.endedAt, 'Stop ended the run');
    assert.equal(run.outcome, 'succeeded');
    const evidence = state.evidence.filter((e) => e.runId === run.id);
    assert.ok(evidence.some((e) => e.todoId === 'check' && e.exitCode === 0 && e.command === CHECK));

    // The transcript's usage, each message once: 7 replies of the scripted model.
    const model = String((api.requests[0]!.body as { model: string }).model);
    assert.ok(fs.existsSync(claudeTranscript(home, g.ws, session)));
    assert.equal(run.spend.tokens, REPLIES_OF_WHOLE_TURN * TOKENS_PER_REPLY);
    assert.equal(run.spend.costUsd, costOfReplies(model, REPLIES_OF_WHOLE_TURN));
    assert.deepEqual(run.usage, {
      input: REPLIES_OF_WHOLE_TURN * MESSAGES_USAGE.input_tokens,
      output: REPLIES_OF_WHOLE_TURN * MESSAGES_USAGE.output_tokens,
      cacheWrite: REPLIES_OF_WHOLE_TURN * MESSAGES_USAGE.cache_creation_input_tokens,
      cacheRead: REPLIES_OF_WHOLE_TURN * MESSAGES_USAGE.cache_read_input_tokens,
    });

    // Each refusal is on the goal: tool, what, why, the agent and its run.
    assert.deepEqual(
      state.denied!.map((d) => [d.tool, d.command ?? d.path, d.code, d.agent, d.runId, d.enforced]),
      [
        ['Bash', 'rm -rf src', 'not_listed', agent, run.id, true],
        [
          'Bash',
          `loopx gate approve --goal-id ${GOAL} --gate-id staging --note "looks fine"`,
          'human_only',
          agent,
          run.id,
          true,
        ],
        ['Write', path.join(g.ws, '.loopx', 'policy.json'), 'loopx_state', agent, run.id, true],
      ],
    );
  });

  it('a second session is stopped by the token budget the first one used up, and its own spend counts', async () => {
    const attempted = CHECK;
    const api = await startMessagesApi((turn) =>
      turn.step === 0
        ? bash(`loopx --format json quota should-run --goal-id ${GOAL}`)
        : turn.step === 1
          ? bash(attempted)
          : { text: 'The budget is used up.' },
    );
    let r: AgentResult;
    try {
      r = await runClaude({ cwd: g.ws, home, baseUrl: api.url, prompt: 'Continue.', env: g.env });
    } finally {
      await api.close();
    }
    assert.equal(r.code, 0, show(r));
    assert.match(shown(api, 0), /"decision":"stop".*the tokens budget is used up/);
    const [contractText, tried] = toolResults(api);
    assert.equal(contractIn(contractText).decision, 'stop');
    assert.match(tried!, /there is no active contract/);

    const state = g.state();
    assert.equal(state.todos.find((t) => t.id === 'check')?.evidence.length, 1, 'nothing more ran');
    assert.equal(state.runs.length, 2);
    const second = state.runs[1]!;
    assert.equal(second.agent, hostSessionAgent('claude-code', String(r.json?.session_id)));
    assert.equal(second.outcome, 'abandoned');
    assert.match(second.summary!, /used the model with no contract/);
    assert.equal(second.spend.tokens, 3 * TOKENS_PER_REPLY, 'the second session’s three replies');
    assert.equal(state.denied!.at(-1)!.code, 'no_contract');
  });

  it('through `claude mcp` with `loopx mcp` as the server: the MCP contract and the shell share one run', async () => {
    const m = await governedWorkspace('claude-mcp', { hooks: true });
    const mhome = tempDir('home-mcp');
    // The README's command, run by the real CLI (it writes the server into Claude Code's config).
    const api = await startMessagesApi((turn) => {
      if (turn.step === 0) return { tool: 'mcp__loopx__loopx_get_contract', input: { goalId: GOAL } };
      if (turn.step === 1)
        return bash(
          contractIn(turn.lastToolResultText()).interaction_contract.cli_channel.next_cli_actions[0]!,
        );
      return { text: 'Done.' };
    });
    let r: AgentResult;
    try {
      const added = await runClaude({
        cwd: m.ws,
        home: mhome,
        baseUrl: api.url,
        env: m.env,
        prompt: '',
        argv: ['mcp', 'add', 'loopx', '--', 'loopx', '--workspace', m.ws, 'mcp'],
      });
      assert.equal(added.code, 0, show(added));
      r = await runClaude({
        cwd: m.ws,
        home: mhome,
        baseUrl: api.url,
        prompt: 'Work on the goal.',
        env: m.env,
        args: ['--allowedTools', 'mcp__loopx'],
      });
    } finally {
      await api.close();
    }
    assert.equal(r.code, 0, show(r));
    const [contractText, execOut] = toolResults(api);
    // `loopx mcp` answered (its structured result), in the session SessionStart opened.
    assert.match(contractText!, /^\{"result":\{"schema":"loopx\.should-run\/1"/);
    assert.equal(contractIn(contractText).decision, 'run');
    assert.match(execOut!, /all checks passed/);
    const state = m.state();
    const agent = hostSessionAgent('claude-code', String(r.json?.session_id));
    assert.deepEqual(
      state.runs.map((x) => [x.agent, x.outcome]),
      [[agent, 'succeeded']],
      'one run: SessionStart opened it, the MCP tool reused it, Stop ended it',
    );
    assert.equal(state.runs[0]!.spend.tokens, 3 * TOKENS_PER_REPLY);
    assert.equal(state.todos.find((t) => t.id === 'check')?.status, 'done');
  });

  it('observe mode: the same turn runs what no contract lists, and records what enforcing would refuse', async () => {
    const o = await governedWorkspace('claude-observe', { hooks: true });
    await signPolicy(o, { enforcement: 'observe' });
    const ohome = tempDir('home-observe');
    const api = await startMessagesApi(wholeTurn(o.ws));
    let r: AgentResult;
    try {
      // The person's own Claude Code permissions let Bash run; LoopX only watches.
      r = await runClaude({
        cwd: o.ws,
        home: ohome,
        baseUrl: api.url,
        prompt: 'Work on the goal.',
        env: o.env,
        args: ['--allowedTools', 'Bash'],
      });
    } finally {
      await api.close();
    }
    assert.equal(r.code, 0, show(r));
    assert.equal(
      fs.existsSync(path.join(o.ws, 'src')),
      false,
      'rm -rf src ran: observe mode blocks nothing of the contract',
    );
    const state = o.state();
    const run = state.runs[0]!;
    assert.deepEqual(
      state.denied!.map((d) => [d.command ?? d.path, d.code, d.enforced]),
      [
        ['rm -rf src', 'not_listed', false],
        // What protects a person's decisions and LoopX's state is enforced in every mode.
        [`loopx gate approve --goal-id ${GOAL} --gate-id staging --note "looks fine"`, 'human_only', true],
        [path.join(o.ws, '.loopx', 'policy.json'), 'loopx_state', true],
      ],
    );
    assert.ok(state.denied!.every((d) => d.runId === run.id));
    assert.equal(state.gates.find((x) => x.id === 'staging')?.status, 'pending');
    assert.equal(
      JSON.parse(fs.readFileSync(path.join(o.ws, '.loopx', 'policy.json'), 'utf8')).enforcement,
      'observe',
    );
  });
});
