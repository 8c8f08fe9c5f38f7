/**
 * Each folder's terminals point at that folder's LoopX workspace, in a real VS Code (code-server +
 * Chromium): a window of three folders, `alpha` and `beta` initialised with the CLI and `gamma`
 * not. A terminal opened in each (by the probe extension, as any extension or a person picking the
 * folder would) echoes LOOPX_WORKSPACE and runs `loopx status --json` from `/`, where only
 * LOOPX_WORKSPACE can say which workspace it means. Then gamma is initialised and a folder added,
 * and their new terminals follow.
 *
 *   npm run build && node scripts/test/run-suite.mjs test/ui terminals
 */
import { after, before, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { ProbeWorkbench } from '../helpers/probe-workbench';
import { loopxCli, openProbeWorkbench, probeCalls } from '../helpers/probe-workbench';
import { finishUiRun, uiSteps, until } from '../helpers/workbench';

describe('Terminals in a multi-root window (code-server + Chromium)', () => {
  let tmp = '';
  let w: ProbeWorkbench | undefined;
  const serverLog: string[] = [];
  const timings: Record<string, number> = {};
  let failed = false;
  const dir = (name: string) => path.join(tmp, name);
  const out = (name: string) => path.join(tmp, 'out', name);

  /** Opens a terminal in `folder` that writes what it sees into out/<folder>.*; returns the readers. */
  async function terminalIn(folder: string, opts: { status: boolean }) {
    const env = out(`${folder}.env`);
    const status = out(`${folder}.status.json`);
    const lines = [`echo "ws=$LOOPX_WORKSPACE" >> ${env}`];
    // From `/`: no folder above has a .loopx/, so only LOOPX_WORKSPACE names the workspace.
    if (opts.status)
      lines.unshift('cd /', `loopx status --json > ${status}.tmp`, `mv ${status}.tmp ${status}`);
    const [answer] = await probeCalls(w!, [{ kind: 'terminal', folder, lines }]);
    assert.ok(answer?.ok, `the probe's terminal in ${folder}: ${JSON.stringify(answer)}`);
    return {
      env: () => until(`${folder}'s terminal to echo LOOPX_WORKSPACE`, () => read(env), 30_000, 200),
      status: () =>
        until(`${folder}'s loopx status`, () => read(status), 30_000, 200).then(
          (t) => JSON.parse(t) as { workspace: string; goals: { id: string }[] },
        ),
    };
  }
  const read = (f: string) => (fs.existsSync(f) ? fs.readFileSync(f, 'utf8') : undefined);

  const step = uiSteps(
    'terminals',
    () => w?.page,
    () => (failed = true),
  );

  before(
    async () => {
      const t0 = Date.now();
      tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-terminals-')));
      fs.mkdirSync(out(''), { recursive: true });
      for (const name of ['alpha', 'beta']) {
        fs.mkdirSync(dir(name));
        loopxCli(dir(name), ['init']);
        loopxCli(dir(name), ['goal', 'create', '--goal-id', `${name}-goal`, '--title', `${name} goal`]);
      }
      fs.mkdirSync(dir('gamma'));
      const file = path.join(tmp, 'three.code-workspace');
      fs.writeFileSync(
        file,
        JSON.stringify({ folders: ['alpha', 'beta', 'gamma'].map((p) => ({ path: p })) }),
      );
      w = await openProbeWorkbench({ tmp, target: file, probeDir: dir('probe'), serverLog });
      timings.workbench = Date.now() - t0;
    },
    { timeout: 900_000 },
  );

  after(() =>
    finishUiRun('terminals', {
      failed,
      serverLog,
      browser: w?.browser,
      server: w?.server,
      tmp,
      timings,
      shots: [],
    }),
  );

  step(
    'a terminal in each folder names its own folder’s workspace, and none in a folder without .loopx/',
    180_000,
    async () => {
      const t = Date.now();
      const alpha = await terminalIn('alpha', { status: true });
      const beta = await terminalIn('beta', { status: true });
      const gamma = await terminalIn('gamma', { status: false });
      assert.equal((await alpha.env()).trim(), `ws=${dir('alpha')}`);
      assert.equal((await beta.env()).trim(), `ws=${dir('beta')}`, 'beta’s terminal is not pointed at alpha');
      assert.equal((await gamma.env()).trim(), 'ws=', 'a folder without .loopx/ inherits no other folder’s');
      // The agent's view from each terminal: its own folder's goals only.
      const a = await alpha.status();
      const b = await beta.status();
      assert.deepEqual([a.workspace, a.goals.map((g) => g.id)], [dir('alpha'), ['alpha-goal']]);
      assert.deepEqual([b.workspace, b.goals.map((g) => g.id)], [dir('beta'), ['beta-goal']]);
      timings.terminals = Date.now() - t;
    },
  );

  step(
    'a folder initialised, and a folder added, get their own workspace in new terminals',
    180_000,
    async () => {
      const t = Date.now();
      loopxCli(dir('gamma'), ['init']);
      fs.mkdirSync(dir('delta'));
      loopxCli(dir('delta'), ['init']);
      const [added] = await probeCalls(w!, [{ kind: 'addFolder', path: dir('delta') }]);
      assert.equal(added?.value, true, `the folder was added: ${JSON.stringify(added)}`);
      // LoopX follows within its refresh (the file watcher, or the once-a-second look).
      await until(
        'gamma’s and delta’s terminals to name their folders',
        async () => {
          for (const f of ['gamma', 'delta']) fs.rmSync(out(`${f}.env`), { force: true });
          const gamma = await terminalIn('gamma', { status: false });
          const delta = await terminalIn('delta', { status: false });
          const seen = [(await gamma.env()).trim(), (await delta.env()).trim()];
          return seen[0] === `ws=${dir('gamma')}` && seen[1] === `ws=${dir('delta')}` ? seen : undefined;
        },
        60_000,
        1000,
      );
      // Alpha's terminals are still alpha's.
      fs.rmSync(out('alpha.env'), { force: true });
      assert.equal((await (await terminalIn('alpha', { status: false })).env()).trim(), `ws=${dir('alpha')}`);
      timings.followed = Date.now() - t;
    },
  );
});
