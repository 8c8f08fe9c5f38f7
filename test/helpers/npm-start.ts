/**
 * `npm start` as the README gives it, run and checked as a person would: its printed URL opened in
 * Chromium shows the LoopX view with the demo goal and, of all notifications, only the gate's;
 * "LoopX: Open Dashboard in Browser" opens the dashboard; a SIGTERM to npm leaves no process of
 * it behind. Used by the UI suite (the checkout) and by the
 * fresh-machine suite (a clean clone set up with a fresh HOME).
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import type { HostModule } from './workbench';
import { loadScript, notificationTexts, openLoopxView, runFromPalette, treeRow, until } from './workbench';

const DEMO_GOAL_TITLE = 'Refactor Payment Module';
const DEMO_GATE = 'staging-deploy';
const GATE_TEXT = `Gate ${DEMO_GATE} of goal`;

interface NpmStart {
  child: ChildProcess;
  url: string;
  /** The folder of code-server's log that `npm start` printed (its private temp folder). */
  runDir: string;
  output(): string;
}

/** Runs `npm start [-- args]` in `cwd` and waits for the URL it prints. */
async function startNpmStart(opts: {
  cwd: string;
  args?: string[];
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
}): Promise<NpmStart> {
  const args = ['start', ...(opts.args?.length ? ['--', ...opts.args] : [])];
  const child = spawn('npm', args, { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (out += d));
  const url = await until(
    '`npm start` to print the URL to open',
    () => {
      if (child.exitCode !== null) throw new Error(`npm start exited with ${child.exitCode}:\n${out}`);
      return /^\s*Open:\s+(http:\/\/127\.0\.0\.1:\d+\/\S*)$/m.exec(out)?.[1];
    },
    opts.timeoutMs,
    250,
  ).catch((e: Error) => {
    child.kill('SIGKILL');
    throw new Error(`${e.message}\n--- npm start printed ---\n${out}`);
  });
  const log = /code-server's log: (\S+)/.exec(out)?.[1];
  assert.ok(log, `npm start names code-server's log:\n${out}`);
  return { child, url, runDir: path.dirname(log), output: () => out };
}

/**
 * "LoopX: Open Dashboard in Browser" from the palette, as a person tries it in the demo: the status
 * server starts on a free port (code-server holds 8080, the old default) and the browser gets the
 * dashboard, signed in with the one-time link. Returns the address the page ended on.
 */
async function openDashboardInBrowser(page: Page, timeoutMs: number): Promise<string> {
  const popup = page.context().waitForEvent('page', { timeout: timeoutMs });
  await runFromPalette(page, 'LoopX: Open Dashboard in Browser', { timeoutMs });
  const dash = await popup;
  try {
    await until(
      'the dashboard with the demo goal in the opened page',
      async () =>
        (await dash.title()) === 'LoopX Dashboard' &&
        (await dash.locator('body').innerText()).includes(DEMO_GOAL_TITLE),
      timeoutMs,
      250,
    );
    return dash.url();
  } finally {
    await dash.close();
  }
}

/**
 * Opens `url` in headless Chromium and checks what a person sees first. Returns the notifications'
 * texts and where Open Dashboard in Browser led; a screenshot of the window goes to `shotFile`.
 */
async function checkDemoWorkbench(
  url: string,
  shotFile: string,
  timeoutMs: number,
): Promise<{ texts: string[]; dashboard: string }> {
  const host = await loadScript<HostModule>('scripts/hosts/vscode-host/server.mjs');
  const root = host.makeTempRoot();
  const browser = await host.launchChromium({ tmpRoot: root, host: { chromium: '/usr/bin/chromium' } });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(url, { timeout: timeoutMs });
    await openLoopxView(page, timeoutMs);
    await treeRow(page, DEMO_GOAL_TITLE).waitFor({ timeout: timeoutMs });
    await page.locator('.notification-toast', { hasText: GATE_TEXT }).first().waitFor({ timeout: timeoutMs });
    // Other prompts come from extensions that start later than ours (git looks at the parent
    // folders after its own activation): give them time to show, bounded.
    await new Promise((r) => setTimeout(r, 8000));
    fs.mkdirSync(path.dirname(shotFile), { recursive: true });
    await page.screenshot({ path: shotFile });
    const texts = await notificationTexts(page);
    return { texts, dashboard: await openDashboardInBrowser(page, timeoutMs) };
  } finally {
    await browser.close().catch(() => {});
    fs.rmSync(root, { recursive: true, force: true });
  }
}

/** The gate's notification, and nothing else. */
function assertOnlyTheGateNotification(texts: string[]): void {
  assert.equal(texts.length, 1, `one notification, the gate's; got:\n- ${texts.join('\n- ')}`);
  assert.match(texts[0]!, new RegExp(GATE_TEXT.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
  assert.match(texts[0]!, new RegExp(DEMO_GOAL_TITLE));
}

interface Proc {
  pid: number;
  started: string;
  cmd: string;
}

function procStat(pid: number): { ppid: number; started: string } | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: read after its last ')'.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(rest[1]), started: rest[19]! };
  } catch {
    return undefined;
  }
}

/** `pid` and every process below it now, each with its start time (pids are reused). */
function processTree(pid: number): Proc[] {
  const children = new Map<number, number[]>();
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const s = procStat(Number(name));
    if (s) children.set(s.ppid, [...(children.get(s.ppid) ?? []), Number(name)]);
  }
  const out: Proc[] = [];
  const queue = [pid];
  while (queue.length) {
    const p = queue.shift()!;
    const s = procStat(p);
    if (!s) continue;
    let cmd = '';
    try {
      cmd = fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
    } catch {
      /* gone meanwhile */
    }
    out.push({ pid: p, started: s.started, cmd });
    queue.push(...(children.get(p) ?? []));
  }
  return out;
}

const alive = (p: Proc) => procStat(p.pid)?.started === p.started;

/** For a failed check's clean-up: SIGKILL to `pid` and everything below it. */
function killTree(pid: number | undefined): void {
  if (pid === undefined) return;
  for (const p of processTree(pid).reverse()) {
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      /* gone already */
    }
  }
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/**
 * Sends `signal` to npm alone (not its group, as a supervisor or `kill` would) and checks that
 * npm exits and that every process it had started, code-server and its extension host among them,
 * is gone, with the port closed and the run's temp folder removed.
 */
async function stopAndCheckNothingLeft(run: NpmStart, signal: NodeJS.Signals): Promise<void> {
  const tree = processTree(run.child.pid!);
  assert.ok(
    tree.some((p) => p.cmd.includes('code-server')),
    `code-server runs under npm start:\n${tree.map((p) => p.cmd).join('\n')}`,
  );
  const port = Number(new URL(run.url).port);
  let exited = run.child.exitCode !== null || run.child.signalCode !== null;
  run.child.once('exit', () => (exited = true));
  run.child.kill(signal);
  await until(`npm start to exit after ${signal}`, () => exited, 30_000);
  const left = await until(
    'every process of npm start to end',
    () => {
      const rest = tree.filter(alive);
      return rest.length === 0 ? 'none' : undefined;
    },
    15_000,
    200,
  ).catch(() => tree.filter(alive));
  assert.equal(
    left,
    'none',
    `left behind after ${signal}:\n${Array.isArray(left) ? left.map((p) => `${p.pid} ${p.cmd}`).join('\n') : ''}`,
  );
  assert.equal(await portOpen(port), false, `port ${port} is closed`);
  assert.equal(fs.existsSync(run.runDir), false, `${run.runDir} is removed`);
}

/**
 * The whole check: `npm start [-- args]` in `cwd`, its page in Chromium (a screenshot to
 * `shotFile`), only the gate's notification, the dashboard in the browser, then SIGTERM to npm and
 * nothing left running.
 * Returns what npm start printed.
 */
export async function checkNpmStart(opts: {
  cwd: string;
  args?: string[];
  env: NodeJS.ProcessEnv;
  shotFile: string;
}): Promise<string> {
  const run = await startNpmStart({ ...opts, timeoutMs: 540_000 });
  try {
    const seen = await checkDemoWorkbench(run.url, opts.shotFile, 90_000);
    assertOnlyTheGateNotification(seen.texts);
    // Through code-server's port forwarding on its own address, to the status server's port.
    const editor = new URL(run.url);
    const opened = new URL(seen.dashboard);
    assert.equal(
      opened.origin,
      editor.origin,
      `the dashboard opened on code-server's address: ${seen.dashboard}`,
    );
    const proxied = /^\/proxy\/(\d+)\/$/.exec(opened.pathname);
    assert.ok(proxied, `the signed-in dashboard page: ${seen.dashboard}`);
    assert.notEqual(proxied[1], editor.port, 'the status server is not on code-server’s port');
    await stopAndCheckNothingLeft(run, 'SIGTERM');
    return run.output();
  } finally {
    killTree(run.child.pid); // a failed check may have left it running
  }
}
