/**
 * The `targets` block of docs/PERFORMANCE.md: every figure of one benchmark run in one table,
 * each judged by the target of its name when the run has one, and a row for any target not placed
 * here. scripts/docs/performance-doc.ts puts it on the page.
 */
import { CONTEXT_LABELS } from '../../bench/labels';
import type { BenchResults } from './performance-doc';
import {
  PER_GOAL_ROWS,
  goals,
  int,
  kb,
  mb,
  measuredText,
  ms,
  msMb,
  pct,
  sizesOf,
  table,
  verdict,
  x2,
} from './performance-blocks';

export function targetsBlock(r: BenchResults): string {
  const byName = new Map(r.targets.map((t) => [t.name, t]));
  const used = new Set<string>();
  const rows: string[][] = [];
  /** A row, judged by the target of that name when the run has one. */
  const add = (what: string, measured: string, floor: string, ratio: string, name?: string, extra = '') => {
    const t = name === undefined ? undefined : byName.get(name);
    if (t) used.add(t.name);
    rows.push([what, measured, floor, ratio, t ? t.target : extra, t ? verdict(t) : '']);
  };
  const sizes = sizesOf(r);
  for (const n of sizes) {
    const perGoal = r.sizes![String(n)]!.perGoal;
    for (const [k, label] of PER_GOAL_ROWS) {
      const p = perGoal[k];
      if (p)
        add(
          `${goals(n)}: ${label}`,
          msMb(p),
          ms(p.floorMs),
          x2(p.ratio),
          `${k} at ${goals(n).replace(/,/g, '')}`,
        );
    }
    if (n === sizes[0] && r.context) {
      const c = r.context;
      for (const [p, label] of [
        [c.noShim, `${goals(n)}: ${CONTEXT_LABELS.noShim}`],
        [c.floorWithCa, CONTEXT_LABELS.floorWithCa],
        [c.vsFloorWithCa, `${goals(n)}: ${CONTEXT_LABELS.vsFloorWithCa}`],
      ] as const)
        if (p) add(label, msMb(p), ms(p.floorMs), x2(p.ratio));
      if (c.direct)
        add(
          `${goals(n)}: should-run as node bin/loopx.js (no shim)`,
          msMb(c.direct),
          ms(c.direct.floorMs),
          x2(c.direct.ratio),
        );
      if (c.floorWithout)
        add(
          'node -e 0 without NODE_EXTRA_CA_CERTS',
          msMb(c.floorWithout),
          ms(c.floorWithout.floorMs),
          x2(c.floorWithout.ratio),
        );
      if (c.vsBare)
        add(
          `${goals(n)}: should-run vs that floor`,
          msMb(c.vsBare),
          ms(c.vsBare.floorMs),
          x2(c.vsBare.ratio),
        );
    }
  }
  const ws = r.wholeStore;
  if (ws) {
    const g = goals(ws.goals);
    const raw = g.replace(/,/g, '');
    for (const [p, label] of [
      [ws.status, 'status --json (every goal)'],
      [ws.projectPromptList, 'project_prompt list --json'],
    ] as const) {
      add(`${g}: ${label}: time`, ms(p.medianMs), ms(p.floorMs), x2(p.ratio), `${label} at ${raw}: time`);
      add(
        `${g}: ${label}: peak RSS`,
        p.peakRssMb === undefined ? 'not measured' : mb(p.peakRssMb),
        '',
        '',
        `${label} at ${raw}: peak RSS`,
      );
    }
  }
  const turn = r.turn;
  if (turn) {
    const g = goals(turn.goals);
    const raw = g.replace(/,/g, '');
    add(
      `${g}: agent turn (should-run, exec true, summary_all --contract)`,
      ms(turn.medianMs),
      ms(turn.floorMs),
      x2(turn.ratio),
      `agent turn at ${raw}`,
    );
    if (turn.oneProcess) {
      const o = turn.oneProcess;
      add(
        `${g}: agent turn in one process (loopx turn --max 1)`,
        ms(o.medianMs),
        ms(o.floorMs),
        x2(o.ratio),
        `agent turn in one process at ${raw}`,
      );
    }
  }
  const ip = r.inProcess;
  if (ip) {
    const w = Object.values(r.sizes ?? {}).at(-1)?.writers;
    add(
      `in-process should-run (${goals(ip.goals)}${w ? `, ${w} writers` : ''}, open run)`,
      `${ip.shouldRunPollUs} µs`,
      '',
      '',
      'in-process should-run',
    );
    add(`in-process load + decide (${goals(ip.goals)})`, `${ip.loadDecideUs} µs`, '', '');
    add('in-process capability call (todo.update, with fsync)', `${ip.capabilityCallUs} µs`, '', '');
  }
  const flat = r.flat;
  if (flat)
    for (const [k, label] of PER_GOAL_ROWS)
      if (typeof flat[k] === 'number')
        add(
          `flat: ${label}, ${int(flat.largest)} / ${int(flat.smallest)} goals`,
          flat[k]!.toFixed(2),
          '',
          '',
          `${k} flat from ${flat.smallest} to ${flat.largest} goals`,
        );
  const w = r.writers;
  if (w) {
    const one = w.oneWriter;
    add('1 writer on one goal', `${int(one.eventsPerSecond)} events/s`, '', '');
    add(
      '8 writers on one goal',
      `${int(w.eightOnOneGoal.eventsPerSecond)} events/s`,
      '',
      '',
      '8 writers on one goal: events/s',
    );
    const runs = [one, w.eightOnOneGoal, w.eightOnEightGoals];
    add(
      'writers: events lost, chains',
      `${runs.reduce((n, x) => n + x.lost, 0)} lost, ${runs.every((x) => x.chainValid) ? 'every chain valid' : 'a chain BROKEN'}`,
      '',
      '',
      'writers: none lost, every chain valid',
    );
    add(
      "1 writer's share of a core",
      pct(one.coreShares[0] ?? NaN),
      '',
      '',
      undefined,
      `so at most ${w.scaleCeiling}x on ${w.cores} cores`,
    );
    add(
      '8 writers on 8 goals',
      `${int(w.eightOnEightGoals.eventsPerSecond)} events/s (${x2(w.scaleEightGoals)} one writer)`,
      '',
      '',
      '8 writers on 8 goals: vs one writer',
    );
  }
  for (const [f, b] of Object.entries(r.bundles ?? {}))
    add(`bundle dist/${f}`, `${kb(b.bytes)} (${kb(b.gzipBytes)} gzip)`, '', '', `bundle dist/${f}`);
  if (r.activationMs !== undefined)
    add(
      'extension activation (real host)',
      r.activationMs === null ? 'not measured' : ms(r.activationMs),
      '',
      '',
      'extension activation (real host)',
    );
  // A target this renderer does not place (one bench.ts added since) still gets its row.
  for (const t of r.targets) if (!used.has(t.name)) add(t.name, measuredText(t), '', '', t.name);
  return table(['what', 'measured', 'floor', 'vs floor', 'target', 'met?'], rows);
}
