/**
 * `loopx mcp` through the SDK's own client over stdio (`node bin/loopx.js --workspace W mcp`,
 * the BUILT command): the eight agent tools and nothing human-only, each called with good input
 * and its writes read back from the store with the core; `isError` with a clear text for bad
 * input, a human-only request and an out-of-contract write; the status and goal resources as
 * JSON that validates; an unknown resource or a hostile id is an error, not a crash; and the
 * server exits when the client closes.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import {
  Store,
  invoke,
  AGENT_TOOLS,
  AGENT_TOOL_NAMES,
  toolInputJsonSchema,
  listCapabilities,
  ShouldRunOutput,
  StatusDoc,
  GoalStatusDoc,
} from '../../src/core/index';
import type { LoopxEvent } from '../../src/core/index';
import { human, tempDir, removeTempDirs } from '../helpers/store';

const REPO = path.resolve(__dirname, '..', '..');
const BIN = path.join(REPO, 'bin', 'loopx.js');
const CLIENT = 'mcp-test-agent';
/** The agent a client is: its name plus the server's session id (`mcp-test-agent-7k2f9x`). */
function SESSION_OF(name: string): RegExp {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^${escaped}-[0-9a-z]{6}$`);
}
const AS_CLIENT = SESSION_OF(CLIENT);

/** The parent's environment without LOOPX_* (a stray LOOPX_AGENT would rename the actor). */
function cleanEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env))
    if (v !== undefined && (!k.startsWith('LOOPX_') || k === 'LOOPX_CONFIG_DIR')) env[k] = v;
  return env;
}

interface Connection {
  client: Client;
  transport: StdioClientTransport;
  stderr: () => string;
}
const open: Connection[] = [];

async function connect(workspace: string, name = CLIENT): Promise<Connection> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, '--workspace', workspace, 'mcp'],
    env: cleanEnv(),
    cwd: workspace,
    stderr: 'pipe',
  });
  let err = '';
  transport.stderr?.on('data', (c: Buffer) => (err += c.toString('utf8')));
  const client = new Client({ name, version: '1.0.0' });
  try {
    await client.connect(transport);
  } catch (e) {
    throw new Error(`loopx mcp did not start (${(e as Error).message})\n--- its stderr\n${err}`);
  }
  const conn = { client, transport, stderr: () => err };
  open.push(conn);
  return conn;
}

function workspace(): Store {
  const store = Store.init(fs.realpathSync(tempDir('loopx-mcp-')));
  invoke(store, 'goal.create', { goalId: 'g', title: 'Ship the release', objective: 'ship' }, human);
  invoke(
    store,
    'todo.add',
    { goalId: 'g', todoId: 'build', title: 'build', action: 'npm run build', priority: 'P0' },
    human,
  );
  invoke(store, 'todo.add', { goalId: 'g', todoId: 'docs', title: 'write the docs', priority: 'P1' }, human);
  invoke(
    store,
    'todo.add',
    { goalId: 'g', todoId: 'later', title: 'deploy', gate: 'prod', priority: 'P2' },
    human,
  );
  return store;
}

type ToolResult = {
  content: { type: string; text?: string }[];
  isError?: boolean;
  structuredContent?: Record<string, unknown>;
};

async function callTool(
  conn: Connection,
  name: string,
  args?: Record<string, unknown>,
): Promise<ToolResult & { text: string }> {
  const r = (await conn.client.callTool({ name, arguments: args })) as ToolResult;
  assert.equal(r.content.length, 1);
  assert.equal(r.content[0]!.type, 'text');
  return { ...r, text: r.content[0]!.text! };
}

/** A successful call: no isError, and its structured result is what the text says. */
async function ok(conn: Connection, name: string, args?: Record<string, unknown>) {
  const r = await callTool(conn, name, args);
  assert.notEqual(r.isError, true, `${name} failed: ${r.text}`);
  return r;
}

/** A refused call: isError with a text matching every pattern. */
async function refusedCall(
  conn: Connection,
  name: string,
  args: Record<string, unknown> | undefined,
  ...patterns: RegExp[]
) {
  const r = await callTool(conn, name, args);
  assert.equal(r.isError, true, `${name} should have failed: ${r.text}`);
  assert.doesNotMatch(r.text, /unexpected error|ZodError|\n\s+at /, 'a clear refusal, not a crash');
  for (const p of patterns) assert.match(r.text, p);
  return r;
}

/** The text of a resource's contents (ours are JSON text, never a blob). */
function textOf(c: { text: string } | { blob: string } | undefined): string {
  assert.ok(c && 'text' in c, 'a text resource');
  return c.text;
}

/** The events `fn` appended to goal g's log. */
async function written(store: Store, fn: () => Promise<unknown>): Promise<LoopxEvent[]> {
  const before = store.readLog('g').events.length;
  await fn();
  return store.readLog('g').events.slice(before);
}

function byClient(events: LoopxEvent[], types: string[]) {
  assert.deepEqual(
    events.map((e) => e.type),
    types,
  );
  for (const e of events) {
    assert.deepEqual(
      [e.actor.kind, e.actor.channel],
      ['agent', 'mcp'],
      `${e.type}: ${JSON.stringify(e.actor)}`,
    );
    assert.match(e.actor.id, AS_CLIENT, `${e.type} was written by ${JSON.stringify(e.actor)}`);
  }
}

before(() => {
  assert.ok(
    fs.existsSync(path.join(REPO, 'dist', 'mcp.js')),
    'dist/mcp.js is missing: run `npm run build` first',
  );
});
after(async () => {
  await Promise.all(open.splice(0).map((c) => c.client.close()));
  removeTempDirs();
});

describe('loopx mcp over stdio, with the SDK client', () => {
  let store: Store;
  let conn: Connection;
  let contractId: string;
  let runId: string;

  before(async () => {
    store = workspace();
    conn = await connect(store.workspace);
  });

  it('introduces itself and lists the eight tools with object input schemas, and nothing human-only', async () => {
    assert.equal(conn.client.getServerVersion()?.name, 'loopx');
    assert.deepEqual(Object.keys(conn.client.getServerCapabilities() ?? {}).sort(), ['resources', 'tools']);
    assert.match(conn.client.getInstructions() ?? '', /Start every turn with loopx_get_contract/);
    const { tools } = await conn.client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), [...AGENT_TOOL_NAMES].sort());
    assert.equal(tools.length, 8);
    for (const t of tools) {
      const mine = AGENT_TOOLS.find((x) => x.name === t.name)!;
      assert.equal(t.inputSchema.type, 'object', t.name);
      assert.deepEqual(
        t.inputSchema,
        toolInputJsonSchema(mine),
        `${t.name}: the schema published is the zod schema's`,
      );
      assert.equal(t.description, mine.description);
      assert.equal(t.annotations?.readOnlyHint, !mine.writes, t.name);
      assert.equal(t.annotations?.destructiveHint, false, t.name);
    }
    // Nothing that looks like a person's decision.
    const humanOnly = listCapabilities()
      .filter((c) => c.humanOnly)
      .map((c) => c.id);
    assert.deepEqual(humanOnly.sort(), ['gate.approve', 'gate.reject', 'quota.grant', 'reward.add']);
    for (const t of tools)
      assert.doesNotMatch(t.name, /approve|reject|reward|grant|quota/, `${t.name} looks human-only`);
  });

  it('loopx_get_contract opens a run for the client under a signed contract', async () => {
    let r!: ToolResult & { text: string };
    const events = await written(store, async () => (r = await ok(conn, 'loopx_get_contract', {})));
    byClient(events, ['run.started']);
    const out = ShouldRunOutput.parse(JSON.parse(r.text));
    assert.deepEqual(r.structuredContent, { result: JSON.parse(r.text) });
    assert.equal(out.decision, 'run');
    contractId = out.interaction_contract.id!;
    runId = out.run_id!;
    assert.deepEqual(out.interaction_contract.cli_channel.next_cli_actions, [
      `loopx exec --contract ${contractId} --todo build -- 'npm run build'`,
    ]);
    const run = store.load('g').state.runs.find((x) => x.id === runId)!;
    assert.match(run.agent, AS_CLIENT, "the agent is the client's name plus this session");
    assert.equal(run.contract?.id, contractId);
  });

  it('loopx_get_status reads one goal or all, and writes nothing', async () => {
    const events = await written(store, async () => {
      const one = GoalStatusDoc.parse(JSON.parse((await ok(conn, 'loopx_get_status', { goalId: 'g' })).text));
      assert.equal(one.runs[0]?.id, runId);
      const all = StatusDoc.parse(JSON.parse((await ok(conn, 'loopx_get_status')).text));
      assert.deepEqual(
        all.goals.map((x) => x.id),
        ['g'],
      );
    });
    assert.deepEqual(events, []);
  });

  it('loopx_claim_todo claims a todo of the contract', async () => {
    const events = await written(store, () => ok(conn, 'loopx_claim_todo', { contractId, todoId: 'docs' }));
    byClient(events, ['todo.claimed']);
    const todo = store.load('g').state.todos.find((t) => t.id === 'docs')!;
    assert.equal(todo.status, 'claimed');
    assert.match(todo.claimedBy!, AS_CLIENT);
  });

  it('loopx_record_evidence records evidence for the run', async () => {
    let r!: ToolResult & { text: string };
    const events = await written(
      store,
      async () =>
        (r = await ok(conn, 'loopx_record_evidence', {
          contractId,
          todoId: 'docs',
          kind: 'test',
          summary: 'link check: 0 broken',
          exitCode: 0,
        })),
    );
    byClient(events, ['evidence.added']);
    const { evidenceId } = (r.structuredContent as { result: { evidenceId: string } }).result;
    const ev = store.load('g').state.evidence.find((e) => e.id === evidenceId)!;
    assert.deepEqual(
      { run: ev.runId, todo: ev.todoId, kind: ev.kind, summary: ev.summary, code: ev.exitCode },
      { run: runId, todo: 'docs', kind: 'test', summary: 'link check: 0 broken', code: 0 },
    );
  });

  it('loopx_report_spend adds to the run’s spend', async () => {
    const events = await written(store, () =>
      ok(conn, 'loopx_report_spend', { contractId, tokens: 1500, costUsd: 0.03 }),
    );
    byClient(events, ['run.spend']);
    const spend = store.load('g').state.runs.find((x) => x.id === runId)!.spend;
    assert.deepEqual({ tokens: spend.tokens, cost: spend.costUsd }, { tokens: 1500, cost: 0.03 });
  });

  it('loopx_complete_todo finishes a judgment todo with its summary as evidence', async () => {
    const events = await written(store, () =>
      ok(conn, 'loopx_complete_todo', { contractId, todoId: 'docs', summary: 'wrote docs/agents.md' }),
    );
    byClient(events, ['evidence.added', 'todo.completed']);
    const state = store.load('g').state;
    assert.equal(state.todos.find((t) => t.id === 'docs')?.status, 'done');
    assert.ok(
      state.evidence.some(
        (e) => e.todoId === 'docs' && e.runId === runId && e.summary === 'wrote docs/agents.md',
      ),
    );
  });

  it('loopx_add_todo adds the agent’s command behind a review gate a person decides', async () => {
    let r!: ToolResult & { text: string };
    const events = await written(
      store,
      async () =>
        (r = await ok(conn, 'loopx_add_todo', { title: 'lint', action: 'npm run lint', priority: 'P1' })),
    );
    byClient(events, ['todo.added', 'gate.requested']);
    const { todoId } = (r.structuredContent as { result: { todoId: string } }).result;
    assert.match(r.text, new RegExp(`waits for gate review-${todoId}`));
    const state = store.load('g').state;
    assert.equal(state.todos.find((t) => t.id === todoId)?.action, 'npm run lint');
    assert.deepEqual(state.gates.find((g) => g.id === `review-${todoId}`)?.guards, [todoId]);
    assert.equal(state.gates.find((g) => g.id === `review-${todoId}`)?.status, 'pending');
  });

  it('loopx_request_gate asks the person, for work an agent added; a person’s todo it may not hold back', async () => {
    await refusedCall(
      conn,
      'loopx_request_gate',
      { gateId: 'hold', reason: 'Reject if unsure', guards: ['build'] },
      /todo build is a person's work/,
    );
    await ok(conn, 'loopx_add_todo', { goalId: 'g', title: 'ship it' });
    const shipped = store.load('g').state.todos.find((t) => t.title === 'ship it')!;
    const events = await written(store, () =>
      ok(conn, 'loopx_request_gate', {
        gateId: 'prod-deploy',
        reason: 'the build goes to production',
        guards: [shipped.id],
      }),
    );
    byClient(events, ['gate.requested']);
    const gate = store.load('g').state.gates.find((g) => g.id === 'prod-deploy')!;
    assert.deepEqual(
      { status: gate.status, guards: gate.guards },
      { status: 'pending', guards: [shipped.id] },
    );
  });

  it('bad input gets isError with the field named, and writes nothing', async () => {
    const events = await written(store, async () => {
      await refusedCall(
        conn,
        'loopx_add_todo',
        { wrong: 1 },
        /^loopx_add_todo: field title: /,
        /Next: fix the input and call the tool again\.$/,
      );
      await refusedCall(conn, 'loopx_claim_todo', undefined, /field contractId: /);
      await refusedCall(conn, 'loopx_get_status', { goalId: '../x' }, /field goalId: not a valid id/);
      await refusedCall(
        conn,
        'loopx_claim_todo',
        { contractId, todoId: '$(rm -rf /)' },
        /field todoId: not a valid id/,
      );
      await refusedCall(conn, 'loopx_report_spend', { contractId, tokens: -1 }, /field tokens: /);
      await refusedCall(
        conn,
        'loopx_complete_todo',
        { contractId, todoId: 'build', summary: '' },
        /field summary: must say what was done/,
      );
    });
    assert.deepEqual(events, []);
  });

  it('a human-only request gets isError: there is no such tool', async () => {
    const events = await written(store, async () => {
      for (const name of ['loopx_approve_gate', 'gate.approve', 'loopx_add_reward', 'loopx_grant_quota']) {
        await refusedCall(
          conn,
          name,
          { goalId: 'g', gateId: 'prod-deploy', runId, score: 1, budgets: { turns: 9 } },
          new RegExp(`there is no LoopX tool "${name.replace('.', '\\.')}"`),
        );
      }
      // Nor can a request smuggle a decision through a tool that exists.
      await ok(conn, 'loopx_request_gate', {
        gateId: 'prod-deploy',
        reason: 'again',
        status: 'approved',
        decidedBy: 'alice',
      });
    });
    assert.ok(
      events.every(
        (e) => !['gate.approved', 'gate.rejected', 'reward.added', 'quota.granted'].includes(e.type),
      ),
    );
    assert.equal(store.load('g').state.gates.find((g) => g.id === 'prod-deploy')?.status, 'pending');
  });

  it('a write outside the contract gets isError naming the contract', async () => {
    const events = await written(store, async () => {
      const claim = await refusedCall(
        conn,
        'loopx_claim_todo',
        { contractId, todoId: 'later' },
        new RegExp(`todo later is not in contract ${contractId}`),
      );
      // The reason code, for programs, next to the kind; the message is the text.
      assert.deepEqual(claim.structuredContent, {
        error: { kind: 'refused', reason: 'todo_not_in_contract', message: claim.text },
      });
      await refusedCall(
        conn,
        'loopx_record_evidence',
        { contractId, todoId: 'later', summary: 'deployed' },
        new RegExp(`todo later is not in contract ${contractId}`),
      );
      const complete = await refusedCall(
        conn,
        'loopx_complete_todo',
        { contractId, todoId: 'build', summary: 'built' },
        /todo build has a command/,
        new RegExp(`contract ${contractId} \\(loopx exec\\)`),
      );
      assert.equal((complete.structuredContent?.error as { reason: string }).reason, 'todo_has_command');
      const forged = await refusedCall(
        conn,
        'loopx_claim_todo',
        { contractId: 'c-0000000000', todoId: 'build' },
        /no contract "c-0000000000"/,
        /Next: call loopx_get_contract for a fresh contract\.$/,
      );
      assert.deepEqual(forged.structuredContent?.error, {
        kind: 'not_found',
        reason: 'contract_not_found',
        message: forged.text,
      });
    });
    assert.deepEqual(events, []);
  });

  it('a contract whose run a person ended gets isError with the next step', async () => {
    invoke(
      store,
      'run.end',
      { goalId: 'g', runId, outcome: 'partial', summary: 'stopped by the person' },
      human,
    );
    await refusedCall(
      conn,
      'loopx_report_spend',
      { contractId, tokens: 1 },
      new RegExp(`contract ${contractId} belongs to run ${runId}, which ended`),
      /Next: call loopx_get_contract for a fresh contract\.$/,
    );
    // And the next step works.
    const out = ShouldRunOutput.parse(JSON.parse((await ok(conn, 'loopx_get_contract')).text));
    assert.notEqual(out.interaction_contract.id, contractId);
  });

  it('lists the status and goal resources and reads them as JSON that validates', async () => {
    invoke(store, 'goal.create', { goalId: 'g2', title: 'Second goal' }, human);
    const { resources } = await conn.client.listResources();
    assert.deepEqual(
      resources.map((r) => r.uri),
      ['loopx://status', 'loopx://goals/g', 'loopx://goals/g2'],
    );
    for (const r of resources) assert.equal(r.mimeType, 'application/json');
    const { resourceTemplates } = await conn.client.listResourceTemplates();
    assert.deepEqual(
      resourceTemplates.map((t) => t.uriTemplate),
      ['loopx://goals/{goalId}'],
    );

    const status = await conn.client.readResource({ uri: 'loopx://status' });
    assert.equal(status.contents[0]?.uri, 'loopx://status');
    const doc = StatusDoc.parse(JSON.parse(textOf(status.contents[0])));
    assert.deepEqual(doc.goals.map((g) => g.id).sort(), ['g', 'g2']);
    assert.equal(doc.workspace, store.workspace);

    const goal = await conn.client.readResource({ uri: 'loopx://goals/g' });
    assert.equal(goal.contents[0]?.mimeType, 'application/json');
    const g = GoalStatusDoc.parse(JSON.parse(textOf(goal.contents[0])));
    assert.equal(g.id, 'g');
    // The writes made through the tools are there.
    assert.equal(g.todos.find((t) => t.id === 'docs')?.status, 'done');
    assert.ok(g.gates.some((x) => x.id === 'prod-deploy' && x.status === 'pending'));
    assert.ok(g.runs.some((r) => r.id === runId && r.spend.tokens === 1500));
  });

  it('an unknown resource or a hostile id is an error, not a crash', async () => {
    const cases: [string, RegExp][] = [
      [
        'loopx://nope',
        /unknown resource "loopx:\/\/nope": use loopx:\/\/status or loopx:\/\/goals\/<goal-id>/,
      ],
      ['file:///etc/passwd', /unknown resource/],
      ['loopx://goals/../x', /unknown resource/],
      ['loopx://goals/g/events', /unknown resource/],
      ['loopx://goals/..%2F..%2Fetc', /goal id "\.\.\/\.\.\/etc" is not a valid id/],
      ['loopx://goals/%24(id)', /goal id "\$\(id\)" is not a valid id/],
      ['loopx://goals/%E0%A4%A', /URI malformed|not a valid/],
      ['loopx://goals/missing', /missing/],
      [`loopx://goals/${'x'.repeat(5000)}`, /too long/],
    ];
    for (const [uri, pattern] of cases) {
      await assert.rejects(conn.client.readResource({ uri }), (e: unknown) => {
        assert.ok(e instanceof McpError, `${uri}: ${String(e)}`);
        assert.match(e.message, pattern, uri);
        return true;
      });
    }
    // Still serving.
    await conn.client.ping();
    assert.equal((await conn.client.listTools()).tools.length, 8);
    assert.doesNotMatch(conn.stderr(), /error|\n\s+at /i, 'nothing crashed on stderr');
  });
});

describe('loopx mcp: who the agent is, and the end of a session', () => {
  it('a client name with control characters or none at all still makes valid events', async () => {
    const store = workspace();
    const [odd, blank] = await Promise.all([
      connect(store.workspace, 'evil\u001b[31m\nagent'),
      connect(store.workspace, '  '),
    ]);
    await ok(odd, 'loopx_add_todo', { title: 'from odd' });
    await ok(blank, 'loopx_add_todo', { title: 'from blank' });
    const added = store
      .readLog('g')
      .events.filter((e) => e.type === 'todo.added')
      .slice(-2);
    assert.deepEqual(
      added.map((e) => [e.actor.kind, e.actor.channel]),
      [
        ['agent', 'mcp'],
        ['agent', 'mcp'],
      ],
    );
    assert.match(added[0]!.actor.id, SESSION_OF('evil[31magent'));
    assert.match(added[1]!.actor.id, SESSION_OF('mcp-client'));
    await Promise.all([odd.client.close(), blank.client.close()]);
  });

  it('the server is gone once the SDK client has closed', async () => {
    const store = workspace();
    const conn = await connect(store.workspace);
    const pid = conn.transport.pid!;
    assert.ok(pid > 0);
    await ok(conn, 'loopx_get_status');
    await conn.client.close();
    assert.throws(() => process.kill(pid, 0), /ESRCH/, 'the server process is gone');
    assert.doesNotMatch(conn.stderr(), /error/i);
  });

  it('the server exits by itself (code 0, no signal) when the client ends its stdin', async () => {
    const store = workspace();
    const child = spawn(process.execPath, [BIN, '--workspace', store.workspace, 'mcp'], {
      env: cleanEnv(),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
    const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.on('close', (code, signal) => resolve([code, signal])),
    );
    child.stdin.write(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: 'raw', version: '0' },
        },
      }) + '\n',
    );
    let gone = false;
    void exited.then(() => (gone = true));
    const deadline = Date.now() + 10_000;
    while (!out.includes('\n') && !gone && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.ok(out.includes('\n'), `no answer to initialize; stderr: ${err}`);
    const reply = JSON.parse(out.split('\n')[0]!) as { id: number; result: { serverInfo: { name: string } } };
    assert.equal(reply.id, 1);
    assert.equal(reply.result.serverInfo.name, 'loopx');
    child.stdin.end();
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    const [code, signal] = await exited;
    clearTimeout(timer);
    assert.deepEqual({ code, signal }, { code: 0, signal: null }, `stderr: ${err}`);
    assert.doesNotMatch(err, /error/i);
  });
});
