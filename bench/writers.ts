/**
 * Concurrent writers as processes (issue 18): each child runs `test/fixtures/writer.ts burst`
 * through `invoke`, the path the CLI and the agent tools take, so every event is acknowledged only
 * once fsync'd. The fixture is bundled first, as the CLI and the extension are: run through tsx,
 * a call spends a third of its time in tsx's source maps (stack traces of fs errors). Three runs: 1 writer on one goal, 8 writers on one goal, 8 writers on 8 goals (one
 * each). After each, every log is read back and checked (seq, hash chain, clock stamps, no torn
 * line) and each writer's marks are counted, so a lost event shows as `lost`, not as speed.
 *
 *   node --import tsx bench/writers.ts [--quick]      (or `benchWriters` from bench.ts)
 */
import { spawn } from 'node:child_process';
import { build } from 'esbuild';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Store } from '../src/core/store';
import { invoke } from '../src/core/capabilities';
import type { Actor } from '../src/core/model';

export interface WritersRun {
  /** Writer processes, and the goals they write to (1, or one goal each). */
  writers: number;
  goals: number;
  /** Events the writers were asked to append (the goals' creation not counted). */
  events: number;
  seconds: number;
  eventsPerSecond: number;
  /** Events a writer was told were done that no log holds (0 is the only right answer). */
  lost: number;
  /** Every log of every goal parses: contiguous seq, valid hash chain and clock stamps, no torn line. */
  chainValid: boolean;
  /** What went wrong in the check, when chainValid is false. */
  problem?: string;
  exitCodes: number[];
  /** Each writer's CPU time over the time its calls spanned (1 is one core kept busy). */
  coreShares: number[];
}

export interface WritersResult {
  /** Calls per writer process. */
  perWriter: number;
  oneWriter: WritersRun;
  eightOnOneGoal: WritersRun;
  eightOnEightGoals: WritersRun;
  /** eightOnEightGoals.eventsPerSecond / oneWriter.eventsPerSecond (the target is ≥ 8). */
  scaleEightGoals: number;
  /** The cores Node may use here (os.availableParallelism). */
  cores: number;
  /**
   * The most 8 independent writers can gain over one on these cores: cores over one writer's core
   * share, at most 8. With one writer keeping most of a core busy, 2 cores cannot give 8x.
   */
  scaleCeiling: number;
}

const person: Actor = { kind: 'user', id: 'bench', channel: 'cli' };
const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;

/** Starts `procs` writers (writer k on goal `goalOf(k)`), releases them at once, and checks the logs. */
async function run(
  writer: string,
  procs: number,
  goalOf: (k: number) => string,
  per: number,
  env: NodeJS.ProcessEnv,
): Promise<WritersRun> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-bench-w-'));
  try {
    const store = Store.init(dir);
    const goals = [...new Set(Array.from({ length: procs }, (_, k) => goalOf(k)))];
    for (const g of goals) invoke(store, 'goal.create', { goalId: g, title: `Writers ${g}` }, person);
    const before = new Map(goals.map((g) => [g, store.load(g).revision]));
    const children = Array.from({ length: procs }, (_, k) =>
      spawn(process.execPath, [writer, 'burst', dir, goalOf(k), String(k), String(per)], {
        stdio: ['pipe', 'pipe', 'inherit'],
        env,
      }),
    );
    const outputs = children.map((c) => {
      let out = '';
      c.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
      return () => out;
    });
    const codes = Promise.all(
      children.map((c) => new Promise<number>((res) => c.on('close', (code) => res(code ?? 1)))),
    );
    // Each child prints `ready` once loaded: start-up is not part of the figure.
    await Promise.all(
      children.map(
        (c) =>
          new Promise<void>((res, rej) => {
            c.stdout.once('data', () => res());
            c.once('close', () => rej(new Error('a writer exited before it was ready')));
          }),
      ),
    );
    const t = performance.now();
    for (const c of children) c.stdin.write('go\n');
    const exitCodes = await codes;
    const seconds = (performance.now() - t) / 1000;
    const check = checkLogs(store, goals, procs, per, goalOf, before);
    const coreShares = outputs.map((out) => {
      const m = /done \d+ cpu=(\d+) wall=(\d+)/.exec(out());
      return m ? round(Number(m[1]) / Math.max(1, Number(m[2]))) : NaN;
    });
    return {
      writers: procs,
      goals: goals.length,
      events: procs * per,
      seconds: round(seconds),
      eventsPerSecond: round((procs * per) / seconds, 0),
      ...check,
      exitCodes,
      coreShares,
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Reads every log back (a full parse checks seq, chain and stamps) and counts each writer's marks. */
function checkLogs(
  store: Store,
  goals: string[],
  procs: number,
  per: number,
  goalOf: (k: number) => string,
  before: Map<string, number>,
): { lost: number; chainValid: boolean; problem?: string } {
  const marks = new Set<string>();
  let problem: string | undefined;
  let added = 0;
  for (const g of goals) {
    try {
      const logs = store.readLogs(g);
      const torn = logs.find((l) => l.parsed.torn);
      if (torn) problem ??= `${torn.file} ends in a torn line`;
      for (const l of logs) {
        for (const ev of l.parsed.events) {
          const d = ev.data as { todo?: { title?: unknown }; note?: unknown };
          const mark =
            ev.type === 'todo.added' ? d.todo?.title : ev.type === 'todo.updated' ? d.note : undefined;
          if (typeof mark === 'string') marks.add(`${g}|${mark}`);
        }
      }
      added += store.replayGoal(g, logs).revision - before.get(g)!;
    } catch (e) {
      problem ??= (e as Error).message;
    }
  }
  let lost = 0;
  for (let k = 0; k < procs; k++)
    for (let i = 0; i < per; i++) if (!marks.has(`${goalOf(k)}|w${k} #${i}`)) lost++;
  if (!problem && added !== procs * per)
    problem = `the goals gained ${added} events, ${procs * per} were asked for`;
  return { lost, chainValid: problem === undefined, ...(problem ? { problem } : {}) };
}

/** The three runs; `root` is the repository whose `test/fixtures/writer.ts` the children run. */
export async function benchWriters(opts: { quick: boolean; root: string }): Promise<WritersResult> {
  const per = opts.quick ? 100 : 250;
  // Keys and secrets stay in a config folder of the run's own, never the user's.
  const made = process.env.LOOPX_CONFIG_DIR ? undefined : fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-bw-'));
  const saved = process.env.LOOPX_CONFIG_DIR;
  if (made) process.env.LOOPX_CONFIG_DIR = made;
  const built = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-bw-bundle-'));
  try {
    const writer = path.join(built, 'writer.js');
    await build({
      entryPoints: [path.join(opts.root, 'test/fixtures/writer.ts')],
      bundle: true,
      platform: 'node',
      target: 'node20',
      outfile: writer,
      logLevel: 'warning',
      // The kernel lock's binding is found beside its package, as the CLI finds it in dist/.
      plugins: [
        {
          name: 'lock-binding-external',
          setup(b) {
            b.onResolve({ filter: /^fs-native-extensions$/ }, () => ({
              path: require.resolve('fs-native-extensions'),
              external: true,
            }));
          },
        },
      ],
    });
    const env = { ...process.env };
    const cores = os.availableParallelism();
    const oneWriter = await run(writer, 1, () => 'w', per, env);
    const eightOnOneGoal = await run(writer, 8, () => 'w', per, env);
    const eightOnEightGoals = await run(writer, 8, (k) => `w${k}`, per, env);
    return {
      perWriter: per,
      oneWriter,
      eightOnOneGoal,
      eightOnEightGoals,
      scaleEightGoals: round(eightOnEightGoals.eventsPerSecond / oneWriter.eventsPerSecond),
      cores,
      scaleCeiling: round(Math.min(8, cores / oneWriter.coreShares[0]!)),
    };
  } finally {
    fs.rmSync(built, { recursive: true, force: true });
    if (made) {
      if (saved === undefined) delete process.env.LOOPX_CONFIG_DIR;
      else process.env.LOOPX_CONFIG_DIR = saved;
      fs.rmSync(made, { recursive: true, force: true });
    }
  }
}

if (require.main === module) {
  const argv = process.argv.slice(2);
  const rootArg = argv.find((a) => a.startsWith('--root='))?.slice(7);
  benchWriters({ quick: argv.includes('--quick'), root: rootArg ?? path.resolve(__dirname, '..') })
    .then((r) => console.log(JSON.stringify(r, null, 2)))
    .catch((e) => {
      console.error(e);
      process.exit(1);
    });
}
