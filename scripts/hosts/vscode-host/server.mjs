// Starts code-server (the real VS Code server + web workbench) with private, throw-away state.
// Used by code-server-runner.mjs (integration tests), and meant for `npm start` and UI checks:
//
//   const server = await startCodeServer({ workspace, vsix: 'loopx.vsix' });
//   onTerminate(() => server.stop()); // Ctrl-C: code-server runs in its own process group
//   console.log(server.url); ... await server.stop();
//
// Only 127.0.0.1 is ever bound or contacted.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { CHROMIUM, ensureChromium, ensureHost } from './install.mjs';

const HEALTH_TIMEOUT_MS = 60_000;
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-quic',
  '--no-first-run',
  // Without these Chromium floods the (closed) network with background requests.
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  // Debian's wrapper still makes it look up Google hosts (accounts, update): resolve no name
  // but the loopback ones.
  '--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1 , EXCLUDE localhost',
];
// Quiet, offline defaults; opts.settings override them.
const DEFAULT_SETTINGS = {
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'extensions.ignoreRecommendations': true,
  'update.mode': 'none',
  'telemetry.telemetryLevel': 'off',
  'workbench.enableExperiments': false,
  'npm.fetchOnlinePackageInfo': false,
};

export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

// A short private temp root: VS Code puts unix sockets in TMPDIR/XDG_RUNTIME_DIR and their
// paths must stay under 108 characters, so never derive it from a (possibly long) os.tmpdir().
export function makeTempRoot() {
  const root = fs.mkdtempSync('/tmp/lx-');
  for (const d of ['tmp', 'run', 'xdg-config', 'xdg-data', 'xdg-cache']) {
    fs.mkdirSync(path.join(root, d), { mode: 0o700 });
  }
  return root;
}

function serverEnv(root, extra) {
  const env = { ...process.env };
  for (const k of Object.keys(env)) {
    // Inside a VS Code terminal VSCODE_IPC_HOOK_CLI makes code-server act as a CLI of that
    // instance instead of starting; PORT/PASSWORD would override our flags.
    if (k.startsWith('VSCODE_') || k === 'ELECTRON_RUN_AS_NODE' || k === 'PORT' || k.endsWith('PASSWORD'))
      delete env[k];
  }
  return {
    ...env,
    TMPDIR: path.join(root, 'tmp'),
    XDG_RUNTIME_DIR: path.join(root, 'run'),
    XDG_CONFIG_HOME: path.join(root, 'xdg-config'),
    XDG_DATA_HOME: path.join(root, 'xdg-data'),
    XDG_CACHE_HOME: path.join(root, 'xdg-cache'),
    // No extension gallery (code-server defaults to open-vsx.org): never leave 127.0.0.1.
    EXTENSIONS_GALLERY: '{}',
    ...extra,
  };
}

function waitForExit(child, timeoutMs) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve(false), timeoutMs);
    child.once('exit', () => {
      clearTimeout(t);
      resolve(true);
    });
  });
}

function killGroup(pid, signal) {
  try {
    process.kill(-pid, signal);
  } catch {
    /* already gone */
  }
}

function healthy(port) {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/healthz', timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
  });
}

/**
 * @param {object} opts
 * @param {string} [opts.workspace]     folder opened by default
 * @param {string} [opts.extensionsDir] persistent extensions dir (default: private, removed on stop)
 * @param {string|string[]} [opts.vsix] packaged extension(s) to install first
 * @param {number} [opts.port]          default: a free port
 * @param {object} [opts.settings]      user settings (merged over DEFAULT_SETTINGS)
 * @param {boolean} [opts.smokeDriver]  enable VS Code's test driver (payload URLs, codeAutomation* hooks)
 * @param {object} [opts.env]           extra environment for the server and its extension host
 * @param {(line: string) => void} [opts.onOutput] receives code-server's own log lines
 * @returns {Promise<{ url: string, origin: string, port: number, tmpRoot: string, host: object, stop: () => Promise<void> }>}
 */
export async function startCodeServer(opts = {}) {
  const host = ensureHost();
  const root = makeTempRoot();
  const userDataDir = path.join(root, 'user-data');
  const extensionsDir = opts.extensionsDir ? path.resolve(opts.extensionsDir) : path.join(root, 'extensions');
  fs.mkdirSync(path.join(userDataDir, 'User'), { recursive: true });
  fs.mkdirSync(extensionsDir, { recursive: true });
  const settings = { ...DEFAULT_SETTINGS, ...opts.settings };
  fs.writeFileSync(path.join(userDataDir, 'User', 'settings.json'), JSON.stringify(settings, null, 2));
  const configFile = path.join(root, 'config.yaml');
  fs.writeFileSync(configFile, 'auth: none\n'); // else code-server writes a default one with a password
  const env = serverEnv(root, opts.env);
  const common = [
    host.codeServerEntry,
    '--user-data-dir',
    userDataDir,
    '--extensions-dir',
    extensionsDir,
    '--config',
    configFile,
    '--disable-telemetry',
    '--disable-update-check',
    '--disable-workspace-trust',
    '--disable-getting-started-override',
  ];

  let child;
  const tail = [];
  const onLine = (line) => {
    tail.push(line);
    if (tail.length > 40) tail.shift();
    opts.onOutput?.(line);
  };
  const cleanupSync = () => {
    if (child) killGroup(child.pid, 'SIGKILL');
    fs.rmSync(root, { recursive: true, force: true });
  };
  process.once('exit', cleanupSync); // last resort if the caller never calls stop()
  let stopped;
  const stop = () =>
    (stopped ??= (async () => {
      if (child) {
        killGroup(child.pid, 'SIGTERM');
        if (!(await waitForExit(child, 5000))) killGroup(child.pid, 'SIGKILL');
        // The extension host and other helpers share the group; make sure none outlives us.
        await new Promise((r) => setTimeout(r, 200));
        killGroup(child.pid, 'SIGKILL');
      }
      process.removeListener('exit', cleanupSync);
      fs.rmSync(root, { recursive: true, force: true });
    })());

  try {
    for (const vsix of [opts.vsix ?? []].flat()) {
      await runToEnd(
        host.node24,
        [...common, '--force', '--install-extension', path.resolve(vsix)],
        env,
        onLine,
      );
    }
    const port = opts.port ?? (await freePort());
    const args = [...common, '--auth', 'none', '--bind-addr', `127.0.0.1:${port}`, '--ignore-last-opened'];
    if (opts.smokeDriver) args.push('--vscode-option', 'enable-smoke-test-driver');
    if (opts.workspace) args.push(path.resolve(opts.workspace));
    // Own process group, so stop() can kill code-server together with its extension host.
    child = spawn(host.node24, args, { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    pipeLines(child.stdout, onLine);
    pipeLines(child.stderr, onLine);

    const deadline = Date.now() + HEALTH_TIMEOUT_MS;
    while (!(await healthy(port))) {
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error('code-server exited during startup');
      if (Date.now() > deadline) throw new Error(`code-server not healthy after ${HEALTH_TIMEOUT_MS} ms`);
      await new Promise((r) => setTimeout(r, 250));
    }
    const origin = `http://127.0.0.1:${port}`;
    const url = opts.workspace
      ? `${origin}/?folder=${encodeURIComponent(path.resolve(opts.workspace))}`
      : `${origin}/`;
    return { url, origin, port, tmpRoot: root, host, stop };
  } catch (err) {
    await stop();
    err.message += `\n--- code-server output (last lines) ---\n${tail.join('\n')}`;
    throw err;
  }
}

function pipeLines(stream, onLine) {
  let buf = '';
  stream.setEncoding('utf8');
  stream.on('data', (d) => {
    buf += d;
    const lines = buf.split('\n');
    buf = lines.pop();
    lines.forEach(onLine);
  });
  stream.on('end', () => buf && onLine(buf));
}

function runToEnd(cmd, args, env, onLine) {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    pipeLines(p.stdout, onLine);
    pipeLines(p.stderr, onLine);
    p.on('error', reject);
    p.on('exit', (code) =>
      code === 0
        ? resolve()
        : reject(new Error(`code-server ${args.slice(-2).join(' ')} exited with ${code}`)),
    );
  });
}

/**
 * Launches Debian's Chromium (headless, via playwright-core) with its profile, temp files and
 * crash reports inside the server's private root. Close it before `server.stop()`.
 * @param {{ tmpRoot: string, host: { chromium: string } }} server from startCodeServer
 * @param {import('playwright-core').LaunchOptions} [options] merged over the defaults
 */
export async function launchChromium(server, options = {}) {
  // Only the tests show the workbench in Chromium, so `npm run setup` leaves it to them.
  if (server.host.chromium === CHROMIUM) ensureChromium();
  const { chromium } = await import('playwright-core');
  const tmp = path.join(server.tmpRoot, 'tmp');
  const env = {
    ...process.env,
    TMPDIR: tmp,
    XDG_CONFIG_HOME: path.join(server.tmpRoot, 'xdg-config'),
    XDG_CACHE_HOME: path.join(server.tmpRoot, 'xdg-cache'),
  };
  const savedTmp = process.env.TMPDIR;
  process.env.TMPDIR = tmp; // Playwright makes the Chromium profile in os.tmpdir() during launch
  try {
    return await chromium.launch({
      executablePath: server.host.chromium,
      ...options,
      args: [...CHROMIUM_ARGS, ...(options.args ?? [])],
      env: { ...env, ...options.env },
    });
  } finally {
    if (savedTmp === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = savedTmp;
  }
}

/**
 * Runs `cleanup` once on SIGINT/SIGTERM/SIGHUP, then exits with 128+signal. Also when the parent
 * process goes away without passing a signal on (a shell running an npm script dies of SIGTERM
 * and leaves its child; `kill -9` of npm): an orphan is adopted by another process, so a changed
 * `process.ppid` means nobody is left to stop us, and whatever we started must not outlive us.
 */
export function onTerminate(cleanup) {
  const codes = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 };
  let done = false;
  const finish = async (sig) => {
    if (done) return;
    done = true;
    clearInterval(parentWatch);
    try {
      await cleanup(sig);
    } finally {
      process.exit(codes[sig]);
    }
  };
  for (const sig of Object.keys(codes)) process.on(sig, () => void finish(sig));
  const parent = process.ppid;
  const parentWatch = setInterval(() => process.ppid !== parent && void finish('SIGHUP'), 500);
  parentWatch.unref();
}
