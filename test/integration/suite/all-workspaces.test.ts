/**
 * All workspaces in the real host: two more workspaces on the machine (listed in the run's config
 * folder when they were made), each with a pending gate, show in the dashboard's All workspaces
 * queue beside this window's own; a change in one of them (outside this window) reaches the panel
 * through the watcher; an item opens its own window, and a folder the machine's list does not name
 * opens nothing.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import {
  addWebhook,
  checkWebhook,
  forgetWorkspace,
  invoke,
  removeWebhook,
  Store,
  updateChannels,
} from '../../../src/core/index';
import { api, loopxCli, until, workspaceDir } from './util';

const agent = { kind: 'agent' as const, id: 'codex', channel: 'cli' as const };

/** A workspace outside this window with a goal whose todo waits behind gate `gateId`. */
function otherWorkspace(name: string, gateId: string): string {
  const dir = path.join(fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-all-'))), name);
  fs.mkdirSync(dir);
  const store = Store.init(dir);
  invoke(
    store,
    'goal.create',
    { goalId: `${name}-goal`, title: `Goal of ${name}`, objective: 'ship' },
    agent,
  );
  invoke(
    store,
    'todo.add',
    { goalId: `${name}-goal`, todoId: 'ship', title: 'Ship it', action: `./deploy.sh ${name}`, gate: gateId },
    agent,
  );
  return dir;
}

export function registerAllWorkspacesTests(): void {
  describe('All workspaces in the VS Code dashboard', function () {
    const made: string[] = [];
    after(() => {
      for (const d of made) {
        forgetWorkspace(process.env.LOOPX_CONFIG_DIR!, d);
        fs.rmSync(path.dirname(d), { recursive: true, force: true });
      }
    });

    it('shows one queue across three workspaces, follows a change outside the window, and opens only listed folders', async () => {
      assert.ok(process.env.LOOPX_CONFIG_DIR, 'the run sets its own config folder');
      const alpha = otherWorkspace('alpha', 'prod');
      const beta = otherWorkspace('beta', 'review');
      made.push(alpha, beta);
      const { dashboard, workspaces } = await api();
      const own = workspaces.folders()[0]!.folder.uri.fsPath;
      await vscode.commands.executeCommand('loopx.openDashboard');
      const section = () => {
        const m = dashboard.lastPosted;
        return m?.type === 'status' ? m.everywhere : undefined;
      };
      // A change in this window's workspace makes the panel read everything again.
      const r = loopxCli(['project_prompt', 'create', '--title', 'All workspaces', '--description', '']);
      assert.equal(r.status, 0, r.stderr);
      const s = await until(
        'All workspaces with alpha and beta',
        () => {
          const x = section();
          return x && x.items.some((i) => i.folder === alpha) && x.items.some((i) => i.folder === beta)
            ? x
            : undefined;
        },
        20_000,
      );
      const names = s.workspaces.map((w) => w.path);
      for (const p of [own, alpha, beta]) assert.ok(names.includes(p), `${p} listed in ${names.join(', ')}`);
      assert.equal(s.workspaces.find((w) => w.path === own)!.here, true);
      assert.equal(s.workspaces.find((w) => w.path === alpha)!.here, false);
      const prod = s.items.find((i) => i.folder === alpha && i.kind === 'gate')!;
      assert.equal(prod.id, 'prod');
      assert.deepEqual(prod.commands, ['./deploy.sh alpha']);
      assert.match(prod.requested_by ?? '', /codex/);
      assert.match(prod.key, /^[0-9a-f]{32}$/);
      // Gates come first, across workspaces.
      const firstOther = s.items.findIndex((i) => i.kind !== 'gate');
      if (firstOther !== -1) assert.ok(s.items.slice(firstOther).every((i) => i.kind !== 'gate'));

      // A gate requested in beta, by a process outside this window, reaches the panel. VS Code
      // starts its watcher of a folder outside the window asynchronously: a change in its first
      // moment can pass unseen (the next one is seen), so the change comes once it is up.
      await new Promise((r) => setTimeout(r, 3000));
      const betaStore = new Store(beta);
      invoke(
        betaStore,
        'gate.request',
        { goalId: 'beta-goal', gateId: 'late', reason: 'one more', guards: [] },
        agent,
      );
      await until(
        'the new gate of beta',
        () => section()?.items.some((i) => i.folder === beta && i.id === 'late'),
        30_000,
      );

      // Opening: a listed folder opens its window; anything else opens nothing.
      const opened: unknown[] = [];
      const commands = vscode.commands as unknown as Record<string, unknown>;
      const original = commands.executeCommand as (...a: unknown[]) => Thenable<unknown>;
      commands.executeCommand = (id: unknown, ...rest: unknown[]) => {
        if (id === 'vscode.openFolder') {
          opened.push(rest[0]);
          return Promise.resolve(undefined);
        }
        return original.call(vscode.commands, id, ...rest);
      };
      try {
        await dashboard.onMessage({ type: 'open-workspace', folder: alpha, goalId: 'alpha-goal' });
        assert.equal(opened.length, 1);
        assert.equal((opened[0] as vscode.Uri).fsPath, alpha);
        await dashboard.onMessage({ type: 'open-workspace', folder: os.tmpdir() });
        assert.equal(opened.length, 1, 'a folder not on the machine list opens nothing');
        const m = dashboard.lastPosted;
        assert.equal(m?.type, 'error');
      } finally {
        commands.executeCommand = original;
      }
      assert.ok(fs.existsSync(workspaceDir()));
    });

    it('sends the notices of the person’s channels from the open window, each once', async () => {
      const config = process.env.LOOPX_CONFIG_DIR!;
      const bodies: string[] = [];
      const receiver = http.createServer((req, res) => {
        let body = '';
        req.on('data', (c: Buffer) => (body += c.toString('utf8')));
        req.on('end', () => {
          bodies.push(body);
          res.writeHead(204).end();
        });
      });
      await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
      try {
        const gamma = otherWorkspace('gamma', 'ship-it');
        made.push(gamma);
        // Setting the channel is the person's (the config folder); the window's sender sees the file.
        updateChannels(config, (c) => addWebhook(c, checkWebhook({ name: 'it', kind: 'generic', url })));
        const ofGamma = () =>
          bodies.filter((b) => {
            const n = JSON.parse(b) as { kind?: string; id?: string; workspace?: { path?: string } };
            return n.kind === 'gate' && n.id === 'ship-it' && n.workspace?.path === gamma;
          });
        await until('the notice of gamma’s gate', () => ofGamma().length === 1, 15_000);
        const n = JSON.parse(ofGamma()[0]!) as { commands?: string[]; link?: string };
        assert.deepEqual(n.commands, ['./deploy.sh gamma']);
        assert.match(n.link ?? '', /\/decide\/[0-9a-f]{32}\/gamma-goal\/ship-it$/);
        // A later change anywhere makes another pass: the notice is not sent again.
        invoke(new Store(gamma), 'todo.add', { goalId: 'gamma-goal', title: 'More', action: 'true' }, agent);
        await new Promise((r) => setTimeout(r, 2000));
        assert.equal(ofGamma().length, 1, 'sent once');
      } finally {
        updateChannels(config, (c) => removeWebhook(c, 'it'));
        await new Promise((r) => receiver.close(r));
      }
    });
  });
}
