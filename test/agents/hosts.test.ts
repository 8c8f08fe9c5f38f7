/**
 * The agent test bench works: the REAL Claude Code and Codex CLIs, driven by the scripted model
 * APIs on loopback, run a tool call in a temp workspace and report its outcome back to the
 * "model"; Codex calls a tool of an MCP server through its namespace. If a pinned CLI changed its
 * wire format or the scripted servers broke, this fails before any LoopX agent test does.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  agentBins,
  claudeTranscript,
  removeTempDirs,
  runClaude,
  runCodex,
  tempDir,
  show,
} from '../helpers/agents/agent-kit';
import { MESSAGES_USAGE, startMessagesApi, type MessagesBody } from '../helpers/agents/scripted-messages';
import { startResponsesApi, type ResponsesBody } from '../helpers/agents/scripted-responses';

// A minimal MCP server (newline-delimited JSON-RPC on stdio) with one tool, `echo_back`. It logs
// every message it receives and its environment to files next to it.
const MCP_SERVER = `
import fs from 'node:fs';
import readline from 'node:readline';
const dir = new URL('.', import.meta.url).pathname;
fs.writeFileSync(dir + 'env.json', JSON.stringify(process.env));
const send = (m) => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', ...m }) + '\\n');
readline.createInterface({ input: process.stdin }).on('line', (line) => {
  const m = JSON.parse(line);
  fs.appendFileSync(dir + 'received.jsonl', line + '\\n');
  if (m.id === undefined) return; // a notification
  if (m.method === 'initialize')
    send({ id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'probe', version: '1' } } });
  else if (m.method === 'tools/list')
    send({ id: m.id, result: { tools: [{ name: 'echo_back', description: 'Echoes its text', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } }] } });
  else if (m.method === 'tools/call')
    send({ id: m.id, result: { content: [{ type: 'text', text: 'echo:' + m.params.arguments.text }] } });
  else send({ id: m.id, error: { code: -32601, message: 'no method ' + m.method } });
});
`;

describe('the real agent CLIs against the scripted model APIs', () => {
  before(async () => {
    await agentBins();
  });
  after(removeTempDirs);

  it('Claude Code runs a scripted Bash call and sends its result back, reporting the fixed usage', async () => {
    const api = await startMessagesApi((turn) =>
      turn.step === 0
        ? {
            tool: 'Bash',
            input: {
              command: 'echo hello-from-claude > out.txt && cat out.txt && command -v loopx',
              description: 'Write out.txt',
            },
          }
        : { text: 'Done.' },
    );
    try {
      const cwd = tempDir('ws');
      const home = tempDir('home');
      const r = await runClaude({
        cwd,
        home,
        baseUrl: api.url,
        prompt: 'Write out.txt',
        args: ['--allowedTools', 'Bash'],
      });
      assert.equal(r.code, 0, show(r));
      assert.equal(fs.readFileSync(path.join(cwd, 'out.txt'), 'utf8'), 'hello-from-claude\n');

      const main = api.requests.filter((q) => (q.body as MessagesBody).tools?.length);
      assert.equal(
        main.length,
        2,
        `two conversation requests, got ${api.requests.map((q) => q.url).join(', ')}`,
      );
      const toolNames = ((main[0]!.body as MessagesBody).tools ?? []).map((t) => t.name);
      assert.ok(toolNames.includes('Bash') && toolNames.includes('Write'), toolNames.join(', '));
      // The second request answers the tool_use of the first reply with its outcome.
      const second = main[1]!.body as { messages: { role: string; content: unknown }[] };
      const results = second.messages
        .flatMap((m) =>
          Array.isArray(m.content)
            ? (m.content as { type: string; tool_use_id?: string; content?: unknown }[])
            : [],
        )
        .filter((b) => b.type === 'tool_result');
      assert.equal(results.length, 1, JSON.stringify(second.messages).slice(-2000));
      assert.match(results[0]!.tool_use_id ?? '', /^toolu_[0-9a-f]{8}_1_0$/);
      // The command's output, and the kit's `loopx` shim found on the tool's PATH.
      assert.match(String(results[0]!.content), /hello-from-claude\n\/.*\/bin-\w+\/loopx/);

      assert.equal(r.json?.result, 'Done.', show(r));
      const usage = r.json?.usage as { input_tokens: number; output_tokens: number };
      assert.equal(usage.input_tokens, 2 * MESSAGES_USAGE.input_tokens, JSON.stringify(usage));
      assert.equal(usage.output_tokens, 2 * MESSAGES_USAGE.output_tokens, JSON.stringify(usage));

      // The transcript is where the helper says, and names the replies the server sent.
      const transcript = claudeTranscript(home, cwd, String(r.json?.session_id));
      const ids = fs
        .readFileSync(transcript, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { type: string; message?: { id?: string } })
        .filter((l) => l.type === 'assistant')
        .map((l) => l.message?.id);
      assert.ok(ids.length >= 2, `assistant lines in ${transcript}: ${ids.join(', ')}`);
      for (const id of ids) assert.match(id ?? '', /^msg_[0-9a-f]{8}_[12]$/);
    } finally {
      await api.close();
    }
  });

  it('Codex runs a scripted exec_command and sends its output back', async () => {
    const api = await startResponsesApi((turn) =>
      turn.step === 0
        ? {
            tool: 'exec_command',
            input: { cmd: 'echo hello-from-codex > out.txt && cat out.txt && command -v loopx' },
          }
        : { text: 'Done.' },
    );
    try {
      const cwd = tempDir('ws');
      const r = await runCodex({
        cwd,
        home: tempDir('home'),
        codexHome: path.join(tempDir('codex'), 'home'),
        baseUrl: api.url,
        prompt: 'Write out.txt',
      });
      assert.equal(r.code, 0, show(r));
      assert.equal(fs.readFileSync(path.join(cwd, 'out.txt'), 'utf8'), 'hello-from-codex\n');

      const calls = api.requests.filter((q) => q.url.startsWith('/v1/responses'));
      assert.equal(calls.length, 2, show(r));
      const tools = ((calls[0]!.body as ResponsesBody).tools ?? []).map((t) => t.name);
      assert.ok(tools.includes('exec_command'), tools.join(', '));
      const input = (calls[1]!.body as { input: { type: string; call_id?: string; output?: unknown }[] })
        .input;
      const outputs = input.filter((i) => i.type === 'function_call_output');
      assert.equal(outputs.length, 1, JSON.stringify(input).slice(-2000));
      assert.match(outputs[0]!.call_id ?? '', /^call_[0-9a-f]{8}_1_0$/);
      // Codex wraps the output: "Chunk ID: ...\nWall time: ...\nProcess exited with code 0\n...Output:\n".
      assert.match(
        String(outputs[0]!.output),
        /Process exited with code 0\n[\s\S]*Output:\nhello-from-codex\n\/.*\/bin-\w+\/loopx/,
      );
      assert.match(r.stdout, /Done\./, show(r));
    } finally {
      await api.close();
    }
  });

  it('Codex calls an MCP tool through its namespace, with its session in _meta', async () => {
    const api = await startResponsesApi((turn) =>
      turn.step === 0
        ? { namespace: 'mcp__probe', tool: 'echo_back', input: { text: 'ping' } }
        : { text: `Got ${turn.lastToolOutputText()}` },
    );
    try {
      const serverDir = tempDir('mcp');
      fs.writeFileSync(path.join(serverDir, 'server.mjs'), MCP_SERVER);
      const r = await runCodex({
        cwd: tempDir('ws'),
        home: tempDir('home'),
        codexHome: path.join(tempDir('codex'), 'home'),
        baseUrl: api.url,
        prompt: 'Call echo_back',
        mcp: { name: 'probe', command: process.execPath, args: [path.join(serverDir, 'server.mjs')] },
      });
      assert.equal(r.code, 0, show(r));

      const calls = api.requests.filter((q) => q.url.startsWith('/v1/responses'));
      assert.equal(calls.length, 2, show(r));
      // Besides Codex's own namespaces (multi_agent_v1), one per MCP server, holding its tools.
      const tools = (calls[0]!.body as ResponsesBody).tools ?? [];
      const namespace = tools.find((t) => t.type === 'namespace' && t.name === 'mcp__probe');
      assert.ok(namespace, `tools: ${tools.map((t) => `${t.type}:${t.name}`).join(', ')}`);
      assert.deepEqual(
        namespace.tools?.map((t) => t.name),
        ['echo_back'],
      );
      // The output of an MCP call reaches the model as "Wall time: ... seconds\nOutput:\n<text>".
      assert.match(r.stdout, /^Got Wall time: [\d.]+ seconds\nOutput:\necho:ping$/m, show(r));

      const received = fs
        .readFileSync(path.join(serverDir, 'received.jsonl'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { method?: string; params?: Record<string, unknown> });
      const call = received.find((m) => m.method === 'tools/call');
      assert.ok(call, `no tools/call among ${received.map((m) => m.method).join(', ')}`);
      assert.equal(call.params?.name, 'echo_back');
      assert.deepEqual(call.params?.arguments, { text: 'ping' });
      const meta = call.params?._meta as Record<string, { session_id?: unknown }> | undefined;
      assert.match(
        String(meta?.['x-codex-turn-metadata']?.session_id),
        /^[0-9a-f-]{36}$/,
        JSON.stringify(meta),
      );

      // Codex gives an MCP server few variables; the kit hands over the run's config folder.
      const env = JSON.parse(fs.readFileSync(path.join(serverDir, 'env.json'), 'utf8')) as Record<
        string,
        string
      >;
      assert.equal(env.LOOPX_CONFIG_DIR, process.env.LOOPX_CONFIG_DIR);
    } finally {
      await api.close();
    }
  });
});
