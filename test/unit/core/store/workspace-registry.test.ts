/** The machine's list of workspaces (store/workspace-registry.ts): listed once, pruned, never fooled by a hand-edited entry. */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  forgetWorkspace,
  isRegistered,
  listWorkspaces,
  registerWorkspace,
  registryDir,
  Store,
  workspaceId,
} from '../../../../src/core/index';
import { removeTempDirs, tempDir } from '../../../helpers/store';

after(removeTempDirs);

const NOW = '2026-12-05T10:00:00.000Z';

describe('the registry of workspaces', () => {
  it('lists a workspace on init and on its first write, once', () => {
    const config = tempDir('loopx-reg-config-');
    const ws = fs.realpathSync(tempDir('loopx-reg-ws-'));
    const store = Store.init(ws, { configDir: config });
    assert.ok(isRegistered(config, ws));
    const [entry] = listWorkspaces(config).workspaces;
    assert.equal(entry!.path, ws);
    assert.equal(entry!.name, path.basename(ws));
    assert.equal(entry!.identity, store.identity().id);
    assert.equal(
      registerWorkspace(config, ws, store.identity().id, NOW),
      false,
      'listed already: nothing written',
    );
    assert.deepEqual(fs.readdirSync(registryDir(config)), [`${workspaceId(ws)}.json`]);
  });

  it('a read-only store lists nothing', () => {
    const config = tempDir('loopx-reg-config-');
    const ws = fs.realpathSync(tempDir('loopx-reg-ws-'));
    Store.init(ws, { configDir: tempDir('loopx-reg-other-') });
    new Store(ws, { configDir: config, readOnly: true }).register();
    assert.equal(isRegistered(config, ws), false);
    new Store(ws, { configDir: config }).register();
    assert.equal(isRegistered(config, ws), true);
  });

  it('prunes an entry whose .loopx/ is gone, and only leaves it out when asked not to prune', () => {
    const config = tempDir('loopx-reg-config-');
    const a = fs.realpathSync(tempDir('loopx-reg-a-'));
    const b = fs.realpathSync(tempDir('loopx-reg-b-'));
    Store.init(a, { configDir: config });
    Store.init(b, { configDir: config });
    fs.rmSync(path.join(b, '.loopx'), { recursive: true });
    const kept = listWorkspaces(config, { prune: false });
    assert.deepEqual(kept.pruned, [b]);
    assert.ok(isRegistered(config, b), 'not removed without prune');
    const pruned = listWorkspaces(config);
    assert.deepEqual(
      pruned.workspaces.map((w) => w.path),
      [a],
    );
    assert.equal(isRegistered(config, b), false);
  });

  it('skips entries that are not entries: bad JSON, a relative path, a control character, a copy under another id', () => {
    const config = tempDir('loopx-reg-config-');
    const ws = fs.realpathSync(tempDir('loopx-reg-ws-'));
    Store.init(ws, { configDir: config });
    const dir = registryDir(config);
    const good = JSON.parse(fs.readFileSync(path.join(dir, `${workspaceId(ws)}.json`), 'utf8'));
    fs.writeFileSync(path.join(dir, 'broken.json'), '{');
    fs.writeFileSync(
      path.join(dir, `${'1'.repeat(32)}.json`),
      JSON.stringify({ ...good, path: 'relative/dir' }),
    );
    fs.writeFileSync(
      path.join(dir, `${'2'.repeat(32)}.json`),
      JSON.stringify({ ...good, name: 'evil\u001b[2J' }),
    );
    fs.writeFileSync(path.join(dir, `${'3'.repeat(32)}.json`), JSON.stringify(good));
    const list = listWorkspaces(config);
    assert.deepEqual(
      list.workspaces.map((w) => w.path),
      [ws],
      'listed once',
    );
    assert.equal(list.problems.length, 4);
    for (const p of list.problems) assert.match(p, /is not a workspace entry/);
  });

  it('forget removes the entry and leaves .loopx/ alone', () => {
    const config = tempDir('loopx-reg-config-');
    const ws = fs.realpathSync(tempDir('loopx-reg-ws-'));
    Store.init(ws, { configDir: config });
    assert.equal(forgetWorkspace(config, ws), true);
    assert.equal(forgetWorkspace(config, ws), false);
    assert.ok(fs.existsSync(path.join(ws, '.loopx', 'goals')));
    assert.deepEqual(listWorkspaces(config).workspaces, []);
  });
});
