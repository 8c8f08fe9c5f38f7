/**
 * Commands a person explores from the palette, in a real VS Code (code-server + Chromium, the
 * packaged .vsix) on a window of two LoopX folders made with the real CLI: `alpha` and
 * `Bad Name!` (a space and a `!`). Preview Contract shows what an agent would get and writes
 * nothing; Open Dashboard in Browser on a configured port that another program holds says so in a
 * notification whose Use a Free Port opens the dashboard; Self-Repair repairs `Bad Name!` while
 * `alpha`'s policy.json is broken, and names `alpha` and why.
 *
 *   npm run build && node scripts/test/run-suite.mjs test/ui editor-commands
 *
 * Screenshots under test-results/ui/ (contract-preview.png; editor-commands-failed-<n>.png when a
 * step fails), and docs/screenshots/contract-preview.png with LOOPX_UPDATE_SCREENSHOTS=1.
 */
import { describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { execFileSync } from 'node:child_process';
import type { Browser, Page } from 'playwright-core';
import { Store } from '../../src/core/index';
import { treeChanges, treeSnapshot } from '../helpers/fs-snapshot';
import type { CodeServer, HostModule, InstallModule, PackageModule } from '../helpers/workbench';
import {
  closeOverlays,
  finishUiRun,
  keepServerLines,
  loadScript,
  notification,
  notificationTexts,
  openLoopxView,
  runAndPick,
  REPO,
  runFromPalette,
  saveShot,
  SHOT_DIRS,
  treeRow,
  uiSteps,
  until as untilWithin,
  VIEWPORT,
  webviewContent,
  WORKBENCH_SETTINGS,
} from '../helpers/workbench';

const ACTIVATION_MS = 90_000;
const UI_MS = 20_000;
const until = <T>(what: string, fn: () => T | Promise<T>, timeoutMs = UI_MS, everyMs = 100) =>
  untilWithin(what, fn, timeoutMs, everyMs);

/** `loopx --workspace <ws> …`: the real, built CLI. */
function loopx(ws: string, ...args: string[]): string {
  return execFileSync(process.execPath, [path.join(REPO, 'bin', 'loopx.js'), '--workspace', ws, ...args], {
    encoding: 'utf8',
    timeout: 15_000,
  });
}

/** A port held by "another program" (this test), on the loopback address the server binds. */
function holdPort(): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => resolve(srv));
  });
}

describe('Preview Contract, Open Dashboard in Browser and Self-Repair in a real VS Code (two folders, one named "Bad Name!")', () => {
  let tmp = '';
  let alpha = '';
  let bad = '';
  let server: CodeServer | undefined;
  let browser: Browser | undefined;
  let page: Page;
  let busy: net.Server | undefined;
  const serverLog: string[] = [];
  let failed = false;
  const shots: string[] = [];
  const timings: Record<string, number> = {};

  /** it(), plus a screenshot of the window and its notifications when the step fails. */
  const step = uiSteps(
    'editor-commands',
    () => page,
    async (n) => {
      failed = true;
      const notes = await notificationTexts(page).catch((err: unknown) => [`(unreadable: ${String(err)})`]);
      console.log(`editor-commands: notifications when step ${n} failed:\n${notes.join('\n---\n')}`);
    },
  );

  before(
    async () => {
      const t0 = Date.now();
      (await loadScript<InstallModule>('scripts/hosts/vscode-host/install.mjs')).ensureHost();
      const host = await loadScript<HostModule>('scripts/hosts/vscode-host/server.mjs');
      const { packageVsix } = await loadScript<PackageModule>('scripts/build/package.mjs');
      for (const f of fs.existsSync(SHOT_DIRS.at(-1)!) ? fs.readdirSync(SHOT_DIRS.at(-1)!) : []) {
        if (/^editor-commands-failed-.*\.png$/.test(f)) fs.rmSync(path.join(SHOT_DIRS.at(-1)!, f));
      }
      tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-cmds-')));
      const vsix = packageVsix({ out: path.join(tmp, 'loopx.vsix') });
      alpha = path.join(tmp, 'alpha');
      bad = path.join(tmp, 'Bad Name!');
      for (const dir of [alpha, bad]) {
        fs.mkdirSync(dir);
        loopx(dir, 'init');
      }
      loopx(alpha, 'goal', 'create', '--goal-id', 'alpha-goal', '--title', 'Alpha goal', '--turns', '12');
      const add = (...a: string[]) => loopx(alpha, 'todo', 'add', '--goal-id', 'alpha-goal', ...a);
      add('--todo-id', 'lint', '--title', 'Lint the sources', '--action', 'npm run lint', '--priority', 'P1');
      add('--todo-id', 'ship', '--title', 'Ship it', '--action', 'echo ship', '--gate', 'deploy');
      loopx(bad, 'goal', 'create', '--goal-id', 'bad-goal', '--title', 'Goal of the bad name');
      const file = path.join(tmp, 'two.code-workspace');
      fs.writeFileSync(file, JSON.stringify({ folders: [{ path: 'alpha' }, { path: 'Bad Name!' }] }));
      busy = await holdPort();
      timings.setup = Date.now() - t0;

      const t1 = Date.now();
      server = await host.startCodeServer({
        vsix: vsix.file,
        settings: {
          ...WORKBENCH_SETTINGS,
          // A port the person chose, which another program holds by the time they use it.
          'loopx.statusServer.port': (busy.address() as net.AddressInfo).port,
        },
        onOutput: keepServerLines(serverLog),
      });
      browser = await host.launchChromium(server);
      page = await browser.newPage({ viewport: VIEWPORT, deviceScaleFactor: 1 });
      page.on('dialog', (d) => void d.dismiss().catch(() => {}));
      await page.goto(`${server.origin}/?${new URLSearchParams({ workspace: file })}`, {
        timeout: ACTIVATION_MS,
      });
      await openLoopxView(page, ACTIVATION_MS);
      await treeRow(page, 'Bad Name!').waitFor({ timeout: ACTIVATION_MS });
      await treeRow(page, 'Goal of the bad name').waitFor({ timeout: UI_MS });
      timings.workbench = Date.now() - t1;
    },
    { timeout: 900_000 },
  );

  after(async () => {
    busy?.close();
    await finishUiRun('editor-commands', { failed, serverLog, browser, server, tmp, timings, shots });
  });

  step(
    '(1) Preview Contract: the decision, the commands and the blocking gate, readable, with nothing written under .loopx/',
    120_000,
    async () => {
      const t = Date.now();
      // The window has settled (the gate's notification is up): from here on nothing may write.
      await notification(page, 'Gate deploy of goal "Alpha goal"', UI_MS);
      await closeOverlays(page);
      const before = treeSnapshot(path.join(alpha, '.loopx'), path.join(bad, '.loopx'));
      await runAndPick(page, 'LoopX: Preview Contract', 'Alpha goal');
      const preview = webviewContent(page).locator('body');
      const text = await until('the preview to show the decision', async () => {
        const s = (await preview.innerText().catch(() => '')).replace(/\u00a0/g, ' ');
        return s.includes('Contract preview') && s.includes('npm run lint') ? s : undefined;
      });
      assert.match(text, /RUN is what loopx quota should-run would answer agent vscode on goal alpha-goal/);
      assert.match(text, /Commands the agent may run \(1\)/);
      assert.match(text, /lint: Lint the sources\s+npm run lint/);
      assert.match(text, /Gates blocking other work \(1\)\s+deploy \(pending\)/);
      assert.match(text, /turns: 12 left of 12 \(0 used\)/);
      assert.match(text, /open a run with a signed contract: one turn of the budget/);
      await saveShot(page, 'contract-preview.png', shots);
      assert.deepEqual(
        treeChanges(before, treeSnapshot(path.join(alpha, '.loopx'), path.join(bad, '.loopx'))),
        [],
        'no file under .loopx/ changed',
      );
      assert.equal(new Store(alpha).load('alpha-goal').state.runs.length, 0, 'no run was opened');
      // It follows the goal: a todo added at the command line shows up in the open preview.
      loopx(alpha, 'todo', 'add', '--goal-id', 'alpha-goal', '--title', 'Format', '--action', 'npm run fmt');
      await until('the open preview to list the new command', async () =>
        (await preview.innerText().catch(() => '')).includes('npm run fmt'),
      );
      timings.preview = Date.now() - t;
    },
  );

  step(
    '(2) Open Dashboard in Browser for "Bad Name!" on a port another program holds: a notification names it, and Use a Free Port opens the dashboard',
    120_000,
    async () => {
      const t = Date.now();
      const port = (busy!.address() as net.AddressInfo).port;
      await closeOverlays(page);
      await runAndPick(page, 'LoopX: Open Dashboard in Browser', 'Bad Name!');
      const note = await notification(page, `cannot start on port ${port}`, UI_MS);
      assert.match(await note.innerText(), /loopx\.statusServer\.port.*another program is using it/s);
      const popup = page.context().waitForEvent('page', { timeout: UI_MS });
      await note.getByRole('button', { name: 'Use a Free Port' }).click();
      const dash = await popup;
      await dash.waitForLoadState('domcontentloaded');
      assert.doesNotMatch(dash.url(), new RegExp(`[:/]${port}(/|$)`), `not the busy port: ${dash.url()}`);
      await until('the dashboard page with the folder’s goal', async () => {
        const body = await dash
          .locator('body')
          .innerText()
          .catch(() => '');
        return (await dash.title()) === 'LoopX Dashboard' && body.includes('Goal of the bad name');
      });
      await dash.close();
      timings.dashboard = Date.now() - t;
    },
  );

  step(
    '(3) Self-Repair with alpha’s policy.json broken: "Bad Name!" is repaired, and the notification names alpha and why',
    120_000,
    async () => {
      const t = Date.now();
      fs.writeFileSync(path.join(alpha, '.loopx', 'policy.json'), '{ "v": 1, broken');
      // A damaged cache in "Bad Name!": what self-repair finds and rebuilds there.
      const badStore = new Store(bad);
      fs.writeFileSync(badStore.snapshotPath('bad-goal'), 'not a snapshot\n');
      assert.ok(badStore.readSnapshot('bad-goal').problem, 'the cache is damaged');
      await closeOverlays(page);
      await runFromPalette(page, 'LoopX: Run Self-Repair');
      const note = await notification(page, 'Self-repair could not repair folder alpha', UI_MS);
      const text = await note.innerText();
      assert.match(text, /alpha \(.*policy\.json.*not valid JSON/s, text);
      assert.match(text, /The other: 1 finding, 1 fixed in 1 folder/, text);
      assert.equal(new Store(bad).readSnapshot('bad-goal').problem, undefined, 'rebuilt');
      timings.repair = Date.now() - t;
    },
  );
});
