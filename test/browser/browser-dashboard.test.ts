/**
 * The dashboard in a real browser, served by the real loopback status server (`startStatusServer`
 * over a temp store built with the real core) to Debian's Chromium through playwright-core: the
 * one-time login link, the session cookie, the live event stream, hostile text, and the
 * read-only controls (a `vscode://` link and the CLI command instead of an action).
 *
 *   node --import tsx --test test/browser/browser-dashboard.test.ts
 *
 * Screenshots: test-results/screenshots/browser-dashboard-{light,dark}.png, copied to
 * docs/screenshots/ for the README.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { chromium } from 'playwright-core';
import type { Browser, BrowserContext, Page, Request } from 'playwright-core';
import { Store, invoke } from '../../src/core/index';
import type { Actor } from '../../src/core/index';
import { startStatusServer } from '../../src/server/status-server';
import type { StatusServer } from '../../src/server/status-server';
import { tempDir, removeTempDirs } from '../helpers/store';

const REPO = path.resolve(__dirname, '..', '..');
const CHROMIUM = '/usr/bin/chromium';
const SHOTS = path.join(REPO, 'test-results', 'screenshots');
const DOC_SHOTS = path.join(REPO, 'docs', 'screenshots');
const HOSTILE = '<img src=x onerror="window.__pwned=1;alert(1)">';

const human: Actor = { kind: 'user', id: 'alice', channel: 'cli' };
const agent: Actor = { kind: 'agent', id: 'codex', channel: 'cli' };

function buildStore(): Store {
  const store = Store.init(fs.realpathSync(tempDir('loopx-browser-dash-')));
  invoke(
    store,
    'goal.create',
    {
      goalId: 'payments',
      title: 'Refactor the payment module',
      objective: 'Extract the retry logic into one place and keep every test green.',
    },
    human,
  );
  invoke(
    store,
    'todo.add',
    { goalId: 'payments', todoId: 'extract', title: 'Extract the retry helper' },
    agent,
  );
  invoke(
    store,
    'gate.request',
    { goalId: 'payments', gateId: 'deploy', title: 'Deploy to staging', reason: 'Touches staging.' },
    agent,
  );
  invoke(store, 'goal.create', { goalId: 'hostile', title: HOSTILE, objective: HOSTILE }, human);
  invoke(store, 'todo.add', { goalId: 'hostile', todoId: 'evil', title: HOSTILE }, agent);
  return store;
}

describe('the dashboard in a browser, from the status server', () => {
  let browser: Browser;
  let store: Store;
  let srv: StatusServer;
  const contexts: BrowserContext[] = [];

  before(async () => {
    const b = spawnSync(process.execPath, ['scripts/build/build.mjs'], { cwd: REPO, encoding: 'utf8' });
    assert.equal(b.status, 0, `build failed:\n${b.stdout}\n${b.stderr}`);
    assert.ok(fs.existsSync(CHROMIUM), `${CHROMIUM} is needed (apt-get install chromium)`);
    store = buildStore();
    srv = await startStatusServer({ workspace: store.workspace, store, port: 0, assetsDir: REPO });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run'],
    });
    fs.mkdirSync(SHOTS, { recursive: true });
    fs.mkdirSync(DOC_SHOTS, { recursive: true });
  });

  after(async () => {
    for (const c of contexts.splice(0)) await c.close().catch(() => undefined);
    await browser?.close();
    await srv?.close();
    removeTempDirs();
  });

  interface Opened {
    page: Page;
    context: BrowserContext;
    requests: Request[];
    dialogs: string[];
  }

  async function openDashboard(colorScheme: 'light' | 'dark', link = srv.loginUrl()): Promise<Opened> {
    const context = await browser.newContext({ colorScheme, viewport: { width: 1200, height: 900 } });
    contexts.push(context);
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: srv.url });
    await context.addInitScript(() => {
      const seen: string[] = [];
      (window as unknown as { __violations: string[] }).__violations = seen;
      document.addEventListener('securitypolicyviolation', (e) =>
        seen.push(`${e.violatedDirective} ${e.blockedURI}`),
      );
    });
    const page = await context.newPage();
    const requests: Request[] = [];
    const dialogs: string[] = [];
    page.on('request', (r) => requests.push(r));
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    const res = await page.goto(link);
    assert.equal(res?.status(), 200, 'the login link lands on the dashboard');
    await page.getByText('Refactor the payment module').first().waitFor({ timeout: 15_000 });
    return { page, context, requests, dialogs };
  }

  it('a login link lands on / without the code, renders the goals, and updates live', async () => {
    const o = await openDashboard('light');
    const url = new URL(o.page.url());
    assert.equal(url.pathname, '/');
    assert.equal(url.search, '', 'no code= left in the address bar');
    const cookies = await o.context.cookies(srv.url);
    const session = cookies.find((c) => c.name === `loopx_session_${srv.port}`);
    assert.ok(session, 'the session cookie is set');
    assert.equal(session.httpOnly, true);
    assert.equal(session.sameSite, 'Strict');
    assert.equal(await o.page.evaluate(() => document.cookie), '', 'the page script cannot read the cookie');
    assert.equal((await o.page.locator('.goal-row').count()) >= 2, true);

    // A change made by the CLI's core on the same workspace arrives without a reload.
    const navigations: string[] = [];
    o.page.on('framenavigated', (f) => navigations.push(f.url()));
    invoke(store, 'goal.create', { goalId: 'live', title: 'Arrived while watching' }, human);
    await o.page.getByText('Arrived while watching').first().waitFor({ timeout: 15_000 });
    assert.deepEqual(navigations, [], 'no reload');
    assert.equal(
      (await o.page.locator('body').getAttribute('class'))?.includes('vscode-light'),
      true,
      'the body class follows the colour scheme',
    );
    await o.page.locator('.goal-row[data-goal="payments"]').click();
    await o.page.locator('.details .handoff[data-action="approve"]').first().waitFor();
    await o.page.screenshot({ path: path.join(SHOTS, 'browser-dashboard-light.png') });
    fs.copyFileSync(
      path.join(SHOTS, 'browser-dashboard-light.png'),
      path.join(DOC_SHOTS, 'browser-dashboard-light.png'),
    );
    assert.ok(
      o.requests.every((r) => r.method() === 'GET'),
      'the page sent only GET requests',
    );
  });

  it('renders hostile titles as text and runs no script from them', async () => {
    const o = await openDashboard('light');
    assert.ok((await o.page.getByText(HOSTILE).count()) >= 1, 'the hostile title shows as text');
    await o.page.locator('.goal-row[data-goal="hostile"]').click();
    await o.page.locator('#details-heading').filter({ hasText: HOSTILE }).waitFor();
    await o.page
      .locator('vscode-collapsible[data-section="todos"]')
      .evaluate((c) => c.setAttribute('open', ''));
    await o.page.locator('.todo-title').filter({ hasText: HOSTILE }).waitFor();
    assert.equal(await o.page.locator('img[src="x"]').count(), 0, 'no img element was made from text');
    assert.equal(
      await o.page.evaluate(() => (window as unknown as { __pwned?: unknown }).__pwned),
      undefined,
    );
    assert.deepEqual(o.dialogs, []);
  });

  it('turns approve into a vscode:// link plus the CLI command, and sends no request that is not GET', async () => {
    const o = await openDashboard('dark');
    assert.equal(
      await o.page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor),
      'rgb(31, 31, 31)',
      "Dark Modern's editor background",
    );
    await o.page.locator('.goal-row[data-goal="payments"]').click();
    const approve = o.page.locator('.details .handoff[data-action="approve"][data-gate="deploy"]').first();
    await approve.waitFor({ timeout: 15_000 });
    assert.equal(
      await approve.locator('a.handoff-link').getAttribute('href'),
      'vscode://loopx.loopx-vscode/dashboard/approve-gate?goalId=payments&gateId=deploy',
    );
    const command = 'loopx gate approve --goal-id payments --gate-id deploy';
    assert.equal(await approve.locator('code.handoff-cli').textContent(), command);
    await approve.locator('vscode-button.handoff-copy').click();
    await o.page.waitForFunction((c) => navigator.clipboard.readText().then((t) => t === c), command, {
      timeout: 5000,
    });
    const reject = o.page.locator('.details .handoff[data-action="reject"]').first();
    assert.equal(
      await reject.locator('code.handoff-cli').textContent(),
      'loopx gate reject --goal-id payments --gate-id deploy',
    );
    // No control posts or acts: the page has no vscode-button that approves.
    assert.equal(await o.page.locator('vscode-button[data-action="approve"]').count(), 0);
    const tree = o.page.locator('.details .handoff[data-action="reveal"] a');
    assert.equal(
      await tree.getAttribute('href'),
      'vscode://loopx.loopx-vscode/dashboard/reveal-goal?goalId=payments',
    );

    // The selection survives a reload (sessionStorage), and the goal is read again.
    await o.page.reload();
    await o.page.locator('#details-heading').filter({ hasText: 'Refactor the payment module' }).waitFor();
    await o.page.screenshot({ path: path.join(SHOTS, 'browser-dashboard-dark.png') });
    fs.copyFileSync(
      path.join(SHOTS, 'browser-dashboard-dark.png'),
      path.join(DOC_SHOTS, 'browser-dashboard-dark.png'),
    );
    assert.deepEqual(
      await o.page.evaluate(() => (window as unknown as { __violations: string[] }).__violations),
      [],
      'no CSP violation under the served policy',
    );
    const notGet = o.requests.filter((r) => r.method() !== 'GET').map((r) => `${r.method()} ${r.url()}`);
    assert.deepEqual(notGet, []);
    assert.ok(o.requests.some((r) => new URL(r.url()).pathname === '/goals/payments'));
    assert.ok(o.requests.some((r) => new URL(r.url()).pathname === '/events'));
  });

  it('refuses a second use of the same login link', async () => {
    const link = srv.loginUrl();
    await openDashboard('light', link);
    const context = await browser.newContext();
    contexts.push(context);
    const page = await context.newPage();
    const res = await page.goto(link);
    assert.equal(res?.status(), 401);
    assert.match(await page.locator('body').innerText(), /already used/);
    assert.match(await page.locator('body').innerText(), /--login-link/);
    assert.equal(await page.locator('#app').count(), 0, 'no dashboard');
    assert.deepEqual(await context.cookies(srv.url), []);
  });

  it('answers 401 to a browser without the cookie for /, /status and /events, and says how to sign in', async () => {
    const context = await browser.newContext();
    contexts.push(context);
    for (const p of ['/', '/status', '/events', '/goals/payments']) {
      const r = await context.request.get(`${srv.url}${p}`);
      assert.equal(r.status(), 401, p);
      assert.doesNotMatch(await r.text(), /Refactor the payment module/, p);
    }
    const page = await context.newPage();
    await page.goto(`${srv.url}/`);
    assert.match(await page.locator('body').innerText(), /loopx status-server --login-link --port \d+/);
  });

  it('shows "signed out" in the banner when the session is gone', async () => {
    const o = await openDashboard('light');
    await o.context.clearCookies();
    await o.page.locator('.goal-row[data-goal="payments"]').click();
    await o.page.locator('.banner').filter({ hasText: 'Signed out' }).waitFor({ timeout: 15_000 });
    assert.match(await o.page.locator('.banner').innerText(), /--login-link --port \d+/);
  });
});
