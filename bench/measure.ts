/**
 * How the bench measures: whole processes timed from the outside (GNU time for peak RSS when
 * installed), each paired with a floor run of `node -e 0` just before it, in the environment the
 * shim gives the CLI (FLOOR), and the table and the targets the run prints and writes to
 * bench/results.json.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { cliShimScript, writeCliTarget } from '../src/core/setup';

export const ROOT = path.resolve(__dirname, '..');

/** The commit measured, and whether the work tree had changes on top of it (null outside git). */
export function revision(): { commit: string; dirty: boolean } | null {
  const git = (...a: string[]) => spawnSync('git', a, { cwd: ROOT, encoding: 'utf8' });
  const head = git('rev-parse', 'HEAD');
  if (head.status !== 0) return null;
  return { commit: head.stdout.trim(), dirty: git('status', '--porcelain').stdout.trim() !== '' };
}

const BIN = path.join(ROOT, 'bin', 'loopx.js');
/**
 * `loopx` as people and agents call it: the shim `loopx install-command` writes (here running
 * this checkout's CLI). The hook shim starts the CLI the same way.
 */
const SHIM_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-bench-bin-'));
process.on('exit', () => fs.rmSync(SHIM_DIR, { recursive: true, force: true }));
const SHIM = path.join(SHIM_DIR, 'loopx');
fs.writeFileSync(SHIM, cliShimScript(writeCliTarget(SHIM_DIR, { node: process.execPath, cli: BIN })), {
  mode: 0o755,
});
/** A `loopx` call as a process: the installed command, the arguments. */
export const loopxCall = (...args: string[]) => [SHIM, ...args];
/** The same call started as `node bin/loopx.js`, without the shim (what the tests run). */
export const loopxDirect = (...args: string[]) => [process.execPath, BIN, ...args];

/** A process to start: its command, and the variables removed from the environment it gets. */
export interface Launch {
  cmd: string[];
  without?: string[];
}
/**
 * The floor every CLI figure is a ratio to: starting Node and doing nothing, in the environment
 * the shim gives the CLI. The shim sets NODE_EXTRA_CA_CERTS aside before it starts Node
 * (SET_CA_CERTS_ASIDE in src/core/setup/shim-target.ts), and Node parses every certificate it
 * names before running any code (a system bundle: ~40% of `node -e 0`). A floor that parses them
 * is a start-up the CLI does not pay, and flatters every ratio. So the floor is spawned directly
 * with an environment lacking the variable (not through `env -u`, an exec the CLI does not pay
 * either); the shim's own `sh` stays on the call's side: it is LoopX's cost.
 */
export const FLOOR: Launch = { cmd: [process.execPath, '-e', '0'], without: ['NODE_EXTRA_CA_CERTS'] };
/** The floor in words, for targets and rows. */
export const FLOOR_WORDS = "node -e 0 (shim's env)";
/**
 * `node -e 0` with this machine's environment: the floor earlier runs used, which parses the
 * certificates NODE_EXTRA_CA_CERTS names. Only a context figure, and only when it is set.
 */
export const FLOOR_WITH_CA: Launch = { cmd: [process.execPath, '-e', '0'] };

export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
export const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;
const hasTime = fs.existsSync('/usr/bin/time');

export interface Sample {
  ms: number;
  rssMb?: number;
  stdout: string;
}

export interface RunOptions {
  env?: NodeJS.ProcessEnv;
  /** Written to the child's stdin (a hook's JSON payload), which is then closed. */
  input?: string;
  /** Variables removed from the child's environment (Launch.without). */
  without?: string[];
}

/** A measured process's environment: this one's, with `env` added and `without` removed. */
export function childEnv(opts: Pick<RunOptions, 'env' | 'without'>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...opts.env, LOOPX_WORKSPACE: '' };
  for (const name of opts.without ?? []) delete env[name];
  return env;
}

/** Starts a Launch once (runOnce). */
export const launch = (l: Launch, cwd: string) => runOnce(l.cmd, cwd, { without: l.without });

/** Runs a command once; wall time in ms and, with GNU time, peak RSS. A non-zero exit throws. */
export function runOnce(cmd: string[], cwd: string, opts: RunOptions = {}): Sample {
  const full = hasTime ? ['/usr/bin/time', '-f', '%M', ...cmd] : cmd;
  const t = performance.now();
  const r = spawnSync(full[0]!, full.slice(1), {
    cwd,
    env: childEnv(opts),
    encoding: 'utf8',
    input: opts.input ?? '',
    maxBuffer: 256 * 1024 * 1024,
  });
  const ms = performance.now() - t;
  if (r.status !== 0) throw new Error(`${cmd.join(' ')} exited ${r.status}: ${r.stderr.slice(-500)}`);
  const rssKb = hasTime ? Number(r.stderr.trim().split('\n').at(-1)) : NaN;
  return { ms, rssMb: Number.isFinite(rssKb) ? rssKb / 1024 : undefined, stdout: r.stdout };
}

/**
 * How a CLI figure becomes a ratio: each call is divided by the floor run just before it, and
 * the figure is the median of those pairwise ratios. A pair is a few hundred ms apart, so load
 * from other work on this shared machine hits both sides of it; median/median would compare
 * floor runs and calls made at different moments. Both medians are kept too.
 */
export const RATIO_METHOD = `median of pairwise ratios: each call divided by the ${FLOOR_WORDS} run just before it (A B A B ...)`;

export interface Paired {
  reps: number;
  /** Median of the floor runs of this series. */
  floorMs: number;
  /** Median of the calls. */
  medianMs: number;
  /** Median of call / floor, pair by pair (RATIO_METHOD). */
  ratio: number;
  peakRssMb?: number;
}

/**
 * `reps` pairs: `before` (untimed: what the call needs, e.g. a fresh contract), a floor run
 * (FLOOR unless another is named), then the call, which returns its wall time (several
 * processes' sum, for a whole turn).
 */
export function paired(
  reps: number,
  cwd: string,
  call: () => { ms: number; rssMb?: number },
  before?: () => void,
  floor: Launch = FLOOR,
): Paired {
  const floors: number[] = [];
  const calls: number[] = [];
  const ratios: number[] = [];
  let rss = 0;
  for (let r = 0; r < reps; r++) {
    before?.();
    const a = launch(floor, cwd).ms;
    const b = call();
    floors.push(a);
    calls.push(b.ms);
    ratios.push(b.ms / a);
    rss = Math.max(rss, b.rssMb ?? 0);
  }
  return {
    reps,
    floorMs: round(median(floors), 1),
    medianMs: round(median(calls), 1),
    ratio: round(median(ratios)),
    ...(rss ? { peakRssMb: round(rss, 1) } : {}),
  };
}

// ---------------------------------------------------------------------------------------------
// What the run prints and writes.

export const table: [string, string, string, string][] = [];
export const row = (what: string, value: string, ratio: string, target: string) =>
  table.push([what, value, ratio, target]);

export interface Target {
  name: string;
  /** The target in words, e.g. "≤ 1.5x node -e 0 (shim's env)". */
  target: string;
  /** The figure it is judged on (a ratio, ms, MB, events/s), null when not measured in this run. */
  measured: number | null;
  unit: string;
  /** Null when this run could not judge it (not measured, or not at the size the target names). */
  met: boolean | null;
  note?: string;
}
export const targets: Target[] = [];

/** Records a target and returns the words for the table's target column. */
export function judge(t: Target): string {
  targets.push(t);
  const verdict = t.met === null ? `n/a${t.note ? ` (${t.note})` : ''}` : t.met ? 'met' : 'MISSED';
  return `${t.target} ${verdict}`;
}

export function printTable(): void {
  const head = ['what', 'median', 'vs floor', 'target'];
  const w = head.map((h, c) => Math.max(...table.map((r) => r[c]!.length), h.length));
  const line = (r: string[]) => `| ${r.map((x, c) => x.padEnd(w[c]!)).join(' | ')} |`;
  console.log(line(head));
  console.log(line(w.map((n) => '-'.repeat(n))));
  for (const r of table) console.log(line(r));
}
