/**
 * What a person reads before deciding, in a real VS Code: agent-written text is shown exactly as
 * it is stored or will be written, never as links, images or markup. The packaged .vsix runs in
 * code-server on a multi-root window of two LoopX workspaces (folders `alpha` and `beta`, made with
 * the real CLI), and headless Chromium (playwright-core) hovers the LoopX tree and answers the
 * confirmation VS Code shows for an agent's tool call. The agent is a probe extension
 * (test/ui/fixtures/probe-extension) loaded as a development extension through the workbench's
 * URL payload: it calls a language-model tool with `vscode.lm.invokeTool` outside a chat, which
 * VS Code confirms in a modal dialog (its text rendered from the tool's Markdown to plain text).
 *
 *   npm run build && node scripts/test/run-suite.mjs test/ui decisions
 *
 * Screenshots under test-results/ui/ (tool-confirmation.png; decisions-failed-<n>.png when a step
 * fails), and docs/screenshots/tool-confirmation.png with LOOPX_UPDATE_SCREENSHOTS=1.
 * More steps: add `step(...)` calls at the end of the describe; `before` made the window.
 */
import { describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { execFileSync } from 'node:child_process';
import type { Browser, Locator, Page } from 'playwright-core';
import { Store } from '../../src/core/index';
import { appendChained, writerLog } from '../helpers/log-kit';
import type { CodeServer, HostModule, InstallModule, PackageModule } from '../helpers/workbench';
import {
  approveLink,
  closeOverlays,
  finishUiRun,
  keepServerLines,
  loadScript,
  modal,
  notification,
  notificationTexts,
  openLoopxView,
  REPO,
  runFromPalette,
  saveShot,
  SHOT_DIRS,
  treeRow,
  uiSteps,
  until as untilWithin,
  VIEWPORT,
  visible,
  WORKBENCH_SETTINGS,
} from '../helpers/workbench';

const PROBE = path.join(REPO, 'test', 'ui', 'fixtures', 'probe-extension');

// Bounds for every wait (the machine may be busy: these are ceilings, not sleeps).
const ACTIVATION_MS = 90_000;
const UI_MS = 20_000;

const until = <T>(what: string, fn: () => T | Promise<T>, timeoutMs = UI_MS, everyMs = 100) =>
  untilWithin(what, fn, timeoutMs, everyMs);

// ---------------------------------------------------------------------------------------------
// Helpers (no workbench state of their own)

/** startCodeServer's options that this file uses beyond those typed in test/helpers/workbench.ts. */
type StartOptions = Parameters<HostModule['startCodeServer']>[0] & {
  smokeDriver?: boolean;
  env?: Record<string, string>;
};

/** The two LoopX workspaces of the window, the .code-workspace file and the probe's folder. */
export interface Workspaces {
  root: string;
  alpha: string;
  beta: string;
  /** The multi-root workspace file listing alpha, then beta (so alpha is the window's first folder). */
  file: string;
  /** Where the probe reads request.json and writes result.json (env LOOPX_PROBE_DIR). */
  probe: string;
  goals: { alpha: string; beta: string };
}

/** `loopx --workspace <ws> …`: the real, built CLI. */
export function loopx(ws: string, ...args: string[]): string {
  return execFileSync(process.execPath, [path.join(REPO, 'bin', 'loopx.js'), '--workspace', ws, ...args], {
    encoding: 'utf8',
    timeout: 15_000,
  });
}

/** Two folders, each initialised and given one goal with the CLI, and the workspace file. */
export function makeWorkspaces(root: string): Workspaces {
  const ws: Workspaces = {
    root,
    alpha: path.join(root, 'alpha'),
    beta: path.join(root, 'beta'),
    file: path.join(root, 'multi.code-workspace'),
    probe: path.join(root, 'probe'),
    goals: { alpha: 'alpha-goal', beta: 'beta-goal' },
  };
  for (const [name, dir] of [
    ['Alpha', ws.alpha],
    ['Beta', ws.beta],
  ] as const) {
    fs.mkdirSync(dir, { recursive: true });
    loopx(dir, 'init');
    loopx(
      dir,
      ...['goal', 'create', '--goal-id', `${name.toLowerCase()}-goal`, '--title', `${name} goal`],
      ...['--description', `The ${name.toLowerCase()} folder's goal.`],
    );
  }
  fs.writeFileSync(ws.file, JSON.stringify({ folders: [{ path: 'alpha' }, { path: 'beta' }] }, null, 2));
  fs.mkdirSync(ws.probe);
  return ws;
}

/**
 * The workbench on the workspace file, with `devExtensions` loaded as development extensions (the
 * smoke-test driver's payload; the authority of a code-server path is literally `remote`).
 */
export function workbenchUrl(
  server: Pick<CodeServer, 'origin'>,
  workspaceFile: string,
  devExtensions: string[],
) {
  const payload = [
    ...devExtensions.map((p) => ['extensionDevelopmentPath', `vscode-remote://remote${path.resolve(p)}`]),
    ['skipWelcome', 'true'],
  ];
  const query = new URLSearchParams({
    workspace: path.resolve(workspaceFile),
    payload: JSON.stringify(payload),
  });
  return `${server.origin}/?${query}`;
}

export interface ProbeResult {
  ok: boolean;
  text?: string;
  error?: string;
}

/** What the probe's next "LoopX Probe: Invoke Tool" calls; clears the last result. */
export function writeProbeRequest(probe: string, tool: string, input: Record<string, unknown>): void {
  fs.rmSync(path.join(probe, 'result.json'), { force: true });
  fs.writeFileSync(path.join(probe, 'request.json'), JSON.stringify({ tool, input }));
}

/** The probe's result once it has written one. */
export function probeResult(probe: string): Promise<ProbeResult> {
  const file = path.join(probe, 'result.json');
  return until('the probe’s result', () =>
    fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as ProbeResult) : undefined,
  );
}

/** The todos of a goal, as the core reads them from `.loopx/`. */
export function todosOf(ws: string, goalId: string) {
  return new Store(ws).load(goalId).state.todos;
}

/** Text as a person reads it: the no-break spaces Markdown is written with read as spaces. */
export const readAs = (s: string): string => s.replace(/\u00a0/g, ' ');

/** `loopx …` as an agent in a shell of its own (LOOPX_AGENT names it). */
export function loopxAs(agent: string, ws: string, ...args: string[]): string {
  return execFileSync(process.execPath, [path.join(REPO, 'bin', 'loopx.js'), '--workspace', ws, ...args], {
    encoding: 'utf8',
    timeout: 15_000,
    env: { ...process.env, LOOPX_AGENT: agent },
  });
}

const PASSPHRASE = 'decisions-test-passphrase';

/** `loopx …` as the person's own script: their key's passphrase on stdin (`--passphrase-fd 0`). */
export function loopxAsPerson(ws: string, ...args: string[]): string {
  return execFileSync(
    process.execPath,
    [path.join(REPO, 'bin', 'loopx.js'), '--workspace', ws, '--passphrase-fd', '0', ...args],
    { encoding: 'utf8', timeout: 15_000, input: `${PASSPHRASE}\n` },
  );
}

/**
 * Where `needle` is drawn inside `container` (a text range's box), and the viewport's height: to
 * check a person sees it without scrolling.
 */
async function textBox(container: Locator, needle: string) {
  return container.evaluate((el, n) => {
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const i = node.textContent?.indexOf(n) ?? -1;
      if (i < 0) continue;
      const range = document.createRange();
      range.setStart(node, i);
      range.setEnd(node, i + n.length);
      const r = range.getBoundingClientRect();
      const box = el.getBoundingClientRect();
      return { top: r.top, bottom: r.bottom, boxTop: box.top, boxBottom: box.bottom, viewport: innerHeight };
    }
    return undefined;
  }, needle);
}

// ---------------------------------------------------------------------------------------------

describe('Decisions on agent-written text in a real VS Code (code-server + Chromium, multi-root)', () => {
  let tmp = '';
  let ws: Workspaces;
  let server: CodeServer | undefined;
  let browser: Browser | undefined;
  let page: Page;
  const serverLog: string[] = [];
  let failed = false;
  const shots: string[] = [];
  const timings: Record<string, number> = {};

  const shot = (name: string, target: Page | Locator = page) => saveShot(target, name, shots);

  /** it(), plus a screenshot of the window and its notifications when the step fails. */
  const step = uiSteps(
    'decisions',
    () => page,
    async (n) => {
      failed = true;
      const notes = await notificationTexts(page).catch((err: unknown) => [`(unreadable: ${String(err)})`]);
      console.log(`decisions: notifications when step ${n} failed:\n${notes.join('\n---\n')}`);
    },
  );

  /** Expands a tree row (a no-op when it is expanded already). */
  async function expand(row: Locator): Promise<void> {
    await row.waitFor({ timeout: UI_MS });
    if ((await row.getAttribute('aria-expanded')) !== 'true') await row.locator('.monaco-tl-twistie').click();
    await until('the row to expand', async () => (await row.getAttribute('aria-expanded')) === 'true');
  }

  /** Hovers `row` and returns the hover VS Code shows for it, once it shows `expect`. */
  async function hoverOf(row: Locator, expect: string): Promise<Locator> {
    const hover = page.locator('.workbench-hover, .monaco-hover').filter({ hasText: expect }).first();
    return until(
      `the hover of the row (showing "${expect}")`,
      async () => {
        if (await visible(hover)) return hover;
        // Off the row and back on: a hover that was cancelled (the tree re-rendered) starts again.
        await page.mouse.move(VIEWPORT.width - 10, VIEWPORT.height / 2);
        await row.locator('.monaco-icon-label').hover({ timeout: 2000 });
        await hover.waitFor({ state: 'visible', timeout: 3000 }).catch(() => {});
        return (await visible(hover)) ? hover : undefined;
      },
      UI_MS,
      250,
    );
  }

  before(
    async () => {
      const t0 = Date.now();
      // Installs code-server, Node 24 and Chromium when the cache is empty (minutes, once).
      (await loadScript<InstallModule>('scripts/hosts/vscode-host/install.mjs')).ensureHost();
      const host = await loadScript<HostModule>('scripts/hosts/vscode-host/server.mjs');
      const { packageVsix } = await loadScript<PackageModule>('scripts/build/package.mjs');
      for (const f of fs.existsSync(SHOT_DIRS.at(-1)!) ? fs.readdirSync(SHOT_DIRS.at(-1)!) : []) {
        if (/^decisions-failed-.*\.png$/.test(f)) fs.rmSync(path.join(SHOT_DIRS.at(-1)!, f));
      }
      tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-decisions-')));
      const vsix = packageVsix({ out: path.join(tmp, 'loopx.vsix') });
      assert.ok(vsix.files.includes('dist/extension.js') && vsix.bytes > 0);
      ws = makeWorkspaces(tmp);
      timings.setup = Date.now() - t0;

      const t1 = Date.now();
      const start = host.startCodeServer as (o: StartOptions) => Promise<CodeServer>;
      server = await start({
        vsix: vsix.file,
        smokeDriver: true, // the URL payload that loads the probe
        env: { LOOPX_PROBE_DIR: ws.probe },
        settings: {
          ...WORKBENCH_SETTINGS,
          'workbench.hover.delay': 300,
        },
        onOutput: keepServerLines(serverLog),
      });
      browser = await host.launchChromium(server);
      page = await browser.newPage({ viewport: VIEWPORT, deviceScaleFactor: 1 });
      page.on('dialog', (d) => void d.dismiss().catch(() => {}));
      await page.goto(workbenchUrl(server, ws.file, [PROBE]), { timeout: ACTIVATION_MS });
      await page
        .locator('.activitybar .action-label[aria-label^="LoopX"]')
        .first()
        .waitFor({ timeout: ACTIVATION_MS });
      // The window is the multi-root workspace: its title names the workspace file.
      await until('the window on multi.code-workspace', async () => {
        const title = await page.title();
        return /multi/.test(title) ? title : undefined;
      });
      timings.workbench = Date.now() - t1;
    },
    { timeout: 900_000 },
  );

  after(() => finishUiRun('decisions', { failed, serverLog, browser, server, tmp, timings, shots }));

  step(
    '(1) a todo title with a URL, a www. address and an e-mail address: the tree hover shows it as text, with no link or image',
    90_000,
    async () => {
      const t = Date.now();
      const title = 'https://evil.example/pixel.png?t=1)&nbsp;done www.evil.example mail@evil.example';
      loopx(ws.alpha, 'todo', 'add', '--goal-id', ws.goals.alpha, '--todo-id', 'pixel', '--title', title);
      assert.equal(todosOf(ws.alpha, ws.goals.alpha).find((x) => x.id === 'pixel')?.title, title);

      await closeOverlays(page);
      await openLoopxView(page, UI_MS);
      // Multi-root: a row per folder (expanded), then its goals.
      await treeRow(page, 'alpha').waitFor({ timeout: UI_MS });
      await treeRow(page, 'beta').waitFor({ timeout: UI_MS });
      await expand(treeRow(page, 'Alpha goal'));
      await expand(treeRow(page, 'Todos'));
      const row = treeRow(page, title);
      await row.waitFor({ timeout: UI_MS });

      const hover = await hoverOf(row, 'evil');
      const text = readAs(await hover.innerText());
      assert.ok(text.includes(`pixel · ${title}`), `the title exactly as stored, in:\n${text}`);
      assert.equal(await hover.locator('a').count(), 0, `no link in the hover: ${await hover.innerHTML()}`);
      assert.equal(await hover.locator('img').count(), 0, 'no image in the hover');
      timings.hover = Date.now() - t;
      await page.mouse.move(VIEWPORT.width - 10, VIEWPORT.height / 2);
      await page.keyboard.press('Escape');
    },
  );

  step(
    '(2) an agent’s loopx_add_todo: the confirmation shows its title and command character for character, and Yes writes exactly those',
    90_000,
    async () => {
      const t = Date.now();
      const title = 'Tidy [docs](https://evil.example/lm) ![px](https://evil.example/px.png) <img src=x>';
      const action = 'echo `x` *done* [y](z)';
      const before = {
        alpha: todosOf(ws.alpha, ws.goals.alpha).length,
        beta: todosOf(ws.beta, ws.goals.beta),
      };
      writeProbeRequest(ws.probe, 'loopx_add_todo', { goalId: ws.goals.alpha, title, action });
      await closeOverlays(page);
      await runFromPalette(page, 'LoopX Probe: Invoke Tool');

      const box = await modal(page, UI_MS);
      // Plain text (VS Code renders the message's Markdown to text): spaces are spaces here.
      const text = await box.innerText();
      assert.ok(text.includes(title), `the whole title, as given, in:\n${text}`);
      assert.ok(text.includes(action), `the whole command, as given, in:\n${text}`);
      // The dialog's own close action and buttons are `a` elements: look at its message only.
      const message = box.locator('.dialog-message-container');
      assert.equal(await message.count(), 1, 'the dialog’s message');
      assert.equal(await message.locator('a, img').count(), 0, 'no link or image in the message');
      await shot('tool-confirmation.png');
      assert.equal(
        todosOf(ws.alpha, ws.goals.alpha).length,
        before.alpha,
        'nothing written before the answer',
      );

      await box.getByRole('button', { name: 'Yes' }).click();
      await until('the dialog to close', async () => !(await visible(box)));
      const result = await probeResult(ws.probe);
      assert.ok(result.ok, `the tool call: ${result.error}`);
      assert.match(result.text ?? '', /^added todo \S+ to goal alpha-goal/);
      const added = todosOf(ws.alpha, ws.goals.alpha).filter((x) => x.title === title);
      assert.equal(added.length, 1, 'one todo with exactly that title, in the first folder');
      assert.equal(added[0]!.action, action, 'with exactly that command');
      assert.deepEqual(todosOf(ws.beta, ws.goals.beta), before.beta, 'the second folder is untouched');
      timings.confirmation = Date.now() - t;
    },
  );

  /** Whether the workbench holds a notification with `text` (read from the notification centre). */
  const notified = async (text: string): Promise<boolean> =>
    (await notificationTexts(page)).some((t) => t.includes(text));

  step(
    '(3) a reason of 1,900 lines that fakes LoopX’s words: the CLI refuses it now; one in an older log shows in the dialog as a bounded quote, the guarded command in view',
    120_000,
    async () => {
      const spoof = 'Routine log rotation, read-only.\n\nIt guards no open work now.';
      const hostile = `${spoof}${'\n'.repeat(1900)}Signed, the release team.`;
      // New input: more lines than a dialog can show are refused, naming the field and the limit.
      let refusal = '';
      try {
        loopxAs(
          'sly',
          ws.alpha,
          'gate',
          'request',
          '--goal-id',
          ws.goals.alpha,
          '--gate-id',
          'spoof',
          '--reason',
          hostile,
        );
      } catch (e) {
        refusal = String((e as { stderr?: string }).stderr ?? e);
      }
      assert.match(refusal, /reason.*must be at most 20 lines \(it has 1903\)/);
      assert.equal(
        new Store(ws.alpha).load(ws.goals.alpha).state.gates.find((g) => g.id === 'spoof'),
        undefined,
        'nothing stored',
      );
      // A log written before the limit (or by hand) may still hold one: the view must bound it.
      appendChained(writerLog(ws.alpha, ws.goals.alpha), {
        type: 'gate.requested',
        actor: { kind: 'agent', id: 'sly', channel: 'cli' },
        data: { gate: { id: 'spoof', title: 'spoof', reason: hostile, guards: [] } },
      });
      loopxAs(
        'sly',
        ws.alpha,
        ...['todo', 'add', '--goal-id', ws.goals.alpha, '--todo-id', 'rotate', '--title', 'Rotate the logs'],
        ...['--action', 'rm -rf ~/projects', '--gate', 'spoof'],
      );
      const gate = new Store(ws.alpha).load(ws.goals.alpha).state.gates.find((g) => g.id === 'spoof')!;
      assert.equal(gate.reason, hostile, 'the older log’s reason, whole');

      await closeOverlays(page);
      const note = await notification(page, 'gate spoof of goal', UI_MS);
      const text = await note.innerText();
      assert.match(text, /in folder alpha/, 'the notification names the folder');
      assert.match(text, /asked by agent sly at the command line \(unsigned\)/);
      assert.doesNotMatch(text, /Routine|read-only/, 'the requester’s words are not in the notification');
      const hrefs = await note
        .locator('.notification-list-item-message a')
        .evaluateAll((as) => as.map((a) => a.getAttribute('href') ?? a.getAttribute('data-href') ?? ''));
      assert.ok(
        hrefs
          .filter((h) => h.startsWith('command:'))
          .every((h) => h.startsWith('command:loopx.gateNotification.answer?')),
        `no command link but the notification’s own: ${hrefs.join(' ')}`,
      );
      await note
        .locator('a', { hasText: /^Approve$/ })
        .first()
        .click();

      const box = await modal(page, UI_MS);
      const detail = box.locator('.dialog-message-detail');
      const where = await textBox(detail, '$ rm -rf ~/projects');
      assert.ok(where, 'the guarded command is in the dialog');
      const shown = await box.boundingBox();
      assert.ok(
        where.top >= Math.max(0, shown!.y) &&
          where.bottom <= Math.min(where.viewport, shown!.y + shown!.height),
        `the guarded command is in view without scrolling: ${JSON.stringify({ where, shown })}`,
      );
      const lines = (await detail.innerText()).split('\n');
      const spoofed = lines.filter((l) => l.includes('It guards no open work now.'));
      assert.ok(spoofed.length >= 1, lines.join('\n'));
      for (const l of spoofed) assert.match(l, /^│ /, `the requester’s sentence is quoted: ${l}`);
      assert.ok(
        lines.some((l) => /^Reason, in the agent’s words \(not LoopX’s\):$/.test(l)),
        lines.join('\n'),
      );
      assert.ok(
        lines.some((l) => /^└ not all shown \(6 of 1903 lines\): Show Reason opens it whole/.test(l)),
        lines.join('\n'),
      );
      assert.match(await box.locator('.dialog-message-text').innerText(), /in folder alpha\?$/);
      await shot('decision-hostile-reason.png');

      // Show Reason opens the reason whole, read-only, and decides nothing.
      await box.getByRole('button', { name: 'Show Reason' }).click();
      await until('the modal to close', async () => !(await visible(box)));
      const editor = page.locator('.part.editor .view-lines').first();
      await until(
        'the reason in an editor',
        async () =>
          (await visible(editor)) && readAs(await editor.innerText()).includes('Routine log rotation'),
      );
      assert.equal(
        new Store(ws.alpha).load(ws.goals.alpha).state.gates.find((g) => g.id === 'spoof')!.status,
        'pending',
        'nothing decided',
      );
    },
  );

  step(
    '(4) the same gate id pending in two folders: two notifications, each naming its folder; one decided at the command line goes away, the other stays',
    120_000,
    async () => {
      await closeOverlays(page);
      loopxAsPerson(ws.alpha, 'key', 'create', '--name', 'alice');
      for (const dir of [ws.alpha, ws.beta]) {
        const goal = dir === ws.alpha ? ws.goals.alpha : ws.goals.beta;
        loopxAs(
          'ship-bot',
          dir,
          'todo',
          'add',
          '--goal-id',
          goal,
          '--todo-id',
          'ship',
          '--title',
          'Ship it',
          '--action',
          'echo ship',
          '--gate',
          'deploy',
        );
      }
      await until(
        'a notification per folder',
        async () =>
          (await notified('Gate deploy of goal "Alpha goal" in folder alpha')) &&
          (await notified('Gate deploy of goal "Beta goal" in folder beta')),
      );
      await notification(page, 'Gate deploy of goal "Beta goal" in folder beta', UI_MS); // shown: its toast, or the notification centre
      await shot('gate-notifications-two-folders.png');
      await page.keyboard.press('Escape');

      // The person decides alpha's at the command line, with their key: its notification ends.
      const t = Date.now();
      loopxAsPerson(ws.alpha, 'gate', 'approve', '--goal-id', ws.goals.alpha, '--gate-id', 'deploy');
      assert.equal(
        new Store(ws.alpha).load(ws.goals.alpha).state.gates.find((g) => g.id === 'deploy')!.status,
        'approved',
      );
      await until(
        'alpha’s notification to go',
        async () => !(await notified('Gate deploy of goal "Alpha goal" in folder alpha')),
        10_000,
        100,
      );
      timings.withdrawn = Date.now() - t;
      assert.ok(
        await notified('Gate deploy of goal "Beta goal" in folder beta'),
        'beta’s stays: it is still pending',
      );

      // Beta's Approve asks first, naming beta's folder in the question.
      await approveLink(
        await notification(page, 'Gate deploy of goal "Beta goal" in folder beta', UI_MS),
      ).click();
      const box = await modal(page, UI_MS);
      assert.match(
        await box.locator('.dialog-message-text').innerText(),
        /^Approve gate "deploy" of goal "Beta goal" in folder beta\?$/,
      );
      assert.match(await box.locator('.dialog-message-detail').innerText(), /\$ echo ship/);
      await box.getByRole('button', { name: 'Cancel' }).click();
      await until('the modal to close', async () => !(await visible(box)));
      assert.equal(
        new Store(ws.beta).load(ws.goals.beta).state.gates.find((g) => g.id === 'deploy')!.status,
        'pending',
      );
    },
  );
});
