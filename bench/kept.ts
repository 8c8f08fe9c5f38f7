/**
 * The figures kept from before issue 18 (bundle sizes, in-process should-run, activation in the
 * real host), and issue 18's writer targets judged from what the writers' run measured.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { decide, invoke, shouldRun } from '../src/core/index';
import type { Store } from '../src/core/index';
import { ROOT, judge, median, round, row } from './measure';
import { WRITERS, agent } from './stores';
import type { WritersResult, WritersRun } from './writers';

/** The in-process costs on the largest store: should-run as an agent polls it, load + decide, one capability call. */
export function inProcess(store: Store, goal: string, n: number, quick: boolean) {
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
    `in-process should-run (${n} goals, ${WRITERS} writers, open run)`,
    `${pollUs} µs`,
    '',
    judge({
      name: 'in-process should-run',
      target: '< 2000 µs',
      measured: pollUs,
      unit: 'µs',
      met: pollUs < 2000,
    }),
  );
  row(`in-process load + decide (${n} goals)`, `${decideUs} µs`, '', '');
  row(`in-process capability call (todo.update, with fsync)`, `${capUs} µs`, '', '');
  return {
    goals: n,
    shouldRunPollUs: pollUs,
    loadDecideUs: decideUs,
    capabilityCallUs: capUs,
    iterations: N,
  };
}

/** Bundle sizes; extension.js < 500 KB. */
export function bundles() {
  const out: Record<string, { bytes: number; gzipBytes: number }> = {};
  for (const f of ['extension.js', 'cli.js', 'mcp.js', 'webview.js']) {
    const p = path.join(ROOT, 'dist', f);
    if (!fs.existsSync(p)) continue;
    const buf = fs.readFileSync(p);
    out[f] = { bytes: buf.length, gzipBytes: zlib.gzipSync(buf).length };
    const kb = round(buf.length / 1024, 1);
    row(
      `bundle dist/${f}`,
      `${kb} KB (${round(out[f]!.gzipBytes / 1024, 1)} KB gzip)`,
      '',
      f === 'extension.js'
        ? judge({
            name: 'bundle dist/extension.js',
            target: '< 500 KB',
            measured: kb,
            unit: 'KB',
            met: kb < 500,
          })
        : '',
    );
  }
  return out;
}

/** Activation in the real VS Code host (scripts/test/integration.mjs), < 50 ms. */
export function hostActivation(): number | null {
  const r = spawnSync(process.execPath, [path.join(ROOT, 'scripts/test/integration.mjs')], {
    cwd: ROOT,
    env: { ...process.env, LOOPX_TEST_GREP: 'activates' },
    encoding: 'utf8',
    timeout: 15 * 60_000,
  });
  const m = /activation time in the host: ([\d.]+) ms/.exec(r.stdout);
  const ms = m ? Number(m[1]) : null;
  row(
    'extension activation (real host)',
    ms === null ? 'not measured' : `${ms} ms`,
    '',
    judge({
      name: 'extension activation (real host)',
      target: '< 50 ms',
      measured: ms,
      unit: 'ms',
      met: ms === null ? null : ms < 50,
      note: ms === null ? r.stderr.slice(-200).trim() || 'no figure in the output' : undefined,
    }),
  );
  return ms;
}

/** Issue 18's writer targets, from bench/writers.ts. */
export function writerTargets(w: WritersResult) {
  const line = (what: string, r: WritersRun) =>
    row(
      what,
      `${r.eventsPerSecond} events/s`,
      '',
      `lost ${r.lost}, chain ${r.chainValid ? 'valid' : 'BROKEN'}`,
    );
  line('1 writer on one goal', w.oneWriter);
  const eight = w.eightOnOneGoal;
  row(
    '8 writers on one goal',
    `${eight.eventsPerSecond} events/s`,
    '',
    judge({
      name: '8 writers on one goal: events/s',
      target: '≥ 1000 events/s',
      measured: eight.eventsPerSecond,
      unit: 'events/s',
      met: eight.eventsPerSecond >= 1000,
    }),
  );
  const all = [w.oneWriter, eight, w.eightOnEightGoals];
  row(
    'writers: events lost, chains',
    `${all.reduce((n, r) => n + r.lost, 0)} lost`,
    '',
    judge({
      name: 'writers: none lost, every chain valid',
      target: 'lost 0, chain valid',
      measured: all.reduce((n, r) => n + r.lost, 0),
      unit: 'events lost',
      met: all.every((r) => r.lost === 0 && r.chainValid),
    }),
  );
  const share = `${Math.round(w.oneWriter.coreShares[0]! * 100)}%`;
  row("1 writer's share of a core", share, '', `so at most ${w.scaleCeiling}x on ${w.cores} cores`);
  row(
    '8 writers on 8 goals',
    `${w.eightOnEightGoals.eventsPerSecond} events/s`,
    `${w.scaleEightGoals}x`,
    judge({
      name: '8 writers on 8 goals: vs one writer',
      target: '≥ 8x one writer',
      measured: w.scaleEightGoals,
      unit: 'x',
      met: w.scaleEightGoals >= 8,
      note: `one writer keeps ${share} of a core busy: ${w.cores} cores allow at most ${w.scaleCeiling}x`,
    }),
  );
}
