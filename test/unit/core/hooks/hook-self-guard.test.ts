/**
 * The hook guards what it is made of (issue 34): which paths are files that decide what the hook
 * is (hook-files.ts), read through the same scanner as LoopX state (loopx-state.ts); the shell
 * command a tool call runs, VS Code's task tool included, and the size past which a call is
 * refused unread (tool-input.ts); the shim that names its own runtime and CLI (shim.ts).
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { invoke } from '../../../../src/core/capabilities/registry';
import { hookFiles, mayWrite } from '../../../../src/core/hooks/hook-files';
import type { HookFileScope } from '../../../../src/core/hooks/hook-files';
import { applyHooks, planHooks } from '../../../../src/core/hooks/install';
import { loopxStateScanner, realish } from '../../../../src/core/hooks/loopx-state';
import { preToolUse } from '../../../../src/core/hooks/pre-tool-use';
import {
  HOOK_SHIM,
  hookShimChanges,
  OLDER_HOOK_SHIM_TARGET,
  readHookShim,
  writeHookShim,
} from '../../../../src/core/hooks/shim';
import {
  MAX_COMMAND_CHARS,
  MAX_INPUT_CHARS,
  inputStrings,
  toolCommand,
} from '../../../../src/core/hooks/tool-input';
import { doctor } from '../../../../src/core/setup/doctor';
import { Store } from '../../../../src/core/store/store';
import { parseLoopx } from '../../../../src/cli/main';
import { human, removeTempDirs, tempDir, tempStore } from '../../../helpers/store';

after(removeTempDirs);

/** A workspace with hooks installed as the extension does (the shim in a folder of its own). */
function setUp() {
  const root = fs.realpathSync(tempDir());
  const ws = path.join(root, 'ws');
  const home = path.join(root, 'home');
  const storage = path.join(root, 'storage');
  const install = path.join(root, 'ext', 'loopx-1.0.0');
  for (const d of [ws, home, path.join(install, 'bin'), path.join(install, 'dist')])
    fs.mkdirSync(d, { recursive: true });
  const cli = path.join(install, 'bin', 'loopx.js');
  fs.writeFileSync(cli, '');
  fs.writeFileSync(path.join(install, 'dist', 'cli.js'), '');
  const shim = writeHookShim(storage, { node: process.execPath, cli });
  applyHooks(planHooks(ws, shim));
  const scope: HookFileScope = {
    cwd: ws,
    workspace: ws,
    home,
    configDirs: [path.join(root, 'config')],
    env: { CLAUDE_CONFIG_DIR: path.join(root, 'claude-config') },
  };
  return { root, ws, home, storage, install, cli, shim, scope };
}

describe('the files that decide what the hook is', () => {
  it('each host’s settings file in any folder, in any case; the shim, its older target, its CLI, the cache', () => {
    const s = setUp();
    const h = hookFiles(s.scope);
    for (const p of [
      path.join(s.ws, '.claude', 'settings.local.json'),
      path.join(s.ws, '.claude', 'settings.json'),
      path.join(s.ws, '.github', 'hooks', 'loopx.json'),
      path.join(s.home, '.claude', 'settings.json'),
      path.join('/elsewhere', '.CLAUDE', 'Settings.Local.JSON.'),
      s.shim,
      path.join(s.storage, OLDER_HOOK_SHIM_TARGET),
      s.cli,
      path.join(s.install, 'dist', 'cli.js'),
      path.join(s.home, '.cache', 'loopx', 'cli-1-2-v22-x64.bin'),
      path.join(s.root, 'config', 'bin', HOOK_SHIM),
      path.join(s.root, 'claude-config', 'settings.json'),
    ])
      assert.equal(h.protects(p, false), true, p);
    for (const p of [
      path.join(s.ws, 'src', 'settings.json'),
      path.join(s.ws, '.github', 'workflows', 'ci.yml'),
      path.join(s.storage, 'cli.target'),
      path.join(s.install, 'README.md'),
      path.join(s.ws, HOOK_SHIM),
    ])
      assert.equal(h.protects(p, true), false, p);
  });

  it('a folder holding one counts when asked, unless the tool runs in it or below it', () => {
    const s = setUp();
    const h = hookFiles(s.scope);
    for (const p of [path.join(s.ws, '.claude'), path.join(s.ws, '.github'), s.storage, s.install]) {
      assert.equal(h.protects(p, true), true, p);
      assert.equal(h.protects(p, false), false, p);
    }
    // Where the tool runs, and above: every path is under them.
    for (const p of [s.ws, s.root, '/']) assert.equal(h.protects(p, true), false, p);
    // A folder holding none yet: the home folder has no .claude/ here.
    assert.equal(h.protects(path.join(s.home, '.claude'), true), false);
  });

  it('tools that only read are not asked; any other tool is', () => {
    for (const t of ['Read', 'Grep', 'Glob', 'read_file', 'Task']) assert.equal(mayWrite(t), false, t);
    for (const t of ['Write', 'Edit', 'MultiEdit', 'apply_patch', 'create_file', 'mcp__fs__write'])
      assert.equal(mayWrite(t), true, t);
  });

  it('through the scanner: a link to a settings file, `..`; a word of an MCP tool’s text names no folder', () => {
    const s = setUp();
    fs.symlinkSync(path.join(s.ws, '.claude', 'settings.local.json'), path.join(s.ws, 'notes.json'));
    const scan = loopxStateScanner({
      ...s.scope,
      configDirs: s.scope.configDirs,
      hookFiles: hookFiles(s.scope),
    });
    const write = { hooks: true, folders: 'strong' } as const;
    assert.equal(scan.strings(['notes.json'], write)?.where, 'hook');
    assert.equal(scan.strings(['src/../.claude/settings.json'], write)?.where, 'hook');
    assert.equal(scan.strings(['Tidy the .github folder'], write), undefined);
    assert.equal(scan.strings(['rm -rf .github'])?.where, 'hook', 'a shell word names a folder');
    assert.equal(scan.strings(['notes.json'], { hooks: false, folders: 'strong' }), undefined);
  });
});

describe('where a write lands (realish)', () => {
  it('follows a dangling link, stops at a loop, and costs one look-up for a long missing path', () => {
    const root = fs.realpathSync(tempDir());
    fs.symlinkSync(path.join(root, 'target', 'x'), path.join(root, 'dangling'));
    const cache = new Map<string, string | null>();
    assert.equal(realish(path.join(root, 'dangling', 'y'), cache), path.join(root, 'target', 'x', 'y'));
    fs.symlinkSync(path.join(root, 'b'), path.join(root, 'a'));
    fs.symlinkSync(path.join(root, 'a'), path.join(root, 'b'));
    assert.equal(realish(path.join(root, 'a', 'f'), new Map()), undefined);
    const deep = path.join(root, ...Array.from({ length: 1500 }, (_, i) => `d${i}`));
    const started = process.hrtime.bigint();
    for (let i = 0; i < 200; i++) realish(`${deep}${i}`, new Map());
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    assert.equal(realish(deep, new Map()), deep);
    assert.ok(ms < 2000, `${ms} ms`);
  });
});

describe('the command of a tool call', () => {
  it('command, cmd, commandLine; VS Code’s task.command with plain args; anything else unread', () => {
    assert.deepEqual(toolCommand({ command: 'ls' }), { command: 'ls' });
    assert.deepEqual(toolCommand({ cmd: 'ls -la' }), { command: 'ls -la' });
    assert.deepEqual(toolCommand({ commandLine: 'dir' }), { command: 'dir' });
    assert.deepEqual(toolCommand({ task: { label: 'b', type: 'shell', command: 'npm run build' } }), {
      command: 'npm run build',
    });
    assert.deepEqual(toolCommand({ task: { command: 'rm', args: ['-rf', '/'] } }), { command: 'rm -rf /' });
    for (const task of [
      { command: 'echo', args: ["' ; rm -rf / ; '"] },
      { command: 'echo', args: ['a b'] },
      { command: 'echo', args: [{ value: 'x', quoting: 'strong' }] },
      { command: { value: 'rm -rf /' } },
      { command: 'echo', args: 'x' },
    ])
      assert.ok('unreadable' in toolCommand({ task })!, JSON.stringify(task));
    assert.equal(
      toolCommand({ task: { label: 'build' } }),
      undefined,
      'a task by its label runs no command here',
    );
    assert.equal(toolCommand({ file_path: 'x' }), undefined);
  });

  it('a command over MAX_COMMAND_CHARS, or an input over MAX_INPUT_CHARS, is refused unread', () => {
    assert.ok('command' in toolCommand({ command: 'x'.repeat(MAX_COMMAND_CHARS) })!);
    const long = toolCommand({ command: 'x'.repeat(MAX_COMMAND_CHARS + 1) })!;
    assert.ok('unreadable' in long && /too long/.test(long.unreadable));
    assert.ok('strings' in inputStrings('mcp__x__y', { a: 'x'.repeat(MAX_INPUT_CHARS - 1) }));
    const big = inputStrings('mcp__x__y', { a: 'x'.repeat(MAX_INPUT_CHARS) });
    assert.ok('unreadable' in big && /too long/.test(big.unreadable));
    assert.ok('strings' in inputStrings('Write', { file_path: 'a', content: 'x'.repeat(MAX_INPUT_CHARS) }));
  });
});

describe('PreToolUse refuses writes to hook files with `hook_file`', () => {
  it('Write of the settings, Bash naming the shim; a Read is left to the host', () => {
    const store = tempStore();
    invoke(store, 'goal.create', { goalId: 'g', title: 'G' }, human);
    const storage = tempDir();
    const shim = writeHookShim(storage, { node: process.execPath, cli: path.join(storage, 'loopx.js') });
    applyHooks(planHooks(store.workspace, shim));
    const call = (tool_name: string, tool_input: unknown) =>
      preToolUse(
        store,
        { tool_name, tool_input, cwd: store.workspace },
        { parseLoopx, cwd: store.workspace, env: { HOME: '/nonexistent-home' } },
      );
    const file = path.join(store.workspace, '.claude', 'settings.local.json');
    assert.equal(call('Write', { file_path: file, content: '{}' }).denied?.code, 'hook_file');
    assert.equal(call('Bash', { command: `cp x ${shim}` }).denied?.code, 'hook_file');
    assert.deepEqual(call('Read', { file_path: file }).output, {});
  });
});

describe('the shim names its runtime and CLI itself', () => {
  it('reads them back, paths with spaces and quotes too; an older shim is told apart', () => {
    const dir = path.join(tempDir(), "it's a dir");
    const target = { node: '/opt/node 22/bin/node', cli: "/opt/it's loopx/bin/loopx.js" };
    const shim = writeHookShim(dir, target);
    assert.deepEqual(readHookShim(shim), { target });
    fs.writeFileSync(
      shim,
      '#!/bin/sh\n# LoopX agent-hook shim, written by LoopX. Agent hosts call it\ntarget="$here/loopx-hook.target"\n',
    );
    assert.deepEqual(readHookShim(shim), { older: true });
    fs.writeFileSync(shim, '#!/bin/sh\necho not ours\n');
    assert.equal(readHookShim(shim), undefined);
    assert.equal(readHookShim(path.join(dir, 'missing')), undefined);
  });

  it('an older target file beside it is a change, and rewriting removes it; a relative path is refused', () => {
    const dir = tempDir();
    const target = { node: process.execPath, cli: '/opt/loopx/bin/loopx.js' };
    writeHookShim(dir, target);
    assert.equal(hookShimChanges(dir, target), false);
    fs.writeFileSync(path.join(dir, OLDER_HOOK_SHIM_TARGET), `${process.execPath}\n/tmp/evil.js\n`);
    assert.equal(hookShimChanges(dir, target), true);
    writeHookShim(dir, target);
    assert.equal(fs.existsSync(path.join(dir, OLDER_HOOK_SHIM_TARGET)), false);
    assert.throws(() => writeHookShim(dir, { node: 'node', cli: target.cli }), /absolute path/);
    assert.throws(() => writeHookShim(dir, { node: process.execPath, cli: '/x\n/y' }), /absolute path/);
  });

  it('`loopx doctor` reads the runtime and CLI from the shim, and fails on an older one', () => {
    const ws = tempDir();
    Store.init(ws);
    const dir = tempDir();
    const cli = path.join(dir, 'loopx.js');
    fs.writeFileSync(cli, '');
    const shim = writeHookShim(dir, { node: process.execPath, cli });
    applyHooks(planHooks(ws, shim));
    const hooksCheck = () => {
      const doc = doctor({
        entry: cli,
        execPath: process.execPath,
        nodeVersion: '22.1.0',
        env: { PATH: '' },
        cwd: ws,
        configDir: path.join(tempDir(), 'loopx'),
        runtimeRuns: () => true,
      });
      return doc.checks.find((c) => c.id === 'hooks')!;
    };
    assert.ok(hooksCheck().message.includes(`${shim} runs ${process.execPath} ${cli}`), hooksCheck().message);
    fs.writeFileSync(
      shim,
      '#!/bin/sh\n# LoopX agent-hook shim, written by LoopX. Agent hosts call it\ntarget="$here/loopx-hook.target"\n',
    );
    const c = hooksCheck();
    assert.equal(c.status, 'fail');
    assert.match(c.message, /older LoopX: it runs what the file beside it names/);
    assert.equal(c.fix, 'loopx hooks install');
  });
});
