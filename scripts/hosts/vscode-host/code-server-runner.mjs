#!/usr/bin/env node
// Stands in for the VS Code executable given to @vscode/test-electron's
// runTests({ vscodeExecutablePath }): it takes the same arguments, runs the suite in code-server
// (real VS Code server + extension host) with the workbench in headless Debian Chromium, prints
// the suite's output and exits with the suite's exit code.
//
// Env: LOOPX_TEST_TIMEOUT_MS (default 300000), LOOPX_VSCODE_SETTINGS (JSON user settings),
//      LOOPX_HOST_VERBOSE=1 (also print code-server's and the workbench's own logs to stderr).
import path from 'node:path';
import { format } from 'node:util';
import { launchChromium, onTerminate, startCodeServer } from './server.mjs';

const verbose = process.env.LOOPX_HOST_VERBOSE === '1';
const t0 = Date.now();
const debug = (msg) =>
  verbose && process.stderr.write(`[runner +${((Date.now() - t0) / 1000).toFixed(1)}s] ${msg}\n`);

function parseArgs(argv) {
  const out = { extensionDevelopmentPaths: [], extensionTestsPath: undefined, workspace: undefined };
  for (const a of argv) {
    if (a.startsWith('--extensionDevelopmentPath='))
      out.extensionDevelopmentPaths.push(path.resolve(a.slice(27)));
    else if (a.startsWith('--extensionTestsPath=')) out.extensionTestsPath = path.resolve(a.slice(21));
    else if (a.startsWith('-'))
      debug(`ignoring ${a}`); // --no-sandbox, --user-data-dir=..., etc.
    else out.workspace ??= path.resolve(a);
  }
  if (!out.extensionTestsPath || !out.extensionDevelopmentPaths.length) {
    throw new Error(
      'usage: code-server-runner --extensionDevelopmentPath=<dir> --extensionTestsPath=<file> [workspace]',
    );
  }
  return out;
}

// Installed before the workbench loads. The workbench sends both its own log and, in test mode,
// the extension host's console (mocha's output) to window.codeAutomationLog with the same shape;
// only the call stack tells them apart: the latter comes through the RPC method
// MainThreadConsole.$logExtensionHostMessage, whose name survives minification.
function installLogHook() {
  globalThis.codeAutomationLog = (level, args) => {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 50;
    const fromExtHost = new Error().stack.includes('$logExtensionHostMessage');
    Error.stackTraceLimit = limit;
    globalThis.__loopxLog(level, args, fromExtHost);
  };
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const timeoutMs = Number(process.env.LOOPX_TEST_TIMEOUT_MS) || 300_000;
  const settings = process.env.LOOPX_VSCODE_SETTINGS
    ? JSON.parse(process.env.LOOPX_VSCODE_SETTINGS)
    : undefined;

  let server;
  let browser;
  let stopping;
  const cleanup = () =>
    (stopping ??= (async () => {
      await browser?.close().catch(() => {});
      debug('chromium closed');
      await server?.stop();
      debug('code-server stopped');
    })());
  onTerminate(async (sig) => {
    process.stderr.write(`[runner] ${sig}: stopping VS Code\n`);
    await cleanup();
  });

  let finish;
  const result = new Promise((resolve) => (finish = resolve));
  const timer = setTimeout(() => {
    process.stderr.write(`[runner] timed out after ${timeoutMs} ms (LOOPX_TEST_TIMEOUT_MS)\n`);
    finish(1);
  }, timeoutMs);

  // Setup is raced against the suite's result, so the timeout also covers a hung startup.
  const setup = (async () => {
    server = await startCodeServer({
      workspace: args.workspace,
      settings,
      smokeDriver: true,
      env: { NO_COLOR: '1' },
      onOutput: (l) => debug(`code-server: ${l}`),
    });
    debug(`code-server up at ${server.origin}`);

    browser = await launchChromium(server);
    debug('chromium launched');
    browser.on('disconnected', () => stopping || finish(1));
    const page = await browser.newPage();
    page.on('crash', () => {
      process.stderr.write('[runner] workbench page crashed\n');
      finish(1);
    });
    page.on('pageerror', (e) => debug(`page error: ${e.message}`));
    await page.exposeFunction('__loopxLog', (level, args, fromExtHost) => {
      // args are console.log style (mocha uses '%s' formats); util.format renders them the same way.
      const text = format(...(Array.isArray(args) ? args : [args]));
      if (fromExtHost) process.stdout.write(`${text}\n`);
      else debug(`workbench ${level}: ${text}`);
    });
    await page.addInitScript(installLogHook);
    await page.exposeFunction('codeAutomationExit', (code) => finish(Number(code) || 0));

    // The authority is literally "remote": code-server's remoteAuthority, not host:port.
    const remote = (p) => `vscode-remote://remote${p}`;
    const payload = [
      ...args.extensionDevelopmentPaths.map((p) => ['extensionDevelopmentPath', remote(p)]),
      ['extensionTestsPath', remote(args.extensionTestsPath)],
      ['skipWelcome', 'true'],
    ];
    const query = new URLSearchParams({ payload: JSON.stringify(payload) });
    if (args.workspace) query.set('folder', args.workspace);
    await page.goto(`${server.origin}/?${query}`, { waitUntil: 'domcontentloaded', timeout: 0 });
    debug('workbench page loaded');
  })();
  setup.catch((err) => {
    if (!stopping) process.stderr.write(`[runner] ${err.stack ?? err}\n`);
    finish(1);
  });

  try {
    const code = await result;
    debug(`suite finished with ${code}`);
    return code;
  } finally {
    clearTimeout(timer);
    await cleanup();
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`[runner] ${err.stack ?? err}\n`);
    process.exit(1);
  },
);
