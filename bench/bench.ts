/**
 * `npm run bench`: speed and memory of the control plane, as ratios to a floor measured in the
 * same run (these machines are shared and noisy). Prints a table and writes bench/results.json.
 *
 *   node --import tsx bench/bench.ts [--quick] [--no-host] [--sizes 1,100,1000,10000]
 */
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { Store, invoke, shouldRun, decide, newKeyPair, pinKey, signerFor } from '../src/core/index';
import type { Actor, EventDraft, Signer } from '../src/core/index';
import { draft } from '../src/core/events';
import { ownConfigDir } from '../scripts/own-config-dir.mjs';

// The bench's stores keep their keys in a config folder of the run's own (as scripts/test.mjs
// gives the tests), never in the user's ~/.config/loopx; child processes inherit it.
const config = ownConfigDir('loopx-bench-config-');
process.env.LOOPX_CONFIG_DIR = config.env.LOOPX_CONFIG_DIR;
process.on('exit', config.cleanup);

const ROOT = path.resolve(__dirname, '..');
const BIN = path.join(ROOT, 'bin', 'loopx.js');
/** A `loopx` call as a process: node, the built bin, the arguments. */
const loopxCall = (...args: string[]) => [process.execPath, BIN, ...args];
const args = process.argv.slice(2);
const quick = args.includes('--quick');
const withHost = !args.includes('--no-host');
const sizesArg =
  args.find((a) => a.startsWith('--sizes='))?.slice(8) ??
  (args.includes('--sizes') ? args[args.indexOf('--sizes') + 1] : undefined);
const SIZES = (sizesArg ?? (quick ? '1,100,1000' : '1,100,1000,10000')).split(',').map(Number);
const REPS = quick ? 7 : 15;

const person: Actor = { kind: 'user', id: 'bench', channel: 'cli' };
const agent: Actor = { kind: 'agent', id: 'bench-agent', channel: 'cli' };

/** The bench person's key, pinned in the run's config folder: a person's decisions are signed. */
function benchSigner(store: Store): Signer {
  const { privateKey, pub } = newKeyPair('bench', store.now());
  pinKey(store.configDir, pub);
  return signerFor(privateKey, pub.keyId, pub.name);
}
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;
const hasTime = fs.existsSync('/usr/bin/time');

interface Sample {
  ms: number;
  rssMb?: number;
  bytes?: number;
}

/** Runs a command once; wall time in ms and, with GNU time, peak RSS. */
function runOnce(cmd: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Sample {
  const full = hasTime ? ['/usr/bin/time', '-f', '%M', ...cmd] : cmd;
  const t = performance.now();
  const r = spawnSync(full[0]!, full.slice(1), {
    cwd,
    env: { ...process.env, ...env, LOOPX_WORKSPACE: '' },
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  const ms = performance.now() - t;
  if (r.status !== 0) throw new Error(`${cmd.join(' ')} exited ${r.status}: ${r.stderr.slice(-500)}`);
  const rssKb = hasTime ? Number(r.stderr.trim().split('\n').at(-1)) : NaN;
  return { ms, rssMb: Number.isFinite(rssKb) ? rssKb / 1024 : undefined, bytes: Buffer.byteLength(r.stdout) };
}

const results: Record<string, unknown> = {
  machine: { cpus: os.cpus().length, node: process.version, load: os.loadavg().map((x) => round(x)) },
  started: new Date().toISOString(),
};
const table: [string, string, string, string][] = [];
const row = (what: string, value: string, ratio: string, target: string) =>
  table.push([what, value, ratio, target]);

// ---------------------------------------------------------------------------------------------
// Stores, generated through the core: each goal is one commit of its whole history.

function goalHistory(i: number): EventDraft[] {
  const drafts: EventDraft[] = [
    draft('goal.created', {
      title: `Goal ${i}`,
      objective: `Objective of goal ${i}`,
      quota: { budgets: { turns: 500, costUsd: 50 }, window: { kind: 'life' }, cooldownSeconds: 0 },
      handoff: [],
    }),
  ];
  for (let t = 0; t < 20; t++) {
    drafts.push(
      draft('todo.added', {
        todo: {
          id: `t${t}`,
          title: `Todo ${t} of goal ${i}`,
          owner: t === 19 ? 'user' : 'agent',
          priority: (['P0', 'P1', 'P2', 'P3'] as const)[t % 4]!,
          action: t % 3 === 0 ? undefined : `echo step-${t}`,
          gate: t === 18 ? 'release' : undefined,
          dependsOn: [],
        },
      }),
    );
  }
  drafts.push(
    draft('gate.requested', {
      gate: { id: 'release', title: 'Approve release', reason: 'ships to users', guards: ['t18'] },
    }),
  );
  for (let r = 0; r < 3; r++) {
    drafts.push(draft('run.started', { run: { id: `run-${r}`, agent: 'bench-agent' } }));
    drafts.push(draft('todo.claimed', { todoId: `t${r}`, by: 'bench-agent' }));
    drafts.push(
      draft('evidence.added', {
        evidence: {
          id: `ev-${r}`,
          runId: `run-${r}`,
          todoId: `t${r}`,
          kind: 'command',
          summary: 'exit 0 in 0.50 s\nok',
          command: `echo step-${r}`,
          exitCode: 0,
          durationMs: 500,
        },
      }),
    );
    drafts.push(draft('todo.completed', { todoId: `t${r}`, evidence: [`ev-${r}`] }));
    drafts.push(
      draft('run.ended', {
        runId: `run-${r}`,
        outcome: 'succeeded',
        spend: { tokens: 10000, costUsd: 0.1, wallSeconds: 30 },
      }),
    );
  }
  return drafts;
}

function makeStore(goals: number): { dir: string; store: Store; ms: number } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `loopx-bench-${goals}-`));
  const store = Store.init(dir);
  const t = performance.now();
  for (let i = 0; i < goals; i++) {
    const id = `goal-${String(i).padStart(5, '0')}`;
    store.commit(id, () => goalHistory(i), { actor: person, create: true, deferIndex: true });
  }
  const ms = performance.now() - t;
  // Listing trusts an index entry once its goal's logs folder is 2 s old (git's racy-index rule):
  // measure a store whose goals were written before that, as a team's mostly are.
  spawnSync('sleep', ['2.1']);
  store.rebuildIndex();
  return { dir, store, ms };
}

// ---------------------------------------------------------------------------------------------

function floorAndCli() {
  const { dir, store } = makeStore(1);
  const goal = 'goal-00000';
  invoke(store, 'gate.approve', { goalId: goal, gateId: 'release' }, person, { signer: benchSigner(store) });
  shouldRun(store, { goalId: goal, agent: 'bench-agent' }, agent); // an open run: polling reuses it
  const cases: [string, string[]][] = [
    ['node -e 0 (floor)', [process.execPath, '-e', '0']],
    ['loopx --version', loopxCall('--version')],
    [
      'quota should-run --goal-id',
      loopxCall('--format', 'json', 'quota', 'should-run', '--goal-id', goal, '--agent', 'bench-agent'),
    ],
    ['status --goal-id --format json', loopxCall('status', '--goal-id', goal, '--format', 'json')],
    ['todo add', loopxCall('todo', 'add', '--goal-id', goal, '--title', 'bench todo')],
    ['evidence add', loopxCall('evidence', 'add', '--goal-id', goal, '--summary', 'bench evidence')],
  ];
  runOnce(cases[1]![1], dir); // warms the code cache, as any second call would find it
  const times = new Map<string, number[]>(cases.map(([n]) => [n, []]));
  const sizes = new Map<string, number>();
  for (let r = 0; r < REPS; r++) {
    for (const [name, cmd] of cases) {
      const s = runOnce(cmd, dir);
      times.get(name)!.push(s.ms);
      if (s.bytes !== undefined) sizes.set(name, s.bytes);
    }
  }
  const floor = median(times.get(cases[0]![0])!);
  const out: Record<string, { medianMs: number; ratio: number }> = {};
  const targets: Record<string, number> = {
    'quota should-run --goal-id': 1.5,
    'status --goal-id --format json': 1.5,
    'todo add': 1.6,
  };
  for (const [name] of cases) {
    const m = median(times.get(name)!);
    out[name] = { medianMs: round(m, 1), ratio: round(m / floor) };
    const t = targets[name];
    row(
      `CLI: ${name}`,
      `${round(m, 1)} ms`,
      name.includes('floor') ? '1.00' : `${round(m / floor)}x`,
      t ? `≤ ${t}x ${m / floor <= t ? 'met' : 'MISSED'}` : '',
    );
  }
  const contractBytes = sizes.get('quota should-run --goal-id') ?? 0;
  row(
    'should-run output size',
    `${contractBytes} B`,
    '',
    `< 2048 B ${contractBytes < 2048 ? 'met' : 'MISSED'}`,
  );
  results.cli = { floorMs: round(floor, 1), reps: REPS, commands: out, shouldRunOutputBytes: contractBytes };
  fs.rmSync(dir, { recursive: true, force: true });
  return floor;
}

function scale(floor: number) {
  const out: Record<string, unknown> = {};
  for (const n of SIZES) {
    const { dir, store, ms } = makeStore(n);
    const goal = `goal-${String(Math.floor(n / 2)).padStart(5, '0')}`;
    const reps = n >= 10000 ? Math.max(3, Math.floor(REPS / 3)) : REPS;
    const measure = (cmd: string[]) => {
      const xs: Sample[] = [];
      for (let r = 0; r < reps; r++) xs.push(runOnce(cmd, dir));
      return {
        medianMs: round(median(xs.map((x) => x.ms)), 1),
        peakRssMb: round(Math.max(...xs.map((x) => x.rssMb ?? 0)), 1),
      };
    };
    const m = {
      generateMs: round(ms, 0),
      shouldRun: measure(
        loopxCall('--format', 'json', 'quota', 'should-run', '--goal-id', goal, '--preview'),
      ),
      statusGoal: measure(loopxCall('status', '--goal-id', goal, '--format', 'json')),
      statusAll: measure(loopxCall('status', '--format', 'json')),
      projectPromptList: measure(loopxCall('project_prompt', 'list', '--json')),
    };
    out[n] = m;
    row(
      `${n} goals: should-run (one goal)`,
      `${m.shouldRun.medianMs} ms, ${m.shouldRun.peakRssMb} MB`,
      `${round(m.shouldRun.medianMs / floor)}x`,
      '≤ 1.5x, flat',
    );
    row(
      `${n} goals: status --goal-id`,
      `${m.statusGoal.medianMs} ms, ${m.statusGoal.peakRssMb} MB`,
      `${round(m.statusGoal.medianMs / floor)}x`,
      '≤ 1.5x, flat',
    );
    row(
      `${n} goals: status (all)`,
      `${m.statusAll.medianMs} ms, ${m.statusAll.peakRssMb} MB`,
      `${round(m.statusAll.medianMs / floor)}x`,
      n === 10000
        ? `< 1000 ms, < 300 MB ${m.statusAll.medianMs < 1000 && m.statusAll.peakRssMb < 300 ? 'met' : 'MISSED'}`
        : '',
    );
    row(
      `${n} goals: project_prompt list`,
      `${m.projectPromptList.medianMs} ms, ${m.projectPromptList.peakRssMb} MB`,
      `${round(m.projectPromptList.medianMs / floor)}x`,
      '',
    );
    if (n === Math.max(...SIZES)) inProcess(store, goal, n);
    fs.rmSync(dir, { recursive: true, force: true });
  }
  results.scale = out;
}

function inProcess(store: Store, goal: string, n: number) {
  const policy = store.policy();
  const N = quick ? 200 : 1000;
  const time = (fn: () => void) => {
    for (let i = 0; i < 20; i++) fn();
    const xs: number[] = [];
    for (let i = 0; i < N; i++) {
      const t = performance.now();
      fn();
      xs.push((performance.now() - t) * 1000);
    }
    return round(median(xs), 1);
  };
  // should-run as an agent polls it: load the goal, decide, and (open run) render the same contract.
  shouldRun(store, { goalId: goal, agent: 'poller' }, agent);
  const pollUs = time(() => shouldRun(store, { goalId: goal, agent: 'poller' }, agent));
  const decideUs = time(() => {
    const { state } = store.load(goal);
    decide(state, policy, new Date(), { agent: 'poller' });
  });
  let i = 0;
  const capUs = time(() =>
    invoke(store, 'todo.update', { goalId: goal, todoId: 't5', note: `n${i++}` }, agent),
  );
  row(
    `in-process should-run (${n} goals, open run)`,
    `${pollUs} µs`,
    '',
    `< 2000 µs ${pollUs < 2000 ? 'met' : 'MISSED'}`,
  );
  row(`in-process load + decide (${n} goals)`, `${decideUs} µs`, '', '');
  row(`in-process capability call (todo.update, with fsync)`, `${capUs} µs`, '', '');
  results.inProcess = {
    goals: n,
    shouldRunPollUs: pollUs,
    loadDecideUs: decideUs,
    capabilityCallUs: capUs,
    iterations: N,
  };
}

/**
 * Team mode: one goal whose history comes from 8 clones' logs (a team after a pull), against the
 * same number of events from one writer. In process: a full replay (what the first read after a
 * pull does) and a load from the snapshot (every read after). Whole processes: status --goal-id
 * right after a pull (no cache fits), and steady.
 */
function teamReplay(floor: number) {
  const WRITERS = 8;
  const PER_WRITER = quick ? 40 : 100;
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-bench-team-'));
  const single = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-bench-solo-'));
  const team = Store.init(base);
  const solo = Store.init(single);
  for (const s of [team, solo]) invoke(s, 'goal.create', { goalId: 'team', title: 'Team goal' }, person);
  for (let w = 1; w < WRITERS; w++) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-bench-clone-'));
    fs.cpSync(team.root, path.join(dir, '.loopx'), {
      recursive: true,
      filter: (src) => !path.relative(team.root, src).startsWith('local'),
    });
    const clone = new Store(dir);
    for (let k = 0; k < PER_WRITER; k++) {
      invoke(clone, 'todo.add', { goalId: 'team', title: `w${w} t${k}` }, agent);
      invoke(solo, 'todo.add', { goalId: 'team', title: `w${w} t${k}` }, agent);
    }
    fs.copyFileSync(clone.logPath('team'), team.logPath('team', clone.writerId()));
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const N = quick ? 20 : 60;
  const time = (fn: () => void) => {
    fn();
    const xs: number[] = [];
    for (let i = 0; i < N; i++) {
      const t = performance.now();
      fn();
      xs.push(performance.now() - t);
    }
    return round(median(xs), 2);
  };
  const events = team.load('team').revision;
  const teamReplayMs = time(() => team.replayGoal('team'));
  const soloReplayMs = time(() => solo.replayGoal('team'));
  const teamLoadMs = time(() => team.load('team'));
  const cache = team.snapshotPath('team');
  const measure = (afterPull: boolean) => {
    const xs: number[] = [];
    for (let r = 0; r < REPS; r++) {
      if (afterPull) fs.rmSync(cache, { force: true });
      xs.push(runOnce(loopxCall('status', '--goal-id', 'team', '--format', 'json'), base).ms);
    }
    return round(median(xs), 1);
  };
  const pulledMs = measure(true);
  const steadyMs = measure(false);
  row(
    `replay of ${events} events from ${WRITERS} writers (in process)`,
    `${teamReplayMs} ms`,
    '',
    `vs one writer: ${round(teamReplayMs / soloReplayMs)}x`,
  );
  row(`load from the snapshot, ${WRITERS} writers (in process)`, `${teamLoadMs} ms`, '', '');
  row(
    `status --goal-id, ${WRITERS} writers, right after a pull`,
    `${pulledMs} ms`,
    `${round(pulledMs / floor)}x`,
    '',
  );
  row(
    `status --goal-id, ${WRITERS} writers, steady`,
    `${steadyMs} ms`,
    `${round(steadyMs / floor)}x`,
    '≤ 1.5x',
  );
  results.team = {
    writers: WRITERS,
    events,
    replayMs: teamReplayMs,
    oneWriterReplayMs: soloReplayMs,
    snapshotLoadMs: teamLoadMs,
    statusAfterPullMs: pulledMs,
    statusSteadyMs: steadyMs,
    floorMs: round(floor, 1),
  };
  for (const d of [base, single]) fs.rmSync(d, { recursive: true, force: true });
}

async function writers() {
  const out: Record<string, unknown> = {};
  for (const procs of [1, 8]) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-bench-w-'));
    const store = Store.init(dir);
    invoke(store, 'goal.create', { goalId: 'w', title: 'Writers' }, person);
    const per = quick ? 100 : 250;
    const children = Array.from({ length: procs }, (_, k) =>
      spawn(
        process.execPath,
        [
          '--import',
          'tsx',
          path.join(ROOT, 'test/fixtures/writer.ts'),
          'burst',
          dir,
          'w',
          String(k),
          String(per),
        ],
        { stdio: ['pipe', 'pipe', 'inherit'], cwd: ROOT },
      ),
    );
    await Promise.all(children.map((c) => new Promise<void>((res) => c.stdout.once('data', () => res()))));
    const t = performance.now();
    const done = Promise.all(
      children.map((c) => new Promise<number>((res) => c.on('close', (code) => res(code ?? 1)))),
    );
    for (const c of children) c.stdin.write('go\n');
    const codes = await done;
    const seconds = (performance.now() - t) / 1000;
    const log = store.readLog('w');
    const expected = 1 + procs * per;
    const lost = expected - log.events.length;
    const rate = round((procs * per) / seconds, 0);
    out[procs] = {
      events: procs * per,
      seconds: round(seconds, 2),
      eventsPerSecond: rate,
      lost,
      chainValid: !log.torn,
      exitCodes: codes,
    };
    row(
      `${procs} writer${procs > 1 ? 's' : ''} appending`,
      `${rate} events/s`,
      '',
      procs === 8
        ? `> 1000/s ${rate > 1000 ? 'met' : 'MISSED'}; lost ${lost} ${lost === 0 ? 'met' : 'MISSED'}`
        : `lost ${lost}`,
    );
    fs.rmSync(dir, { recursive: true, force: true });
  }
  results.writers = out;
}

function bundles() {
  const out: Record<string, { bytes: number; gzipBytes: number }> = {};
  for (const f of ['extension.js', 'cli.js', 'mcp.js', 'webview.js']) {
    const p = path.join(ROOT, 'dist', f);
    if (!fs.existsSync(p)) continue;
    const buf = fs.readFileSync(p);
    out[f] = { bytes: buf.length, gzipBytes: zlib.gzipSync(buf).length };
    row(
      `bundle dist/${f}`,
      `${round(buf.length / 1024, 1)} KB (${round(out[f]!.gzipBytes / 1024, 1)} KB gzip)`,
      '',
      f === 'extension.js' ? `< 500 KB ${buf.length < 500 * 1024 ? 'met' : 'MISSED'}` : '',
    );
  }
  results.bundles = out;
}

function hostActivation() {
  const r = spawnSync(process.execPath, [path.join(ROOT, 'scripts/integration.mjs')], {
    cwd: ROOT,
    env: { ...process.env, LOOPX_TEST_GREP: 'activates' },
    encoding: 'utf8',
    timeout: 15 * 60_000,
  });
  const m = /activation time in the host: ([\d.]+) ms/.exec(r.stdout);
  if (!m) {
    row('extension activation (real host)', 'not measured', '', r.stderr.slice(-200));
    return;
  }
  const ms = Number(m[1]);
  results.activationMs = ms;
  row('extension activation (real host)', `${ms} ms`, '', `< 50 ms ${ms < 50 ? 'met' : 'MISSED'}`);
}

(async () => {
  if (!fs.existsSync(path.join(ROOT, 'dist', 'cli.js'))) throw new Error('build first: npm run build');
  const floor = floorAndCli();
  scale(floor);
  teamReplay(floor);
  await writers();
  bundles();
  if (withHost) hostActivation();
  results.finished = new Date().toISOString();
  const w = [0, 1, 2, 3].map((c) =>
    Math.max(...table.map((r) => r[c]!.length), ['what', 'median', 'vs floor', 'target'][c]!.length),
  );
  const line = (r: string[]) => `| ${r.map((x, c) => x.padEnd(w[c]!)).join(' | ')} |`;
  console.log(line(['what', 'median', 'vs floor', 'target']));
  console.log(line(w.map((n) => '-'.repeat(n))));
  for (const r of table) console.log(line(r));
  fs.writeFileSync(path.join(ROOT, 'bench', 'results.json'), JSON.stringify(results, null, 2) + '\n');
  console.log(`\n${JSON.stringify(results)}`);
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
