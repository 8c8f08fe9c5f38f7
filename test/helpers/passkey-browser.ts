/**
 * What the browser passkey tests (test/browser/passkey*.test.ts) share: the build the pages are
 * served from, the real status server (`startStatusServer`) on a workspace, Debian's Chromium
 * through playwright-core with Chromium's virtual authenticator (CDP `WebAuthn.*`) standing in for
 * the person's device, and the one-time link `loopx key passkey add` prints (it takes the person's
 * passphrase, as a person gives it).
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { chromium } from 'playwright-core';
import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core';
import { Store } from '../../src/core/index';
import { startStatusServer } from '../../src/server/status-server';
import type { StatusServer } from '../../src/server/status-server';
import { loopx, ok, PASSPHRASE, REPO } from './cli';

export const CHROMIUM = '/usr/bin/chromium';
export const SHOTS = path.join(REPO, 'test-results', 'screenshots');

/** Builds dist/ (the CLI the tests spawn and the pages' script the server sends). */
export function buildForBrowser(): void {
  const b = spawnSync(process.execPath, ['scripts/build/build.mjs'], { cwd: REPO, encoding: 'utf8' });
  assert.equal(b.status, 0, `build failed:\n${b.stdout}\n${b.stderr}`);
  assert.ok(fs.existsSync(CHROMIUM), `${CHROMIUM} is needed`);
}

export interface PasskeyBrowser {
  srv: StatusServer;
  /** `http://localhost:<port>`: passkeys need a host name. */
  origin: string;
  browser: Browser;
  context: BrowserContext;
  page: Page;
  cdp: CDPSession;
  authenticatorId: string;
  close(): Promise<void>;
}

/** The status server on `ws` and a browser page with a virtual authenticator that verifies its user. */
export async function openPasskeyBrowser(ws: string, config: string): Promise<PasskeyBrowser> {
  const store = Store.open(ws, { configDir: config });
  const srv = await startStatusServer({ workspace: ws, store, port: 0, assetsDir: REPO });
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run'],
  });
  const context = await browser.newContext({ colorScheme: 'light', viewport: { width: 1000, height: 620 } });
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable', { enableUI: false });
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  fs.mkdirSync(SHOTS, { recursive: true });
  return {
    srv,
    origin: `http://localhost:${srv.port}`,
    browser,
    context,
    page,
    cdp,
    authenticatorId,
    async close() {
      await browser.close();
      await srv.close();
    },
  };
}

/** The one-time registration link for a passkey named `name`, unlocked with the person's passphrase. */
export async function passkeyLink(ws: string, config: string, port: number, name: string): Promise<string> {
  const args = [
    '--json',
    '--passphrase-fd',
    '3',
    'key',
    'passkey',
    'add',
    '--name',
    name,
    '--port',
    String(port),
  ];
  const r = await loopx(args, { cwd: ws, env: { LOOPX_CONFIG_DIR: config }, fd3: `${PASSPHRASE}\n` });
  return (JSON.parse(ok(r).stdout) as { url: string }).url;
}

/** Registers a passkey on `page` through `link`, as the person does: one click, then the browser's prompt. */
export async function registerPasskey(page: Page, link: string, name: string): Promise<void> {
  await page.goto(link);
  await page.getByRole('button', { name: 'Create the passkey' }).click();
  await page
    .getByText(new RegExp(`Passkey ${name} .* is pinned on this machine`))
    .waitFor({ timeout: 15_000 });
}

/**
 * Sends a body the page posted to `/decide/commit` again, from the page (its origin, its
 * session), as a replay would: the status and the JSON answer. `path` is relative to the page.
 */
export async function resendCommit(
  page: Page,
  path: string,
  body: string,
): Promise<{ status: number; body: { error?: { reason?: string } } }> {
  return page.evaluate(
    async ([url, data]) => {
      const r = await fetch(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: data,
      });
      return { status: r.status, body: (await r.json()) as { error?: { reason?: string } } };
    },
    [path, body] as const,
  );
}
