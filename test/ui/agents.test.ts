/**
 * The agents in a real VS Code, as a person sees them: the packaged .vsix in code-server on a
 * workspace made with the CLI (a goal with three command todos and a gated one, a lane on a
 * model-less runtime that the person declared in policy.json and signed), driven by Chromium:
 *   1. "LoopX: Start Agents" from the Command Palette: the lane works (the status bar counts it),
 *      runs the three commands and waits at the gate: its row says "needs you";
 *   2. the Agents rows read whole at the side bar's default width, the detail in the lane's
 *      tooltip (the screenshot docs/screenshots/agents.png, with LOOPX_UPDATE_SCREENSHOTS=1);
 *   3. "LoopX: Stop Agents": no driver is left (`loopx drive status`);
 *   4. a lane whose goal's turns budget runs out raises the warning with Show Agents and Grant
 *      Quota, and Show Agents selects the Agents node.
 *
 *   npm run build && node scripts/test/run-suite.mjs test/ui agents
 *
 * Screenshots under test-results/ui/ (agents.png; agents-failed-<n>.png when a step fails).
 */
import { after, before, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import type { DriveStatus } from '../../src/core/index';
import { loopx, loopxAsPerson, ok } from '../helpers/cli';
import { scriptRuntime } from '../helpers/drive-kit';
import { hoverText, startWorkbench } from '../helpers/tree-view';
import type { CodeServer, HostModule, InstallModule, PackageModule } from '../helpers/workbench';
import {
  closeOverlays,
  finishUiRun,
  loadScript,
  notification,
  openLoopxView,
  runFromPalette,
  SHOT_DIRS,
  sidebarRows,
  treeRow,
  uiSteps,
  until as untilWithin,
  VIEWPORT,
  quietAtDefaultWidth,
  DO_NOT_DISTURB,
} from '../helpers/workbench';

const UI_MS = 30_000;
const until = <T>(what: string, fn: () => T | Promise<T>, timeoutMs = UI_MS, everyMs = 100) =>
  untilWithin(what, fn, timeoutMs, everyMs);

const GOAL = 'site';
const GOAL_TITLE = 'Publish the docs site';

/** What the page showed over time: the LoopX status bar item's text and the lane row's description. */
interface Seen {
  status: string[];
  lane: string[];
}

declare global {
  interface Window {
    __agentsSeen: Seen;
  }
}

describe('Agents in the LoopX view: Start, watch, Stop (code-server + Chromium)', () => {
  let tmp = '';
  let ws = '';
  let server: CodeServer | undefined;
  let browser: Browser | undefined;
  let page: Page;
  const serverLog: string[] = [];
  let failed = false;
  const shots: string[] = [];
  const timings: Record<string, number> = {};

  const step = uiSteps(
    'agents',
    () => page,
    () => (failed = true),
  );
  const run = async (...args: string[]) => ok(await loopx(args, { cwd: ws })).stdout;
  const driveStatus = async () => JSON.parse(await run('--json', 'drive', 'status')) as DriveStatus;
  const lines = (file: string) =>
    fs.existsSync(path.join(ws, file))
      ? fs.readFileSync(path.join(ws, file), 'utf8').split('\n').filter(Boolean)
      : [];
  const rowDescription = async (label: string) =>
    (await sidebarRows(page)).find((r) => r.label === label)?.description;

  /**
   * Records every text the LoopX status bar item and the lane's row take, as the page draws them:
   * a turn may be over before a poll would see it. Plain JavaScript: the page runs it as it is,
   * without the helpers tsx would wrap a function's inner functions in.
   */
  const recordChanges = (lane: string) =>
    page.evaluate(`(() => {
      const seen = { status: [], lane: [] };
      window.__agentsSeen = seen;
      const note = (list, text) => {
        if (text !== undefined && list[list.length - 1] !== text) list.push(text);
      };
      const look = () => {
        const item = Array.from(document.querySelectorAll('.statusbar-item')).find((e) =>
          (e.textContent || '').trim().startsWith('LoopX'),
        );
        note(seen.status, item ? item.textContent.replace(/\\s+/g, ' ').trim() : undefined);
        const row = Array.from(
          document.querySelectorAll('.part.sidebar .monaco-list-row[role="treeitem"]'),
        ).find((r) => (r.querySelector('.label-name') || {}).textContent === ${JSON.stringify(lane)});
        const description = row && row.querySelector('.label-description');
        note(seen.lane, description ? description.textContent : undefined);
      };
      new MutationObserver(look).observe(document.body, { subtree: true, childList: true, characterData: true });
      look();
    })()`);

  before(
    async () => {
      const t0 = Date.now();
      (await loadScript<InstallModule>('scripts/hosts/vscode-host/install.mjs')).ensureHost();
      const host = await loadScript<HostModule>('scripts/hosts/vscode-host/server.mjs');
      const { packageVsix } = await loadScript<PackageModule>('scripts/build/package.mjs');
      for (const f of fs.existsSync(SHOT_DIRS.at(-1)!) ? fs.readdirSync(SHOT_DIRS.at(-1)!) : []) {
        if (/^agents-failed-.*\.png$/.test(f)) fs.rmSync(path.join(SHOT_DIRS.at(-1)!, f));
      }
      tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-agents-')));
      const vsix = packageVsix({ out: path.join(tmp, 'loopx.vsix') });
      ws = path.join(tmp, 'docs-site');
      fs.mkdirSync(ws);
      // The workspace as a person sets it up at a terminal (the tests' config folder is the editor's).
      await run('init');
      await run('goal', 'create', '--goal-id', GOAL, '--title', GOAL_TITLE);
      const policyFile = path.join(ws, '.loopx', 'policy.json');
      const policy = JSON.parse(fs.readFileSync(policyFile, 'utf8')) as Record<string, unknown>;
      fs.writeFileSync(
        policyFile,
        `${JSON.stringify({ ...policy, runtimes: { script: scriptRuntime() } }, null, 2)}\n`,
      );
      ok(await loopxAsPerson(['policy', 'sign'], { cwd: ws }));
      const todo = (id: string, action: string, ...more: string[]) =>
        run(
          'todo',
          'add',
          '--goal-id',
          GOAL,
          '--todo-id',
          id,
          '--title',
          `Build ${id}`,
          '--action',
          action,
          ...more,
        );
      await todo('pages', 'echo pages >> built.txt');
      // A second long enough that a person (and the test) sees the lane at work.
      await todo('search', 'sleep 1; echo search >> built.txt');
      await todo('links', 'echo links >> built.txt');
      await todo('publish', 'echo publish >> built.txt', '--gate', 'prod');
      await run('lane', 'add', 'docs', '--goal-id', GOAL, '--runtime', 'script');
      timings.setup = Date.now() - t0;
      const t1 = Date.now();
      ({ server, browser, page } = await startWorkbench(host, ws, vsix.file, serverLog));
      timings.workbench = Date.now() - t1;
    },
    { timeout: 900_000 },
  );

  after(async () => {
    // No driver outlives the test: Stop Agents stopped it, or the editor's exit stops it.
    await finishUiRun('agents', { failed, serverLog, browser, server, tmp, timings, shots });
  });

  step(
    '(1) Start Agents: the lane works, runs the three commands and waits at the gate',
    180_000,
    async () => {
      const t = Date.now();
      await openLoopxView(page, UI_MS);
      await treeRow(page, 'docs').waitFor({ timeout: UI_MS });
      assert.equal(await rowDescription('docs'), 'not running');
      await recordChanges('docs');
      await runFromPalette(page, 'LoopX: Start Agents');
      await until(
        'the lane waiting at the gate',
        async () => (await rowDescription('docs')) === 'needs you',
        60_000,
      );
      assert.deepEqual(lines('built.txt'), ['pages', 'search', 'links'], 'the three commands ran, in order');
      const doc = await driveStatus();
      assert.equal(doc.driver.running, true);
      const lane = doc.lanes.find((l) => l.name === 'docs')!;
      assert.deepEqual([lane.status, lane.needs_person, lane.spend.turns], ['waiting_person', true, 3]);
      assert.match(lane.why ?? '', /gate prod/);
      const seen = await page.evaluate(() => window.__agentsSeen);
      console.log(
        `agents: the status bar read ${JSON.stringify(seen.status)}; the lane ${JSON.stringify(seen.lane)}`,
      );
      assert.ok(
        seen.status.some((s) => /1 agent working$/.test(s)) || seen.lane.includes('working'),
        `the lane was seen at work: status bar ${JSON.stringify(seen.status)}, row ${JSON.stringify(seen.lane)}`,
      );
      assert.equal(seen.lane.at(-1), 'needs you');
      assert.doesNotMatch(seen.status.at(-1) ?? '', /working/, 'no lane counted once it waits');
      timings.start = Date.now() - t;
    },
  );

  step(
    '(2) the Agents rows read whole at the default width; the detail is in the tooltip',
    120_000,
    async () => {
      await quietAtDefaultWidth(page);
      const rows = await until('the Agents node, its lane and the goal', async () => {
        const now = await sidebarRows(page);
        return now.length === 3 ? now : undefined;
      });
      assert.deepEqual(
        rows.map((r) => [r.level, r.label, r.description, r.cut, r.labelCut]),
        [
          [1, 'Agents', '1 needs you', false, false],
          [2, 'docs', 'needs you', false, false],
          [1, GOAL_TITLE, '1 to approve', false, false],
        ],
      );
      const tip = await hoverText(page, treeRow(page, 'docs'), `Goal: ${GOAL_TITLE}`);
      for (const line of [
        `Goal: ${GOAL_TITLE} (${GOAL})`,
        'Runtime script, in the workspace folder',
        'Spent on the goal: 3 turns',
      ])
        assert.ok(tip.includes(line), `"${line}" in the tooltip:\n${tip}`);
      assert.match(tip, /Needs you: .*gate prod/);
      assert.match(tip, /Last turn: run \S+ succeeded [A-Z][a-z]{2} \d+, \d\d:\d\d \(just now\)/);
      assert.doesNotMatch(tip, /\d{4}-\d\d-\d\dT\d\d:/, 'no raw ISO time');
      // The tree with the lane's tooltip, and the status bar under it.
      const hover = await page
        .locator('.workbench-hover, .monaco-hover')
        .filter({ hasText: 'Goal:' })
        .first()
        .boundingBox();
      const width = Math.min(VIEWPORT.width, Math.ceil((hover ? hover.x + hover.width : 640) + 16));
      const png = await page.screenshot({ clip: { x: 0, y: 0, width, height: VIEWPORT.height } });
      for (const dir of SHOT_DIRS) {
        fs.mkdirSync(dir, { recursive: true });
        fs.writeFileSync(path.join(dir, 'agents.png'), png);
      }
      shots.push(`agents.png (${(png.length / 1024).toFixed(0)} KB)`);
      await page.mouse.move(VIEWPORT.width - 10, VIEWPORT.height / 2);
      await runFromPalette(page, DO_NOT_DISTURB);
    },
  );

  step('(3) Stop Agents: no driver left', 120_000, async () => {
    await closeOverlays(page);
    await runFromPalette(page, 'LoopX: Stop Agents');
    await until('no driver', async () => !(await driveStatus()).driver.running, 30_000);
    // It waits for a person either way: only the driver is gone.
    assert.equal(await rowDescription('docs'), 'needs you');
    assert.deepEqual(lines('built.txt'), ['pages', 'search', 'links'], 'nothing ran past the gate');
  });

  step(
    '(4) a lane whose turns budget runs out: the warning, Show Agents and Grant Quota',
    180_000,
    async () => {
      const t = Date.now();
      await closeOverlays(page);
      await run('goal', 'create', '--goal-id', 'notes', '--title', 'Release notes');
      await run('quota', 'set', '--goal-id', 'notes', '--turns', '1');
      for (const id of ['draft', 'polish'])
        await run(
          'todo',
          'add',
          '--goal-id',
          'notes',
          '--todo-id',
          id,
          '--title',
          id,
          '--action',
          `echo ${id} >> notes.txt`,
        );
      await run('lane', 'add', 'notes', '--goal-id', 'notes', '--runtime', 'script');
      await treeRow(page, 'notes').waitFor({ timeout: UI_MS });
      await runFromPalette(page, 'LoopX: Start Agents');
      const warning = await notification(
        page,
        'Lane notes stopped: the turns budget is used up (1 of 1)',
        60_000,
      );
      const buttons = (await warning.locator('.monaco-button').allInnerTexts()).map((b) => b.trim());
      assert.deepEqual(buttons, ['Show Agents', 'Grant Quota']);
      assert.deepEqual(lines('notes.txt'), ['draft'], 'one turn, then the budget stopped it');
      await until('the notes lane needing you', async () => (await rowDescription('notes')) === 'needs you');
      await warning.locator('.monaco-button', { hasText: 'Show Agents' }).click();
      const agentsRow = page.locator('.part.sidebar .monaco-list-row[role="treeitem"]', {
        has: page.locator('.label-name', { hasText: /^Agents$/ }),
      });
      await until(
        'the Agents node selected',
        async () => (await agentsRow.getAttribute('aria-selected')) === 'true',
      );
      await runFromPalette(page, 'LoopX: Stop Agents');
      await until('no driver', async () => !(await driveStatus()).driver.running, 30_000);
      timings.budget = Date.now() - t;
    },
  );
});
