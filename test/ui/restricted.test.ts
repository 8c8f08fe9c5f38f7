/**
 * Restricted Mode writes nothing, in a real VS Code (code-server + Chromium) opened with workspace
 * trust on and a folder nobody trusted: a LoopX workspace made with the CLI (a goal, a todo an
 * agent could start, a pending gate), its caches and lock folder removed so that any reader would
 * make them again, and a fake HOME (its `.local/bin`, the LoopX config folder). Every file there,
 * and in LoopX's global storage, is pictured before the window opens (content and mtime); then
 * activation, every `loopx.*` command (called with arguments by the probe extension, as other
 * code can), every LoopX language-model tool, the chat handler, the MCP provider and a terminal
 * are tried, and nothing may have changed. The tree shows no Approve or Reject. Last, the person
 * trusts the folder: Approve shows, the store is writable, and terminals and MCP follow.
 *
 *   npm run build && node scripts/test/run-suite.mjs test/ui restricted
 */
import { after, before, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Locator } from 'playwright-core';
import { Store } from '../../src/core/index';
import type { TreeSnapshot } from '../helpers/fs-snapshot';
import { treeChanges, treeSnapshot } from '../helpers/fs-snapshot';
import type { ProbeAnswer, ProbeWorkbench } from '../helpers/probe-workbench';
import { loopxCli, loopxLog, openProbeWorkbench, probeCalls } from '../helpers/probe-workbench';
import {
  REPO,
  approveLink,
  closeOverlays,
  finishUiRun,
  modal,
  notification,
  notificationTexts,
  openLoopxView,
  runFromPalette,
  saveShot,
  treeRow,
  uiSteps,
  until,
  visible,
} from '../helpers/workbench';

const MANIFEST = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')) as {
  contributes: { commands: { command: string }[]; languageModelTools: { name: string }[] };
};
/** Commands that only show what is there: they run in Restricted Mode, and must write nothing. */
const READING = new Set([
  'loopx.requestContract', // a preview: it opens no run
  'loopx.showEventLog',
  'loopx.openDashboard',
  'loopx.openEvidence',
  'loopx.refresh',
  'loopx.stopStatusServer',
]);
const RESTRICTED = /\[workspace_untrusted\] This workspace is in Restricted Mode.*Manage Workspace Trust/;

describe('Restricted Mode in a real VS Code (code-server + Chromium, workspace trust on)', () => {
  let tmp = '';
  let w: ProbeWorkbench;
  const serverLog: string[] = [];
  const timings: Record<string, number> = {};
  const shots: string[] = [];
  let failed = false;
  let before0: TreeSnapshot;
  const dir = (...p: string[]) => path.join(tmp, ...p);
  const ws = () => dir('project');
  const home = () => dir('home');
  let globalStorage = '';
  /** Everything LoopX could write: the workspace's .loopx/, ~/.local, the config folder, its storage. */
  const picture = () =>
    treeSnapshot(
      path.join(ws(), '.loopx'),
      path.join(home(), '.local'),
      dir('home', '.config'),
      globalStorage,
    );
  const assertUnchanged = (when: string) =>
    assert.deepEqual(treeChanges(before0, picture()), [], `nothing written ${when}`);
  const cliEnv = () => ({ HOME: home(), LOOPX_CONFIG_DIR: dir('home', '.config', 'loopx') });

  const step = uiSteps(
    'restricted',
    () => w?.page,
    () => (failed = true),
  );

  /** The Gates row of the goal, and the pending gate's row, hovered so inline actions render. */
  async function gateRow(): Promise<Locator> {
    const { page } = w;
    await closeOverlays(page);
    await openLoopxView(page);
    const expand = async (row: Locator) => {
      await row.waitFor({ timeout: 20_000 });
      if ((await row.getAttribute('aria-expanded')) !== 'true')
        await row.locator('.monaco-tl-twistie').click();
    };
    await expand(treeRow(page, 'Release'));
    await expand(treeRow(page, 'Gates'));
    const row = treeRow(page, 'deploy');
    await row.waitFor({ timeout: 20_000 });
    await row.hover();
    return row;
  }
  const decideActions = (row: Locator) =>
    row.locator('.action-label[aria-label^="Approve Gate"], .action-label[aria-label^="Reject Gate"]');

  before(
    async () => {
      const t0 = Date.now();
      tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-restricted-')));
      fs.mkdirSync(path.join(home(), '.local', 'bin'), { recursive: true });
      fs.mkdirSync(ws());
      fs.mkdirSync(dir('out'));
      const cli = (args: string[], env: NodeJS.ProcessEnv = {}) =>
        loopxCli(ws(), args, { ...cliEnv(), ...env });
      cli(['init']);
      cli(['goal', 'create', '--goal-id', 'g', '--title', 'Release']);
      // A todo an agent may start now: asking for a contract would open a run.
      cli(['todo', 'add', '--goal-id', 'g', '--todo-id', 'build', '--title', 'Build', '--action', 'make']);
      cli('todo add --goal-id g --title Deploy --action ./deploy.sh --gate deploy'.split(' '));
      // What any reader would make again (an older LoopX did, on activation): caches and locks.
      for (const d of ['cache', 'locks'])
        fs.rmSync(path.join(ws(), '.loopx', 'local', d), { recursive: true });
      w = await openProbeWorkbench({
        tmp,
        target: ws(),
        probeDir: dir('probe'),
        serverLog,
        trust: true,
        env: cliEnv(),
        // No question at startup: the folder opens in Restricted Mode, as when a person declines.
        settings: { 'security.workspace.trust.startupPrompt': 'never' },
        beforeOpen: (server) => {
          globalStorage = path.join(
            server.tmpRoot,
            'user-data',
            'User',
            'globalStorage',
            'loopx.loopx-vscode',
          );
          before0 = picture();
        },
      });
      timings.workbench = Date.now() - t0;
    },
    { timeout: 900_000 },
  );

  after(() =>
    finishUiRun('restricted', {
      failed,
      serverLog,
      browser: w?.browser,
      server: w?.server,
      tmp,
      timings,
      shots,
    }),
  );

  step(
    'activation and the tree write nothing, and the tree offers no Approve or Reject',
    120_000,
    async () => {
      const t = Date.now();
      const [trusted] = await probeCalls(w, [{ kind: 'trusted' }]);
      assert.equal(trusted?.value, false, 'the folder is in Restricted Mode');
      const row = await gateRow();
      await until('LoopX to have read the goals', () =>
        /untrusted workspace: read-only/.test(loopxLog(w.server)),
      );
      await saveShot(w.page, 'restricted-tree.png', shots);
      assert.equal(await decideActions(row).count(), 0, 'no Approve or Reject on the pending gate');
      // The gate's notification says why nothing can be decided here, and links to no decision.
      const note = await notification(w.page, 'Gate deploy of goal "Release" waits for your decision');
      assert.match(await note.innerText(), /This workspace is in Restricted Mode: trust it/);
      assert.equal(await approveLink(note).count(), 0, 'no Approve link');
      await w.page.keyboard.press('Escape');
      // The view's own title bar offers no Create Goal either.
      assert.equal(await w.page.locator('.part.sidebar .action-label[aria-label^="Create Goal"]').count(), 0);
      // The first look at the store is after activation: give the refresh a moment, then look.
      await new Promise((r) => setTimeout(r, 3000));
      assertUnchanged('by activation, the tree and the status bar');
      timings.activation = Date.now() - t;
    },
  );

  step(
    'every loopx.* command, called with arguments, writes nothing; each that would write says why',
    240_000,
    async () => {
      const t = Date.now();
      const args = {
        folder: ws(),
        goalId: 'g',
        gateId: 'deploy',
        todoId: 'build',
        runId: 'run-x',
        title: 'A goal',
        objective: 'x',
        summary: 'done',
        turns: 1,
        score: 1,
        note: 'n',
        workflow: 'code-review',
        dir: path.join(home(), '.local', 'bin'),
      };
      const ids = MANIFEST.contributes.commands.map((c) => c.command);
      assert.ok(ids.length >= 25, `the manifest's commands: ${ids.join(', ')}`);
      const answers = await probeCalls(
        w,
        ids.map((id) => ({ kind: 'command', id, args: [args] })),
      );
      const log = loopxLog(w.server);
      const problems: string[] = [];
      ids.forEach((id, i) => {
        const a: ProbeAnswer | undefined = answers[i];
        if (!a || a.pending)
          problems.push(`${id}: ${a ? 'still waiting (it asked something)' : 'no answer'}`);
        else if (!READING.has(id) && !new RegExp(`${id.replace('.', '\\.')}: ${RESTRICTED.source}`).test(log))
          problems.push(`${id}: no Restricted Mode refusal in the log (answered ${JSON.stringify(a)})`);
      });
      assert.deepEqual(problems, [], `the LoopX log:\n${log}`);
      await closeOverlays(w.page);
      assert.ok(
        (await notificationTexts(w.page)).some((n) => /This workspace is in Restricted Mode/.test(n)),
        'the person is told why, and how to trust the folder',
      );
      assertUnchanged('by any command');
      timings.commands = Date.now() - t;
    },
  );

  step(
    'every LoopX language-model tool: writing ones refuse naming Restricted Mode, reading ones read',
    180_000,
    async () => {
      const t = Date.now();
      const [listed] = await probeCalls(w, [{ kind: 'tools' }]);
      const names = MANIFEST.contributes.languageModelTools.map((x) => x.name);
      assert.deepEqual([...(listed?.value as string[])].sort(), [...names].sort(), 'every tool is there');
      const input = {
        goalId: 'g',
        todoId: 'build',
        contractId: 'c-x',
        title: 'T',
        summary: 's',
        gateId: 'x',
        reason: 'r',
      };
      const answers = await probeCalls(
        w,
        names.map((name) => ({ kind: 'tool', name, input: name === 'loopx_get_status' ? {} : input })),
      );
      const byName = new Map(names.map((n, i) => [n, answers[i]!]));
      const status = byName.get('loopx_get_status')!;
      assert.ok(status.ok && /"loopx\.status\/1"/.test(String(status.value)), JSON.stringify(status));
      // Every other tool writes (loopx_get_contract opens a run for the todo an agent may start).
      for (const [name, a] of byName) {
        if (name === 'loopx_get_status') continue;
        assert.ok(!a.ok && RESTRICTED.test(a.error ?? ''), `${name}: ${JSON.stringify(a)}`);
      }
      assertUnchanged('by any tool');
      timings.tools = Date.now() - t;
    },
  );

  step(
    'chat answers without a writing button, no MCP server is offered, terminals get nothing',
    180_000,
    async () => {
      const t = Date.now();
      const out = dir('out', 'terminal.txt');
      const [status, gates, contract, mcp, term] = await probeCalls(w, [
        { kind: 'chat' },
        { kind: 'chat', command: 'gates' },
        { kind: 'chat', command: 'contract' },
        { kind: 'mcp' },
        {
          kind: 'terminal',
          folder: 'project',
          lines: [`echo "ws=$LOOPX_WORKSPACE" >> ${out}`, `echo "path=$PATH" >> ${out}`],
        },
      ]);
      for (const [what, a] of [
        ['status', status],
        ['gates', gates],
        ['contract', contract],
      ] as const) {
        const v = a?.value as { markdown: string; buttons: string[] };
        assert.ok(a?.ok, `@loopx /${what}: ${JSON.stringify(a)}`);
        assert.match(v.markdown, /Restricted Mode/, `@loopx /${what} says why`);
        assert.deepEqual(
          v.buttons.filter((b) => !READING.has(b)),
          [],
          `@loopx /${what} buttons`,
        );
      }
      assert.match((gates!.value as { markdown: string }).markdown, /deploy/, 'the pending gate is shown');
      assert.deepEqual(mcp?.value, [], 'no MCP server in Restricted Mode');
      // VS Code asks to trust the folder before it starts a terminal in Restricted Mode; the person
      // declines, and the shell starts still restricted: LoopX gave it nothing.
      assert.ok(term?.ok, JSON.stringify(term));
      const ask = await modal(w.page);
      assert.match(await ask.innerText(), /Creating a terminal process requires executing code/);
      await ask.getByRole('button', { name: 'Cancel' }).click();
      const text = await until('the terminal output', () => {
        const t = fs.existsSync(out) ? fs.readFileSync(out, 'utf8') : '';
        return /path=/.test(t) ? t : undefined;
      });
      assert.match(text, /^ws=$/m, 'no LOOPX_WORKSPACE');
      assert.doesNotMatch(text, /loopx\.loopx-vscode[^:]*\/bin/, 'no loopx of the extension on PATH');
      assertUnchanged('by chat, MCP or a terminal');
      timings.surfaces = Date.now() - t;
    },
  );

  step(
    'once the person trusts the folder: Approve shows, the store is writable, terminals and MCP follow',
    240_000,
    async () => {
      const t = Date.now();
      const { page } = w;
      await closeOverlays(page);
      await runFromPalette(page, 'Workspaces: Manage Workspace Trust');
      const trust = page
        .locator('.workspace-trust-editor')
        .getByRole('button', { name: /^Trust( Folder)?$/ })
        .first();
      await trust.click({ timeout: 20_000 });
      await modal(page, 5000)
        .then((box) => box.getByRole('button', { name: /Trust/ }).first().click())
        .catch(() => {}); // a confirmation, when VS Code asks one
      await until(
        'the folder to be trusted',
        async () => (await probeCalls(w, [{ kind: 'trusted' }]))[0]?.value === true,
        60_000,
        1000,
      );
      // The Workspace Trust editor opens over the window: closed before the tree is used.
      await until(
        'the Workspace Trust editor to close',
        async () => {
          if (!(await visible(page.locator('.modal-editor-part, .workspace-trust-editor').first())))
            return true;
          const close = page.locator('.modal-editor-header [aria-label^="Close"]').first();
          if (await visible(close)) await close.click({ timeout: 2000 }).catch(() => {});
          else await page.keyboard.press('Escape');
          return false;
        },
        20_000,
        500,
      );
      // The gate is announced again, now with Approve and Reject.
      const note = await notification(page, 'Gate deploy of goal "Release" waits for your decision');
      await until('the notification to offer Approve', async () => (await approveLink(note).count()) === 1);
      assert.doesNotMatch(await note.innerText(), /Restricted Mode/);
      const row = await gateRow();
      await until('Approve on the pending gate', async () => {
        await row.hover();
        return (await decideActions(row).count()) === 2;
      });
      // Read again, writable: the caches a reader keeps come back; a person's pause is written.
      await until('the goal index to be written again', () =>
        fs.existsSync(path.join(ws(), '.loopx', 'local', 'cache', 'index.json')),
      );
      const [paused, mcp] = await probeCalls(w, [
        { kind: 'command', id: 'loopx.pauseGoal', args: [{ goalId: 'g' }] },
        { kind: 'mcp' },
      ]);
      assert.equal(paused?.value, 'paused', JSON.stringify(paused));
      assert.equal(
        new Store(ws(), { configDir: cliEnv().LOOPX_CONFIG_DIR }).load('g').state.status,
        'paused',
      );
      assert.deepEqual(mcp?.value, ['LoopX']);
      assert.ok(
        fs.existsSync(path.join(globalStorage, 'cli.target')),
        'the loopx command target is written now',
      );
      const out = dir('out', 'trusted.txt');
      await probeCalls(w, [
        { kind: 'terminal', folder: 'project', lines: [`echo "ws=$LOOPX_WORKSPACE" >> ${out}`] },
      ]);
      const text = await until(
        'the trusted terminal',
        () => (fs.existsSync(out) ? fs.readFileSync(out, 'utf8') : undefined),
        30_000,
      );
      assert.equal(text.trim(), `ws=${ws()}`);
      timings.trusted = Date.now() - t;
    },
  );
});
