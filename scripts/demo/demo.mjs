#!/usr/bin/env node
// `npm start`: LoopX in a real VS Code, in your browser, on a demo workspace.
//
//   node scripts/demo/demo.mjs [workspace-dir]      (default: .loopx-demo/, kept between runs)
//
// 1. installs the VS Code host when missing (code-server + Node 24, cached under
//    ~/.cache/loopx-vscode-host; the first time takes a few minutes),
// 2. builds dist/ and packs the extension into a .vsix (scripts/build/package.mjs),
// 3. prepares the demo workspace (scripts/demo/demo-workspace.ts: a goal with todos, a pending gate,
//    a finished run with a reward, a second goal),
// 4. starts code-server on 127.0.0.1 (port $PORT or 8080, else a free one) with the .vsix
//    installed, opening that workspace, and prints the URL. Ctrl+C or SIGTERM stops it and cleans
//    up; so does the end of the process that started it (npm).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureHost } from '../hosts/vscode-host/install.mjs';
import { startCodeServer, freePort, onTerminate } from '../hosts/vscode-host/server.mjs';
import { packageVsix } from '../build/package.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const dir = path.resolve(process.argv[2] ?? path.join(ROOT, '.loopx-demo'));
const say = (msg) => console.log(`[loopx] ${msg}`);

// State of this run; everything is removed on exit.
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-start-'));
const logFile = path.join(tmp, 'code-server.log');
let server;
let stopping = false;
onTerminate(async () => {
  stopping = true;
  console.log('');
  say('stopping code-server ...');
  await server?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
  say('stopped.');
});
process.on('exit', () => fs.rmSync(tmp, { recursive: true, force: true }));

function portFree(port) {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

function healthy(port) {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/healthz', timeout: 3000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
  });
}

async function main() {
  const t0 = Date.now();
  say('checking the VS Code host (code-server, Node 24; the first run installs them) ...');
  ensureHost();

  say('building and packaging the extension ...');
  const vsix = packageVsix({ out: path.join(tmp, 'loopx.vsix') });
  say(`packaged ${vsix.files.length} files (${(vsix.bytes / 1024).toFixed(0)} KB)`);

  say(`preparing the demo workspace in ${path.relative(process.cwd(), dir) || '.'} ...`);
  const prep = spawnSync(
    process.execPath,
    ['--import', 'tsx', path.join(ROOT, 'scripts', 'demo', 'demo-workspace.ts'), dir],
    {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  if (prep.status !== 0)
    throw new Error(`preparing the demo workspace failed (exit ${prep.status ?? prep.signal})`);
  // code-server runs with its own XDG_CONFIG_HOME (a temp folder); the editor must use the same
  // LoopX config folder (workspace secrets, keys) as the demo's preparation and your terminal.
  const { goalId, configDir: loopxConfigDir } = JSON.parse(prep.stdout);

  const wanted = Number(process.env.PORT || 8080);
  if (!Number.isInteger(wanted) || wanted < 1 || wanted > 65535)
    throw new Error(`PORT=${process.env.PORT} is not a port number`);
  let port = wanted;
  if (!(await portFree(wanted))) {
    port = await freePort();
    say(`port ${wanted} is taken: using ${port}`);
  }

  say('starting code-server with LoopX installed ...');
  const log = fs.createWriteStream(logFile);
  server = await startCodeServer({
    workspace: dir,
    vsix: vsix.file,
    port,
    settings: {
      'workbench.startupEditor': 'none',
      'workbench.secondarySideBar.defaultVisibility': 'hidden',
      'workbench.welcomePage.walkthroughs.openOnInstall': false,
      // The default demo folder lives inside this checkout: git would ask about the repository in
      // the parent folders, a prompt that has nothing to do with the demo.
      'git.openRepositoryInParentFolders': 'never',
    },
    env: { LOOPX_CONFIG_DIR: loopxConfigDir },
    onOutput: (line) => log.write(`${line}\n`),
  });
  if (stopping) return;

  const cli = `node ${path.relative(process.cwd(), path.join(ROOT, 'bin', 'loopx.js')) || 'bin/loopx.js'} --workspace ${path.relative(process.cwd(), dir) || '.'}`;
  console.log(`
  LoopX is running in VS Code (code-server on 127.0.0.1, ready in ${((Date.now() - t0) / 1000).toFixed(0)} s).

    Open:  ${server.url}

  - Click the LoopX icon in the activity bar: goal "Refactor Payment Module" (${goalId}) with
    todos, a gate "staging-deploy" waiting for you, a run with a reward, and a second goal.
  - The notification asks you to approve the gate (Approve / Reject / Show).
  - F1, "LoopX:" lists every command; "LoopX: Open Dashboard" opens the dashboard.
  - In a terminal inside VS Code (Terminal > New Terminal) \`loopx\` is on PATH:
      loopx status
      loopx quota should-run --goal-id ${goalId} --preview
    From this shell, change the same workspace and watch VS Code follow:
      ${cli} todo add --goal-id ${goalId} --title "Write the rollout notes"

  The workspace is kept between runs (delete ${path.relative(process.cwd(), dir) || dir} to start over).
  code-server's log: ${logFile}
  Press Ctrl+C to stop.
`);

  // Stay up until Ctrl+C; say so if code-server goes away by itself.
  let misses = 0;
  const timer = setInterval(async () => {
    if (stopping) return;
    misses = (await healthy(server.port)) ? 0 : misses + 1;
    if (misses >= 3 && !stopping) {
      clearInterval(timer);
      console.error(
        `[loopx] code-server stopped answering; its log:\n${fs.readFileSync(logFile, 'utf8').split('\n').slice(-30).join('\n')}`,
      );
      await server.stop();
      process.exit(1);
    }
  }, 5000);
}

main().catch(async (err) => {
  console.error(`[loopx] npm start failed: ${err.message}`);
  await server?.stop();
  process.exit(1);
});
