/**
 * The allow list reads the workspace, and only the workspace (issue 34, findings 6 and 9): a
 * command the policy's `allowCommands` allows with no contract must not name a path that leads
 * outside the workspace, into `.loopx/local/` or into the user's config folder (the workspace's
 * contract and snapshot keys, the person's encrypted keys), by `..`, by an absolute path or through
 * a symbolic link; nor run from a folder outside the workspace; nor write a file (`file -C`).
 * As an agent tries it: the BUILT `loopx hook pre-tool-use`, a Claude Code payload on stdin, the
 * default policy `init` writes. Run `npm run build` first.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { Sandbox, loopx, ok, removeTempDirs } from '../helpers/security';
import type { Result } from '../helpers/security';
import { show } from '../helpers/cli';
import { decisionOf } from '../helpers/hook-answers';

after(removeTempDirs);

/** A Claude Code PreToolUse payload for the Bash tool. */
const payload = (cwd: string, command: string) => ({
  session_id: '5b7c1e2a-0d4f-4c3b-9a8e-7f6d5c4b3a21',
  transcript_path: '/home/dev/.claude/projects/-work-app/5b7c1e2a.jsonl',
  cwd,
  permission_mode: 'default',
  hook_event_name: 'PreToolUse',
  tool_name: 'Bash',
  tool_input: { command, description: 'read it' },
  tool_use_id: 'toolu_01Reach',
});

/** The hook as the host runs it: in `hookCwd` (default the workspace), the shell at `shellCwd`. */
function bash(
  sb: Sandbox,
  command: string,
  o: { shellCwd?: string; hookCwd?: string } = {},
): Promise<Result> {
  return loopx(['hook', 'pre-tool-use'], {
    cwd: o.hookCwd ?? sb.dir,
    env: { LOOPX_CONFIG_DIR: sb.config, LOOPX_WORKSPACE: sb.dir },
    input: JSON.stringify(payload(o.shellCwd ?? sb.dir, command)),
  });
}

function allowed(r: Result, command: string) {
  assert.equal(decisionOf(r), 'allow', `${command}\n${show(r)}`);
}
function notAllowed(r: Result, command: string) {
  assert.notEqual(decisionOf(r), 'allow', `${command} was allowed with no contract:\n${show(r)}`);
  assert.equal(r.code, 2, `${command}\n${show(r)}`);
}

/** A workspace `init` made (the default allow list), with a goal so the config folder holds keys. */
async function workspace(): Promise<Sandbox> {
  const sb = new Sandbox();
  ok(await sb.run(['init']));
  await sb.json(['goal', 'create', '--goal-id', 'g', '--title', 'Target']);
  fs.writeFileSync(sb.file('README.md'), '# app\n');
  fs.mkdirSync(sb.file('src'));
  fs.writeFileSync(sb.file('src', 'a.ts'), 'export const a = 1; // TODO\n');
  assert.ok(fs.readdirSync(sb.secretsDir()).length > 0, 'the config folder holds the workspace keys');
  return sb;
}

describe('security: the allow list never reaches outside the workspace', { concurrency: true }, () => {
  it('recursive reads of a folder above the workspace are not allowed (finding 6)', async () => {
    const sb = await workspace();
    const above = path.dirname(sb.dir);
    assert.ok(sb.config.startsWith(above + path.sep), 'the config folder is beside the workspace');
    const commands = [
      `grep -r -a -H "" ..`,
      `grep -r -a -H "" ${above}`,
      `rg -uuu -a "" ..`,
      `rg -uuu -a --no-messages "" ${above}`,
      'find .. -type f',
      `find ${above} -type f`,
      'ls -la ..',
      'cat ../../etc/passwd',
      'cat /etc/passwd',
      `grep -r --include=*.json "" src/../..`,
      `grep -r -a -H "" --exclude-dir=x -- ..`,
      `git diff --no-index ${path.join(above, 'x')} README.md`,
      `grep -rf${path.join(sb.secretsDir(), 'x')} src`,
      `grep -r --file=../x src`,
      `cat '~/.config/loopx/keys/x.json'`,
    ];
    const results = await Promise.all(commands.map((c) => bash(sb, c)));
    results.forEach((r, i) => notAllowed(r, commands[i]!));
  });

  it('a symbolic link inside the workspace does not lead out of it, nor into .loopx/local/', async () => {
    const sb = await workspace();
    fs.symlinkSync('..', sb.file('up'));
    fs.symlinkSync(sb.config, sb.file('cfg'));
    fs.symlinkSync(path.join('.loopx', 'local'), sb.file('cache'));
    fs.symlinkSync(path.dirname(sb.dir), sb.file('src', 'deep'));
    const commands = [
      'grep -r -a -H "" up',
      'ls cfg',
      'find cfg -type f',
      'ls cache',
      'cat cache/writer',
      'grep -r "" src/deep/nothing-there-yet',
      'rg -uuu "" src/deep',
    ];
    const results = await Promise.all(commands.map((c) => bash(sb, c)));
    results.forEach((r, i) => notAllowed(r, commands[i]!));
  });

  it('nothing is allowed by pattern when the shell is outside the workspace', async () => {
    const sb = await workspace();
    const above = path.dirname(sb.dir);
    for (const command of ['ls', 'grep -r -a -H ""', 'find . -type f', 'pwd'])
      notAllowed(await bash(sb, command, { shellCwd: above, hookCwd: above }), command);
  });

  it('nothing is allowed by pattern when the payload says the shell is outside (the hook itself in the workspace)', async () => {
    const sb = await workspace();
    const above = path.dirname(sb.dir);
    for (const command of ['ls', 'grep -r -a -H ""', 'find . -type f'])
      notAllowed(await bash(sb, command, { shellCwd: above }), command);
  });

  it('file -C (compile a magic file) is not allowed: it writes X.mgc (finding 9)', async () => {
    const sb = await workspace();
    fs.writeFileSync(sb.file('X'), '0 string ABC abc\n');
    const commands = [
      'file -C -m X',
      'file -bC -m X',
      'file -Cm X',
      'file --compile -m X',
      'file --comp -m X',
    ];
    const results = await Promise.all(commands.map((c) => bash(sb, c)));
    results.forEach((r, i) => notAllowed(r, commands[i]!));
    assert.ok(!fs.existsSync(sb.file('X.mgc')));
  });

  it('reads of the workspace stay allowed, from its root and from a folder in it', async () => {
    const sb = await workspace();
    const commands = [
      'ls',
      'ls -la src',
      'cat README.md',
      'grep -rn TODO src',
      'grep -r -a -H ""',
      'rg -n TODO',
      'find . -type f -name "*.ts"',
      'file README.md',
      'file -b --mime-type README.md',
      'git status',
      'wc -l src/a.ts ./README.md',
      'head -n 3 src/../README.md',
      'pwd',
    ];
    const results = await Promise.all(commands.map((c) => bash(sb, c)));
    results.forEach((r, i) => allowed(r, commands[i]!));
    for (const command of ['cat a.ts', 'ls ..', 'grep -rn TODO ../README.md'])
      allowed(await bash(sb, command, { shellCwd: sb.file('src'), hookCwd: sb.file('src') }), command);
  });
});
