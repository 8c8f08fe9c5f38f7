/**
 * What a person reads in the LoopX view at the side bar's default width, in a real VS Code: the
 * packaged .vsix in code-server on a folder with no `.loopx/` yet, driven by headless Chromium.
 * The state is made with the real CLI, as an agent or the person at a terminal would make it:
 *   1. the Get Started walkthrough ticks off each step from that state, not from a command run;
 *   2. every row of the Goals tree shows its label and description whole (nothing cut with "…");
 *   3. a broken .loopx/policy.json is a row that says the fix, and a click opens the file there;
 *   4. the gate and dashboard steps, with the pictures the walkthrough shows;
 *   5. the Settings editor names the extension's settings "LoopX".
 *
 *   npm run build && node scripts/test/run-suite.mjs test/ui tree
 *
 * Screenshots under test-results/ui/ (tree-default-width, tree-policy-fix, walkthrough, settings;
 * tree-failed-<n>.png when a step fails), and with LOOPX_UPDATE_SCREENSHOTS=1 in docs/screenshots/
 * and the walkthrough's pictures in media/walkthrough/.
 */
import { describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { Store } from '../../src/core/index';
import type { CodeServer, HostModule, InstallModule, PackageModule } from '../helpers/workbench';
import {
  closeOverlays,
  expandRow,
  finishUiRun,
  loadScript,
  modal,
  openLoopxView,
  runFromPalette,
  saveShot,
  SHOT_DIRS,
  sidebarRows,
  treeRow,
  uiSteps,
  until as untilWithin,
  VIEWPORT,
  visible,
  quietAtDefaultWidth,
} from '../helpers/workbench';
import {
  hoverText,
  loopx,
  openLoopxWalkthrough,
  startWorkbench,
  saveWalkthroughImage,
  walkthroughTicks,
} from '../helpers/tree-view';

const UI_MS = 20_000;
const until = <T>(what: string, fn: () => T | Promise<T>, timeoutMs = UI_MS, everyMs = 100) =>
  untilWithin(what, fn, timeoutMs, everyMs);

const GOAL = 'checkout';
const STEPS = ['init', 'goal', 'todos', 'contract', 'gate', 'dashboard'];

describe('The LoopX view at the default width, the walkthrough and Settings (code-server + Chromium)', () => {
  let tmp = '';
  let ws = '';
  let server: CodeServer | undefined;
  let browser: Browser | undefined;
  let page: Page;
  const serverLog: string[] = [];
  let failed = false;
  const shots: string[] = [];
  const timings: Record<string, number> = {};

  const shot = (name: string, target: Page | Locator = page) => saveShot(target, name, shots);

  /** it(), plus a screenshot of the window under test-results/ui/ when the step fails. */
  const step = uiSteps(
    'tree',
    () => page,
    () => (failed = true),
  );

  /** Waits until the walkthrough shows exactly the steps `done` ticked off. */
  const ticked = (done: string[]) => walkthroughTicks(page, STEPS, done);
  const openWalkthrough = () => openLoopxWalkthrough(page);

  before(
    async () => {
      const t0 = Date.now();
      (await loadScript<InstallModule>('scripts/hosts/vscode-host/install.mjs')).ensureHost();
      const host = await loadScript<HostModule>('scripts/hosts/vscode-host/server.mjs');
      const { packageVsix } = await loadScript<PackageModule>('scripts/build/package.mjs');
      for (const f of fs.existsSync(SHOT_DIRS.at(-1)!) ? fs.readdirSync(SHOT_DIRS.at(-1)!) : []) {
        if (/^tree-failed-.*\.png$/.test(f)) fs.rmSync(path.join(SHOT_DIRS.at(-1)!, f));
      }
      tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-tree-')));
      const vsix = packageVsix({ out: path.join(tmp, 'loopx.vsix') });
      assert.ok(vsix.files.includes('dist/extension.js') && vsix.bytes > 0);
      // A project with a test script, and no .loopx/ yet: the walkthrough starts from nothing.
      ws = path.join(tmp, 'shop');
      fs.mkdirSync(ws);
      fs.writeFileSync(
        path.join(ws, 'package.json'),
        JSON.stringify({ name: 'shop', private: true, scripts: { test: 'echo "12 passed"' } }),
      );
      timings.setup = Date.now() - t0;
      const t1 = Date.now();
      ({ server, browser, page } = await startWorkbench(host, ws, vsix.file, serverLog));
      timings.workbench = Date.now() - t1;
    },
    { timeout: 900_000 },
  );

  after(() => finishUiRun('tree', { failed, serverLog, browser, server, tmp, timings, shots }));

  step(
    '(1) the walkthrough ticks off init, goal, todos, contract and gate as the CLI makes that state',
    240_000,
    async () => {
      const t = Date.now();
      await openLoopxView(page, UI_MS);
      const welcome = page.locator('.part.sidebar .welcome-view-content');
      await until('the welcome view offering Initialize LoopX', async () =>
        /Initialize LoopX/.test((await welcome.innerText().catch(() => '')) ?? ''),
      );
      // The view's progress bar runs while the extension starts: the picture is of the view after.
      const progress = page.locator('.part.sidebar .monaco-progress-container.active');
      await until('the LoopX view done loading', async () => !(await visible(progress.first())));
      await saveWalkthroughImage(page, 'init', { rows: 0, height: 220 }, shots);

      await openWalkthrough();
      await ticked([]);

      loopx(ws, ['init']);
      await ticked(['init']);
      const goal = (id: string, title: string, description: string) =>
        loopx(ws, ['goal', 'create', '--goal-id', id, '--title', title, '--description', description]);
      goal(GOAL, 'Fix checkout tests', 'The checkout suite passes on every run.');
      goal('notes', 'Release notes', 'Notes for 2.4.');
      await ticked(['init', 'goal']);
      await treeRow(page, 'Release notes').waitFor({ timeout: UI_MS });
      await saveWalkthroughImage(page, 'goal', { rows: 2 }, shots);

      const add = (id: string, ...more: string[]) =>
        loopx(ws, ['todo', 'add', '--goal-id', GOAL, '--todo-id', id, ...more]);
      add('tests', '--title', 'Run the tests', '--priority', 'P1', '--action', 'npm test');
      add('review', '--title', 'Review the fix', '--owner', 'user', '--priority', 'P1');
      add('staging', '--title', 'Deploy to staging', '--action', 'sh deploy.sh staging', '--gate', 'staging');
      await ticked(['init', 'goal', 'todos']);
      await expandRow(page, 'Fix checkout tests');
      await expandRow(page, 'Todos');
      await treeRow(page, 'Deploy to staging').waitFor({ timeout: UI_MS });
      await saveWalkthroughImage(page, 'todos', { rows: 7 }, shots); // the goal, its todos and gate

      // An agent's turn: a contract, the command it lists (the gated deploy waits), the summary.
      const turn = JSON.parse(
        loopx(ws, ['turn', '--goal-id', GOAL, '--agent', 'codex', '--json'], { agent: 'codex' }),
      ) as { summary: { ended_runs: { id: string }[] } };
      await ticked(['init', 'goal', 'todos', 'contract']);
      const runId = turn.summary.ended_runs[0]!.id;

      // The person, at a terminal with their key: approves the gate and scores the run.
      const person = { person: true };
      loopx(ws, ['key', 'create', '--name', 'alice'], person);
      loopx(ws, ['gate', 'approve', '--goal-id', GOAL, '--gate-id', 'staging'], person);
      loopx(
        ws,
        [
          'reward',
          'add',
          '--goal-id',
          GOAL,
          '--run-id',
          runId,
          '--score',
          '0.8',
          '--comment',
          'Quick and clean.',
        ],
        person,
      );
      await ticked(['init', 'goal', 'todos', 'contract', 'gate']);
      // Another gated todo: a gate that waits, for the tree and the gate step's picture.
      add(
        'prod',
        '--title',
        'Deploy to production',
        '--action',
        'sh deploy.sh production',
        '--gate',
        'production',
      );
      assert.equal(
        new Store(ws).load(GOAL).state.gates.find((g) => g.id === 'production')?.status,
        'pending',
      );
      timings.walkthrough = Date.now() - t;
    },
  );

  step(
    '(2) every row of the tree shows its label and description whole at the default width',
    90_000,
    async () => {
      await quietAtDefaultWidth(page);
      for (const label of ['Gates', 'Evidence', 'Runs']) await expandRow(page, label);
      const expected: [number, string, string | RegExp][] = [
        [1, 'Fix checkout tests', '1 to approve'],
        [2, 'Todos', '1 of 4 done'],
        [3, 'Run the tests', 'done'],
        [3, 'Review the fix', 'for you'],
        [3, 'Deploy to staging', 'open'],
        [3, 'Deploy to production', 'gated'],
        [2, 'Gates', '1 to approve'],
        [3, 'production', 'pending'],
        [3, 'staging', 'approved'],
        [2, 'Evidence', '1'],
        [3, 'npm test', /^ok · (just now|\d+ min ago)$/],
        [2, 'Runs', '1'],
        [3, 'codex', /^(just now|\d+ min ago) · ★ 0\.8$/],
        [1, 'Release notes', 'no todos yet'],
      ];
      const rows = await until('every row of the goal', async () => {
        const now = await sidebarRows(page);
        return now.length === expected.length && now.at(-1)?.label === 'Release notes' ? now : undefined;
      });
      rows.forEach((row, i) => {
        const [level, label, description] = expected[i]!;
        assert.deepEqual([row.level, row.label], [level, label], `row ${i + 1}`);
        if (typeof description === 'string') assert.equal(row.description, description, label);
        else assert.match(row.description, description, label);
        assert.equal(row.cut, false, `"${row.label} ${row.description}" is cut at the default width`);
      });
      await page.mouse.move(VIEWPORT.width - 10, VIEWPORT.height / 2);
      await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur()); // no focus outline
      await shot('tree-default-width.png');
      // Rows 10 to 13: Evidence and Runs with theirs.
      await saveWalkthroughImage(page, 'contract', { fromRow: 10, rows: 13 }, shots);
      // The detail is in the tooltips: the run's id, the evidence's output, the gate's work and times.
      const run = new Store(ws).load(GOAL).state.runs[0]!;
      const runTip = await hoverText(page, treeRow(page, 'codex'), `Run ${run.id}`);
      assert.match(runTip, /codex started [A-Z][a-z]{2} \d+, \d\d:\d\d \((just now|\d+ min ago)\)/);
      const gateTip = await hoverText(page, treeRow(page, 'production'), 'Guards');
      assert.match(gateTip, /Guards: Deploy to production/);
      assert.doesNotMatch(gateTip, /\d{4}-\d\d-\d\dT\d\d:/, 'no raw ISO time');
      await page.mouse.move(VIEWPORT.width - 10, VIEWPORT.height / 2);
    },
  );

  step(
    '(3) a broken policy.json: the row says the fix, and a click opens the file at the error',
    90_000,
    async () => {
      await closeOverlays(page);
      const store = new Store(ws);
      const good = fs.readFileSync(store.policyPath, 'utf8');
      // The comma after contractTtlMinutes forgotten: JSON.parse stops at the next line.
      const lines = good.split('\n');
      const at = lines.findIndex((l) => l.includes('"contractTtlMinutes"'));
      assert.ok(at > 0 && lines[at]!.endsWith(','), 'policy.json has a contractTtlMinutes line to break');
      lines[at] = lines[at]!.slice(0, -1);
      fs.writeFileSync(store.policyPath, lines.join('\n'));
      const errorLine = at + 2;
      try {
        const row = treeRow(page, 'Fix policy.json');
        await row.waitFor({ timeout: UI_MS });
        const [first] = await sidebarRows(page);
        assert.deepEqual(first, {
          level: 1,
          label: 'Fix policy.json',
          description: 'not valid JSON',
          cut: false,
          labelCut: false,
        });
        const tip = await hoverText(page, row, 'no agent gets a contract');
        assert.ok(
          tip.includes('fix .loopx/policy.json by hand, then check it with `loopx policy show`'),
          tip,
        );
        assert.ok(tip.includes(`Click to open it at line ${errorLine}.`), tip);
        await page.mouse.move(VIEWPORT.width - 10, VIEWPORT.height / 2);
        await row.click();
        const tab = page.locator('.tabs-container .tab.active');
        await until('policy.json open in the editor', async () =>
          /^policy\.json/.test((await tab.getAttribute('aria-label')) ?? ''),
        );
        const cursor = page.locator('.statusbar-item[id="status.editor.selection"]');
        await until(`the cursor on line ${errorLine}`, async () =>
          (await cursor.innerText()).startsWith(`Ln ${errorLine},`),
        );
        await shot('tree-policy-fix.png');
      } finally {
        fs.writeFileSync(store.policyPath, good);
      }
      await until(
        'the row to go once policy.json reads again',
        async () => !(await visible(treeRow(page, 'Fix policy.json'))),
      );
    },
  );

  step(
    '(4) the gate and dashboard steps: the decision modal, the walkthrough with its pictures, all ticked once the dashboard opened',
    120_000,
    async () => {
      await closeOverlays(page);
      const gate = treeRow(page, 'production');
      await gate.hover();
      await gate.locator('.action-label[aria-label="Approve Gate"]').first().click();
      // First the optional note for the record (none), then the modal with the facts.
      const input = page.locator('.quick-input-widget');
      await until('the note input', async () => /a note for the record/.test(await input.innerText()));
      await page.keyboard.press('Enter');
      const box = await modal(page, UI_MS);
      assert.match(await box.innerText(), /\$ sh deploy\.sh production/);
      assert.match(
        await box.innerText(),
        /Requested by .* at [A-Z][a-z]{2} \d+, \d\d:\d\d \((just now|\d+ min ago)\)\./,
      );
      await saveWalkthroughImage(page, 'gate', { locator: box }, shots);
      await box.getByRole('button', { name: 'Cancel' }).click();
      await until('the modal to close', async () => !(await visible(box)));

      // The walkthrough with one step to go (once all are done VS Code puts it away), wide enough
      // for a step's picture beside the steps: the side bar closed, the gate step chosen.
      // (Escape on the walkthrough goes back to the Welcome page: it is open last.)
      await runFromPalette(page, 'View: Close Primary Side Bar');
      await openWalkthrough();
      await ticked(STEPS.filter((x) => x !== 'dashboard'));
      await page.locator('[data-step-id$="#gate"]').first().click();
      await until('the gate step’s picture', () =>
        page
          .locator('.getting-started-media img')
          .first()
          .evaluate(
            (img: HTMLImageElement) =>
              img.complete && img.naturalWidth > 0 && /gate\.png/.test(img.currentSrc),
          ),
      );
      await page.mouse.move(VIEWPORT.width - 10, 60);
      await shot('walkthrough.png');

      await openLoopxView(page, UI_MS);
      await runFromPalette(page, 'LoopX: Open Dashboard');
      const frame = page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');
      await frame.locator(`.goal-row[data-goal="${GOAL}"]`).waitFor({ timeout: UI_MS });
      // The dashboard's top, under its tab: the header, what needs you, the goals.
      const goals = (await frame.locator('.goals').boundingBox())!;
      const view = (await page.locator('iframe.webview.ready').last().boundingBox())!;
      // The empty end of the tab bar: no hover (the palette's click left one on a tab's close button).
      await page.mouse.move(view.x + view.width - 200, view.y - 16);
      await until(
        'no hover',
        async () => !(await visible(page.locator('.workbench-hover, .monaco-hover').first())),
      );
      await saveWalkthroughImage(
        page,
        'dashboard',
        { clip: { ...view, height: goals.y + goals.height + 16 - view.y } },
        shots,
      );
      await openWalkthrough();
      await ticked(STEPS);
    },
  );

  step('(5) the Settings editor names the extension’s settings "LoopX"', 90_000, async () => {
    await closeOverlays(page);
    await runFromPalette(page, 'Preferences: Open Settings (UI)');
    const toc = page.locator('.settings-toc-container');
    const extensions = toc.locator('.monaco-list-row[aria-label="Extensions, group"]');
    await extensions.waitFor({ timeout: UI_MS });
    if ((await extensions.getAttribute('aria-expanded')) !== 'true')
      await extensions.locator('.monaco-tl-twistie').click();
    const loopxGroup = toc.locator('.monaco-list-row[aria-label="LoopX, group"]');
    // The table of contents is a virtual list: scroll it until the LoopX entry is rendered.
    await until('LoopX in the table of contents', async () => {
      if (await loopxGroup.count()) return true;
      await toc.hover();
      await page.mouse.wheel(0, 200);
      return false;
    });
    await loopxGroup.click();
    const tree = page.locator('.settings-tree-container');
    const heading = tree.locator('.settings-group-title-label', { hasText: /^LoopX$/ });
    await heading.first().waitFor({ timeout: UI_MS });
    const labels = await tree.locator('.setting-item-label').allInnerTexts();
    const categories = await tree.locator('.setting-item-category').allInnerTexts();
    assert.ok(labels.includes('Agent Name') && labels.includes('Notifications'), labels.join(', '));
    assert.ok(
      !categories.some((c) => /Loopx/.test(c)),
      `no "Loopx:" before the names: ${categories.join(', ')}`,
    );
    await page.mouse.move(VIEWPORT.width - 10, VIEWPORT.height - 10);
    await shot('settings.png');
  });
});
