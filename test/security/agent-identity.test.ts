/**
 * Agent identity comes from the channel (security finding 7). The attacks, replayed as an agent
 * would make them, against the BUILT command (run `npm run build` first):
 * - over MCP (`loopx mcp` with the SDK's own client, two clients named agentA and agentB), B asked
 *   for A's contract by passing `agent: "agentA"`, then claimed A's todo with A's contract id;
 * - at a shell, `loopx summary_all` (which the agent hook let through as read-only) ended every
 *   agent's open run.
 * Now: B is refused (`agent_mismatch`, `contract_other_agent`) and nothing is written; a client
 * named "agentA" is not agentA; `summary_all` ends only the caller's run; and the hook no longer
 * waves `summary_all` or `quota should-run --agent ...` through as read-only.
 */
import { describe, it, after, before } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Sandbox, fails, ok, removeTempDirs } from '../helpers/security';
import type { Result } from '../helpers/security';
import { BIN, REPO, cleanEnv, loopx, show } from '../helpers/cli';
import { writerLog } from '../helpers/log-kit';

const clients: Client[] = [];
after(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  removeTempDirs();
});

before(() => {
  assert.ok(fs.existsSync(path.join(REPO, 'dist', 'cli.js')), 'dist/cli.js is missing: run `npm run build`');
});

// ---------------------------------------------------------------------------------------------

/** `loopx mcp` for the sandbox's workspace, as an MCP host starts it, with a client called `name`. */
async function mcpClient(sb: Sandbox, name: string, env: Record<string, string> = {}): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, '--workspace', sb.dir, 'mcp'],
    env: cleanEnv({ LOOPX_CONFIG_DIR: sb.config, ...env }) as Record<string, string>,
    cwd: sb.dir,
    stderr: 'pipe',
  });
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(transport);
  clients.push(client);
  return client;
}

interface ToolAnswer {
  isError?: boolean;
  text: string;
  result?: Record<string, unknown>;
  reason?: string;
}
async function tool(client: Client, name: string, args: Record<string, unknown> = {}): Promise<ToolAnswer> {
  const r = (await client.callTool({ name, arguments: args })) as {
    isError?: boolean;
    content: { text?: string }[];
    structuredContent?: { result?: Record<string, unknown>; error?: { reason?: string } };
  };
  return {
    isError: r.isError,
    text: r.content[0]?.text ?? '',
    result: r.structuredContent?.result,
    reason: r.structuredContent?.error?.reason,
  };
}
function toolOk(a: ToolAnswer): Record<string, unknown> {
  assert.notEqual(a.isError, true, a.text);
  return a.result!;
}
function toolRefused(a: ToolAnswer, reason: string, text?: RegExp) {
  assert.equal(a.isError, true, `expected a refusal, got ${a.text}`);
  assert.equal(a.reason, reason, a.text);
  if (text) assert.match(a.text, text);
}

/** The reason code of a failed `loopx --json ...` (the error document on stderr). */
function reasonOf(r: Result): string {
  assert.notEqual(r.code, 0, show(r));
  const doc = JSON.parse(r.stderr.trim().split('\n').at(-1)!) as { error: { reason: string } };
  return doc.error.reason;
}

/** A run as `goal show --json` prints it (snake_case). */
interface RunRow {
  id: string;
  agent: string;
  ended_at?: string;
}
async function runs(sb: Sandbox): Promise<RunRow[]> {
  const doc = (await sb.json(['goal', 'show', '--goal-id', 'g'])) as { runs?: RunRow[] };
  return doc.runs ?? [];
}
async function todo(sb: Sandbox, id: string) {
  const doc = (await sb.json(['goal', 'show', '--goal-id', 'g'])) as {
    todos: { id: string; status: string; claimed_by?: string }[];
  };
  return doc.todos.find((t) => t.id === id)!;
}
async function logLength(sb: Sandbox): Promise<number> {
  return fs.readFileSync(writerLog(sb.dir, 'g'), 'utf8').split('\n').filter(Boolean).length;
}

/** A goal g with a command todo `build` and a judgment todo `docs`. */
async function planned(): Promise<Sandbox> {
  const sb = new Sandbox();
  ok(await sb.run(['init']));
  await sb.json(['goal', 'create', '--goal-id', 'g', '--title', 'Target']);
  await sb.addTodo('g', 'build', 'Build', ['--action', 'touch built']);
  await sb.addTodo('g', 'docs', 'Write the docs');
  return sb;
}

/** The contract id and run of a loopx_get_contract / should-run answer. */
const contractOf = (out: Record<string, unknown>) => ({
  id: (out.interaction_contract as { id: string }).id,
  run: out.run_id as string,
  decision: out.decision as string,
});

// ---------------------------------------------------------------------------------------------

describe('over MCP, the agent is the connection, not a field it fills in', () => {
  it('agentB cannot get agentA\'s contract by passing agent "agentA", nor use A\'s contract id', async () => {
    const sb = await planned();
    const [a, b] = await Promise.all([mcpClient(sb, 'agentA'), mcpClient(sb, 'agentB')]);
    const ca = contractOf(toolOk(await tool(a, 'loopx_get_contract', {})));
    assert.equal(ca.decision, 'run');
    const runA = (await runs(sb)).find((r) => r.id === ca.run)!;
    assert.match(runA.agent, /^agentA-[0-9a-z]{6}$/, 'the client name plus the session');

    // The attack as it was: B asks for A's contract by name.
    const before = await logLength(sb);
    toolRefused(
      await tool(b, 'loopx_get_contract', { agent: 'agentA' }),
      'agent_mismatch',
      /`agent` "agentA" is not you: your identity is "agentB-[0-9a-z]{6}".*Next: call the tool again without `agent`/,
    );
    // Nor A's identity itself (which B could read in the status).
    toolRefused(await tool(b, 'loopx_get_contract', { agent: runA.agent }), 'agent_mismatch');
    assert.equal(await logLength(sb), before, 'nothing written');

    // With A's contract id, B can neither claim, complete, record evidence nor report spend.
    const refusals = await Promise.all([
      tool(b, 'loopx_claim_todo', { contractId: ca.id, todoId: 'docs' }),
      tool(b, 'loopx_complete_todo', { contractId: ca.id, todoId: 'docs', summary: 'done, by B' }),
      tool(b, 'loopx_record_evidence', { contractId: ca.id, todoId: 'docs', summary: 'B was here' }),
      tool(b, 'loopx_report_spend', { contractId: ca.id, tokens: 5, costUsd: 1 }),
    ]);
    for (const r of refusals)
      toolRefused(
        r,
        'contract_other_agent',
        /was issued to agent "agentA-[0-9a-z]{6}", not to you \("agentB-[0-9a-z]{6}"\).*Next: call loopx_get_contract for your own contract/,
      );
    assert.equal(await logLength(sb), before, 'nothing written');
    assert.equal((await todo(sb, 'docs')).status, 'open');

    // B gets a contract of its own, in its own name.
    const cb = contractOf(toolOk(await tool(b, 'loopx_get_contract', {})));
    assert.notEqual(cb.id, ca.id);
    assert.match((await runs(sb)).find((r) => r.id === cb.run)!.agent, /^agentB-[0-9a-z]{6}$/);
    // And A, under its own contract, does what B could not.
    toolOk(await tool(a, 'loopx_claim_todo', { contractId: ca.id, todoId: 'docs' }));
    assert.equal((await todo(sb, 'docs')).claimed_by, runA.agent);
  });

  it('a client that names itself "agentA" is a different agent from agentA', async () => {
    const sb = await planned();
    const a = await mcpClient(sb, 'agentA');
    const ca = contractOf(toolOk(await tool(a, 'loopx_get_contract', {})));
    const impostor = await mcpClient(sb, 'agentA');
    const ci = contractOf(toolOk(await tool(impostor, 'loopx_get_contract', {})));
    assert.notEqual(ci.id, ca.id, "the impostor was handed agentA's contract");
    toolRefused(
      await tool(impostor, 'loopx_claim_todo', { contractId: ca.id, todoId: 'docs' }),
      'contract_other_agent',
    );
    const agents = (await runs(sb)).map((r) => r.agent);
    assert.equal(new Set(agents).size, 2, JSON.stringify(agents));
  });

  it('a name the person configured (--agent or LOOPX_AGENT) is the identity as it is, shared with the shell', async () => {
    const sb = await planned();
    const c = await mcpClient(sb, 'anything', { LOOPX_AGENT: 'claude' });
    const cc = contractOf(toolOk(await tool(c, 'loopx_get_contract', {})));
    assert.equal((await runs(sb)).find((r) => r.id === cc.run)!.agent, 'claude');
    // The same agent's shell runs the contract's command.
    ok(
      await sb.run(['exec', '--contract', cc.id, '--todo', 'build', '--', 'touch built'], {
        LOOPX_AGENT: 'claude',
      }),
    );
    assert.ok(fs.existsSync(sb.file('built')));
  });
});

describe('at a shell, LOOPX_AGENT is the agent', () => {
  it("a contract's finish_with ends that run from any channel, and only for its own agent", async () => {
    const sb = await planned();
    const m = await mcpClient(sb, 'agentM');
    const out = toolOk(await tool(m, 'loopx_get_contract', {}));
    const cm = contractOf(out);
    const finish = (out.interaction_contract as { agent_channel: { finish_with: string } }).agent_channel
      .finish_with;
    assert.equal(finish, `loopx summary_all --goal-id g --contract ${cm.id}`);
    const args = finish.split(' ').slice(1);
    // Another shell agent cannot end it.
    const b = await sb.run(['--json', ...args], { LOOPX_AGENT: 'b' });
    assert.equal(reasonOf(b), 'contract_other_agent');
    assert.equal((await runs(sb)).find((r) => r.id === cm.run)!.ended_at, undefined);
    // The MCP agent's own shell (no LOOPX_AGENT: the contract id is the capability) ends it.
    const s = await sb.json(args);
    assert.deepEqual(
      (s.ended_runs as { id: string }[]).map((r) => r.id),
      [cm.run],
    );
    // Again: nothing left to end, still a summary.
    assert.deepEqual((await sb.json(args)).ended_runs, []);
  });

  it("`LOOPX_AGENT=b loopx summary_all` ends b's run only: a's (and an MCP agent's) go on; the summary covers the goal", async () => {
    const sb = await planned();
    const a = contractOf(await sb.json(['quota', 'should-run', '--goal-id', 'g'], { LOOPX_AGENT: 'a' }));
    const b = contractOf(await sb.json(['quota', 'should-run', '--goal-id', 'g'], { LOOPX_AGENT: 'b' }));
    const m = await mcpClient(sb, 'agentM');
    const cm = contractOf(toolOk(await tool(m, 'loopx_get_contract', {})));
    assert.deepEqual([a.decision, b.decision, cm.decision], ['run', 'run', 'run']);

    const s = await sb.json(['summary_all', '--goal-id', 'g'], { LOOPX_AGENT: 'b' });
    assert.deepEqual(
      (s.ended_runs as { id: string }[]).map((r) => r.id),
      [b.run],
    );
    assert.deepEqual(s.progress, { done: 0, total: 2 }, 'the summary is still the whole goal');
    const open = (await runs(sb)).filter((r) => !r.ended_at).map((r) => r.id);
    assert.deepEqual(open.sort(), [a.run, cm.run].sort());

    // Without LOOPX_AGENT (a person, a script): the default agent "agent" has no run; nothing ends.
    const none = await sb.json(['summary_all', '--goal-id', 'g']);
    assert.deepEqual(none.ended_runs, []);
    assert.equal((await runs(sb)).filter((r) => !r.ended_at).length, 2);

    // b cannot name a: --agent must be b's own name.
    assert.equal(
      reasonOf(
        await sb.run(['--json', 'summary_all', '--goal-id', 'g', '--agent', 'a'], { LOOPX_AGENT: 'b' }),
      ),
      'agent_mismatch',
    );
    // a ends its own.
    const own = await sb.json(['summary_all', '--goal-id', 'g'], { LOOPX_AGENT: 'a' });
    assert.deepEqual(
      (own.ended_runs as { id: string }[]).map((r) => r.id),
      [a.run],
    );
  });

  it("`quota should-run --agent a` with LOOPX_AGENT=b is refused; b cannot exec, complete or spend on a's contract or run", async () => {
    const sb = await planned();
    const env = { LOOPX_AGENT: 'b' };
    fails(
      await sb.run(['quota', 'should-run', '--goal-id', 'g', '--agent', 'a'], env),
      4,
      /--agent "a" is not you: your identity is "b"/,
    );
    assert.equal(
      reasonOf(await sb.run(['--json', 'quota', 'should-run', '--goal-id', 'g', '--agent', 'a'], env)),
      'agent_mismatch',
    );
    assert.deepEqual(await runs(sb), [], 'no run opened in a’s name');
    // --agent repeating LOOPX_AGENT is fine.
    ok(await sb.run(['quota', 'should-run', '--goal-id', 'g', '--agent', 'b', '--preview'], env));

    const a = contractOf(await sb.json(['quota', 'should-run', '--goal-id', 'g'], { LOOPX_AGENT: 'a' }));
    const execA = ['exec', '--contract', a.id, '--todo', 'build', '--', 'touch built'];
    const other = /was issued to agent "a", not to you \("b"\)/;
    fails(await sb.run(execA, env), 4, other);
    assert.ok(!fs.existsSync(sb.file('built')), "b ran a's command");
    assert.equal(reasonOf(await sb.run(['--json', ...execA], env)), 'contract_other_agent');
    fails(await sb.run(['contract', 'verify', '--contract', a.id], env), 4, other);
    fails(
      await sb.run(
        ['todo', 'done', '--goal-id', 'g', '--todo-id', 'docs', '--contract', a.id, '--summary', 'x'],
        env,
      ),
      4,
      other,
    );
    assert.equal(
      reasonOf(
        await sb.run(['--json', 'todo', 'claim', '--goal-id', 'g', '--todo-id', 'docs', '--by', 'a'], env),
      ),
      'agent_mismatch',
    );
    const spend = ['run', 'spend', '--goal-id', 'g', '--run-id', a.run, '--tokens', '10'];
    fails(await sb.run(spend, env), 4, /run run-\w+ is agent "a"'s, not yours \("b"\)/);
    assert.equal(reasonOf(await sb.run(['--json', ...spend], env)), 'run_other_agent');
    assert.equal((await todo(sb, 'docs')).status, 'open');

    // Without LOOPX_AGENT the caller has no identity: the contract id is the capability, as before.
    ok(await sb.run(execA));
    assert.ok(fs.existsSync(sb.file('built')));
    ok(await sb.run(spend));
  });
});

// ---------------------------------------------------------------------------------------------

const SESSION = '5e8f1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b';
/** `loopx hook pre-tool-use` fed a Claude Code PreToolUse payload for Bash. */
function hookBash(sb: Sandbox, command: string, env: Record<string, string> = {}): Promise<Result> {
  return loopx(['hook', 'pre-tool-use'], {
    cwd: sb.dir,
    env: { LOOPX_CONFIG_DIR: sb.config, ...env },
    input: JSON.stringify({
      session_id: SESSION,
      transcript_path: `/home/dev/.claude/projects/-work-app/${SESSION}.jsonl`,
      cwd: sb.dir,
      permission_mode: 'default',
      hook_event_name: 'PreToolUse',
      tool_name: 'Bash',
      tool_input: { command, description: 'run it' },
      tool_use_id: 'toolu_01IdentityTest',
    }),
  });
}
const decision = (r: Result) =>
  (
    JSON.parse(r.stdout || '{}') as {
      hookSpecificOutput?: { permissionDecision?: string; permissionDecisionReason?: string };
    }
  ).hookSpecificOutput;

describe('the agent hook no longer treats summary_all or `quota should-run --agent` as read-only', () => {
  it('another agent’s name is denied; the agent’s own turn (its contract’s finish_with) is allowed', async () => {
    const sb = await planned();
    const a = await sb.json(['quota', 'should-run', '--goal-id', 'g'], { LOOPX_AGENT: 'a' });
    const finish = (a.interaction_contract as { agent_channel: { finish_with: string } }).agent_channel
      .finish_with;
    const execLine = (a.interaction_contract as { cli_channel: { next_cli_actions: string[] } }).cli_channel
      .next_cli_actions[0]!;
    const [
      summaryOther,
      summaryOtherNoId,
      shouldRunOther,
      shouldRunOtherNoId,
      finishOwn,
      summaryOwnNamed,
      shouldRunOwn,
      execOwn,
      execByB,
      finishByB,
    ] = await Promise.all([
      hookBash(sb, 'loopx summary_all --goal-id g --agent a', { LOOPX_AGENT: 'b' }),
      hookBash(sb, 'loopx summary_all --goal-id g --agent a'),
      hookBash(sb, 'loopx quota should-run --goal-id g --agent x', { LOOPX_AGENT: 'b' }),
      hookBash(sb, 'loopx quota should-run --goal-id g --agent x'),
      hookBash(sb, finish, { LOOPX_AGENT: 'a' }),
      hookBash(sb, 'loopx summary-all --goal-id g --agent a', { LOOPX_AGENT: 'a' }),
      hookBash(sb, 'loopx quota should-run --goal-id g', { LOOPX_AGENT: 'a' }),
      hookBash(sb, execLine, { LOOPX_AGENT: 'a' }),
      hookBash(sb, execLine, { LOOPX_AGENT: 'b' }),
      hookBash(sb, finish, { LOOPX_AGENT: 'b' }),
    ]);
    for (const r of [summaryOther, summaryOtherNoId, shouldRunOther, shouldRunOtherNoId]) {
      assert.equal(r.code, 2, show(r));
      assert.equal(decision(r)?.permissionDecision, 'deny', show(r));
      assert.doesNotMatch(decision(r)?.permissionDecisionReason ?? '', /read-only/, show(r));
    }
    assert.equal(
      finish,
      `loopx summary_all --goal-id g --contract ${(a.interaction_contract as { id: string }).id}`,
    );
    assert.equal(decision(finishOwn)?.permissionDecision, 'allow', show(finishOwn));
    assert.match(
      decision(finishOwn)!.permissionDecisionReason!,
      /^ends the run of its contract c-\w+ \(finish_with\)$/,
    );
    for (const r of [summaryOwnNamed, shouldRunOwn]) {
      assert.equal(r.code, 0, show(r));
      assert.equal(decision(r)?.permissionDecision, 'allow', show(r));
      assert.match(decision(r)!.permissionDecisionReason!, /^the agent's own turn \(.* as a\)$/, show(r));
    }
    assert.equal(decision(execOwn)?.permissionDecision, 'allow', show(execOwn));
    assert.equal(decision(execByB)?.permissionDecision, 'deny', show(execByB));
    assert.match(execByB.stderr, /issued to agent "a", not to you \("b"\)/);
    assert.equal(decision(finishByB)?.permissionDecision, 'deny', show(finishByB));
    assert.match(finishByB.stderr, /issued to agent "a", not to you \("b"\)/);
    // Nothing the hook was asked about ran: a's run is still open.
    assert.equal((await runs(sb)).filter((r) => !r.ended_at).length, 1);
  });
});
