/**
 * Every workspace on the machine: `loopx init` and the first write list a workspace in the config
 * folder; `loopx workspaces`, `loopx status --all` and `loopx gate list --all` read one queue
 * across them (three workspaces here, in a config folder of the test's own); a workspace whose
 * folder is gone is pruned; a hand-edited registry entry cannot add a folder twice or hide text.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { NeedsYouDoc, registryDir, WorkspacesDoc, workspaceId } from '../../src/core/index';
import { fails, json, loopx, loopxAsPerson, ok, removeTempDirs, tempDir } from '../helpers/cli';

after(removeTempDirs);

describe('every workspace on the machine', { concurrency: 1 }, () => {
  const config = tempDir('loopx-all-config-');
  const root = tempDir('loopx-all-');
  const env = { LOOPX_CONFIG_DIR: config };
  const dirs = {
    alpha: path.join(root, 'alpha'),
    beta: path.join(root, 'beta'),
    gamma: path.join(root, 'gamma'),
  };
  const run = (dir: string, ...args: string[]) => loopx(args, { cwd: dir, env });

  before(async () => {
    for (const [name, dir] of Object.entries(dirs)) {
      fs.mkdirSync(dir);
      ok(await run(dir, 'init'));
      ok(await run(dir, 'goal', 'create', '--goal-id', `${name}-goal`, '--title', `Goal of ${name}`));
    }
    ok(
      await run(
        dirs.alpha,
        'todo',
        'add',
        '--goal-id',
        'alpha-goal',
        '--todo-id',
        'ship',
        '--title',
        'Ship',
        '--action',
        './deploy.sh --env prod "all of it"',
        '--gate',
        'prod',
      ),
    );
    ok(
      await run(
        dirs.beta,
        'todo',
        'add',
        '--goal-id',
        'beta-goal',
        '--todo-id',
        'one',
        '--title',
        'One',
        '--action',
        'true',
      ),
    );
    ok(
      await run(
        dirs.beta,
        'gate',
        'request',
        '--goal-id',
        'beta-goal',
        '--gate-id',
        'review',
        '--reason',
        'look first',
      ),
    );
    ok(
      await run(
        dirs.gamma,
        'todo',
        'add',
        '--goal-id',
        'gamma-goal',
        '--todo-id',
        'one',
        '--title',
        'One',
        '--action',
        'true',
      ),
    );
  });

  it('lists each workspace once, from anywhere, with what it needs', async () => {
    const doc = json(await loopx(['--json', 'workspaces'], { cwd: root, env }), WorkspacesDoc);
    assert.deepEqual(
      doc.workspaces.map((w) => [w.name, w.path, w.items]),
      [
        ['alpha', dirs.alpha, 1],
        ['beta', dirs.beta, 1],
        ['gamma', dirs.gamma, 0],
      ],
    );
    for (const w of doc.workspaces) assert.match(w.identity ?? '', /^ws_[0-9a-f]{32}$/);
    const text = ok(await loopx(['workspaces'], { cwd: root, env })).stdout;
    assert.match(text, /alpha\s+1 needs you\s+\S*alpha/);
    assert.match(text, /gamma\s+nothing needs you/);
  });

  it('status --all: one queue across the three, gates first with every command whole', async () => {
    const doc = json(await loopx(['--json', 'status', '--all'], { cwd: root, env }), NeedsYouDoc);
    const gates = doc.items.filter((i) => i.kind === 'gate');
    assert.deepEqual(
      gates.map((g) => [g.workspace.name, g.goal_id, g.id]),
      [
        ['alpha', 'alpha-goal', 'prod'],
        ['beta', 'beta-goal', 'review'],
      ],
    );
    assert.deepEqual(gates[0]!.commands, ['./deploy.sh --env prod "all of it"']);
    assert.equal(gates[0]!.workspace.key, workspaceId(dirs.alpha));
    assert.match(gates[0]!.requested_by!, /at the command line/);
    assert.match(gates[0]!.cli!, /--workspace \S*alpha\S* gate approve --goal-id alpha-goal --gate-id prod/);
    assert.equal(
      doc.items.findIndex((i) => i.kind !== 'gate'),
      -1,
      'nothing else needs a person here',
    );
    const text = ok(await loopx(['status', '--all'], { cwd: root, env })).stdout;
    assert.match(text, /Needs you across 3 workspaces: 2 items/);
    assert.match(text, /\$ \.\/deploy\.sh --env prod "all of it"/);
    assert.match(text, /Nothing in: gamma/);
  });

  it('gate list --all: the pending gates only; the gate approved in alpha leaves the queue', async () => {
    const before = json(await loopx(['--json', 'gate', 'list', '--all'], { cwd: root, env }), NeedsYouDoc);
    assert.deepEqual(
      before.items.map((i) => i.id),
      ['prod', 'review'],
    );
    fails(
      await run(dirs.alpha, 'gate', 'list', '--all', '--goal-id', 'alpha-goal'),
      2,
      /--all or --goal-id, not both/,
    );
    fails(await run(dirs.alpha, 'gate', 'list'), 2, /--goal-id <id> \(one goal\) or --all/);
    // The decide command the queue gives, run by the person (their key's passphrase on fd 3).
    const cli = before.items[0]!.cli!.replace(/^loopx /, '');
    ok(
      await loopxAsPerson([...cli.split(' ').map((w) => w.replace(/^'|'$/g, '')), '--note', 'fine'], {
        cwd: root,
        env,
      }),
    );
    const after = json(await loopx(['--json', 'gate', 'list', '--all'], { cwd: root, env }), NeedsYouDoc);
    assert.deepEqual(
      after.items.map((i) => i.id),
      ['review'],
    );
  });

  it('prunes a workspace whose folder is gone, and ignores an entry copied under another name', async () => {
    fs.rmSync(path.join(dirs.gamma, '.loopx'), { recursive: true, force: true });
    // A copy of alpha's entry under another file name would list alpha twice.
    const reg = registryDir(config);
    fs.copyFileSync(
      path.join(reg, `${workspaceId(dirs.alpha)}.json`),
      path.join(reg, `${'0'.repeat(32)}.json`),
    );
    const r = await loopx(['--json', 'workspaces'], { cwd: root, env });
    const doc = json(r, WorkspacesDoc);
    assert.deepEqual(
      doc.workspaces.map((w) => w.name),
      ['alpha', 'beta'],
    );
    assert.deepEqual(doc.pruned, [dirs.gamma]);
    assert.equal(
      fs.existsSync(path.join(reg, `${workspaceId(dirs.gamma)}.json`)),
      false,
      'its entry is removed',
    );
    const again = json(await loopx(['--json', 'workspaces'], { cwd: root, env }), WorkspacesDoc);
    assert.deepEqual(again.pruned, []);
  });

  it('forget takes a workspace off the list; its next write lists it again', async () => {
    ok(await loopx(['workspaces', 'forget', dirs.beta], { cwd: root, env }));
    let doc = json(await loopx(['--json', 'workspaces'], { cwd: root, env }), WorkspacesDoc);
    assert.deepEqual(
      doc.workspaces.map((w) => w.name),
      ['alpha'],
    );
    ok(await run(dirs.beta, 'todo', 'add', '--goal-id', 'beta-goal', '--title', 'Two', '--action', 'true'));
    doc = json(await loopx(['--json', 'workspaces'], { cwd: root, env }), WorkspacesDoc);
    assert.deepEqual(
      doc.workspaces.map((w) => w.name),
      ['alpha', 'beta'],
    );
  });
});
