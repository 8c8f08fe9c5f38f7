/**
 * The generated blocks of docs/PERFORMANCE.md but the targets table (performance-targets.ts): each
 * renders one block's text from one benchmark run's results (or, for `instructions`, from the
 * committed instruction counts), with the small formatting helpers they and the targets table share.
 * scripts/docs/performance-doc.ts puts them on the page.
 *
 * Deterministic: the same results give the same bytes.
 */
import { PER_GOAL_LABELS } from '../../bench/labels';
import type { Paired, Target } from '../../bench/measure';
import type { WritersRun } from '../../bench/writers';
import type { BenchResults, InstructionsDoc } from './performance-doc';

// ---------------------------------------------------------------------------------------------
// Formatting: fixed, locale-free, so the bytes do not depend on the machine that renders.

/** 10000 → "10,000". */
export const int = (n: number) => String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
export const goals = (n: number) => `${int(n)} goal${n === 1 ? '' : 's'}`;
export const ms = (x: number) => `${x} ms`;
export const x2 = (r: number) => `${r.toFixed(2)}x`;
export const mb = (x: number | undefined) => (x === undefined ? '' : `${x} MB`);
export const msMb = (p: Paired) => [ms(p.medianMs), mb(p.peakRssMb)].filter(Boolean).join(', ');
export const kb = (bytes: number) => `${Math.round((bytes / 1024) * 10) / 10} KB`;
export const pct = (share: number) => `${Math.round(share * 100)}%`;
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
export function table(head: string[], rows: string[][]): string {
  const all = [head, ...rows].map((r) => r.map(cell));
  const w = head.map((_, c) => Math.max(3, ...all.map((r) => [...(r[c] ?? '')].length)));
  const line = (r: string[]) =>
    `| ${r.map((v, c) => v + ' '.repeat(w[c]! - [...v].length)).join(' | ')} |`.replace(/ +$/, '');
  return [line(all[0]!), line(w.map((n) => '-'.repeat(n))), ...all.slice(1).map(line)].join('\n');
}

export const verdict = (t: Target) =>
  t.met === null ? `n/a${t.note ? ` (${t.note})` : ''}` : t.met ? 'met' : 'MISSED';

export const measuredText = (t: Target) =>
  t.measured === null
    ? 'not measured'
    : t.unit === 'x'
      ? x2(t.measured)
      : t.unit.startsWith('ratio')
        ? t.measured.toFixed(2)
        : `${t.measured} ${t.unit}`;

/** The per-goal calls bench.ts times: each target's key and its row's label. */
export const PER_GOAL_ROWS = Object.entries(PER_GOAL_LABELS);

export const sizesOf = (r: BenchResults) =>
  Object.keys(r.sizes ?? {})
    .map(Number)
    .sort((a, b) => a - b);

// ---------------------------------------------------------------------------------------------
// The blocks.

export function runBlock(r: BenchResults): string {
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

export function summaryBlock(r: BenchResults): string {
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

export function perCallBlock(r: BenchResults): string {
  const sizes = sizesOf(r);
  if (!sizes.length) return 'No per-goal calls in this run.';
  const byName = new Map(r.targets.map((t) => [t.name, t]));
  const rows = PER_GOAL_ROWS.map(([k, label]) => [
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
  for (const [k] of PER_GOAL_ROWS) {
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

export function floorBlock(r: BenchResults): string {
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

export function writersBlock(r: BenchResults): string {
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

/** What the `instructions` block says when docs/performance/instructions.json is not committed. */
export const INSTRUCTIONS_MISSING =
  'No instruction counts committed yet: run npm run bench:instructions, then copy bench/instructions.json to docs/performance/instructions.json.';

/** The instruction counts under callgrind (bench/instructions.ts), or what to run when none are committed. */
export function instructionsBlock(d: InstructionsDoc | undefined): string {
  if (!d) return INSTRUCTIONS_MISSING;
  const code = d.revision
    ? `commit \`${d.revision.commit.slice(0, 10)}\`${d.revision.dirty ? ' with uncommitted changes' : ''}`
    : 'a commit not recorded';
  return [
    `Counted ${utc(d.started)} under Node ${d.node}, at ${code}.`,
    '',
    table(
      ['call', 'instructions', 'vs floor'],
      d.rows.map((r) => [r.name, `${int(r.millions)} M`, x2(r.vsFloor)]),
    ),
  ].join('\n');
}
