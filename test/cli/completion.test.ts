/**
 * `loopx completion bash|zsh|fish` on the built CLI: the bash script loads in bash and completes
 * commands, subcommands, options, option values and goal ids (asked of `loopx` itself); every
 * top-level command of the program is in each script; an unknown shell is exit 2.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { buildProgram } from '../../src/cli/main';
import { Ws, removeTempDirs, ok, fails, sh, shq, loopxOnPath } from '../helpers/cli';

after(removeTempDirs);

const TOP = buildProgram(
  { stdout: () => undefined, stderr: () => undefined },
  () => async () => undefined,
).commands.map((c) => c.name());

describe('completion', { concurrency: true }, () => {
  const ws = new Ws();
  let script = '';
  before(async () => {
    ok(await ws.run('goal', 'create', '--title', 'Completed', '--goal-id', 'alpha'));
    ok(await ws.run('goal', 'create', '--title', 'Also', '--goal-id', 'beta'));
    script = ws.file('loopx.bash');
    fs.writeFileSync(script, ok(await ws.run('completion', 'bash')).stdout);
  });

  /** What bash offers after `line` (the cursor at its end), with the script loaded. */
  async function complete(line: string): Promise<string[]> {
    const words = line.split(' ');
    const cmd = [
      `source ${script}`,
      `COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')})`,
      `COMP_CWORD=${words.length - 1}`,
      '_loopx',
      'printf "%s\\n" "${COMPREPLY[@]}"',
    ].join('; ');
    const r = ok(
      await sh(`bash -c ${shq(cmd)}`, { cwd: ws.dir, env: { PATH: `${loopxOnPath()}:${process.env.PATH}` } }),
    );
    return r.stdout.split('\n').filter(Boolean).sort();
  }

  it('bash: the script loads and registers itself (complete -p loopx)', async () => {
    const r = ok(await sh(`bash -c 'source ${script} && complete -p loopx'`, { cwd: ws.dir }));
    assert.equal(r.stdout.trim(), 'complete -F _loopx loopx');
    const inline = ok(
      await sh(
        `bash -c 'source <(${process.execPath} ${path.resolve('bin/loopx.js')} completion bash) && complete -p loopx'`,
        { cwd: ws.dir },
      ),
    );
    assert.equal(inline.stdout.trim(), 'complete -F _loopx loopx');
  });

  it('bash completes commands, subcommands, options, fixed values and goal ids', async () => {
    assert.deepEqual(await complete('loopx '), [...TOP].sort());
    assert.deepEqual(await complete('loopx to'), ['todo']);
    assert.deepEqual(await complete('loopx todo s'), ['show']);
    assert.ok((await complete('loopx todo add --')).includes('--depends-on'));
    assert.ok((await complete('loopx todo add --')).includes('--json'), 'global options too');
    assert.deepEqual(await complete('loopx todo add --title x --pri'), ['--priority']);
    assert.deepEqual(await complete('loopx todo add --priority '), ['P0', 'P1', 'P2', 'P3']);
    assert.deepEqual(await complete('loopx --format '), ['json', 'text']);
    assert.deepEqual(await complete('loopx completion '), ['bash', 'fish', 'zsh'], 'a fixed-choice argument');
    assert.deepEqual(await complete('loopx run show --goal-id '), ['alpha', 'beta']);
    assert.deepEqual(
      await complete('loopx summary-all --goal-id a'),
      ['alpha'],
      'an alias leads to its command',
    );
    assert.deepEqual(
      await complete('loopx exec --contract c --todo t -- np'),
      [],
      'after --: the shell’s own completion',
    );
  });

  it('every top-level command is in each script; zsh and fish scripts are produced', async () => {
    const scripts = await Promise.all(
      ['bash', 'zsh', 'fish'].map(async (s) => ok(await ws.run('completion', s)).stdout),
    );
    for (const [i, text] of scripts.entries())
      for (const name of TOP)
        assert.ok(text.includes(name), `${['bash', 'zsh', 'fish'][i]} script names ${name}`);
    const [, zsh, fish] = scripts as [string, string, string];
    assert.match(zsh, /^#compdef loopx\n/);
    assert.match(zsh, /compdef _loopx loopx/);
    assert.ok(
      fish.includes(`\ncomplete -c loopx -f -n '__loopx_at \\'\\'' -a 'todo' -d `),
      'top-level commands at the top',
    );
    assert.ok(
      fish.includes(`\ncomplete -c loopx -n '__loopx_at \\'todo add\\'' -l priority -x -a 'P0 P1 P2 P3' -d `),
    );
    assert.match(fish, /-l goal-id -x -a '\(__loopx_goal_ids\)'/);
  });

  it('an unknown shell is exit 2, naming the choices', async () => {
    fails(await ws.run('completion', 'powershell'), 2, /powershell/, /bash, zsh, fish/);
    fails(await ws.run('completion'), 2, /shell/);
  });
});
