/**
 * Driving the real VS Code workbench (code-server in headless Chromium) from a test: the host
 * scripts' typed entry points, a bounded poll, and what a person looks at first (the LoopX view
 * and the notifications).
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { it } from 'node:test';
import { pathToFileURL } from 'node:url';
import type { Browser, FrameLocator, Locator, Page } from 'playwright-core';

export const REPO = path.resolve(__dirname, '..', '..');

/**
 * Where the UI tests put their screenshots: the README's pictures are refreshed only on request
 * (LOOPX_UPDATE_SCREENSHOTS=1), so a test run leaves the tree clean; every run keeps its own
 * copies in test-results/ui/ (the last entry).
 */
export const SHOT_DIRS = [
  ...(process.env.LOOPX_UPDATE_SCREENSHOTS === '1' ? [path.join(REPO, 'docs', 'screenshots')] : []),
  path.join(REPO, 'test-results', 'ui'),
];
export const VIEWPORT = { width: 1280, height: 800 };

/** The editor settings every UI test starts from: dark, nothing open, no tips or walkthrough. */
export const WORKBENCH_SETTINGS: Record<string, unknown> = {
  'workbench.colorTheme': 'Dark Modern',
  'workbench.startupEditor': 'none',
  'workbench.secondarySideBar.defaultVisibility': 'hidden',
  'workbench.welcomePage.walkthroughs.openOnInstall': false,
  'workbench.tips.enabled': false,
};

/** code-server's `onOutput`: keeps the last 200 lines in `log`, for the report of a failed run. */
export const keepServerLines =
  (log: string[]) =>
  (line: string): void => {
    log.push(line);
    if (log.length > 200) log.shift();
  };

// The host scripts are plain ES modules: typed here by what the tests use.
export interface CodeServer {
  url: string;
  origin: string;
  port: number;
  tmpRoot: string;
  host: { chromium: string };
  stop(): Promise<void>;
}
export interface HostModule {
  startCodeServer(opts: {
    workspace?: string;
    vsix?: string;
    settings?: Record<string, unknown>;
    onOutput?: (line: string) => void;
  }): Promise<CodeServer>;
  launchChromium(server: Pick<CodeServer, 'tmpRoot'> & { host: { chromium: string } }): Promise<Browser>;
  makeTempRoot(): string;
}
export interface InstallModule {
  ensureHost(): { node24: string; codeServerEntry: string; chromium: string };
  hostPaths(cache?: string): { node24: string; codeServerEntry: string; chromium: string };
  CODE_SERVER_VERSION: string;
  NODE_VERSION: string;
}
export interface PackageModule {
  packageVsix(opts: { out: string; build?: boolean }): { file: string; bytes: number; files: string[] };
}
export interface NpmEnvModule {
  nestedNpmEnv(env: NodeJS.ProcessEnv, extra?: NodeJS.ProcessEnv): NodeJS.ProcessEnv;
}

export const loadScript = <T>(rel: string, root = REPO): Promise<T> =>
  import(pathToFileURL(path.join(root, rel)).href) as Promise<T>;

/** Polls `fn` until it returns something truthy; fails naming `what` after `timeoutMs`. */
export async function until<T>(
  what: string,
  fn: () => T | Promise<T>,
  timeoutMs = 20_000,
  everyMs = 100,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v as NonNullable<T>;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${String(last)})` : ''}`,
      );
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export const visible = (l: Locator) => l.isVisible().catch(() => false);

/** A row of the side bar's tree by its label (the row's own aria-label adds the description). */
export function treeRow(page: Page, label: string): Locator {
  return page.locator('.part.sidebar .monaco-list-row[role="treeitem"]', {
    has: page.locator(`.monaco-icon-label[aria-label=${JSON.stringify(label)}]`),
  });
}

/** Opens the LoopX view container from the activity bar, unless it is showing already. */
export async function openLoopxView(page: Page, timeoutMs = 20_000): Promise<void> {
  const tab = page
    .locator('.activitybar li.action-item', { has: page.locator('.action-label[aria-label^="LoopX"]') })
    .first();
  await tab.waitFor({ timeout: timeoutMs });
  // The tab of the open container is "checked"; clicking it then would close the side bar.
  const open = async () =>
    /\bchecked\b/.test((await tab.getAttribute('class')) ?? '') &&
    (await visible(page.locator('.part.sidebar')));
  if (await open()) return;
  // The tab itself: its badge (pending gates) covers the icon's corner.
  await tab.click();
  await until('the LoopX view to open', open, timeoutMs);
}

/**
 * The text of every notification the workbench holds, toasts and the rest, read from the
 * notification centre (opened with the status bar's bell, then closed again).
 */
export async function notificationTexts(page: Page): Promise<string[]> {
  const centre = page.locator('.notifications-center');
  if (!(await visible(centre))) {
    await page
      .locator('.statusbar-item[id="status.notifications"] a, .statusbar [aria-label*="Notifications"]')
      .first()
      .click({ timeout: 5000 });
    await centre.waitFor({ timeout: 5000 });
  }
  const items = centre.locator('.notification-list-item');
  const texts: string[] = [];
  for (let i = 0; i < (await items.count()); i++) texts.push((await items.nth(i).innerText()).trim());
  await page.keyboard.press('Escape');
  return texts;
}

/** Escape until no quick input, dialog or hover is open (a failed step may leave one). */
export async function closeOverlays(page: Page): Promise<void> {
  for (let i = 0; i < 3; i++) {
    const open =
      (await visible(page.locator('.quick-input-widget'))) ||
      (await visible(page.locator('.monaco-dialog-box'))) ||
      (await visible(page.locator('.workbench-hover, .monaco-hover').first()));
    if (!open) break;
    await page.keyboard.press('Escape');
  }
}

/**
 * Readies the window for a picture of the side bar at its default width: overlays closed, Do Not
 * Disturb on (a gate's notification stays until the gate is decided; the pictures are of what is
 * under it) and no toast left. Run `runFromPalette(page, DO_NOT_DISTURB)` again to turn it off.
 */
export async function quietAtDefaultWidth(page: Page): Promise<void> {
  await closeOverlays(page);
  await runFromPalette(page, DO_NOT_DISTURB);
  await until(
    'no notification toast',
    async () => !(await visible(page.locator('.notification-toast').first())),
  );
  const sidebar = await page.locator('.part.sidebar').boundingBox();
  assert.equal(sidebar?.width, 300, 'the side bar at its default width');
}

export const DO_NOT_DISTURB = 'Notifications: Toggle Do Not Disturb Mode';

/**
 * Runs a command through the Command Palette: F1, type `label`, pick the row with exactly that
 * label. Before its extension has registered the command the palette says "No matching
 * commands": close it and try again (bounded). `beforePick` runs with the list showing.
 */
export async function runFromPalette(
  page: Page,
  label: string,
  opts: { beforePick?: () => Promise<void>; timeoutMs?: number } = {},
): Promise<void> {
  const widget = page.locator('.quick-input-widget');
  // The row of exactly that command (its aria-label may go on with a keybinding), not a near match.
  const exact = widget.locator(
    `.quick-input-list .monaco-list-row:is([aria-label=${JSON.stringify(label)}], [aria-label^=${JSON.stringify(`${label}, `)}])`,
  );
  await until(
    `the Command Palette to offer "${label}"`,
    async () => {
      await closeOverlays(page);
      await page.keyboard.press('F1');
      await widget.waitFor({ state: 'visible', timeout: 5000 });
      await page.keyboard.type(label);
      // Either the command shows up or "No matching commands" does: poll for both, briefly.
      const found = await until(
        'the palette to settle',
        async () =>
          (await visible(exact.first()))
            ? 'found'
            : (await widget.innerText()).includes('No matching commands')
              ? 'none'
              : '',
        5000,
      ).catch(() => 'none');
      if (found === 'found') return true;
      await page.keyboard.press('Escape');
      return false;
    },
    opts.timeoutMs ?? 45_000,
    500,
  );
  await opts.beforePick?.();
  await exact.first().click({ timeout: 5000 });
}

/**
 * The notification whose text has `text`: its toast, or once the toast hid (or was never shown,
 * as when a dialog was open), its item in the notification centre, opened with the bell.
 */
export async function notification(page: Page, text: string, timeoutMs = 20_000): Promise<Locator> {
  const inToast = page.locator('.notification-toast', { hasText: text }).first();
  const inCentre = page.locator('.notifications-center .notification-list-item', { hasText: text }).first();
  return until(
    `the notification "${text}"`,
    async () => {
      if (await visible(inToast)) return inToast;
      if (await visible(inCentre)) return inCentre;
      if (!(await visible(page.locator('.notifications-center'))))
        await page
          .locator('.statusbar-item[id="status.notifications"] a, .statusbar [aria-label*="Notifications"]')
          .first()
          .click({ timeout: 2000 })
          .catch(() => {});
      return undefined;
    },
    timeoutMs,
    250,
  );
}

/** A gate notification's Approve link (a progress notification: its actions are links). */
export const approveLink = (n: Locator): Locator =>
  n.locator('.notification-list-item-message a', { hasText: /^Approve$/ }).first();

/** The modal dialog VS Code shows (a decision, a confirmation). */
export async function modal(page: Page, timeoutMs = 20_000): Promise<Locator> {
  const box = page.locator('.monaco-dialog-box').first();
  await box.waitFor({ timeout: timeoutMs });
  return box;
}

/**
 * The end of a UI test file: code-server's last lines when a step failed, the browser and the
 * server stopped, the temp folder removed, and the timings and screenshots printed under `name`.
 */
export async function finishUiRun(
  name: string,
  run: {
    failed: boolean;
    serverLog: string[];
    browser?: Browser;
    server?: { stop(): Promise<void> };
    tmp: string;
    timings: Record<string, number>;
    shots: string[];
  },
): Promise<void> {
  if (run.failed && run.serverLog.length)
    console.log(`${name}: code-server's last lines:\n${run.serverLog.slice(-30).join('\n')}`);
  await run.browser?.close().catch(() => {});
  await run.server?.stop();
  if (run.tmp) fs.rmSync(run.tmp, { recursive: true, force: true });
  const t = Object.entries(run.timings)
    .map(([k, v]) => `${k} ${(v / 1000).toFixed(1)}s`)
    .join(', ');
  console.log(
    `${name}: ${t}\n${name}: screenshots ${run.shots.join(', ') || 'none'} in ${SHOT_DIRS.map((d) => path.relative(REPO, d)).join(' and ')}`,
  );
}

/** Saves a screenshot of `target` as `name` in every SHOT_DIRS folder; notes it in `shots`. */
export async function saveShot(target: Page | Locator, name: string, shots: string[]): Promise<void> {
  const png = await target.screenshot({ animations: 'disabled' });
  for (const dir of SHOT_DIRS) {
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, name), png);
  }
  shots.push(`${name} (${(png.length / 1024).toFixed(0)} KB)`);
}

/**
 * Opens the workbench of `page` with workspace trust on, so an untrusted folder opens in Restricted
 * Mode. The host scripts start code-server with --disable-workspace-trust (every other test wants a
 * trusted window), and the web workbench takes trust from one field of its page's configuration,
 * `enableWorkspaceTrust`, which that flag sets to false; the user setting
 * `security.workspace.trust.enabled` cannot override it. So the page's scripts are given the
 * configuration with that field on: the attribute is read through `getAttribute` when the
 * workbench starts (the served page itself is left alone: answering it from the test loses the
 * server's cookies, and the workbench then cannot connect). Call before `page.goto`.
 */
export async function withWorkspaceTrust(page: Page): Promise<void> {
  await page.addInitScript(() => {
    const read = Element.prototype.getAttribute;
    Element.prototype.getAttribute = function (this: Element, name: string) {
      const value = read.call(this, name);
      if (this.id !== 'vscode-workbench-web-configuration' || name !== 'data-settings' || !value)
        return value;
      return JSON.stringify({ ...JSON.parse(value), enableWorkspaceTrust: true });
    };
  });
}

/**
 * Picks the row of the open quick pick (a command's "Which folder?", "Choose a goal") whose text
 * has `label`, once it shows. A quick pick closes when the window moves focus (a webview that
 * redraws, a notification): with `reopen`, a list that closed before the click is opened again
 * (bounded) instead of failing the test on the window's focus.
 */
export async function pickQuickItem(
  page: Page,
  label: string,
  opts: { timeoutMs?: number; reopen?: () => Promise<void> } = {},
): Promise<void> {
  const row = page
    .locator('.quick-input-widget .quick-input-list .monaco-list-row', { hasText: label })
    .first();
  const timeoutMs = opts.timeoutMs ?? 20_000;
  if (!opts.reopen) {
    await row.waitFor({ state: 'visible', timeout: timeoutMs });
    await row.click();
    return;
  }
  for (let attempt = 1; ; attempt++) {
    try {
      await row.waitFor({ state: 'visible', timeout: timeoutMs });
      await row.click({ timeout: 5000 });
      return;
    } catch (err) {
      if (attempt >= 3) throw err;
      await opts.reopen();
    }
  }
}

/** Runs `command` from the Command Palette and picks `label` in the list it opens. */
export async function runAndPick(page: Page, command: string, label: string): Promise<void> {
  await runFromPalette(page, command);
  await pickQuickItem(page, label, { reopen: () => runFromPalette(page, command) });
}

/**
 * The content of the webview opened last (a Markdown preview, the dashboard): its outer iframe,
 * then the frame its page is in.
 */
export const webviewContent = (page: Page): FrameLocator =>
  page.locator('iframe.webview.ready').last().contentFrame().locator('#active-frame').contentFrame();

/** A visible row of the side bar's tree as a person reads it, and whether any of it is cut off. */
export interface SidebarRow {
  level: number;
  label: string;
  description: string;
  /** The row's text (label and description) is wider than the room it has: VS Code cut it with "…". */
  cut: boolean;
  /** The label alone does not fit (its description, if any, is not shown at all). */
  labelCut: boolean;
}

/** Every row the side bar's tree renders now, top to bottom. */
export function sidebarRows(page: Page): Promise<SidebarRow[]> {
  return page.locator('.part.sidebar .monaco-list-row[role="treeitem"]').evaluateAll((rows) =>
    rows.map((r) => {
      const box = r.querySelector<HTMLElement>('.monaco-icon-label-container');
      const name = r.querySelector('.label-name');
      // (No helper functions in here: the page runs this code as it is, without tsx's helpers.)
      return {
        level: Number(r.getAttribute('aria-level')),
        label: name?.textContent ?? '',
        description: r.querySelector('.label-description')?.textContent ?? '',
        cut: !!box && box.scrollWidth > box.clientWidth,
        // The container clips what overflows: a label cut short ends past its right edge.
        labelCut:
          !!name && !!box && name.getBoundingClientRect().right > box.getBoundingClientRect().right + 0.5,
      };
    }),
  );
}

/** Expands the side bar's tree row labelled exactly `label` (a no-op when it is expanded). */
export async function expandRow(page: Page, label: string, timeoutMs = 20_000): Promise<void> {
  const row = page
    .locator('.part.sidebar .monaco-list-row[role="treeitem"]')
    .filter({
      has: page.locator('.label-name', {
        hasText: new RegExp(`^${label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`),
      }),
    })
    .first();
  await row.waitFor({ timeout: timeoutMs });
  if ((await row.getAttribute('aria-expanded')) !== 'true') await row.locator('.monaco-tl-twistie').click();
  await until(
    'the row to expand',
    async () => (await row.getAttribute('aria-expanded')) === 'true',
    timeoutMs,
  );
}

/**
 * The steps of a UI test file: it(), plus a screenshot of the window, `<prefix>-failed-<n>.png` in
 * test-results/ui/, when step n fails; then `onFail(n)` is told (finishUiRun then prints the
 * server's log; a test may also print what the window showed).
 */
export function uiSteps(prefix: string, page: () => Page | undefined, onFail: (step: number) => unknown) {
  let n = 0;
  return (name: string, timeout: number, fn: () => Promise<void>): void => {
    const k = ++n;
    it(name, { timeout }, async () => {
      try {
        await fn();
      } catch (e) {
        const file = path.join(SHOT_DIRS.at(-1)!, `${prefix}-failed-${k}.png`);
        fs.mkdirSync(path.dirname(file), { recursive: true });
        await page()
          ?.screenshot({ path: file })
          .catch(() => {});
        await onFail(k);
        throw e;
      }
    });
  };
}
