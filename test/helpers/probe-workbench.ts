/**
 * A real VS Code (code-server + headless Chromium) with the packaged LoopX installed and the probe
 * extension (test/ui/fixtures/probe-extension) loaded beside it, for UI tests that call what an
 * agent or another extension can call: commands with arguments, language-model tools, the chat
 * handler, terminals. The probe reads its calls from a folder and writes the answers there.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { execFileSync } from 'node:child_process';
import type { Browser, Page } from 'playwright-core';
import type { CodeServer, HostModule, InstallModule, PackageModule } from './workbench';
import { REPO, SHOT_DIRS, keepServerLines, loadScript, until, withWorkspaceTrust } from './workbench';

export const PROBE = path.join(REPO, 'test', 'ui', 'fixtures', 'probe-extension');

/** `loopx --workspace <ws> …`: the built CLI, with `env` over the test's environment. */
export function loopxCli(ws: string, args: string[], env: NodeJS.ProcessEnv = {}): string {
  return execFileSync(process.execPath, [path.join(REPO, 'bin', 'loopx.js'), '--workspace', ws, ...args], {
    encoding: 'utf8',
    timeout: 15_000,
    env: { ...process.env, ...env },
  });
}

/** One call the probe makes ("LoopX Probe: Run Calls" in the probe's extension.js says each). */
export type ProbeCall =
  | { kind: 'command'; id: string; args?: unknown[] }
  | { kind: 'tool'; name: string; input: Record<string, unknown> }
  | { kind: 'tools' }
  | { kind: 'chat'; command?: string; prompt?: string }
  | { kind: 'mcp' }
  | { kind: 'terminal'; folder: string; lines: string[] }
  | { kind: 'addFolder'; path: string }
  | { kind: 'trusted' };

export interface ProbeAnswer {
  ok?: boolean;
  value?: unknown;
  error?: string;
  /** The call had not ended within the probe's time (it waits for a person, say). */
  pending?: boolean;
}

export interface ProbeWorkbench {
  server: CodeServer;
  browser: Browser;
  page: Page;
  /** Where the probe reads its calls and writes its answers (LOOPX_PROBE_DIR). */
  probeDir: string;
}

/**
 * Packages LoopX (building dist/), starts code-server with it installed and opens `target` (a
 * folder, or a `.code-workspace` file) with the probe loaded; resolves once LoopX's activity-bar
 * icon shows. `trust`: open it with workspace trust on, so an untrusted folder is in Restricted
 * Mode (withWorkspaceTrust). `beforeOpen` runs once the server is up, before the page loads
 * (LoopX activates on the page).
 */
export async function openProbeWorkbench(opts: {
  tmp: string;
  target: string;
  probeDir: string;
  env?: Record<string, string>;
  settings?: Record<string, unknown>;
  trust?: boolean;
  serverLog: string[];
  beforeOpen?: (server: CodeServer) => void;
  timeoutMs?: number;
}): Promise<ProbeWorkbench> {
  const timeout = opts.timeoutMs ?? 90_000;
  // Installs code-server, Node 24 and Chromium when the cache is empty (minutes, once).
  (await loadScript<InstallModule>('scripts/hosts/vscode-host/install.mjs')).ensureHost();
  const host = await loadScript<HostModule>('scripts/hosts/vscode-host/server.mjs');
  const { packageVsix } = await loadScript<PackageModule>('scripts/build/package.mjs');
  const vsix = packageVsix({ out: path.join(opts.tmp, 'loopx.vsix') });
  fs.mkdirSync(opts.probeDir, { recursive: true });
  const start = host.startCodeServer as (
    o: Parameters<HostModule['startCodeServer']>[0] & { smokeDriver?: boolean; env?: Record<string, string> },
  ) => Promise<CodeServer>;
  const server = await start({
    vsix: vsix.file,
    smokeDriver: true, // the URL payload that loads the probe
    env: { LOOPX_PROBE_DIR: opts.probeDir, ...opts.env },
    settings: {
      'workbench.startupEditor': 'none',
      'workbench.secondarySideBar.defaultVisibility': 'hidden',
      'workbench.welcomePage.walkthroughs.openOnInstall': false,
      'workbench.tips.enabled': false,
      ...opts.settings,
    },
    onOutput: keepServerLines(opts.serverLog),
  });
  let browser: Browser | undefined;
  let page: Page | undefined;
  try {
    opts.beforeOpen?.(server);
    browser = await host.launchChromium(server);
    page = await browser.newPage({ viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1 });
    page.on('dialog', (d) => void d.dismiss().catch(() => {}));
    if (opts.trust) await withWorkspaceTrust(page);
    const payload = [
      ['extensionDevelopmentPath', `vscode-remote://remote${PROBE}`],
      ['skipWelcome', 'true'],
    ];
    const where = opts.target.endsWith('.code-workspace') ? 'workspace' : 'folder';
    const query = new URLSearchParams({
      [where]: path.resolve(opts.target),
      payload: JSON.stringify(payload),
    });
    await page.goto(`${server.origin}/?${query}`, { timeout });
    await page.locator('.activitybar .action-label[aria-label^="LoopX"]').first().waitFor({ timeout });
    return { server, browser, page, probeDir: opts.probeDir };
  } catch (e) {
    // What the window showed instead, for the person reading the failure.
    const shot = path.join(SHOT_DIRS.at(-1)!, 'probe-workbench-failed.png');
    fs.mkdirSync(path.dirname(shot), { recursive: true });
    await page?.screenshot({ path: shot }).catch(() => {});
    await browser?.close().catch(() => {});
    await server.stop();
    throw e;
  }
}

/** Has the probe make `calls` (it looks for them twice a second) and returns its answer to each. */
export async function probeCalls(
  w: ProbeWorkbench,
  calls: ProbeCall[],
  timeoutMs = 120_000,
): Promise<ProbeAnswer[]> {
  const results = path.join(w.probeDir, 'results.json');
  fs.rmSync(results, { force: true });
  // Whole or not at all: the probe takes the file as soon as it is there.
  const file = path.join(w.probeDir, 'calls.json');
  fs.writeFileSync(`${file}.tmp`, JSON.stringify(calls));
  fs.renameSync(`${file}.tmp`, file);
  return until(
    'the probe’s answers',
    () =>
      fs.existsSync(results) ? (JSON.parse(fs.readFileSync(results, 'utf8')) as ProbeAnswer[]) : undefined,
    timeoutMs,
    200,
  );
}

/** The lines LoopX wrote to its "LoopX" output channel, read from the server's log folder. */
export function loopxLog(server: Pick<CodeServer, 'tmpRoot'>): string {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name === 'LoopX.log' || /^\d+-LoopX\.log$/.test(e.name)) found.push(p);
    }
  };
  walk(server.tmpRoot);
  return found.map((f) => fs.readFileSync(f, 'utf8')).join('\n');
}
