/**
 * `loopx drive`'s two figures, measured on a real `loopx drive` process with a model-less runtime:
 *
 * - the wake: from a person's decision landing on the goal (the approval's write returned) to the
 *   lane's next turn started (its contract issued and the runtime spawned), against the floor of
 *   the same notification without LoopX: another process waiting on fs.watch of the same folder,
 *   told of a file written there (what the kernel and Node cost, which the driver cannot skip);
 * - the driver's CPU while every lane sleeps (three lanes waiting at gates), against an idle Node
 *   process over the same window: "none measurable" is no more than the idle process uses.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { addLane, invoke, Store } from '../src/core/index';
import { judge, median, ROOT, round, row } from './measure';
import { benchSigner, person } from './stores';

const WAKE_MAX_MS = 1000;
/** How long the driver is left asleep before its CPU is measured (see the memory reducer below). */
const SETTLE_MS = 12_000;
const BIN = path.join(ROOT, 'bin', 'loopx.js');

/** A runtime with no model: runs its contract's commands, then its finish command. */
const SCRIPT = `
const { execSync } = require('node:child_process');
const c = JSON.parse(require('node:fs').readFileSync(process.argv[1], 'utf8')).interaction_contract;
for (const a of [...c.cli_channel.next_cli_actions, c.agent_channel.finish_with].filter(Boolean))
  execSync(a, { stdio: 'ignore', shell: '/bin/sh' });
`;

/** CPU time (user + system) of `pid` so far, in ms, from /proc (Linux); undefined elsewhere. */
function cpuMs(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime, fields 14 and 15, in clock ticks (100 a second on Linux).
    return (Number(f[11]) + Number(f[12])) * 10;
  } catch {
    return undefined;
  }
}

/** Lines a child writes to stderr, each with when it arrived; `next(re)` waits for a new match. */
function lineReader(child: ChildProcess) {
  const seen: { at: number; line: string }[] = [];
  let waiting: (() => void) | undefined;
  let rest = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    const at = performance.now();
    rest += chunk;
    const lines = rest.split('\n');
    rest = lines.pop()!;
    for (const line of lines) seen.push({ at, line });
    waiting?.();
  });
  let from = 0;
  return {
    all: () => seen.map((s) => s.line).join('\n'),
    async next(re: RegExp, timeoutMs = 30_000): Promise<number> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const i = seen.slice(from).findIndex((s) => re.test(s.line));
        if (i >= 0) {
          from += i + 1;
          return seen[from - 1]!.at;
        }
        if (Date.now() > deadline) throw new Error(`bench: no ${re} from loopx drive:\n${this.all()}`);
        await new Promise<void>((r) => {
          waiting = r;
          setTimeout(r, 200);
        });
      }
    },
  };
}

/** How long fs.watch takes to tell another Node process of a file written in a folder (median of `n`). */
async function watchFloor(dir: string, n: number): Promise<number> {
  const watcher = spawn(
    process.execPath,
    [
      '-e',
      `require('fs').watch(${JSON.stringify(dir)}, (e, f) => process.stderr.write('changed ' + f + '\\n')); process.stderr.write('ready\\n')`,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const lines = lineReader(watcher);
  await lines.next(/ready/);
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    fs.writeFileSync(path.join(dir, `poke-${i}`), 'x');
    out.push((await lines.next(new RegExp(`changed poke-${i}$`))) - t);
    await new Promise((r) => setTimeout(r, 100));
  }
  watcher.kill();
  return median(out);
}

export async function benchDrive(o: { quick: boolean }): Promise<Record<string, unknown>> {
  const n = o.quick ? 3 : 7;
  const ws = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-bench-drive-')));
  let driver: ChildProcess | undefined;
  try {
    const store = Store.init(ws);
    const signer = benchSigner(store);
    const policy = JSON.parse(fs.readFileSync(store.policyPath, 'utf8')) as Record<string, unknown>;
    policy.runtimes = { script: { command: [process.execPath, '-e', SCRIPT, '{contract_file}'] } };
    fs.writeFileSync(store.policyPath, JSON.stringify(policy, null, 2));
    store.signPolicy(signer);
    const now = () => new Date(store.now()).toISOString();
    // The measured lane's goal: n todos, each behind its own gate; two more lanes asleep at a gate.
    for (const goalId of ['measured', 'idle-1', 'idle-2']) {
      invoke(store, 'goal.create', { goalId, title: goalId, objective: '', quota: undefined }, person);
      const gates = goalId === 'measured' ? n : 1;
      for (let i = 1; i <= gates; i++)
        invoke(
          store,
          'todo.add',
          {
            goalId,
            todoId: `t${i}`,
            title: `step ${i}`,
            action: 'true',
            gate: `g${i}`,
            dependsOn: i > 1 ? [`t${i - 1}`] : [],
          },
          person,
        );
      addLane(store, { v: 1, name: goalId, goalId, runtime: 'script', createdAt: now() });
    }
    driver = spawn(process.execPath, [BIN, '--workspace', ws, 'drive'], {
      env: { ...process.env, LOOPX_WORKSPACE: '' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const lines = lineReader(driver);
    for (let i = 0; i < 3; i++) await lines.next(/waiting person/);
    // Every lane asleep: the driver's CPU against an idle Node process over the same window.
    const idle = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1 << 30)'], { stdio: 'ignore' });
    // V8 collects a process's start-up garbage once, about 8 s after it goes idle (its memory
    // reducer: 20-60 ms here): measured from after that, what is left is what sleeping costs.
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const windowMs = o.quick ? 3000 : 10_000;
    const [d0, i0] = [cpuMs(driver.pid!), cpuMs(idle.pid!)];
    await new Promise((r) => setTimeout(r, windowMs));
    const [d1, i1] = [cpuMs(driver.pid!), cpuMs(idle.pid!)];
    idle.kill();
    const asleep = d0 === undefined || d1 === undefined ? null : d1 - d0;
    const floorCpu = i0 === undefined || i1 === undefined ? null : i1 - i0;
    // The wake, n times: approve the next gate, time until the lane's turn started.
    const wakes: number[] = [];
    for (let i = 1; i <= n; i++) {
      invoke(store, 'gate.approve', { goalId: 'measured', gateId: `g${i}` }, person, { signer });
      const landed = performance.now();
      wakes.push((await lines.next(/measured: turn started/)) - landed);
      await lines.next(/measured: (waiting person|stopped)/);
    }
    const wake = median(wakes);
    // A folder of its own beside the goal's, on the same file system.
    const floorDir = path.join(ws, 'watch-floor');
    fs.mkdirSync(floorDir);
    const floor = await watchFloor(floorDir, n);
    row(
      `drive: wake after a decision (median of ${n})`,
      `${round(wake, 1)} ms`,
      `${round(wake / floor, 1)}x`,
      judge({
        name: 'drive wake after a decision',
        target: `< ${WAKE_MAX_MS} ms`,
        measured: round(wake, 1),
        unit: 'ms',
        met: wake < WAKE_MAX_MS,
      }),
    );
    row(`drive: fs.watch notice to another process (floor)`, `${round(floor, 1)} ms`, '1.00', '');
    row(
      `drive: CPU of the driver, 3 lanes asleep, ${windowMs / 1000} s (after ${SETTLE_MS / 1000} s)`,
      asleep === null ? 'n/a' : `${asleep} ms`,
      '',
      judge({
        name: 'drive CPU while every lane sleeps',
        target: `≤ an idle Node (${floorCpu ?? 'n/a'} ms)`,
        measured: asleep,
        unit: 'ms of CPU',
        met: asleep === null || floorCpu === null ? null : asleep <= floorCpu,
        note: asleep === null ? 'no /proc here' : undefined,
      }),
    );
    row(
      `drive: CPU of an idle Node, same window (floor)`,
      floorCpu === null ? 'n/a' : `${floorCpu} ms`,
      '',
      '',
    );
    return {
      wakesMs: wakes.map((x) => round(x, 1)),
      wakeMs: round(wake, 1),
      watchFloorMs: round(floor, 1),
      asleepCpuMs: asleep,
      idleNodeCpuMs: floorCpu,
      windowMs,
    };
  } finally {
    driver?.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    fs.rmSync(ws, { recursive: true, force: true });
  }
}
