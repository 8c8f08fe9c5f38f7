/** The queue across workspaces (reach/needs-you.ts) and the dashboard's All workspaces section built from it. */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  everywhereSection,
  invoke,
  needsYou,
  NeedsYouDoc,
  Store,
  workspaceId,
} from '../../../../src/core/index';
import { writerLog } from '../../../helpers/log-kit';
import { agent, human, removeTempDirs, tempDir } from '../../../helpers/store';

after(removeTempDirs);

function workspace(config: string, name: string): { dir: string; store: Store } {
  const dir = path.join(fs.realpathSync(tempDir('loopx-queue-')), name);
  fs.mkdirSync(dir);
  const store = Store.init(dir, { configDir: config });
  invoke(store, 'goal.create', { goalId: 'g', title: `Goal of ${name}`, objective: 'o' }, human);
  return { dir, store };
}

describe('what needs you across workspaces', () => {
  const config = tempDir('loopx-queue-config-');
  const a = workspace(config, 'alpha');
  const b = workspace(config, 'beta');
  const c = workspace(config, 'gamma');
  invoke(
    a.store,
    'todo.add',
    { goalId: 'g', todoId: 't', title: 'Deploy', action: 'make deploy', gate: 'prod' },
    agent,
  );
  invoke(b.store, 'todo.add', { goalId: 'g', todoId: 't', title: 'Fix', action: 'true' }, agent);
  invoke(b.store, 'todo.add', { goalId: 'g', todoId: 'you', title: 'Rotate the key', owner: 'user' }, agent);
  invoke(c.store, 'todo.add', { goalId: 'g', todoId: 't', title: 'Fix', action: 'true' }, agent);

  it('lists gates first with their commands and the workspace key, then the rest', () => {
    const doc = NeedsYouDoc.parse(needsYou({ configDir: config }));
    assert.deepEqual(
      doc.items.map((i) => [i.workspace.name, i.kind, i.id]),
      [
        ['alpha', 'gate', 'prod'],
        ['beta', 'user-todo', 'you'],
      ],
    );
    assert.deepEqual(doc.items[0]!.commands, ['make deploy']);
    assert.equal(doc.items[0]!.workspace.key, workspaceId(a.dir));
    assert.deepEqual(
      doc.workspaces.map((w) => [w.name, w.items]),
      [
        ['alpha', 1],
        ['beta', 1],
        ['gamma', 0],
      ],
    );
    assert.deepEqual(
      needsYou({ configDir: config, kinds: ['gate'] }).items.map((i) => i.id),
      ['prod'],
    );
  });

  it('names a workspace it cannot read and goes on with the others', () => {
    const file = writerLog(c.dir, 'g');
    const before = fs.readFileSync(file);
    fs.writeFileSync(file, '{ not json\n');
    try {
      const doc = needsYou({
        configDir: config,
        open: (w) => new Store(w.path, { configDir: config, readOnly: true }),
      });
      const gamma = doc.workspaces.find((w) => w.name === 'gamma')!;
      assert.match(gamma.problem ?? '', /goal g/);
      assert.ok(doc.items.some((i) => i.workspace.name === 'alpha'));
    } finally {
      fs.writeFileSync(file, before);
    }
  });

  it('All workspaces: hidden when only this window’s workspaces are listed, each item marked here or not', () => {
    const doc = needsYou({ configDir: config });
    assert.equal(everywhereSection(doc, [a.dir, b.dir, c.dir]), undefined);
    const s = everywhereSection(doc, [a.dir])!;
    assert.deepEqual(
      s.items.map((i) => [i.workspace, i.here]),
      [
        ['alpha', true],
        ['beta', false],
      ],
    );
    assert.deepEqual(
      s.workspaces.map((w) => w.here),
      [true, false, false],
    );
  });
});
