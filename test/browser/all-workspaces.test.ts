/**
 * All workspaces in a browser: the status server of one workspace serves, on its one page, what
 * needs the person in every workspace listed on the machine (three here, in the test's own config
 * folder): each gate with its workspace, who asked and its command whole, and a relative link to
 * the decision page; hostile text from another workspace stays text.
 *
 * Screenshot: test-results/screenshots/browser-all-workspaces.png (docs/screenshots/ with
 * LOOPX_UPDATE_SCREENSHOTS=1).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { chromium } from 'playwright-core';
import type { Browser } from 'playwright-core';
import { invoke, Store, workspaceId } from '../../src/core/index';
import type { Actor } from '../../src/core/index';
import { startStatusServer } from '../../src/server/status-server';
import type { StatusServer } from '../../src/server/status-server';
import { removeTempDirs, tempDir } from '../helpers/store';

const REPO = path.resolve(__dirname, '..', '..');
const CHROMIUM = '/usr/bin/chromium';
const SHOTS = path.join(REPO, 'test-results', 'screenshots');
const HOSTILE = '<img src=x onerror="window.__pwned=1">';
const agent: Actor = { kind: 'agent', id: 'codex', channel: 'cli' };

describe('All workspaces on the status server’s page', () => {
  let browser: Browser;
  let srv: StatusServer;
  const config = tempDir('loopx-browser-all-config-');
  const dirs: Record<string, string> = {};

  function workspace(name: string): Store {
    const dir = path.join(fs.realpathSync(tempDir('loopx-browser-all-')), name);
    fs.mkdirSync(dir);
    dirs[name] = dir;
    const store = Store.init(dir, { configDir: config });
    invoke(
      store,
      'goal.create',
      { goalId: `${name}-goal`, title: `Goal of ${name}`, objective: 'ship' },
      agent,
    );
    return store;
  }

  before(async () => {
    const b = spawnSync(process.execPath, ['scripts/build/build.mjs'], { cwd: REPO, encoding: 'utf8' });
    assert.equal(b.status, 0, `build failed:\n${b.stdout}\n${b.stderr}`);
    const alpha = workspace('alpha');
    const beta = workspace('beta');
    const gamma = workspace('gamma');
    invoke(alpha, 'todo.add', { goalId: 'alpha-goal', todoId: 'one', title: 'One', action: 'true' }, agent);
    invoke(
      beta,
      'todo.add',
      { goalId: 'beta-goal', todoId: 'ship', title: 'Ship', action: './deploy.sh beta', gate: 'prod' },
      agent,
    );
    invoke(
      gamma,
      'todo.add',
      { goalId: 'gamma-goal', todoId: 'x', title: HOSTILE, action: `echo '${HOSTILE}'`, gate: 'review' },
      agent,
    );
    srv = await startStatusServer({ workspace: alpha.workspace, store: alpha, port: 0, assetsDir: REPO });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run'],
    });
    fs.mkdirSync(SHOTS, { recursive: true });
  });

  after(async () => {
    await browser?.close();
    await srv?.close();
    removeTempDirs();
  });

  it('shows one queue across the three workspaces, each gate with its command and a relative decide link', async () => {
    const context = await browser.newContext({
      colorScheme: 'light',
      viewport: { width: 1200, height: 900 },
    });
    const page = await context.newPage();
    const dialogs: string[] = [];
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    assert.equal((await page.goto(srv.loginUrl()))?.status(), 200);
    const section = page.locator('section.everywhere');
    await section.getByText('All workspaces').waitFor({ timeout: 15_000 });
    await section.locator('li[data-workspace="gamma"]').waitFor({ timeout: 15_000 });
    const rows = await section
      .locator('li.att')
      .evaluateAll((els) =>
        els.map((e) => [
          e.getAttribute('data-workspace'),
          e.getAttribute('data-kind'),
          e.getAttribute('data-id'),
        ]),
      );
    assert.deepEqual(rows, [
      ['beta', 'gate', 'prod'],
      ['gamma', 'gate', 'review'],
    ]);
    assert.match(await section.innerText(), /3 workspaces on this machine · 1 with nothing for you/);
    const beta = section.locator('li[data-workspace="beta"]');
    assert.match(await beta.innerText(), /\$ \.\/deploy\.sh beta/);
    assert.match(await beta.innerText(), /asked by agent codex at the command line/);
    const href = await beta.locator('a.handoff-link').getAttribute('href');
    assert.equal(
      href,
      `decide/${workspaceId(dirs.beta!)}/beta-goal/prod`,
      'relative: works behind port forwarding',
    );
    // The hostile title and command are text, never markup.
    const gamma = section.locator('li[data-workspace="gamma"]');
    assert.ok((await gamma.innerText()).includes(HOSTILE));
    assert.equal(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned), undefined);
    assert.equal(await page.locator('section.everywhere img').count(), 0);
    assert.deepEqual(dialogs, []);
    await section.screenshot({ path: path.join(SHOTS, 'browser-all-workspaces.png') });
    if (process.env.LOOPX_UPDATE_SCREENSHOTS === '1')
      fs.copyFileSync(
        path.join(SHOTS, 'browser-all-workspaces.png'),
        path.join(REPO, 'docs', 'screenshots', 'all-workspaces.png'),
      );
    await context.close();
  });
});
