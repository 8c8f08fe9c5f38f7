/**
 * Hostile input to every door: ids and titles with path separators, shell metacharacters,
 * control characters, look-alike Unicode, lone surrogates, invalid UTF-8, huge sizes, and JSON
 * with prototype-pollution keys, sent to
 *
 *   - the CLI (the BUILT command, spawned; the whole matrix also in-process through `run`),
 *   - the MCP server (`loopx mcp`, the SDK's own client over stdio, and raw junk on its stdin),
 *   - the agent tools (`callAgentTool`, what VS Code's language-model tools and MCP call),
 *   - the status server (raw sockets).
 *
 * Every answer is a clean refusal or a harmless success: no stack trace, no raw control
 * character echoed to a terminal, no huge value echoed back; nothing runs (marker files); nothing
 * is created outside `.loopx/` (the workspace sits in a sandbox folder that is listed before and
 * after); every folder under `.loopx/goals/` is a valid id; every log still verifies.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Store } from '../../src/core/store/store';
import { invoke } from '../../src/core/capabilities/registry';
import { AGENT_TOOLS, callAgentTool } from '../../src/core/agent-tools/tools';
import { LoopxError } from '../../src/core/model/errors';
import { ID_PATTERN } from '../../src/core/model/ids';
import { replay } from '../../src/core/rules/apply-event';
import { canonicalJson } from '../../src/core/store/json-file';
import type { Actor } from '../../src/core/model/goal-state';
import { startStatusServer } from '../../src/server/status-server';
import type { StatusServer } from '../../src/server/status-server';
import {
  BIN,
  RAW_CONTROL,
  cleanEnv,
  figure,
  hasStackTrace,
  hashTree,
  listTree,
  loopx,
  loopxInProcess,
  pool,
  removeTempDirs,
  requireBuilt,
  spawnCollect,
  tempDir,
} from '../helpers/reliability';
import type { Result } from '../helpers/reliability';
import { human } from '../helpers/store';

const lmAgent: Actor = { kind: 'agent', id: 'copilot', channel: 'lm-tool' };

let sandbox = '';
let ws = '';
let store: Store;
let before_: string[] = [];
const marker = (n: number) => path.join(sandbox, `pwned-${n}`);

/** The hostile strings, with what makes each one hostile. Markers prove that nothing ran. */
function hostile(): [string, string][] {
  return [
    ['../../escape', 'path traversal'],
    ['../x', 'path traversal'],
    ['a/b', 'a path separator'],
    ['a\\b', 'a Windows separator'],
    ['/etc/passwd', 'an absolute path'],
    ['..', 'two dots'],
    ['.', 'a dot'],
    ['', 'empty'],
    [`$(touch ${marker(1)})`, 'command substitution'],
    [`\`touch ${marker(2)}\``, 'backticks'],
    [`x; touch ${marker(3)}`, 'a command separator'],
    [`x && touch ${marker(4)}`, 'and-then'],
    [`x | tee ${marker(5)}`, 'a pipe'],
    [`x' ; touch ${marker(6)} ; '`, 'a quote break-out'],
    [`x"; touch ${marker(7)}; "`, 'a double-quote break-out'],
    [`x > ${marker(8)}`, 'a redirection'],
    ['a\nb', 'a newline'],
    ['a\rb', 'a carriage return'],
    ['a\u0000b', 'NUL'],
    ['\u001b[2J\u001b[31mred', 'terminal escape sequences'],
    ['a\u007fb', 'DEL'],
    ['a\u0085b', 'a C1 control (NEL)'],
    ['a\u2028b', 'a line separator'],
    ['a\tb', 'a tab'],
    ['p\u0430yment', 'a Cyrillic a'],
    ['\uff47oal', 'a fullwidth g'],
    ['goal\u200b', 'a zero-width space'],
    ['a\u2215b', 'a division slash'],
    ['a\ud800b', 'a lone high surrogate'],
    ['\udfff', 'a lone low surrogate'],
    ['-rf', 'an option'],
    ['--workspace=/', 'an option with a value'],
    ['__proto__', 'a prototype key'],
    ['constructor', 'a prototype key that is also a valid id'],
    ['x'.repeat(65), 'one character too long for an id'],
    ['y'.repeat(100_000), '100,000 characters'],
  ];
}

const servers: StatusServer[] = [];
after(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  removeTempDirs();
});

before(() => {
  requireBuilt();
  sandbox = tempDir('loopx-hostile-');
  ws = path.join(sandbox, 'ws');
  fs.mkdirSync(ws);
  store = Store.init(ws);
  invoke(store, 'goal.create', { goalId: 'g', title: 'Target', objective: 'be attacked' }, human);
  invoke(store, 'todo.add', { goalId: 'g', todoId: 't1', title: 'a todo', action: 'echo hi' }, human);
  invoke(store, 'goal.create', { goalId: 'other', title: 'Bystander' }, human);
  before_ = listTree(sandbox, ['ws/.loopx']);
});

/** Nothing ran, nothing appeared outside .loopx/, every goal folder is an id, every log verifies. */
function assertContained(where: string) {
  for (let n = 1; n <= 8; n++)
    assert.ok(!fs.existsSync(marker(n)), `${where}: marker ${n} exists: a hostile string was run by a shell`);
  assert.deepEqual(
    listTree(sandbox, ['ws/.loopx']),
    before_,
    `${where}: something was created outside .loopx/`,
  );
  const goals = fs.readdirSync(path.join(ws, '.loopx', 'goals'));
  for (const g of goals)
    assert.match(g, ID_PATTERN, `${where}: a goal folder ${JSON.stringify(g)} is not an id`);
  const top = fs.readdirSync(path.join(ws, '.loopx')).sort();
  for (const f of top)
    assert.ok(
      [
        '.gitignore',
        '.gitattributes',
        'goals',
        'local',
        'policy.json',
        'workspace.json',
        'approvers',
        'writers',
      ].includes(f),
      `${where}: unexpected ${f} in .loopx/`,
    );
  const fresh = new Store(ws);
  for (const g of fresh.goalIds()) {
    const log = fresh.readLog(g);
    assert.equal(log.torn, undefined);
    assert.equal(
      canonicalJson(fresh.load(g).state),
      canonicalJson(replay(g, log.events)),
      `${where}: goal ${g} does not replay to its state`,
    );
  }
}

/** A CLI answer to hostile input: documented exit code, no stack trace, no raw control character, nothing huge echoed. */
function assertCliAnswer(r: Result, what: string) {
  assert.equal(r.signal, null, `${what}: killed by ${r.signal}`);
  assert.ok([0, 2, 3, 4].includes(r.code), `${what}: exit ${r.code}\nstderr: ${r.stderr.slice(0, 1500)}`);
  assert.ok(!hasStackTrace(r.stderr + r.stdout), `${what}: a stack trace:\n${r.stderr.slice(0, 2000)}`);
  assert.ok(
    !RAW_CONTROL.test(r.stderr),
    `${what}: a raw control character in stderr: ${JSON.stringify(r.stderr.slice(0, 300))}`,
  );
  assert.ok(
    r.stderr.length < 4000,
    `${what}: ${r.stderr.length} characters of stderr (a huge value echoed back?)`,
  );
  // (A hook's refusal reads `LoopX: ...; refusing`: it is shown to the agent host's user.)
  if (r.code !== 0)
    assert.match(
      r.stderr,
      /^(loopx|LoopX): /,
      `${what}: the error says where it comes from: ${r.stderr.slice(0, 300)}`,
    );
}

function cliMatrix(h: string): string[][] {
  return [
    ['todo', 'add', '--goal-id', 'g', '--todo-id', h, '--title', 'hostile id'],
    ['todo', 'add', '--goal-id', 'g', '--title', h],
    ['status', '--goal-id', h],
    ['gate', 'request', '--goal-id', 'g', '--gate-id', h, '--reason', h],
    ['evidence', 'add', '--goal-id', 'g', '--summary', h, '--todo-id', h],
    ['project_prompt', 'create', '--goal-id', h, '--title', h],
    ['contract', 'verify', '--contract', h, '--', h],
    ['exec', '--contract', h, '--todo', 't1', '--', h],
  ];
}

describe('hostile input', { concurrency: 1 }, () => {
  it(
    'the CLI in-process: every hostile string in every id and text argument of 8 commands',
    { timeout: 120_000 },
    async (t) => {
      let calls = 0;
      const codes: Record<number, number> = {};
      for (const [h, why] of hostile()) {
        for (const args of cliMatrix(h)) {
          const r = await loopxInProcess(['--workspace', ws, ...args], { cwd: ws });
          calls++;
          codes[r.code] = (codes[r.code] ?? 0) + 1;
          assertCliAnswer(r, `loopx ${args[0]} ${args[1]} with ${why}`);
        }
      }
      // The actor's name comes from the environment: a hostile one is a usage error, not a crash.
      for (const [name, value] of [
        ['LOOPX_ACTOR', 'evil\nname'],
        ['LOOPX_AGENT', '\u001b[31mred'],
        ['LOOPX_AGENT', 'z'.repeat(300)],
        ['LOOPX_ACTOR', '\ud800'],
      ] as const) {
        const r = await loopxInProcess(
          ['--workspace', ws, 'todo', 'add', '--goal-id', 'g', '--title', 'from a hostile actor'],
          { cwd: ws, env: { [name]: value } },
        );
        calls++;
        assertCliAnswer(r, `${name}=${JSON.stringify(value.slice(0, 20))}`);
      }
      assertContained('after the in-process CLI matrix');
      figure(
        t,
        `hostile/CLI in-process: ${calls} calls with ${hostile().length} hostile strings; exit codes ${JSON.stringify(codes)}`,
      );
    },
  );

  it(
    'the built CLI, spawned: hostile ids and titles, 100 KB arguments, invalid UTF-8 bytes, hostile env, 10 MB and polluting JSON on stdin',
    { timeout: 180_000 },
    async (t) => {
      // A sample of the matrix (one process each is slow on a loaded machine): every category once.
      // (NUL cannot be in an argument at all: execve ends the string there.)
      const sample = hostile().filter(([, why]) =>
        /traversal|separator|substitution|backticks|command separator|quote break|newline|escape|DEL|Cyrillic|lone high|option with|prototype key that|100,000/.test(
          why,
        ),
      );
      const calls: { args: string[]; what: string; env?: Record<string, string>; input?: string | Buffer }[] =
        [];
      for (const [h, why] of sample) {
        calls.push({
          args: ['todo', 'add', '--goal-id', 'g', '--todo-id', h, '--title', h],
          what: `todo add with ${why}`,
        });
        calls.push({ args: ['status', '--goal-id', h], what: `status with ${why}` });
      }
      calls.push({
        args: ['todo', 'add', '--goal-id', 'g', '--title', 'x'],
        env: { LOOPX_ACTOR: 'evil\nname' },
        what: 'LOOPX_ACTOR with a newline',
      });
      calls.push({
        args: ['todo', 'add', '--goal-id', 'g', '--title', 'x'],
        env: { LOOPX_AGENT: 'a'.repeat(300) },
        what: 'LOOPX_AGENT of 300 characters',
      });
      // Hook input is the CLI's one JSON door: 10 MB, prototype pollution, junk. A pre-tool-use guard that
      // cannot read its input denies (exit 2, a deny decision on stdout), it never waves the tool through.
      calls.push({
        args: ['hook', 'pre-tool-use'],
        input: `{"tool_name":"Bash","tool_input":{"command":"${'x'.repeat(10 * 1024 * 1024)}"}}`,
        what: 'a 10 MB hook input',
      });
      calls.push({
        args: ['hook', 'pre-tool-use'],
        input: `{"__proto__":{"tool_name":"Read","permissionDecision":"allow"},"constructor":{"prototype":{"polluted":1}},"tool_name":"Bash","tool_input":{"command":"touch ${marker(1)}"}}`,
        what: 'a polluting hook input',
      });
      calls.push({
        args: ['hook', 'pre-tool-use'],
        input: Buffer.from([0xff, 0xfe, 0x7b, 0x80, 0x0a]),
        what: 'invalid UTF-8 hook input',
      });
      const results = await pool(calls, 4, (c) =>
        loopx(['--workspace', ws, ...c.args], { cwd: ws, env: c.env, input: c.input, timeoutMs: 90_000 }),
      );
      results.forEach((r, i) => assertCliAnswer(r, `spawned: ${calls[i]!.what}`));
      for (const [i, c] of calls.entries()) {
        if (c.args[0] !== 'hook') continue;
        const r = results[i]!;
        assert.equal(r.code, 2, `${c.what}: the guard denies (exit 2): ${r.stdout.slice(0, 300)}`);
        const out = JSON.parse(r.stdout) as { hookSpecificOutput?: { permissionDecision?: string } };
        assert.equal(
          out.hookSpecificOutput?.permissionDecision,
          'deny',
          `${c.what}: ${r.stdout.slice(0, 300)}`,
        );
      }
      // Invalid UTF-8 bytes in arguments (a shell passes them as they are): an id is refused, a title
      // keeps U+FFFD in place of the bad bytes, and the log still verifies.
      const bytes = await spawnCollect(
        '/bin/sh',
        [
          '-c',
          `exec "$0" "$1" --workspace "$2" todo add --goal-id g --todo-id "$(printf 'bad\\377\\376')" --title x`,
          process.execPath,
          BIN,
          ws,
        ],
        { cwd: ws },
      );
      assertCliAnswer(bytes, 'an id with invalid UTF-8 bytes');
      assert.equal(bytes.code, 2, bytes.stderr);
      const title = await spawnCollect(
        '/bin/sh',
        [
          '-c',
          `exec "$0" "$1" --workspace "$2" --format json todo add --goal-id g --title "$(printf 'ok\\377\\300\\200end')"`,
          process.execPath,
          BIN,
          ws,
        ],
        { cwd: ws },
      );
      assertCliAnswer(title, 'a title with invalid UTF-8 bytes');
      assert.equal(title.code, 0, title.stderr);
      const added = (JSON.parse(title.stdout) as { todo: { title: string } }).todo.title;
      assert.ok(
        added.startsWith('ok\ufffd') && added.endsWith('end'),
        `the bad bytes became U+FFFD: ${JSON.stringify(added)}`,
      );
      assertContained('after the spawned CLI');
      const ms = results.map((r) => r.ms).sort((a, b) => a - b);
      figure(
        t,
        `hostile/CLI spawned: ${results.length + 2} processes (median ${ms[Math.floor(ms.length / 2)]!.toFixed(0)} ms each, 4 at a time); 10 MB hook input denied in ${results[calls.findIndex((c) => /10 MB/.test(c.what))]!.ms.toFixed(0)} ms`,
      );
    },
  );

  it(
    'the agent tools (callAgentTool): every hostile string in every field of every tool, 10 MB strings, polluting JSON',
    { timeout: 120_000 },
    (t) => {
      const protoKeys = Object.getOwnPropertyNames(Object.prototype).sort().join(',');
      const contractId = (
        callAgentTool(store, 'loopx_get_contract', { goalId: 'g' }, lmAgent).data as {
          interaction_contract: { id: string };
        }
      ).interaction_contract.id;
      assert.ok(contractId, 'a contract to aim the contract-bound tools at');
      const values: unknown[] = [
        ...hostile().map(([h]) => h),
        'z'.repeat(10 * 1024 * 1024),
        '\ud800'.repeat(1_000_000),
        -1,
        1e308,
        Number.NaN,
        null,
        true,
        [],
        {},
        ['../x'],
        { toString: 'x' },
      ];
      let calls = 0;
      let ok = 0;
      const kinds: Record<string, number> = {};
      const started = performance.now();
      const call = (name: string, input: unknown) => {
        calls++;
        try {
          callAgentTool(store, name, input, lmAgent);
          ok++;
        } catch (e) {
          if (!(e instanceof LoopxError))
            throw new Error(`${name} threw a non-LoopxError: ${(e as Error)?.stack ?? String(e)}`);
          kinds[e.kind] = (kinds[e.kind] ?? 0) + 1;
          assert.ok(e.message.length < 5000, `${name}: an error of ${e.message.length} characters`);
        }
      };
      for (const tool of AGENT_TOOLS) {
        const fields = Object.keys(tool.input.shape);
        const valid: Record<string, unknown> = {
          goalId: 'g',
          contractId,
          todoId: 't1',
          title: 'x',
          summary: 'x',
          reason: 'x',
          gateId: 'gx',
        };
        for (const f of fields) {
          for (const v of values)
            call(tool.name, {
              ...Object.fromEntries(fields.filter((k) => k in valid).map((k) => [k, valid[k]])),
              [f]: v,
            });
        }
        // Prototype pollution through JSON as it arrives from a model or a socket.
        for (const text of [
          '{"__proto__":{"goalId":"g","title":"from the prototype","polluted":true}}',
          '{"constructor":{"prototype":{"polluted":true}},"goalId":"g","title":"x"}',
          `{"__proto__":{"contractId":"${contractId}","todoId":"t1","summary":"x"}}`,
          '{"goalId":"g","title":"x","__proto__":null}',
        ]) {
          call(tool.name, JSON.parse(text));
        }
        call(tool.name, undefined);
        call(tool.name, 'not an object');
        call(tool.name, [1, 2, 3]);
      }
      for (const name of [
        '__proto__',
        'constructor',
        'toString',
        '../loopx_get_status',
        'loopx_get_status\n',
      ])
        call(name, {});
      assert.equal(
        Object.getOwnPropertyNames(Object.prototype).sort().join(','),
        protoKeys,
        'Object.prototype changed',
      );
      assert.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype was polluted');
      // An input whose required fields come only from a prototype is refused: nothing reads through it.
      assert.throws(
        () => callAgentTool(store, 'loopx_add_todo', JSON.parse('{"__proto__":{"title":"sneaky"}}'), lmAgent),
        LoopxError,
      );
      assert.ok(
        !new Store(ws)
          .load('g')
          .state.todos.some((x) => x.title === 'from the prototype' || x.title === 'sneaky'),
        'a title taken from __proto__ was written',
      );
      assert.ok(ok > 0, 'some calls went through (the valid parts are valid)');
      assertContained('after the agent tools');
      figure(
        t,
        `hostile/agent tools: ${calls} calls over ${AGENT_TOOLS.length} tools in ${((performance.now() - started) / 1000).toFixed(1)} s; ${ok} accepted, refused ${JSON.stringify(kinds)}; only LoopxError, no pollution`,
      );
    },
  );

  it(
    'the MCP server over stdio (SDK client): hostile arguments, a 10 MB string, polluting JSON, a hostile client name; raw junk on its stdin',
    { timeout: 180_000 },
    async (t) => {
      async function connect(name: string) {
        const transport = new StdioClientTransport({
          command: process.execPath,
          args: [BIN, '--workspace', ws, 'mcp'],
          env: cleanEnv() as Record<string, string>,
          cwd: ws,
          stderr: 'pipe',
        });
        let err = '';
        transport.stderr?.on('data', (c: Buffer) => (err += c.toString('utf8')));
        const client = new Client({ name, version: '1.0.0' });
        await client.connect(transport);
        return { client, stderr: () => err };
      }
      type ToolResult = { content: { type: string; text?: string }[]; isError?: boolean };
      const conn = await connect('hostile-test');
      let calls = 0;
      let errors = 0;
      let overLimitMs = 0;
      const started = performance.now();
      try {
        const contract = (await conn.client.callTool({
          name: 'loopx_get_contract',
          arguments: { goalId: 'g' },
        })) as ToolResult;
        const contractId = (
          JSON.parse(contract.content[0]!.text!) as { interaction_contract: { id: string } }
        ).interaction_contract.id;
        const send = async (name: string, args: Record<string, unknown>) => {
          calls++;
          const r = (await conn.client.callTool({ name, arguments: args })) as ToolResult;
          const text = r.content.map((c) => c.text ?? '').join('');
          if (r.isError) errors++;
          assert.ok(!hasStackTrace(text), `${name}: a stack trace in the answer: ${text.slice(0, 500)}`);
          assert.ok(!/unexpected error/.test(text), `${name}: an unexpected error: ${text.slice(0, 500)}`);
          assert.ok(text.length < 20_000, `${name}: ${text.length} characters back`);
          return r;
        };
        const sample = hostile().filter(([, why]) => !/100,000/.test(why));
        for (const [h] of sample) {
          await send('loopx_add_todo', { goalId: h, title: 'x' });
          await send('loopx_add_todo', { goalId: 'g', title: h, gate: h });
          await send('loopx_get_status', { goalId: h });
          await send('loopx_claim_todo', { contractId: h, todoId: h });
          await send('loopx_complete_todo', { contractId, todoId: h, summary: h });
          await send('loopx_request_gate', { goalId: 'g', gateId: h, reason: h, guards: [h] });
          await send('loopx_record_evidence', { contractId, summary: h });
        }
        // 8 MB fits the SDK's 10 MiB stdio message limit: our validation refuses it.
        const huge = await send('loopx_add_todo', { goalId: 'g', title: 'h'.repeat(8 * 1024 * 1024) });
        assert.equal(huge.isError, true, 'an 8 MB title is refused');
        for (const text of [
          '{"__proto__":{"goalId":"g","title":"from the prototype"}}',
          '{"constructor":{"prototype":{"title":"from the prototype"}},"goalId":"g"}',
        ]) {
          const r = await send('loopx_add_todo', JSON.parse(text) as Record<string, unknown>);
          assert.equal(
            r.isError,
            true,
            `required fields through ${text} must not be found: ${JSON.stringify(r.content)}`,
          );
        }
        // If anything above had polluted the server's Object.prototype, a title-less call would pass.
        const bare = await send('loopx_add_todo', { goalId: 'g' });
        assert.equal(bare.isError, true, 'a call without a title is still refused');
        const listed = await conn.client.listTools();
        assert.equal(listed.tools.length, AGENT_TOOLS.length, 'the server still answers');
        // Over the SDK's limit (10 MiB a message), the transport gives up: the server says why on
        // stderr and exits, so the client sees the connection close at once, not a 60 s timeout.
        const t0 = performance.now();
        await assert.rejects(
          conn.client.callTool(
            { name: 'loopx_add_todo', arguments: { goalId: 'g', title: 'h'.repeat(10 * 1024 * 1024) } },
            undefined,
            { timeout: 45_000 },
          ),
          (e: Error) => !/timed out/i.test(e.message),
        );
        overLimitMs = performance.now() - t0;
        await new Promise((r) => setTimeout(r, 200));
        assert.match(
          conn.stderr(),
          /loopx mcp: .*maximum size/,
          `the server says why it ends: ${conn.stderr().slice(0, 500)}`,
        );
        assert.ok(
          !hasStackTrace(conn.stderr()),
          `a stack trace on the server's stderr: ${conn.stderr().slice(0, 1000)}`,
        );
      } finally {
        await conn.client.close();
      }
      // A client whose name is hostile: the actor recorded is cleaned, the call still works.
      const evil = await connect(`\u001b[31mevil\nname\u0000${'n'.repeat(300)}`);
      try {
        const r = (await evil.client.callTool({
          name: 'loopx_add_todo',
          arguments: { goalId: 'g', title: 'from a hostile client name' },
        })) as ToolResult;
        assert.notEqual(r.isError, true, JSON.stringify(r.content));
      } finally {
        await evil.client.close();
      }
      const ev = new Store(ws)
        .readLog('g')
        .events.find((e) => e.type === 'todo.added' && e.data.todo.title === 'from a hostile client name');
      assert.ok(
        ev && !RAW_CONTROL.test(ev.actor.id) && ev.actor.id.length <= 128,
        `the actor is cleaned: ${JSON.stringify(ev?.actor)}`,
      );

      // Raw junk on stdin (invalid UTF-8, not JSON, JSON-RPC with prototype keys, a 1 MB line), then a
      // real request: the server answers it.
      const child = spawn(process.execPath, [BIN, '--workspace', ws, 'mcp'], {
        cwd: ws,
        env: cleanEnv(),
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
      child.stderr.resume();
      const junk = [
        Buffer.from([0xff, 0xfe, 0xc0, 0x80, 0x0a]),
        Buffer.from('not json at all\n'),
        Buffer.from(
          '{"jsonrpc":"2.0","id":7,"method":"__proto__","params":{"__proto__":{"polluted":true}}}\n',
        ),
        Buffer.from(
          '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"constructor","arguments":{"__proto__":{"x":1}}}}\n',
        ),
        Buffer.from(`{"jsonrpc":"2.0","id":9,"method":"x","params":"${'j'.repeat(1024 * 1024)}"}\n`),
        Buffer.from(
          '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}\n',
        ),
      ];
      for (const j of junk) child.stdin.write(j);
      const deadline = Date.now() + 30_000;
      while (!/"id":1[,}]/.test(out) && Date.now() < deadline && child.exitCode === null)
        await new Promise((r) => setTimeout(r, 50));
      child.stdin.end();
      await new Promise<void>((resolve) => {
        if (child.exitCode !== null) resolve();
        else child.on('close', () => resolve());
        setTimeout(() => {
          child.kill('SIGKILL');
          resolve();
        }, 10_000).unref();
      });
      assert.match(
        out,
        /"id":1[,}].*"serverInfo"|"serverInfo".*"id":1[,}]/,
        `the server answers initialize after the junk: ${out.slice(0, 500)}`,
      );
      assert.ok(!hasStackTrace(out));
      assertContained('after the MCP server');
      figure(
        t,
        `hostile/MCP: ${calls} tool calls over stdio in ${((performance.now() - started) / 1000).toFixed(1)} s (${errors} refused with isError, none crashed the server); a message over the 10 MiB transport limit: session closed with a message in ${(overLimitMs / 1000).toFixed(1)} s; junk lines then initialize: answered`,
      );
    },
  );

  it(
    'the status server over raw sockets: hostile paths, headers and bytes; it answers every one and reads nothing outside .loopx/',
    { timeout: 120_000 },
    async (t) => {
      const srv = await startStatusServer({ workspace: ws, port: 0, rateLimitPerMinute: 100_000 });
      servers.push(srv);
      const loopxBefore = hashTree(path.join(ws, '.loopx'), ['local']);
      const host = `127.0.0.1:${srv.port}`;
      const auth = `Authorization: Bearer ${srv.token}\r\n`;
      const get = (target: string | Buffer, extra = '') =>
        Buffer.concat([
          Buffer.from('GET '),
          Buffer.isBuffer(target) ? target : Buffer.from(target, 'latin1'),
          Buffer.from(` HTTP/1.1\r\nHost: ${host}\r\n${auth}${extra}Connection: close\r\n\r\n`, 'latin1'),
        ]);
      const requests: [string, Buffer][] = [
        ['traversal', get('/goals/..%2F..%2F..%2Fetc%2Fpasswd')],
        ['traversal, raw', get('/goals/../../../etc/passwd')],
        ['traversal, double-encoded', get('/goals/%252e%252e%252fetc')],
        ['dot-dot id', get('/goals/%2e%2e')],
        ['absolute path', get('//etc/passwd')],
        ['NUL', get('/goals/g%00')],
        ['bad percent-encoding', get('/goals/%ff%fe%zz')],
        ['lone surrogate, encoded', get('/goals/%ED%A0%80')],
        ['raw high bytes', get(Buffer.from([0x2f, 0x67, 0x6f, 0x61, 0x6c, 0x73, 0x2f, 0xff, 0xc0, 0x80]))],
        ['shell metacharacters', get('/goals/$(id)')],
        ['backticks', get('/goals/%60id%60')],
        ['CRLF injection', get('/goals/g%0d%0aSet-Cookie:%20x=1')],
        ['escape sequence', get('/goals/%1b%5b31m')],
        ['prototype key', get('/goals/__proto__')],
        ['prototype key, valid id', get('/goals/constructor')],
        ['prototype key, valid id 2', get('/goals/hasOwnProperty')],
        ['long id', get(`/goals/${'a'.repeat(65)}`)],
        ['2 KB path', get(`/${'p'.repeat(2100)}`)],
        ['query with junk', get('/status?__proto__[polluted]=1&constructor.prototype.x=1')],
        ['header with controls', get('/status', 'X-Evil: \u001b[31m\u0007\r\n')],
        ['polluting header names', get('/status', '__proto__: x\r\nconstructor: y\r\n')],
        [
          'hostile Host',
          Buffer.from(
            `GET /status HTTP/1.1\r\nHost: evil.example:${srv.port}\r\n${auth}Connection: close\r\n\r\n`,
          ),
        ],
        [
          'hostile token',
          Buffer.from(
            `GET /status HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer $(touch ${marker(1)})\r\nConnection: close\r\n\r\n`,
          ),
        ],
        [
          '10 KB token',
          Buffer.from(
            `GET /status HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${'t'.repeat(10_000)}\r\nConnection: close\r\n\r\n`,
          ),
        ],
      ];
      const answers = await pool(requests, 6, ([, req]) => rawExchange(srv.port, req));
      const statuses: Record<string, number> = {};
      for (const [i, [name]] of requests.entries()) {
        const a = answers[i]!;
        const m = /^HTTP\/1\.1 (\d{3}) /.exec(a);
        assert.ok(m, `${name}: no HTTP answer: ${JSON.stringify(a.slice(0, 200))}`);
        const status = Number(m[1]);
        statuses[status] = (statuses[status] ?? 0) + 1;
        // 200 only where the request is fine after all: junk in the query or in unrelated headers, or an
        // id that is valid and names a goal the CLI matrix above created (`constructor`).
        const fine =
          /query|polluting header|controls/.test(name) ||
          (/valid id/.test(name) &&
            new Store(ws).exists(/\/goals\/(\w+)/.exec(requests[i]![1].toString('latin1'))![1]!));
        assert.ok(
          status === 200 ? fine : status >= 400 && status < 500,
          `${name}: status ${status}: ${a.slice(0, 300)}`,
        );
        assert.ok(!hasStackTrace(a), `${name}: a stack trace in the answer`);
        assert.ok(!/root:x:0:0/.test(a), `${name}: /etc/passwd was served`);
        assert.ok(!/Set-Cookie/i.test(a.split('\r\n\r\n')[0]!), `${name}: a header was injected`);
      }
      const health = await rawExchange(
        srv.port,
        Buffer.from(`GET /healthz HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`),
      );
      assert.match(health, /^HTTP\/1\.1 200 /);
      assert.deepEqual(
        hashTree(path.join(ws, '.loopx'), ['local']),
        loopxBefore,
        'the server wrote to .loopx/',
      );
      assertContained('after the status server');
      figure(
        t,
        `hostile/status server: ${requests.length} hostile requests over raw sockets; statuses ${JSON.stringify(statuses)}; .loopx/ unchanged`,
      );
    },
  );
});

/** Writes one raw request and reads until the server closes (or 10 s). */
function rawExchange(port: number, req: Buffer): Promise<string> {
  return new Promise((resolve) => {
    const sock = net.connect({ host: '127.0.0.1', port });
    const chunks: Buffer[] = [];
    const done = () => resolve(Buffer.concat(chunks).toString('latin1'));
    sock.setTimeout(10_000, () => sock.destroy());
    sock.on('data', (c) => chunks.push(c));
    sock.on('close', done);
    sock.on('error', () => undefined);
    sock.write(req);
  });
}
