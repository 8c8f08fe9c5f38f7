/**
 * The figures in docs/PERFORMANCE.md, rendered from one benchmark run's output: the committed
 * copy docs/performance/results.json of what `npm run bench` writes to bench/results.json. Each
 * generated part of the page sits between `<!-- generated:NAME -->` and `<!-- /generated:NAME -->`;
 * this script rewrites what is between them and nothing else. test/docs/performance-figures.test.ts
 * renders the same blocks in memory and fails when the page differs (a figure edited by hand).
 *
 *   node --import tsx scripts/docs/performance-doc.ts [--results FILE] [--check]     (npm run bench:doc)
 *
 * Deterministic: the same results give the same bytes.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Paired, Target } from '../../bench/measure';
import type { WritersResult, WritersRun } from '../../bench/writers';

export const REPO = path.resolve(__dirname, '..', '..');
export const DOC = path.join(REPO, 'docs', 'PERFORMANCE.md');
export const RESULTS = path.join(REPO, 'docs', 'performance', 'results.json');

// ---------------------------------------------------------------------------------------------
// What bench/bench.ts writes (schema loopx.bench/1). Optional fields are those an older run, a
// --quick or --no-host run, or a machine without NODE_EXTRA_CA_CERTS or GNU time leaves out.
// Runs before issue 40 have no `floor`: their floor was `node -e 0` with the machine's
// environment (the certificates parsed, when set), and their context has the keys marked older.

export interface BenchResults {
  schema: string;
  machine: {
    cpus: number;
    cpuModel?: string | null;
    platform?: string;
    node: string;
    load: number[];
    loadAtEnd?: number[];
  };
  started: string;
  finished?: string;
  args?: string[];
  revision?: { commit: string; dirty: boolean } | null;
  quick: boolean;
  reps: number;
  /** What every CLI ratio divides by (issue 40 on): `node -e 0`, these variables unset. */
  floor?: { words: string; without: string[] };
  ratioMethod?: string;
  context?: {
    extraCaCerts?: string;
    /** should-run as `node bin/loopx.js`, no shim, in the shim's environment, against the floor. */
    noShim?: Paired;
    /** `node -e 0` parsing NODE_EXTRA_CA_CERTS (the inflated floor) against the floor. */
    floorWithCa?: Paired;
    /** should-run through the shim against the inflated floor. */
    vsFloorWithCa?: Paired;
    /** Older: should-run as `node bin/loopx.js` with the machine's environment. */
    direct?: Paired;
    /** Older: `node -e 0` without NODE_EXTRA_CA_CERTS against the floor with it. */
    floorWithout?: Paired;
    /** Older: should-run against `node -e 0` without NODE_EXTRA_CA_CERTS. */
    vsBare?: Paired;
  };
  sizes?: Record<string, { goal?: string; writers?: number; perGoal: Record<string, Paired> }>;
  wholeStore?: { goals: number; status: Paired; projectPromptList: Paired };
  turn?: Paired & { goals: number; processes?: number; oneProcess?: Paired };
  inProcess?: { goals: number; shouldRunPollUs: number; loadDecideUs: number; capabilityCallUs: number };
  flat?: { smallest: number; largest: number } & Record<string, number>;
  writers?: WritersResult;
  bundles?: Record<string, { bytes: number; gzipBytes: number }>;
  activationMs?: number | null;
  targets: Target[];
}

/** The blocks the renderer writes, in the order they appear on the page. */
export const BLOCKS = ['run', 'summary', 'targets', 'per-call', 'floor', 'writers'] as const;
export type BlockName = (typeof BLOCKS)[number];

// ---------------------------------------------------------------------------------------------
// Formatting: fixed, locale-free, so the bytes do not depend on the machine that renders.

/** 10000 → "10,000". */
const int = (n: number) => String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
const goals = (n: number) => `${int(n)} goal${n === 1 ? '' : 's'}`;
const ms = (x: number) => `${x} ms`;
const x2 = (r: number) => `${r.toFixed(2)}x`;
const mb = (x: number | undefined) => (x === undefined ? '' : `${x} MB`);
const msMb = (p: Paired) => [ms(p.medianMs), mb(p.peakRssMb)].filter(Boolean).join(', ');
const kb = (bytes: number) => `${Math.round((bytes / 1024) * 10) / 10} KB`;
const pct = (share: number) => `${Math.round(share * 100)}%`;
const median = (xs: number[]) => {
  const s = xs.filter(Number.isFinite).sort((a, b) => a - b);
  if (!s.length) return NaN;
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
/** "1.10-1.19x", or "1.10x" when all are equal. */
const spread = (xs: number[], unit = (v: number) => x2(v)) => {
  const lo = Math.min(...xs);
  const hi = Math.max(...xs);
  return lo === hi ? unit(lo) : `${unit(lo).replace(/[^\d.,]+$/, '')}-${unit(hi)}`;
};
/** "2026-12-04T17:03:05.123Z" → "2026-12-04 17:03 UTC". */
const utc = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
const loads = (l: number[]) => l.map((v) => v.toFixed(2)).join(' / ');
const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\s+/g, ' ');

/** A Markdown table, its columns padded to the widest cell. */
function table(head: string[], rows: string[][]): string {
  const all = [head, ...rows].map((r) => r.map(cell));
  const w = head.map((_, c) => Math.max(3, ...all.map((r) => [...(r[c] ?? '')].length)));
  const line = (r: string[]) =>
    `| ${r.map((v, c) => v + ' '.repeat(w[c]! - [...v].length)).join(' | ')} |`.replace(/ +$/, '');
  return [line(all[0]!), line(w.map((n) => '-'.repeat(n))), ...all.slice(1).map(line)].join('\n');
}

const verdict = (t: Target) =>
  t.met === null ? `n/a${t.note ? ` (${t.note})` : ''}` : t.met ? 'met' : 'MISSED';

const measuredText = (t: Target) =>
  t.measured === null
    ? 'not measured'
    : t.unit === 'x'
      ? x2(t.measured)
      : t.unit.startsWith('ratio')
        ? t.measured.toFixed(2)
        : `${t.measured} ${t.unit}`;

/** The per-goal calls bench.ts times, with the names its targets and table use. */
const PER_GOAL: [key: string, label: string][] = [
  ['should-run', 'quota should-run --goal-id (open run)'],
  ['status --goal-id', 'status --goal-id --json'],
  ['todo add', 'todo add --goal-id --title'],
  ['exec true', 'exec --contract --todo -- true'],
  ['hook pre-tool-use', 'hook pre-tool-use (Bash ls)'],
];

/** The context rows' labels, as bench.ts prints them. */
const CONTEXT = {
  noShim: "should-run as node bin/loopx.js (no shim, shim's env)",
  floorWithCa: 'node -e 0 with NODE_EXTRA_CA_CERTS (the inflated floor)',
  vsFloorWithCa: 'should-run vs node -e 0 with NODE_EXTRA_CA_CERTS',
};

const sizesOf = (r: BenchResults) =>
  Object.keys(r.sizes ?? {})
    .map(Number)
    .sort((a, b) => a - b);

// ---------------------------------------------------------------------------------------------
// The blocks.

function runBlock(r: BenchResults): string {
  const m = r.machine;
  const took =
    r.finished !== undefined
      ? `, ${Math.round((Date.parse(r.finished) - Date.parse(r.started)) / 60_000)} min`
      : '';
  const args = r.args?.length ? `node --import tsx bench/bench.ts ${r.args.join(' ')}` : 'npm run bench';
  const lines = [
    `- **When:** ${utc(r.started)}${r.finished ? ` to ${utc(r.finished).slice(11)}` : ''}${took}.`,
    `- **Command:** \`${args}\` (${r.quick ? 'quick: ' : ''}${r.reps} pairs of floor and call for each CLI figure).`,
    `- **Machine:** ${m.cpus} core${m.cpus === 1 ? '' : 's'}${m.cpuModel ? ` (${m.cpuModel})` : ''}${m.platform ? `, ${m.platform}` : ''}, Node ${m.node}.`,
    `- **Load average** (1 / 5 / 15 min): ${loads(m.load)} at the start${m.loadAtEnd ? `, ${loads(m.loadAtEnd)} at the end` : ''}.`,
  ];
  if (m.load[0]! > m.cpus)
    lines.push(
      `- **Busy host:** the 1-minute load average at the start (${m.load[0]!.toFixed(2)}) was above the ${m.cpus} cores: other work competed with the run, and its figures, ratios too, read higher than an idle host gives.`,
    );
  if (r.revision)
    lines.push(
      `- **Code:** commit \`${r.revision.commit.slice(0, 10)}\`${r.revision.dirty ? ', with changes in the work tree not yet committed' : ''}.`,
    );
  return lines.join('\n');
}

function summaryBlock(r: BenchResults): string {
  const judged = r.targets.filter((t) => t.met !== null);
  const met = judged.filter((t) => t.met);
  const missed = judged.filter((t) => !t.met);
  const open = r.targets.length - judged.length;
  const head =
    `**${met.length} of the ${r.targets.length} targets met**` +
    (open ? ` (${open} not judged in this run)` : '') +
    (missed.length ? `; ${missed.length} missed:` : '.');
  return [
    head,
    ...(missed.length ? [''] : []),
    ...missed.map(
      (t) => `- ${t.name} — ${measuredText(t)}, target ${t.target}${t.note ? ` (${t.note})` : ''}`,
    ),
  ].join('\n');
}

function targetsBlock(r: BenchResults): string {
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
    for (const [k, label] of PER_GOAL) {
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
        [c.noShim, `${goals(n)}: ${CONTEXT.noShim}`],
        [c.floorWithCa, CONTEXT.floorWithCa],
        [c.vsFloorWithCa, `${goals(n)}: ${CONTEXT.vsFloorWithCa}`],
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
    for (const [k, label] of PER_GOAL)
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

function perCallBlock(r: BenchResults): string {
  const sizes = sizesOf(r);
  if (!sizes.length) return 'No per-goal calls in this run.';
  const byName = new Map(r.targets.map((t) => [t.name, t]));
  const rows = PER_GOAL.map(([k, label]) => [
    label,
    ...sizes.map((n) => {
      const p = r.sizes![String(n)]!.perGoal[k];
      if (!p) return '';
      const t = byName.get(`${k} at ${goals(n).replace(/,/g, '')}`);
      return t?.met === false ? `**${x2(p.ratio)}**` : x2(p.ratio);
    }),
    ...(sizes.length > 1 ? [typeof r.flat?.[k] === 'number' ? r.flat[k]!.toFixed(2) : ''] : []),
  ]);
  // A run before issue 40 keeps its words: "node -e 0" was the floor with the machine's environment.
  const [callHead, floorRow] = r.floor
    ? [`call, ratio to ${r.floor.words}`, `${r.floor.words}, median of the floors`]
    : ['call (ratio to node -e 0)', 'node -e 0 (median of the floors)'];
  const head = [callHead, ...sizes.map(goals), ...(sizes.length > 1 ? ['flat'] : [])];
  const floors = sizes.map((n) => median(Object.values(r.sizes![String(n)]!.perGoal).map((p) => p.floorMs)));
  // Each call's target at the smallest size: one for all, or the calls that share each.
  const callsBy = new Map<string, string[]>();
  for (const [k] of PER_GOAL) {
    const t = byName.get(`${k} at ${goals(sizes[0]!).replace(/,/g, '')}`)?.target;
    if (t !== undefined) callsBy.set(t, [...(callsBy.get(t) ?? []), k]);
  }
  const targetWords =
    callsBy.size <= 1
      ? ([...callsBy.keys()][0] ?? 'the per-call target')
      : [...callsBy].map(([t, calls]) => `${calls.join(', ')}: ${t}`).join('; ');
  return [
    table(head, [...rows, [floorRow, ...floors.map((f) => ms(f)), ...(sizes.length > 1 ? [''] : [])]]),
    '',
    `Bold: over its target (${targetWords}). ` +
      (sizes.length > 1
        ? `Flat: the ratio at ${goals(sizes.at(-1)!)} over the ratio at ${goals(sizes[0]!)}.`
        : 'One store size only: no flat figure.'),
  ].join('\n');
}

function floorBlock(r: BenchResults): string {
  if (r.floor) return shimEnvFloorBlock(r);
  // A run before issue 40: the floor was `node -e 0` with the machine's environment.
  const sizes = sizesOf(r);
  const floors = sizes.flatMap((n) => Object.values(r.sizes![String(n)]!.perGoal).map((p) => p.floorMs));
  const c = r.context ?? {};
  const out: string[] = [];
  if (floors.length)
    out.push(
      `- \`node -e 0\`, the floor the per-goal calls' ratios divide by: ${spread(floors, ms)} (medians of each series' floor runs).`,
    );
  if (c.floorWithout) {
    const f = c.floorWithout;
    out.push(
      `- \`NODE_EXTRA_CA_CERTS\` was set. \`node -e 0\` without it: ${ms(f.medianMs)}, ${x2(f.ratio)} the floor with it: parsing the certificates is ${pct(1 - f.ratio)} of the floor.`,
    );
    if (c.vsBare)
      out.push(
        `- should-run against Node without the certificates (LoopX's own start-up and work): ${x2(c.vsBare.ratio)}, ${ms(c.vsBare.medianMs)} against ${ms(c.vsBare.floorMs)}.`,
      );
  } else out.push('- `NODE_EXTRA_CA_CERTS` was not set: the floor parses no extra certificates.');
  if (c.direct)
    out.push(
      `- should-run started as \`node bin/loopx.js\`, without the shim (so with the certificates, when set): ${x2(c.direct.ratio)}.`,
    );
  return out.join('\n');
}

/** The floor block of a run from issue 40 on: the floor is `node -e 0` in the shim's environment. */
function shimEnvFloorBlock(r: BenchResults): string {
  const sizes = sizesOf(r);
  const floors = sizes.flatMap((n) => Object.values(r.sizes![String(n)]!.perGoal).map((p) => p.floorMs));
  const c = r.context ?? {};
  const unset = (r.floor?.without ?? []).map((v) => `\`${v}\``).join(', ') || 'nothing';
  const out = [
    `- The floor every CLI ratio divides by is \`node -e 0\` in the environment the shim gives the CLI (${unset} unset). ` +
      'The shim sets the certificates aside before it starts Node, so a floor that parses them would be a start-up the CLI does not pay.' +
      (floors.length ? ` The floor: ${spread(floors, ms)} (medians of each series' floor runs).` : ''),
  ];
  const f = c.floorWithCa;
  if (f) {
    out.push(
      `- \`NODE_EXTRA_CA_CERTS\` was set. With the certificates, Node's start-up (\`node -e 0\`) was ${ms(f.medianMs)}, ${x2(f.ratio)} the floor (${ms(f.floorMs)}): parsing them is ${pct(1 - 1 / f.ratio)} of it.`,
    );
    const v = c.vsFloorWithCa;
    if (v)
      out.push(
        `- Against that inflated floor, which earlier versions of this page used, should-run reads ${x2(v.ratio)} (${ms(v.medianMs)} against ${ms(v.floorMs)}).`,
      );
  } else out.push('- `NODE_EXTRA_CA_CERTS` was not set: the shim had no certificates to set aside.');
  if (c.noShim) {
    const viaShim = sizes.length ? r.sizes![String(sizes[0])]!.perGoal['should-run'] : undefined;
    const shim = viaShim && viaShim.ratio - c.noShim.ratio;
    out.push(
      `- should-run started as \`node bin/loopx.js\`, without the shim, in the shim's environment: ${x2(c.noShim.ratio)}` +
        (viaShim && shim !== undefined
          ? `; through the shim (${goals(sizes[0]!)}): ${x2(viaShim.ratio)}. ` +
            (shim > 0
              ? `The shim's own \`sh\`, a cost of LoopX's, adds ${x2(shim)}.`
              : "The shim's own `sh` is within this run's noise.")
          : '.'),
    );
  }
  return out.join('\n');
}

function writersBlock(r: BenchResults): string {
  const w = r.writers;
  if (!w) return 'No writers in this run.';
  const runs: [string, WritersRun][] = [
    ['1 writer, one goal', w.oneWriter],
    ['8 writers, one goal', w.eightOnOneGoal],
    ['8 writers, 8 goals', w.eightOnEightGoals],
  ];
  return [
    table(
      ['run', 'events', 'seconds', 'events/s', 'lost', 'logs', "median writer's share of a core"],
      runs.map(([what, x]) => [
        what,
        int(x.events),
        String(x.seconds),
        int(x.eventsPerSecond),
        String(x.lost),
        x.chainValid ? 'valid' : `BROKEN: ${x.problem ?? ''}`,
        pct(median(x.coreShares)),
      ]),
    ),
    '',
    `${int(w.perWriter)} calls per writer. One writer keeps ${pct(w.oneWriter.coreShares[0] ?? NaN)} of a core busy, so on ` +
      `${w.cores} core${w.cores === 1 ? '' : 's'} 8 writers on 8 goals can gain at most ${w.scaleCeiling}x over one ` +
      `(\`cores / share\`, at most 8); they gained ${x2(w.scaleEightGoals)}.`,
  ].join('\n');
}

/** Every generated block's text (without its markers), from one run's results. */
export function renderBlocks(r: BenchResults): Record<BlockName, string> {
  if (r.schema !== 'loopx.bench/1') throw new Error(`results: schema ${r.schema}, expected loopx.bench/1`);
  return {
    run: runBlock(r),
    summary: summaryBlock(r),
    targets: targetsBlock(r),
    'per-call': perCallBlock(r),
    floor: floorBlock(r),
    writers: writersBlock(r),
  };
}

// ---------------------------------------------------------------------------------------------
// The page: blocks between markers.

const open = (name: string) => `<!-- generated:${name} -->`;
const close = (name: string) => `<!-- /generated:${name} -->`;
const MARKER = /<!-- (\/?)generated:([\w-]+) -->/g;

/** What sits between a block's markers on the page, for the block's text. */
export const framed = (text: string) => `\n\n${text}\n\n`;

/** The page's generated blocks, as they stand (the text between the markers). Throws on a stray or unpaired marker. */
export function readBlocks(doc: string): Map<string, string> {
  const out = new Map<string, string>();
  let current: { name: string; from: number } | undefined;
  for (const m of doc.matchAll(MARKER)) {
    const [whole, slash, name] = m as unknown as [string, string, string];
    if (!slash) {
      if (current) throw new Error(`${open(name)} inside ${open(current.name)}`);
      if (out.has(name)) throw new Error(`${open(name)} appears twice`);
      current = { name, from: m.index! + whole.length };
    } else {
      if (current?.name !== name) throw new Error(`${close(name)} without its ${open(name)}`);
      out.set(name, doc.slice(current.from, m.index));
      current = undefined;
    }
  }
  if (current) throw new Error(`${open(current.name)} is never closed`);
  return out;
}

/** The page with each block's text replaced; every block must already have its markers on the page. */
export function applyBlocks(doc: string, blocks: Record<string, string>): string {
  const present = readBlocks(doc);
  const missing = Object.keys(blocks).filter((n) => !present.has(n));
  if (missing.length)
    throw new Error(
      `docs/PERFORMANCE.md has no markers for ${missing.map(open).join(', ')}: add the pair where the block belongs`,
    );
  return doc.replace(/<!-- generated:([\w-]+) -->[\s\S]*?<!-- \/generated:\1 -->/g, (whole, name: string) =>
    name in blocks ? `${open(name)}${framed(blocks[name]!)}${close(name)}` : whole,
  );
}

export function readResults(file = RESULTS): BenchResults {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as BenchResults;
}

if (require.main === module) {
  const argv = process.argv.slice(2);
  const at = argv.indexOf('--results');
  const file = at >= 0 ? argv[at + 1] : argv.find((a) => a.startsWith('--results='))?.slice(10);
  if (at >= 0 && !file) {
    console.error('usage: node --import tsx scripts/docs/performance-doc.ts [--results FILE] [--check]');
    process.exit(2);
  }
  const results = path.resolve(file ?? RESULTS);
  const doc = fs.readFileSync(DOC, 'utf8');
  const next = applyBlocks(doc, renderBlocks(readResults(results)));
  const rel = path.relative(REPO, DOC);
  if (argv.includes('--check')) {
    if (next !== doc) {
      console.error(`${rel} does not match ${path.relative(REPO, results)}: run npm run bench:doc`);
      process.exit(1);
    }
    console.log(`${rel} matches ${path.relative(REPO, results)}`);
  } else if (next === doc) console.log(`${rel} is current with ${path.relative(REPO, results)}`);
  else {
    fs.writeFileSync(DOC, next);
    console.log(`${rel}: rendered ${BLOCKS.length} blocks from ${path.relative(REPO, results)}`);
  }
}
