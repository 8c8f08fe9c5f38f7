/**
 * Finding the workspace like git finds its repo: the nearest `.loopx/` at or above the current
 * folder, or `--workspace DIR` (before or after the command), or LOOPX_WORKSPACE.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { StatusDoc, GoalStatusDoc } from '../../src/core/index';
import { Ws, tempDir, removeTempDirs, loopx, ok, fails, json } from '../helpers/cli';
import type { Result } from '../helpers/cli';
import { writerLog } from '../helpers/log-kit';

after(removeTempDirs);

const seen = (r: Result) => {
  const d = json(r, StatusDoc);
  return { workspace: d.workspace, goals: d.goals.map((g) => g.id) };
};

describe('the workspace', { concurrency: true }, () => {
  describe('found from where the command runs', { concurrency: 1 }, () => {
    // An outer workspace with goal `outer`, and inside it (packages/inner) a second workspace
    // made by `loopx init` there, with goal `inner`.
    const outer = new Ws();
    const inner = new Ws(path.join(outer.dir, 'packages', 'inner'));
    const deep = path.join(outer.dir, 'src', 'a', 'b', 'c');
    before(async () => {
      fs.mkdirSync(inner.dir, { recursive: true });
      fs.mkdirSync(deep, { recursive: true });
      ok(await outer.run('init'));
      ok(await inner.run('init'));
      await Promise.all([
        outer.run('goal', 'create', '--title', 'Outer goal', '--goal-id', 'outer').then(ok),
        inner.run('goal', 'create', '--title', 'Inner goal', '--goal-id', 'inner').then(ok),
      ]);
    });

    it('`init` in a subfolder of a workspace makes a new workspace there, like `git init`', () => {
      assert.ok(fs.existsSync(writerLog(inner.dir, 'inner')));
      assert.equal(fs.existsSync(path.join(outer.dir, '.loopx', 'goals', 'inner')), false);
    });

    it('walks up from a subfolder to the nearest .loopx/; a nested workspace hides the outer one', async () => {
      const sub = path.join(inner.dir, 'lib');
      fs.mkdirSync(sub);
      const [fromDeep, fromSub] = await Promise.all([
        loopx(['status', '--json'], { cwd: deep }),
        loopx(['status', '--json'], { cwd: sub }),
      ]);
      assert.deepEqual(seen(fromDeep), { workspace: outer.dir, goals: ['outer'] });
      assert.deepEqual(seen(fromSub), { workspace: inner.dir, goals: ['inner'] });
    });

    it('writes go to the workspace found above, and create nothing where the command runs', async () => {
      ok(
        await loopx(['todo', 'add', '--goal-id', 'outer', '--title', 'From deep down', '--todo-id', 'deep'], {
          cwd: deep,
        }),
      );
      assert.ok(
        outer
          .events('outer')
          .some((e) => e.type === 'todo.added' && (e.data.todo as { id: string }).id === 'deep'),
      );
      assert.equal(fs.existsSync(path.join(deep, '.loopx')), false);
    });

    it('--workspace DIR, before or after the command, relative to the current folder', async () => {
      const elsewhere = tempDir();
      const [a, b] = await Promise.all([
        loopx(['--workspace', inner.dir, 'status', '--json'], { cwd: elsewhere }),
        loopx(['status', '--json', '--workspace', 'packages/inner'], { cwd: outer.dir }),
      ]);
      assert.deepEqual(seen(a), { workspace: inner.dir, goals: ['inner'] });
      assert.deepEqual(seen(b), { workspace: inner.dir, goals: ['inner'] });
    });

    it('LOOPX_WORKSPACE wins over the folder the command runs in; --workspace wins over LOOPX_WORKSPACE', async () => {
      const elsewhere = tempDir();
      const [env, envInDeep, flag] = await Promise.all([
        loopx(['status', '--json'], { cwd: elsewhere, env: { LOOPX_WORKSPACE: outer.dir } }),
        loopx(['status', '--json'], { cwd: deep, env: { LOOPX_WORKSPACE: inner.dir } }),
        loopx(['--workspace', inner.dir, 'status', '--json'], {
          cwd: elsewhere,
          env: { LOOPX_WORKSPACE: outer.dir },
        }),
      ]);
      assert.deepEqual(seen(env), { workspace: outer.dir, goals: ['outer'] });
      assert.deepEqual(seen(envInDeep), { workspace: inner.dir, goals: ['inner'] });
      assert.deepEqual(seen(flag), { workspace: inner.dir, goals: ['inner'] });
    });
  });

  describe('when there is none', { concurrency: 1 }, () => {
    it('no workspace here or above: exit 3, saying to run `loopx init` or pass --workspace; a read creates nothing', async () => {
      const lonely = tempDir();
      assert.equal(
        fs.existsSync(path.join(path.dirname(lonely), '.loopx')),
        false,
        'the temp folder’s parent must not be a workspace',
      );
      const [status, list] = await Promise.all([
        loopx(['status'], { cwd: lonely }),
        loopx(['todo', 'list', '--goal-id', 'outer'], { cwd: lonely }),
      ]);
      fails(status, 3, /no LoopX workspace here or above/, /loopx init/, /--workspace/);
      fails(list, 3, /loopx init/);
      assert.deepEqual(fs.readdirSync(lonely), []);
    });

    it('a --workspace or LOOPX_WORKSPACE that does not exist or has no .loopx/: exit 3 naming the folder and where it came from', async () => {
      const base = tempDir();
      const missing = path.join(base, 'missing');
      const [flag, env, empty] = await Promise.all([
        loopx(['--workspace', missing, 'status'], { cwd: base }),
        loopx(['status'], { cwd: base, env: { LOOPX_WORKSPACE: missing } }),
        loopx(['--workspace', base, 'status'], { cwd: base }),
      ]);
      fails(flag, 3, new RegExp(`the workspace folder ${missing} does not exist \\(from --workspace\\)`));
      fails(env, 3, new RegExp(`${missing} does not exist \\(from LOOPX_WORKSPACE\\)`));
      fails(empty, 3, new RegExp(`no LoopX workspace at ${base}`), /loopx init/);
    });

    it('`project_prompt create` makes one in the current folder (a note on stderr, only JSON on stdout)', async () => {
      const fresh = tempDir();
      const r = await loopx(
        ['project_prompt', 'create', '--title', 'First goal', '--description', 'from nothing', '--json'],
        { cwd: fresh },
      );
      const doc = json(r, GoalStatusDoc);
      assert.match(r.stderr, new RegExp(`initialised a LoopX workspace in ${fresh}`));
      assert.ok(fs.existsSync(writerLog(fresh, doc.id)));
      assert.equal(doc.objective, 'from nothing');
    });
  });
});
