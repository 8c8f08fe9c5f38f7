/**
 * Driving the real VS Code workbench (code-server in headless Chromium) from a test: the host
 * scripts' typed entry points, a bounded poll, and what a person looks at first (the LoopX view
 * and the notifications).
 */
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Locator, Page } from 'playwright-core';

export const REPO = path.resolve(__dirname, '..', '..');

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
