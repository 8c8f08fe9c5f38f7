/**
 * The packaged extension in a real VS Code, driven like a person would: the .vsix that
 * `npm run package` makes is installed into a fresh code-server (scripts/vscode-host) on a fresh
 * demo workspace (scripts/demo/demo-workspace.ts), and headless Chromium (playwright-core) clicks
 * through the workbench: the Command Palette, the LoopX view, the gate notification and the
 * dashboard webview (inside its nested iframes), in the dark and the light theme. What the UI
 * did is checked in the workspace's `.loopx/` with the core.
 *
 *   node --import tsx --test test/ui/ui.test.ts
 *
 * Screenshots (1280x800): docs/screenshots/{palette,tree,gate-notification,dashboard-dark,
 * dashboard-light}.png (the README shows them) and the same files under test-results/ui/.
 * The first run on a machine installs the host (scripts/hosts/vscode-host/install.mjs, minutes);
 * after that the file takes about a minute and a half.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { execFileSync } from 'node:child_process';
import type { Browser, FrameLocator, Locator, Page } from 'playwright-core';
import { Store } from '../../src/core/index';
import { prepareDemo } from '../../scripts/demo/demo-workspace';
import type { CodeServer, HostModule, InstallModule, PackageModule } from '../helpers/workbench';
import {
  approveLink,
  closeOverlays,
  finishUiRun,
  keepServerLines,
  loadScript as load,
  modal,
  notification,
  openLoopxView,
  REPO,
  runFromPalette,
  saveShot,
  SHOT_DIRS,
  sidebarRows,
  treeRow,
  until as untilWithin,
  VIEWPORT,
  visible,
  WORKBENCH_SETTINGS,
} from '../helpers/workbench';

const GOAL = 'refactor-payment-module';
const GATE = 'staging-deploy';
const HOSTILE = '<img src=x onerror=alert(1)>';

// Bounds for every wait (the machine may be busy: these are ceilings, not sleeps).
const ACTIVATION_MS = 90_000;
const UI_MS = 20_000;
const LIVE_MS = 5_000; // "a change by any writer appears within a few seconds"

const until = <T>(what: string, fn: () => T | Promise<T>, timeoutMs = UI_MS, everyMs = 100) =>
  untilWithin(what, fn, timeoutMs, everyMs);

/** The gate decisions recorded in the demo goal's log. */
function gateEvents(ws: string) {
  const store = new Store(ws);
  return store.readLog(GOAL).events.filter((e) => e.type === 'gate.approved' || e.type === 'gate.rejected');
}

function goalsByTitle(ws: string, title: string): string[] {
  const store = new Store(ws);
  return store.goalIds().filter((id) => {
    try {
      return store.load(id).state.title === title;
    } catch {
      return false;
    }
  });
}

function cli(ws: string, ...args: string[]): string {
  return execFileSync(process.execPath, [path.join(REPO, 'bin', 'loopx.js'), '--workspace', ws, ...args], {
    encoding: 'utf8',
    timeout: 15_000,
  });
}

// ---------------------------------------------------------------------------------------------

describe('LoopX in a real VS Code (code-server + Chromium, the packaged .vsix)', () => {
  let tmp = '';
  let ws = '';
  let server: CodeServer | undefined;
  let browser: Browser | undefined;
  let page: Page;
  const serverLog: string[] = [];
  let failed = false;
  const shots: string[] = [];
  const timings: Record<string, number> = {};
  let settingsFile = '';

  const shot = (name: string) => saveShot(page, name, shots);

  /** it(), plus a screenshot of the window under test-results/ui/ when the step fails. */
  function step(name: string, timeout: number, fn: () => Promise<void>): void {
    it(name, { timeout }, async () => {
      try {
        await fn();
      } catch (e) {
        failed = true;
        const file = path.join(SHOT_DIRS.at(-1)!, `failed-${name.slice(1, 2)}.png`);
        fs.mkdirSync(path.dirname(file), { recursive: true });
        await page?.screenshot({ path: file }).catch(() => {});
        throw e;
      }
    });
  }

  /** Answers the input box whose prompt matches `prompt`. */
  async function answerInput(prompt: RegExp, text: string): Promise<void> {
    const widget = page.locator('.quick-input-widget');
    await until(
      `an input box asking ${prompt}`,
      async () => (await visible(widget)) && prompt.test(await widget.innerText()),
    );
    await page.keyboard.type(text);
    await page.keyboard.press('Enter');
  }

  /** The dashboard's page: the webview's outer iframe, then its content frame. */
  const dashboard = (): FrameLocator =>
    page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');

  before(
    async () => {
      const t0 = Date.now();
      // Installs code-server, Node 24 and Chromium when the cache is empty (minutes, once).
      (await load<InstallModule>('scripts/hosts/vscode-host/install.mjs')).ensureHost();
      timings.host = Date.now() - t0;
      const host = await load<HostModule>('scripts/hosts/vscode-host/server.mjs');
      const { packageVsix } = await load<PackageModule>('scripts/build/package.mjs');

      // Failure pictures of an earlier run would mislead.
      for (const f of fs.existsSync(SHOT_DIRS[1]!) ? fs.readdirSync(SHOT_DIRS[1]!) : []) {
        if (/^failed-.*\.png$/.test(f)) fs.rmSync(path.join(SHOT_DIRS[1]!, f));
      }
      tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-ui-'));
      const t1 = Date.now();
      const vsix = packageVsix({ out: path.join(tmp, 'loopx.vsix') });
      timings.package = Date.now() - t1;
      assert.ok(vsix.files.includes('dist/extension.js') && vsix.bytes > 0);
      ws = path.join(tmp, 'demo');
      await prepareDemo(ws);
      assert.deepEqual(
        new Store(ws).load(GOAL).state.gates.map((g) => [g.id, g.status]),
        [[GATE, 'pending']],
      );

      const t2 = Date.now();
      server = await host.startCodeServer({
        workspace: ws,
        vsix: vsix.file,
        settings: WORKBENCH_SETTINGS,
        onOutput: keepServerLines(serverLog),
      });
      settingsFile = path.join(server.tmpRoot, 'user-data', 'User', 'settings.json');
      browser = await host.launchChromium(server);
      page = await browser.newPage({ viewport: VIEWPORT, deviceScaleFactor: 1 });
      page.on('dialog', (d) => void d.dismiss().catch(() => {}));
      await page.goto(server.url, { timeout: ACTIVATION_MS });
      // The LoopX icon in the activity bar: the extension is installed and its views are known.
      await page
        .locator('.activitybar .action-label[aria-label^="LoopX"]')
        .first()
        .waitFor({ timeout: ACTIVATION_MS });
      timings.workbench = Date.now() - t2;
    },
    { timeout: 900_000 },
  );

  after(() => finishUiRun('ui', { failed, serverLog, browser, server, tmp, timings, shots }));

  step(
    '(a) runs "LoopX: Create Goal" from the Command Palette; the goal lands in .loopx/',
    60_000,
    async () => {
      const title = 'Ship the retry dashboard';
      const objective = 'Operators see retries per provider; alert above 5%.';
      assert.deepEqual(goalsByTitle(ws, title), [], 'no such goal before');
      const t = Date.now();
      // The screenshot shows every LoopX command, then the filter narrows to Create Goal.
      await runFromPalette(page, 'LoopX: Create Goal', {
        beforePick: async () => {
          for (let i = 0; i < 'Create Goal'.length; i++) await page.keyboard.press('Backspace');
          await until(
            'the LoopX commands list',
            async () =>
              (await page.locator('.quick-input-list .monaco-list-row', { hasText: 'LoopX:' }).count()) >= 5,
          );
          await shot('palette.png');
          await page.keyboard.type('Create Goal');
          await until('"LoopX: Create Goal" on top', async () =>
            /LoopX: Create Goal/.test(
              await page.locator('.quick-input-list .monaco-list-row').first().innerText(),
            ),
          );
        },
      });
      await answerInput(/Goal title/, title);
      await answerInput(/Objective/, objective);
      const [id] = await until(
        'the new goal in .loopx/',
        () => {
          const ids = goalsByTitle(ws, title);
          return ids.length ? ids : undefined;
        },
        10_000,
      );
      timings.palette = Date.now() - t;
      const store = new Store(ws);
      const g = store.load(id!).state;
      assert.equal(g.objective, objective);
      assert.equal(g.status, 'active');
      const created = store.readLog(id!).events[0]!;
      assert.equal(created.type, 'goal.created');
      assert.equal(created.actor.kind, 'user');
      assert.equal(created.actor.channel, 'vscode', 'made in VS Code');
    },
  );

  step(
    '(b) opens the LoopX view from the activity bar and expands "Refactor Payment Module"',
    60_000,
    async () => {
      await closeOverlays(page);
      const sidebar = page.locator('.part.sidebar');
      const rowNamed = (label: string) => treeRow(page, label);
      const expand = async (row: Locator) => {
        if ((await row.getAttribute('aria-expanded')) !== 'true')
          await row.locator('.monaco-tl-twistie').click();
        await until('the row to expand', async () => (await row.getAttribute('aria-expanded')) === 'true');
      };
      await openLoopxView(page, UI_MS);
      const goal = rowNamed('Refactor Payment Module');
      await goal.waitFor({ timeout: UI_MS });
      // Every goal of the workspace is there: the demo's two and the one made from the palette.
      for (const t of ['Refresh the onboarding docs', 'Ship the retry dashboard']) {
        await rowNamed(t).waitFor({ timeout: UI_MS });
      }
      await expand(goal);
      for (const child of ['Todos', 'Gates', 'Evidence', 'Runs']) {
        const row = rowNamed(child);
        await row.waitFor({ timeout: UI_MS });
        assert.ok(await row.isVisible(), `${child} is visible`);
        assert.equal(await row.getAttribute('aria-level'), '2', `${child} is a child of the goal`);
      }
      // Todos, then Gates: the pending gate is listed under its goal.
      await expand(rowNamed('Todos'));
      await rowNamed('Deploy to staging').waitFor({ timeout: UI_MS });
      await rowNamed('List the retry call sites').waitFor({ timeout: UI_MS });
      // The picture is the side bar at its default width, as a person first sees it: each row's
      // label says the important thing and its description is a word or two, cut first when a
      // title is long (test/ui/tree.test.ts checks rows that fit whole). Only the demo's longest
      // todo title is longer than the room its row has.
      assert.equal((await sidebar.boundingBox())?.width, 300, 'the default width');
      const rows = await sidebarRows(page);
      assert.deepEqual(
        rows.filter((r) => r.labelCut).map((r) => r.label),
        ['Extract retry logic into one module'],
      );
      const described = (label: string) => rows.find((r) => r.label === label)?.description;
      assert.deepEqual(
        ['Refactor Payment Module', 'Todos', 'Gates', 'staging-deploy', 'Ship the retry dashboard'].map(
          (l) => [l, described(l)],
        ),
        [
          ['Refactor Payment Module', '1 to approve'],
          ['Todos', '1 of 5 done'],
          ['Gates', '1 to approve'],
          ['staging-deploy', 'pending'],
          ['Ship the retry dashboard', 'no todos yet'],
        ],
        'the gate by its name and state; an empty goal in words',
      );
      await page.mouse.move(900, 300);
      await shot('tree.png');
    },
  );

  step(
    '(c) the gate notification for staging-deploy: Approve shows the full facts in a modal, and its Approve records a signed approval',
    60_000,
    async () => {
      await closeOverlays(page);
      const toast = await notification(page, `gate ${GATE} of goal`, UI_MS);
      const text = await toast.innerText();
      assert.match(text, /Refactor Payment Module/);
      assert.match(
        text,
        /asked by person demo-user at the command line/,
        'who asked, and through which channel',
      );
      await shot('gate-notification.png');
      assert.deepEqual(gateEvents(ws), [], 'not decided yet');

      await approveLink(toast).click();
      const box = await modal(page, UI_MS);
      const detail = await box.innerText();
      assert.match(detail, /Approving lets agents do 1 todo, exactly as listed/);
      assert.match(detail, /\$ echo "deploying to staging"/, 'the guarded command, whole');
      await shot('gate-modal.png');
      assert.deepEqual(gateEvents(ws), [], 'the notification click alone decides nothing');
      await box.getByRole('button', { name: 'Approve' }).click();
      const [ev] = await until(
        'gate.approved in the log',
        () => {
          const evs = gateEvents(ws);
          return evs.length ? evs : undefined;
        },
        10_000,
      );
      assert.equal(ev!.type, 'gate.approved');
      assert.deepEqual(
        { kind: ev!.actor.kind, channel: ev!.actor.channel },
        { kind: 'user', channel: 'vscode' },
      );
      const data = ev!.data as { gateId: string; guarded: { action?: string }[] };
      assert.equal(data.gateId, GATE);
      assert.deepEqual(
        data.guarded.map((w) => w.action),
        ['echo "deploying to staging"'],
        'the signed approval covers the command shown',
      );
      const sig = (ev as { sig?: { keyId: string; sig: string } }).sig;
      assert.ok(sig?.sig, 'the approval carries a signature');
      const store = new Store(ws);
      const gate = store.load(GOAL).state.gates.find((g) => g.id === GATE)!;
      // Replay gives an approval effect only when a pinned key signed it: the editor pinned its own.
      assert.equal(gate.status, 'approved');
      assert.ok(store.trust().key(sig.keyId), 'the editor pinned its key in the config folder');
      await until('the notification to go away', async () => !(await visible(toast)), 10_000);
    },
  );

  step(
    '(c2) an agent’s link-shaped reason is text in the notification, not a link; Approve shows the full command, and dismissing decides nothing',
    60_000,
    async () => {
      await closeOverlays(page);
      const link = `[Show the diff](command:loopx.approveGate?${encodeURIComponent(JSON.stringify({ goalId: GOAL, gateId: 'link-gate' }))})`;
      const command = `echo release-notes ${'--verbose '.repeat(30)}--final`;
      const agent = { ...process.env, LOOPX_AGENT: 'sly-agent' };
      cli(ws, 'gate', 'request', '--goal-id', GOAL, '--gate-id', 'link-gate', '--reason', `Safe. ${link}`);
      execFileSync(
        process.execPath,
        [
          path.join(REPO, 'bin', 'loopx.js'),
          ...['--workspace', ws, 'todo', 'add', '--goal-id', GOAL, '--todo-id', 'notes'],
          ...['--title', 'Publish the notes', '--action', command, '--gate', 'link-gate'],
        ],
        { encoding: 'utf8', timeout: 15_000, env: agent },
      );
      const toast = await notification(page, 'gate link-gate of goal', UI_MS);
      const text = await toast.innerText();
      assert.doesNotMatch(text, /Show the diff|command:/, 'the agent’s text is not in the notification');
      const hrefs = await toast
        .locator('.notification-list-item-message a')
        .evaluateAll((as) => as.map((a) => a.getAttribute('href') ?? a.getAttribute('data-href') ?? ''));
      assert.ok(
        hrefs.every((h) => h.startsWith('command:loopx.gateNotification.answer?')),
        `no link but the notification’s own Approve, Reject and Show: ${hrefs.join(' ')}`,
      );
      await approveLink(toast).click();
      const box = await modal(page, UI_MS);
      const detail = await box.innerText();
      assert.ok(detail.includes(`$ ${command}`), `the whole command is in the modal:\n${detail}`);
      assert.ok(detail.includes(link), 'the reason is shown as the text it is');
      assert.equal(await box.locator('a[href^="command:"], a[data-href^="command:"]').count(), 0, 'no link');
      await shot('gate-modal-agent-text.png');
      await box.getByRole('button', { name: 'Cancel' }).click();
      await until('the modal to close', async () => !(await visible(box)), 10_000);
      const gate = new Store(ws).load(GOAL).state.gates.find((g) => g.id === 'link-gate')!;
      assert.equal(gate.status, 'pending', 'dismissing the modal decides nothing');
    },
  );

  step(
    '(d) the dashboard: attention queue and goals; a CLI change shows up live, a hostile title as text',
    90_000,
    async () => {
      await closeOverlays(page);
      await runFromPalette(page, 'LoopX: Open Dashboard');
      const d = dashboard();
      const refactor = d.locator(`.goal-row[data-goal="${GOAL}"]`);
      await refactor.waitFor({ timeout: UI_MS });
      assert.equal(await refactor.locator('.goal-title').textContent(), 'Refactor Payment Module');
      // Done of all: the demo's five todos and the one the agent of (c2) added.
      assert.equal(await refactor.locator('.goal-count').textContent(), '1/6');
      await d.locator('.goal-row[data-goal="docs-refresh"]').waitFor({ timeout: UI_MS });
      // What needs me: the todo only a person can do, and the goal that has no plan yet.
      const attention = d.locator('.attention');
      await until('the attention queue', async () => (await attention.locator('.att').count()) >= 2);
      const att = await attention.innerText();
      assert.match(att, /Needs you/);
      assert.match(att, /Review the public API change/);
      assert.match(att, /Needs a plan/);
      assert.doesNotMatch(att, new RegExp(GATE), 'the approved gate left the queue');

      // Another writer: the CLI, as an agent in a terminal would. Timed from the last write.
      cli(
        ws,
        'todo',
        'add',
        '--goal-id',
        GOAL,
        '--title',
        'Deploy to production',
        '--gate',
        'prod-deploy',
        '--priority',
        'P1',
      );
      const hostileId = (
        JSON.parse(
          cli(
            ws,
            'project_prompt',
            'create',
            '--title',
            HOSTILE,
            '--description',
            'A title that tries to be HTML.',
            '--json',
          ),
        ) as { id: string }
      ).id;
      const t = Date.now();
      const hostile = d.locator(`.goal-row[data-goal="${hostileId}"]`);
      await until(
        'the CLI changes in the open dashboard',
        async () =>
          (await refactor.locator('.goal-count').textContent()) === '1/7' &&
          (await visible(hostile)) &&
          (await attention.innerText()).includes('prod-deploy'),
        LIVE_MS,
        50,
      );
      timings.liveUpdate = Date.now() - t;
      assert.equal(await hostile.locator('.goal-title').textContent(), HOSTILE, 'the title is shown as text');
      await dismissToasts(); // the new gate's notification would cover the row
      await hostile.click();
      await until(
        'the hostile goal details',
        async () => (await d.locator('.details h2').first().textContent()) === HOSTILE,
      );
      const elements = await d.locator(':root').evaluate(() => {
        let img = 0;
        const roots: (Document | ShadowRoot)[] = [document];
        while (roots.length) {
          const root = roots.pop()!;
          img += root.querySelectorAll('img').length;
          for (const el of Array.from(root.querySelectorAll('*')))
            if (el.shadowRoot) roots.push(el.shadowRoot);
        }
        return { img };
      });
      assert.deepEqual(elements, { img: 0 }, 'no element came from the title');

      // The picture: the whole window for the dashboard, the demo goal selected with its charts,
      // the new gate in the queue.
      await runFromPalette(page, 'View: Close Primary Side Bar');
      await until('the side bar to close', async () => !(await visible(page.locator('.part.sidebar'))));
      await refactor.click();
      await until(
        'the goal details',
        async () => (await d.locator('.details h2').first().textContent()) === 'Refactor Payment Module',
      );
      await dismissToasts();
      await toTop();
      await shot('dashboard-dark.png');
    },
  );

  /** Scrolls the dashboard to its top (a click may have scrolled it), for comparable pictures. */
  async function toTop(): Promise<void> {
    const root = dashboard().locator(':root');
    await root.evaluate(() => {
      for (const el of [document.scrollingElement, ...Array.from(document.querySelectorAll('*'))]) {
        if (el && el.scrollTop > 0 && !el.classList.contains('goal-viewport')) el.scrollTop = 0;
      }
    });
    await until('the dashboard at its top', () =>
      root.evaluate(() => (document.scrollingElement?.scrollTop ?? 0) === 0),
    );
    await page.mouse.move(640, 80); // an empty part of the header: no hover underline in the picture
  }

  /**
   * Hides the notification centre and the toasts (the new gate raised one), so the dashboard shots
   * and clicks reach the dashboard.
   */
  async function dismissToasts(): Promise<void> {
    await until(
      'no notification toast',
      async () => {
        const centre = page.locator('.notifications-center');
        if (await visible(centre)) {
          await centre
            .locator('.codicon-notifications-hide, [aria-label^="Hide Notifications"]')
            .first()
            .click({ timeout: 1000 })
            .catch(() => {});
          return false;
        }
        const toasts = page.locator('.notification-toast');
        if ((await toasts.count()) === 0 || !(await visible(toasts.first()))) return true;
        // A gate's notification stays until it is decided (it has no close button): Escape with
        // the toast focused hides the toasts, as a person does.
        await toasts
          .first()
          .locator('.notification-list-item')
          .first()
          .focus()
          .catch(() => {});
        await page.keyboard.press('Escape');
        await page
          .locator(
            '.notification-toast .codicon-notifications-clear, .notification-toast [aria-label^="Clear Notification"]',
          )
          .first()
          .click({ timeout: 1000 })
          .catch(() => {});
        return false;
      },
      10_000,
      250,
    );
  }

  step('(e) the same dashboard in the light theme', 60_000, async () => {
    const d = dashboard();
    await d.locator('.details h2').first().waitFor({ timeout: UI_MS });
    // The theme reaches the page as a body class and VS Code's colour variables.
    const colours = () =>
      d.locator('body').evaluate((b) => ({
        cls: b.className,
        bg: getComputedStyle(document.documentElement).getPropertyValue('--vscode-editor-background').trim(),
        fg: getComputedStyle(b).color,
      }));
    const dark = await colours();
    assert.match(dark.cls, /vscode-dark/);
    // The server starts with the dark theme in its user settings (startCodeServer's `settings`;
    // VS Code 1.139 names the themes "Dark Modern" and "Light Modern"). A person switches with
    // Preferences: Color Theme, which writes the same setting; the open webview follows live.
    // (Writing settings.json from outside is not picked up by code-server: the picker is the way.)
    const before = JSON.parse(fs.readFileSync(settingsFile, 'utf8')) as Record<string, unknown>;
    assert.equal(before['workbench.colorTheme'], 'Dark Modern');
    await runFromPalette(page, 'Preferences: Color Theme');
    const lightModern = page.locator('.quick-input-list .monaco-list-row', { hasText: 'Light Modern' });
    await lightModern.first().waitFor({ timeout: UI_MS });
    await page.keyboard.type('Light Modern');
    await until('"Light Modern" on top', async () =>
      /Light Modern/.test(await page.locator('.quick-input-list .monaco-list-row').first().innerText()),
    );
    await page.keyboard.press('Enter');
    const light = await until(
      'the light theme in the webview',
      async () => {
        const c = await colours();
        return /vscode-light/.test(c.cls) ? c : undefined;
      },
      UI_MS,
      200,
    );
    // (The picker previews the theme on focus; Enter saves it.)
    await until(
      '"Light Modern" saved in the user settings',
      () => {
        const after = JSON.parse(fs.readFileSync(settingsFile, 'utf8')) as Record<string, unknown>;
        return after['workbench.colorTheme'] === 'Light Modern';
      },
      10_000,
      200,
    );
    await until('the picker to close', async () => !(await visible(page.locator('.quick-input-widget'))));
    assert.ok(
      dark.bg && light.bg && light.bg !== dark.bg,
      `the background changed: ${dark.bg} -> ${light.bg}`,
    );
    assert.notEqual(light.fg, dark.fg, 'the text colour changed');
    const workbench = await page.locator('.monaco-workbench').evaluate((el) => Array.from(el.classList));
    assert.ok(
      workbench.includes('vs') && !workbench.includes('vs-dark'),
      `a light workbench: ${workbench.join(' ')}`,
    );
    await d.locator(`.goal-row[data-goal="${GOAL}"]`).waitFor({ timeout: UI_MS });
    await dismissToasts();
    await toTop();
    await shot('dashboard-light.png');
  });
});
