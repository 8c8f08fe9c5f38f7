/**
 * `loopx hook <event>` as agent hosts call it: the BUILT command is spawned with a recorded
 * payload on stdin (Claude Code and VS Code agent hooks send the event as JSON), and the answer
 * is checked the way the host reads it: stdout JSON (`hookSpecificOutput`), stderr (shown to the
 * agent when blocking) and the exit code (0 lets the tool run, 2 blocks it).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import '../../src/core/index';
import { Store } from '../../src/core/store';
import { invoke } from '../../src/core/capabilities';
import { shouldRun, ShouldRunOutput } from '../../src/core/contract';
import type { Actor } from '../../src/core/model';
import { human, tempDir, removeTempDirs } from '../helpers/store';

after(removeTempDirs);

const REPO = path.resolve(__dirname, '..', '..');
const BIN = path.join(REPO, 'bin', 'loopx.js');
const claude: Actor = { kind: 'agent', id: 'claude-code', channel: 'cli' };

before(() => {
  assert.ok(fs.existsSync(path.join(REPO, 'dist', 'cli.js')), 'dist/cli.js is missing: run `npm run build` first');
});

// ---------------------------------------------------------------------------------------------
// Spawning the hook, a few at a time (two cores).

interface HookRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

let running = 0;
const waiting: (() => void)[] = [];
async function slot<T>(fn: () => Promise<T>): Promise<T> {
  if (running >= 3) await new Promise<void>((r) => waiting.push(r));
  running++;
  try {
    return await fn();
  } finally {
    running--;
    waiting.shift()?.();
  }
}

/** Runs `loopx hook <event>` in `cwd` (as hosts do: the project folder) with `input` on stdin. */
function hook(event: string, input: unknown, o: { cwd: string; env?: Record<string, string>; args?: string[] }): Promise<HookRun> {
  return slot(
    () =>
      new Promise<HookRun>((resolve, reject) => {
        const env: NodeJS.ProcessEnv = {};
        for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('LOOPX_')) env[k] = v;
        const child = spawn(process.execPath, [BIN, 'hook', event, ...(o.args ?? [])], { cwd: o.cwd, env: { ...env, ...o.env }, stdio: ['pipe', 'pipe', 'pipe'] });
        let stdout = '';
        let stderr = '';
        child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
        child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
        const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
        child.on('error', reject);
        child.on('close', (code) => {
          clearTimeout(timer);
          resolve({ code, stdout, stderr });
        });
        child.stdin.end(typeof input === 'string' ? input : JSON.stringify(input));
      }),
  );
}

const show = (r: HookRun) => `exit ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;

/** The PreToolUse answer: one JSON document on stdout, with the decision and its reason. */
function answer(r: HookRun): { decision: string; reason: string } {
  let doc: { hookSpecificOutput?: { hookEventName?: string; permissionDecision?: string; permissionDecisionReason?: string } };
  try {
    doc = JSON.parse(r.stdout) as typeof doc;
  } catch {
    assert.fail(`stdout is not one JSON document:\n${show(r)}`);
  }
  const out = doc.hookSpecificOutput;
  assert.equal(out?.hookEventName, 'PreToolUse', show(r));
  return { decision: out.permissionDecision!, reason: out.permissionDecisionReason! };
}

function allowed(r: HookRun, reason?: RegExp) {
  const a = answer(r);
  assert.equal(a.decision, 'allow', show(r));
  assert.equal(r.code, 0, show(r));
  assert.equal(r.stderr, '', show(r));
  if (reason) assert.match(a.reason, reason);
}

function denied(r: HookRun, ...reasons: RegExp[]) {
  const a = answer(r);
  assert.equal(a.decision, 'deny', show(r));
  assert.equal(r.code, 2, show(r));
  assert.match(a.reason, /^LoopX: /);
  // Hosts show stderr to the agent when a hook blocks: the same reason, on one line.
  assert.equal(r.stderr.trim(), a.reason.trim(), show(r));
  for (const p of reasons) assert.match(a.reason, p, show(r));
}

// ---------------------------------------------------------------------------------------------
// Recorded payloads (field names and shapes as the hosts send them).

const SESSION = '3f2b8c1e-5d4a-4e0b-9a7c-1d2e3f4a5b6c';

/** Claude Code: PreToolUse for Bash. */
const claudeBash = (cwd: string, command: string) => ({
  session_id: SESSION,
  transcript_path: `/home/dev/.claude/projects/-work-app/${SESSION}.jsonl`,
  cwd,
  permission_mode: 'default',
  hook_event_name: 'PreToolUse',
  tool_name: 'Bash',
  tool_input: { command, description: 'Run the next contract action' },
  tool_use_id: 'toolu_01XnqJ7d8ZbVhY3p2WcT4kLm',
});
/** Claude Code: PreToolUse for Write / Edit. */
const claudeFileTool = (cwd: string, tool: 'Write' | 'Edit' | 'Read', file: string) => ({
  session_id: SESSION,
  transcript_path: `/home/dev/.claude/projects/-work-app/${SESSION}.jsonl`,
  cwd,
  permission_mode: 'acceptEdits',
  hook_event_name: 'PreToolUse',
  tool_name: tool,
  tool_input:
    tool === 'Write' ? { file_path: file, content: '{"v":1}\n' } : tool === 'Edit' ? { file_path: file, old_string: '"pending"', new_string: '"approved"', replace_all: false } : { file_path: file },
  tool_use_id: 'toolu_01Pq8sYt5RkW2mZx9VbN3cDe',
});
/** VS Code agent hooks: PreToolUse for the terminal tool. */
const vscodeTerminal = (cwd: string, command: string) => ({
  timestamp: '2026-11-30T10:04:12.345Z',
  hookEventName: 'PreToolUse',
  sessionId: 'vscode-chat-session-7b1c',
  cwd,
  tool_name: 'run_in_terminal',
  tool_input: { command, explanation: 'Run the build', isBackground: false },
  tool_use_id: 'call_R2kd93jfQ0aLm',
});
/** VS Code agent hooks: PreToolUse for file edits. */
const vscodeEditFiles = (cwd: string, files: string[]) => ({
  timestamp: '2026-11-30T10:04:15.001Z',
  hookEventName: 'PreToolUse',
  sessionId: 'vscode-chat-session-7b1c',
  cwd,
  tool_name: 'editFiles',
  tool_input: { files },
  tool_use_id: 'call_Zx81mQ2pL',
});
const claudeSessionStart = (cwd: string) => ({
  session_id: SESSION,
  transcript_path: `/home/dev/.claude/projects/-work-app/${SESSION}.jsonl`,
  cwd,
  hook_event_name: 'SessionStart',
  source: 'startup',
});
const vscodeSessionStart = (cwd: string) => ({ timestamp: '2026-11-30T10:00:00.000Z', hookEventName: 'SessionStart', sessionId: 'vscode-chat-session-7b1c', cwd, source: 'new' });
const claudeStop = (cwd: string) => ({
  session_id: SESSION,
  transcript_path: `/home/dev/.claude/projects/-work-app/${SESSION}.jsonl`,
  cwd,
  permission_mode: 'default',
  hook_event_name: 'Stop',
  stop_hook_active: false,
});

// ---------------------------------------------------------------------------------------------
// Workspaces

const BUILD = 'npm run build';
const QUOTED = `echo "it's built"`;

/** A workspace (its folder is the host's cwd) with a goal `g` a person planned. */
function workspace(opts: { clock?: () => Date } = {}) {
  const dir = fs.realpathSync(tempDir('loopx-hook-'));
  const store = Store.init(dir, { clock: opts.clock });
  invoke(store, 'goal.create', { goalId: 'g', title: 'Ship it', objective: 'ship' }, human);
  invoke(store, 'todo.add', { goalId: 'g', todoId: 'build', title: 'build', action: BUILD, priority: 'P0' }, human);
  invoke(store, 'todo.add', { goalId: 'g', todoId: 'quote', title: 'say it', action: QUOTED, priority: 'P1' }, human);
  invoke(store, 'todo.add', { goalId: 'g', todoId: 'docs', title: 'write docs', priority: 'P2' }, human);
  return { dir, store };
}

/** A workspace whose agent holds a live contract. */
function governed() {
  const ws = workspace();
  const out = shouldRun(ws.store, { goalId: 'g', agent: 'claude-code' }, claude);
  assert.equal(out.decision, 'run');
  const actions = out.interaction_contract.cli_channel.next_cli_actions;
  assert.equal(actions.length, 2);
  return { ...ws, out, contractId: out.interaction_contract.id!, build: actions[0]!, quoted: actions[1]! };
}

// ---------------------------------------------------------------------------------------------

describe('pre-tool-use: shell commands', () => {
  it('a command the active contract lists is allowed (Claude Code Bash and the VS Code terminal)', async () => {
    const { dir, contractId } = governed();
    const [a, b, c] = await Promise.all([
      hook('pre-tool-use', claudeBash(dir, BUILD), { cwd: dir }),
      hook('pre-tool-use', vscodeTerminal(dir, BUILD), { cwd: dir }),
      hook('pre-tool-use', claudeBash(dir, QUOTED), { cwd: dir }),
    ]);
    for (const r of [a!, b!, c!]) allowed(r, new RegExp(`listed by contract ${contractId}`));
  });

  it('the same command with anything added or changed is denied', async () => {
    const { dir, contractId } = governed();
    const variants = [`${BUILD} `, ` ${BUILD}`, `${BUILD}; rm -rf /`, `${BUILD} && x`, `${BUILD} $(x)`, `${BUILD} \`x\``, `${BUILD} | sh`, `${BUILD}\nrm -rf /`, 'npm run build:prod', 'npm  run build'];
    const results = await Promise.all(variants.map((v, i) => hook('pre-tool-use', i % 2 ? vscodeTerminal(dir, v) : claudeBash(dir, v), { cwd: dir })));
    results.forEach((r) => denied(r, new RegExp(`the active contract \\(${contractId}\\) does not list it`), /run only next_cli_actions/));
  });

  it("the contract's own `loopx exec` lines are allowed exactly as next_cli_actions gives them, a quote included", async () => {
    const { dir, contractId, build, quoted } = governed();
    assert.match(quoted, /'\\''/, 'the action with a single quote is shell-quoted');
    const results = await Promise.all([hook('pre-tool-use', claudeBash(dir, build), { cwd: dir }), hook('pre-tool-use', vscodeTerminal(dir, quoted), { cwd: dir })]);
    for (const r of results) allowed(r, new RegExp(`listed by contract ${contractId}`));
  });

  it('a tampered `loopx exec` line is denied', async () => {
    const { dir, store, contractId, build, quoted } = governed();
    const other = shouldRun(workspace().store, { goalId: 'g', agent: 'claude-code' }, claude).interaction_contract.id!;
    const cases: [string, RegExp][] = [
      [build.replace(contractId, 'c-0000000000'), /no contract "c-0000000000"/],
      [build.replace(contractId, other), /no contract .* from another workspace/],
      [build.replace('--todo build', '--todo quote'), /differs from what contract .* lists for todo quote/],
      [build.replace(`'${BUILD}'`, `'${BUILD}; rm -rf /'`), /differs from what contract/],
      [build.replace(`'${BUILD}'`, `'${BUILD} '`), /differs from what contract/],
      [build.replace('--todo build', '--todo docs'), /todo docs is not in contract/],
      [`${build}; rm -rf /`, /does not list it/],
      [`${build} && x`, /does not list it/],
      [`${quoted} $(x)`, /does not list it/],
      [build.replace(`'${BUILD}'`, `"$(${BUILD})"`), /does not list it/],
      [`loopx exec --todo build --contract ${contractId} -- '${BUILD}'`, /exactly as next_cli_actions gives them/],
      [`loopx exec --contract ${contractId} --todo build --`, /exactly as next_cli_actions gives them/],
      [`loopx exec --contract ${contractId} --todo build '${BUILD}'`, /exactly as next_cli_actions gives them/],
      // A path can name any file the agent wrote: only the `loopx` on PATH counts.
      [`./${build}`, /does not list it/],
      [`/tmp/evil/${build}`, /does not list it/],
    ];
    const results = await Promise.all(cases.map(([c]) => hook('pre-tool-use', claudeBash(dir, c), { cwd: dir })));
    results.forEach((r, i) => denied(r, cases[i]![1]));
    assert.equal(store.load('g').state.evidence.length, 0, 'nothing ran');
  });

  it('a listed command is denied once the contract no longer authorises it (its todo cancelled)', async () => {
    const { dir, store, build } = governed();
    invoke(store, 'todo.cancel', { goalId: 'g', todoId: 'build', reason: 'not needed' }, human);
    const [direct, viaExec, other] = await Promise.all([
      hook('pre-tool-use', claudeBash(dir, BUILD), { cwd: dir }),
      hook('pre-tool-use', claudeBash(dir, build), { cwd: dir }),
      hook('pre-tool-use', claudeBash(dir, QUOTED), { cwd: dir }),
    ]);
    denied(direct!, /todo build is already cancelled/);
    denied(viaExec!, /todo build is already cancelled/);
    allowed(other!);
  });

  it('read-only loopx commands are allowed', async () => {
    const { dir, contractId } = governed();
    const commands = [
      'loopx status',
      'loopx status --goal-id g --json',
      'loopx --format json status',
      'loopx quota should-run --goal-id g',
      'loopx --version',
      'loopx goal list',
      'loopx gate list --goal-id g',
      `loopx contract verify --contract ${contractId}`,
      'loopx log --goal-id g',
    ];
    const results = await Promise.all(commands.map((c) => hook('pre-tool-use', claudeBash(dir, c), { cwd: dir })));
    results.forEach((r) => allowed(r, /a read-only loopx command/));
    // The judgment todo's `complete_with`, with a double-quoted summary, is for the CLI to check.
    const done = await hook('pre-tool-use', claudeBash(dir, `loopx todo done --goal-id g --todo-id docs --contract ${contractId} --summary "wrote the docs"`), { cwd: dir });
    allowed(done, /judgment todo under its contract/);
  });

  it("a person's decisions are denied, whatever the spelling", async () => {
    const { dir } = governed();
    const commands = [
      'loopx gate approve --goal-id g --gate-id prod',
      'loopx gate reject --goal-id g --gate-id prod',
      'loopx reward add --goal-id g --run-id run-1 --score 1',
      'loopx quota grant --goal-id g --turns 100',
      'loopx --json gate approve --goal-id g --gate-id prod',
      'loopx gate approve --goal-id g --gate-id prod --note "looks fine"',
    ];
    const results = await Promise.all(commands.map((c, i) => hook('pre-tool-use', i % 2 ? vscodeTerminal(dir, c) : claudeBash(dir, c), { cwd: dir })));
    results.forEach((r) => denied(r, /is a person's decision/, /agents cannot approve or reject gates, record rewards or grant quota/));
  });

  it('a command that writes into .loopx/ directly is denied', async () => {
    const { dir } = governed();
    const commands = [
      'echo x > .loopx/goals/g/events.jsonl',
      'rm -rf .loopx',
      `sed -i s/pending/approved/ ${dir}/.loopx/goals/g/goal.json`,
      'cp /tmp/forged.jsonl .loopx/goals/g/events.jsonl',
    ];
    const results = await Promise.all(commands.map((c) => hook('pre-tool-use', claudeBash(dir, c), { cwd: dir })));
    results.forEach((r) => denied(r, /touches \.loopx\/ directly/));
  });

  it('a shell tool whose command cannot be read is denied', async () => {
    const { dir } = governed();
    const r = await hook('pre-tool-use', { ...claudeBash(dir, ''), tool_input: { script: BUILD } }, { cwd: dir });
    denied(r, /could not read the command of Bash/);
  });
});

describe('pre-tool-use: file tools', () => {
  it('Write, Edit and editFiles under .loopx/ are denied; elsewhere allowed', async () => {
    const { dir } = governed();
    const [write, edit, read, vsEdit, writeOk, vsEditOk] = await Promise.all([
      hook('pre-tool-use', claudeFileTool(dir, 'Write', path.join(dir, '.loopx', 'goals', 'g', 'events.jsonl')), { cwd: dir }),
      hook('pre-tool-use', claudeFileTool(dir, 'Edit', path.join(dir, '.loopx', 'goals', 'g', 'goal.json')), { cwd: dir }),
      hook('pre-tool-use', claudeFileTool(dir, 'Read', path.join(dir, '.loopx', 'local', 'contract-key')), { cwd: dir }),
      hook('pre-tool-use', vscodeEditFiles(dir, ['src/main.ts', '.loopx/policy.json']), { cwd: dir }),
      hook('pre-tool-use', claudeFileTool(dir, 'Write', path.join(dir, 'src', 'app.ts')), { cwd: dir }),
      hook('pre-tool-use', vscodeEditFiles(dir, ['src/main.ts', 'docs/loopx.md']), { cwd: dir }),
    ]);
    denied(write!, /events\.jsonl is LoopX state/, /never by editing files/);
    denied(edit!, /goal\.json is LoopX state/);
    denied(read!, /contract-key is LoopX state/);
    denied(vsEdit!, /\.loopx\/policy\.json is LoopX state/);
    allowed(writeOk!, /not a shell command/);
    allowed(vsEditOk!, /not a shell command/);
  });
});

describe('pre-tool-use: no active contract', () => {
  it('with no contract issued, a command is denied telling the agent to call loopx_get_contract', async () => {
    const { dir } = workspace();
    const [a, b] = await Promise.all([hook('pre-tool-use', claudeBash(dir, BUILD), { cwd: dir }), hook('pre-tool-use', vscodeTerminal(dir, 'ls'), { cwd: dir })]);
    for (const r of [a!, b!]) denied(r, /there is no active contract: call loopx_get_contract/);
  });

  it('an expired contract authorises nothing, directly or through its exec line', async () => {
    // Issued two hours ago with the default 30-minute lifetime.
    const { dir, store } = workspace({ clock: () => new Date(Date.now() - 2 * 3600_000) });
    const out = shouldRun(store, { goalId: 'g', agent: 'claude-code' }, claude);
    const line = out.interaction_contract.cli_channel.next_cli_actions[0]!;
    const [direct, viaExec] = await Promise.all([hook('pre-tool-use', claudeBash(dir, BUILD), { cwd: dir }), hook('pre-tool-use', claudeBash(dir, line), { cwd: dir })]);
    denied(direct!, /there is no active contract: call loopx_get_contract/);
    denied(viaExec!, new RegExp(`contract ${out.interaction_contract.id} expired`));
  });
});

describe('hook input and usage', () => {
  it('pre-tool-use with unreadable stdin denies with exit 2', async () => {
    const { dir } = governed();
    const inputs = ['not json', '{"tool_name":"Bash","tool_input":{"command":"ls"', 'null', '[1,2]', '"Bash"'];
    const results = await Promise.all(inputs.map((i) => hook('pre-tool-use', i, { cwd: dir })));
    results.forEach((r) => denied(r, /the hook input is not valid JSON/, /refusing/));
  });

  it('an unknown event is a usage error (exit 2), with nothing on stdout', async () => {
    const { dir } = governed();
    const [r, t] = await Promise.all([hook('post-tool-use', claudeBash(dir, 'ls'), { cwd: dir }), hook('pre-tool', claudeBash(dir, 'ls'), { cwd: dir })]);
    for (const x of [r!, t!]) {
      assert.equal(x.code, 2, show(x));
      assert.equal(x.stdout, '');
      assert.match(x.stderr, /^loopx: unknown hook event "[a-z-]+": use pre-tool-use, session-start, stop/);
    }
  });

  it("the host's own event names are accepted (PreToolUse, SessionStart)", async () => {
    const { dir } = governed();
    const r = await hook('PreToolUse', claudeBash(dir, BUILD), { cwd: dir });
    allowed(r);
  });

  it('session-start and stop with unreadable stdin are usage errors', async () => {
    const { dir, store } = governed();
    const before = store.readLog('g').events.length;
    const results = await Promise.all([hook('session-start', '{oops', { cwd: dir }), hook('stop', 'not json', { cwd: dir })]);
    for (const r of results) {
      assert.equal(r.code, 2, show(r));
      assert.equal(r.stdout, '');
      assert.match(r.stderr, /the hook input is not valid JSON/);
    }
    assert.equal(store.readLog('g').events.length, before, 'nothing written');
  });
});

describe('session-start and stop', () => {
  it("SessionStart adds the goal's contract as context; its actions then pass PreToolUse; Stop ends the run with a note", async () => {
    const { dir, store } = workspace();
    const env = { LOOPX_AGENT: 'claude-code' };
    const start = await hook('session-start', claudeSessionStart(dir), { cwd: dir, env });
    assert.equal(start.code, 0, show(start));
    assert.equal(start.stderr, '');
    const doc = JSON.parse(start.stdout) as { hookSpecificOutput: { hookEventName: string; additionalContext: string } };
    assert.equal(doc.hookSpecificOutput.hookEventName, 'SessionStart');
    const context = doc.hookSpecificOutput.additionalContext;
    assert.match(context, /^LoopX governs this workspace\. Your contract for goal g /);
    const contract = ShouldRunOutput.parse(JSON.parse(context.slice(context.indexOf('\n') + 1)));
    assert.equal(contract.decision, 'run');
    const runId = contract.run_id!;
    const run = store.load('g').state.runs.find((r) => r.id === runId)!;
    assert.equal(run.agent, 'claude-code');
    assert.equal(run.contract?.id, contract.interaction_contract.id);
    const started = store.readLog('g').events.find((e) => e.type === 'run.started')!;
    assert.deepEqual(started.actor, { kind: 'agent', id: 'claude-code', channel: 'hook' });

    const checks = await Promise.all(contract.interaction_contract.cli_channel.next_cli_actions.map((a) => hook('pre-tool-use', claudeBash(dir, a), { cwd: dir })));
    assert.equal(checks.length, 2);
    checks.forEach((r) => allowed(r));

    const stop = await hook('stop', claudeStop(dir), { cwd: dir, env });
    assert.equal(stop.code, 0, show(stop));
    assert.deepEqual(JSON.parse(stop.stdout), { systemMessage: 'LoopX: ended 1 run(s) of goal g; 0/3 todos done' });
    const state = store.load('g').state;
    const ended = state.runs.find((r) => r.id === runId)!;
    assert.ok(ended.endedAt, 'the run is ended');
    const note = state.evidence.find((e) => e.runId === runId)!;
    assert.deepEqual({ kind: note.kind, summary: note.summary }, { kind: 'note', summary: `agent session ${SESSION} stopped` });
    const stopEvents = store.readLog('g').events.filter((e) => e.type === 'evidence.added' || e.type === 'run.ended');
    assert.deepEqual(stopEvents.map((e) => e.type), ['evidence.added', 'run.ended']);
    for (const e of stopEvents) assert.deepEqual(e.actor, { kind: 'agent', id: 'claude-code', channel: 'hook' });

    // The run is over: its actions are no longer allowed, and a second Stop changes nothing.
    denied(await hook('pre-tool-use', claudeBash(dir, BUILD), { cwd: dir }), /no active contract/);
    const before = store.readLog('g').events.length;
    const again = await hook('stop', claudeStop(dir), { cwd: dir, env });
    assert.equal(again.code, 0);
    assert.deepEqual(JSON.parse(again.stdout), {});
    assert.equal(store.readLog('g').events.length, before);
  });

  it("Stop ends only this agent's run", async () => {
    const { dir, store, out } = governed();
    const [start] = await Promise.all([hook('session-start', vscodeSessionStart(dir), { cwd: dir, env: { LOOPX_AGENT: 'copilot' } })]);
    assert.equal(start!.code, 0, show(start!));
    const stop = await hook('stop', { timestamp: '2026-11-30T10:09:00.000Z', hookEventName: 'Stop', sessionId: 'vscode-chat-session-7b1c', stop_hook_active: false }, { cwd: dir, env: { LOOPX_AGENT: 'copilot' } });
    assert.equal(stop.code, 0, show(stop));
    const runs = store.load('g').state.runs;
    assert.equal(runs.length, 2);
    assert.ok(runs.find((r) => r.agent === 'copilot')?.endedAt, "copilot's run ended");
    assert.equal(runs.find((r) => r.id === out.run_id)?.endedAt, undefined, "claude-code's run goes on");
  });

  it('with two active goals, SessionStart asks for LOOPX_GOAL and opens nothing; with it set, uses that goal', async () => {
    const { dir, store } = workspace();
    invoke(store, 'goal.create', { goalId: 'g2', title: 'Second' }, human);
    invoke(store, 'todo.add', { goalId: 'g2', todoId: 'lint', title: 'lint', action: 'npm run lint' }, human);
    const [vague, chosen] = await Promise.all([
      hook('session-start', claudeSessionStart(dir), { cwd: dir }),
      hook('session-start', vscodeSessionStart(dir), { cwd: dir, env: { LOOPX_GOAL: 'g2', LOOPX_AGENT: 'copilot' } }),
    ]);
    assert.equal(vague!.code, 0, show(vague!));
    const ctx = (JSON.parse(vague!.stdout) as { hookSpecificOutput: { additionalContext: string } }).hookSpecificOutput.additionalContext;
    assert.match(ctx, /no single active goal is set \(set LOOPX_GOAL\)/);
    assert.equal(store.load('g').state.runs.length, 0);

    assert.equal(chosen!.code, 0, show(chosen!));
    const ctx2 = (JSON.parse(chosen!.stdout) as { hookSpecificOutput: { additionalContext: string } }).hookSpecificOutput.additionalContext;
    const contract = ShouldRunOutput.parse(JSON.parse(ctx2.slice(ctx2.indexOf('\n') + 1)));
    assert.equal(contract.goal_id, 'g2');
    assert.deepEqual(contract.interaction_contract.cli_channel.next_cli_actions, [`loopx exec --contract ${contract.interaction_contract.id} --todo lint -- 'npm run lint'`]);
    assert.equal(store.load('g2').state.runs[0]?.agent, 'copilot');
  });
});
