/**
 * What test/ui/tree.test.ts does besides reading the tree's rows (workbench.ts): the CLI that makes
 * the state, the walkthrough and its checkboxes, a row's hover, the pictures the walkthrough shows.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { execFileSync } from 'node:child_process';
import type { Browser, Locator, Page } from 'playwright-core';
import type { CodeServer, HostModule } from './workbench';
import {
  keepServerLines,
  REPO,
  runFromPalette,
  SHOT_DIRS,
  until,
  VIEWPORT,
  visible,
  WORKBENCH_SETTINGS,
} from './workbench';

const PASSPHRASE = 'tree-test-passphrase';

/**
 * code-server on `workspace` with the packaged extension `vsix` (dark theme, nothing open at start,
 * no walkthrough opened for it), and the workbench in Chromium once LoopX's icon is in the activity
 * bar. code-server's output lines go to `log` (the last 200).
 */
export async function startWorkbench(
  host: HostModule,
  workspace: string,
  vsix: string,
  log: string[],
): Promise<{ server: CodeServer; browser: Browser; page: Page }> {
  const server = await host.startCodeServer({
    workspace,
    vsix,
    settings: {
      ...WORKBENCH_SETTINGS,
      'workbench.hover.delay': 300,
    },
    onOutput: keepServerLines(log),
  });
  const browser = await host.launchChromium(server);
  const page = await browser.newPage({ viewport: VIEWPORT, deviceScaleFactor: 1 });
  page.on('dialog', (d) => void d.dismiss().catch(() => {}));
  await page.goto(server.url, { timeout: 90_000 });
  await page.locator('.activitybar .action-label[aria-label^="LoopX"]').first().waitFor({ timeout: 90_000 });
  // The user's theme is applied a moment after the workbench shows (pictures are taken in it).
  await page.locator('.monaco-workbench.vs-dark').waitFor({ timeout: 90_000 });
  return { server, browser, page };
}

/**
 * `loopx --workspace <ws> …`, the built CLI: as agent `agent` (LOOPX_AGENT), or as the person's
 * own script with their key's passphrase on stdin (`person`).
 */
export function loopx(ws: string, args: string[], opts: { agent?: string; person?: boolean } = {}): string {
  return execFileSync(
    process.execPath,
    [
      path.join(REPO, 'bin', 'loopx.js'),
      '--workspace',
      ws,
      ...(opts.person ? ['--passphrase-fd', '0'] : []),
      ...args,
    ],
    {
      encoding: 'utf8',
      timeout: 30_000,
      input: opts.person ? `${PASSPHRASE}\n` : undefined,
      env: { ...process.env, ...(opts.agent ? { LOOPX_AGENT: opts.agent } : {}) },
    },
  );
}

/** Opens LoopX's Get Started walkthrough as a person does: Welcome: Open Walkthrough... */
export async function openLoopxWalkthrough(page: Page): Promise<void> {
  await runFromPalette(page, 'Welcome: Open Walkthrough...');
  const pick = page.locator('.quick-input-list .monaco-list-row', { hasText: 'Get started with LoopX' });
  await pick.first().waitFor({ timeout: 20_000 });
  await pick.first().click();
  await page.locator('[data-done-step-id]').first().waitFor({ timeout: 20_000 });
}

/** Waits until the open walkthrough shows exactly the steps `done` (of `steps`) ticked off. */
export function walkthroughTicks(page: Page, steps: string[], done: string[]) {
  return until(
    `the walkthrough to tick off ${done.join(', ') || 'nothing'}`,
    async () => {
      const checks = await walkthroughChecks(page);
      return steps.every((s) => checks[s] === done.includes(s)) ? checks : undefined;
    },
    20_000,
    250,
  );
}

/** Each step of the open walkthrough by its id (`init`, `goal`, …): whether it is ticked off. */
export async function walkthroughChecks(page: Page): Promise<Record<string, boolean>> {
  const boxes = await page
    .locator('[data-done-step-id]')
    .evaluateAll((els) =>
      els.map((e) => [e.getAttribute('data-done-step-id') ?? '', e.getAttribute('aria-checked') === 'true']),
    );
  // Ids are `<extension>#<walkthrough>#<step>`.
  return Object.fromEntries(boxes.map(([id, checked]) => [String(id).split('#').at(-1), checked]));
}

/** The text of the hover VS Code shows for a tree row, once it has `expect` in it. */
export async function hoverText(page: Page, row: Locator, expect: string): Promise<string> {
  const hover = page.locator('.workbench-hover, .monaco-hover').filter({ hasText: expect }).first();
  await until(
    `the hover of the row (showing "${expect}")`,
    async () => {
      if (await visible(hover)) return true;
      // Off the row and back on: a hover cancelled by a re-render starts again.
      await page.mouse.move(5, 5);
      await row.locator('.monaco-icon-label').hover({ timeout: 2000 });
      await hover.waitFor({ state: 'visible', timeout: 3000 }).catch(() => {});
      return visible(hover);
    },
    20_000,
    250,
  );
  // Tooltips write spaces as no-break spaces: read them as spaces.
  return (await hover.innerText()).replace(/\u00a0/g, ' ');
}

/** Which part of the window a walkthrough picture shows. */
export type PictureOf =
  /** The side bar from its top (or from its `fromRow`th tree row) down past its `rows`th row, or `height` px. */
  | { rows: number; fromRow?: number; height?: number }
  /** One element (a dialog). */
  | { locator: Locator }
  /** A part of the window, in its pixels. */
  | { clip: { x: number; y: number; width: number; height: number } };

/**
 * A picture for the Get Started walkthrough (package.json's walkthrough steps show
 * media/walkthrough/<name>.png): written there only with LOOPX_UPDATE_SCREENSHOTS=1, like the
 * README's pictures, and always as test-results/ui/walkthrough-<name>.png. The walkthrough scales a
 * picture to the width of its media column, about 520 pixels: a narrower part of the window is taken
 * at twice the pixel density, or the side bar's 300 would show blurred.
 */
export async function saveWalkthroughImage(
  page: Page,
  name: string,
  of: PictureOf,
  shots: string[],
): Promise<void> {
  // No focus outline on the row clicked last.
  await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
  let clip: { x: number; y: number; width: number; height: number };
  if ('locator' in of) clip = (await of.locator.boundingBox())!;
  else if ('clip' in of) clip = of.clip;
  else {
    const bar = (await page.locator('.part.sidebar').boundingBox())!;
    const rows = page.locator('.part.sidebar .monaco-list-row[role="treeitem"]');
    const top = of.fromRow ? (await rows.nth(of.fromRow - 1).boundingBox())!.y - 4 : bar.y;
    const last = of.rows ? await rows.nth(of.rows - 1).boundingBox() : null;
    const bottom = last ? last.y + last.height + 2 : bar.y + (of.height ?? 200);
    clip = { x: bar.x, y: top, width: bar.width, height: Math.min(bottom, bar.y + bar.height) - top };
  }
  // Twice the density for what is narrower than the walkthrough's media column; a wider part
  // (the dashboard) is sharp as it is, and half the bytes in the .vsix.
  const density = clip.width < 600 ? 2 : 1;
  const cdp = await page.context().newCDPSession(page);
  let png: Buffer;
  try {
    await cdp.send('Emulation.setDeviceMetricsOverride', {
      ...VIEWPORT,
      deviceScaleFactor: density,
      mobile: false,
    });
    await until('the window at the density of the picture', () =>
      page.evaluate((d) => devicePixelRatio === d, density),
    );
    // Two frames: the workbench draws again at the new density.
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    const shot = await cdp.send('Page.captureScreenshot', { format: 'png', clip: { ...clip, scale: 1 } });
    png = Buffer.from(shot.data, 'base64');
  } finally {
    await cdp.send('Emulation.setDeviceMetricsOverride', {
      ...VIEWPORT,
      deviceScaleFactor: 1,
      mobile: false,
    });
    await cdp.detach();
  }
  await until('the window at its own density', () => page.evaluate(() => devicePixelRatio === 1));
  if (process.env.LOOPX_UPDATE_SCREENSHOTS === '1')
    fs.writeFileSync(path.join(REPO, 'media', 'walkthrough', `${name}.png`), png);
  const results = SHOT_DIRS.at(-1)!;
  fs.mkdirSync(results, { recursive: true });
  fs.writeFileSync(path.join(results, `walkthrough-${name}.png`), png);
  shots.push(`walkthrough-${name}.png (${(png.length / 1024).toFixed(0)} KB)`);
}
