/**
 * The figures in docs/PERFORMANCE.md, rendered from one benchmark run's output: the committed
 * copy docs/performance/results.json of what `npm run bench` writes to bench/results.json, and the
 * committed copy docs/performance/instructions.json of what `npm run bench:instructions` writes to
 * bench/instructions.json (the page says what to run while there is none). Each generated part of
 * the page sits between `<!-- generated:NAME -->` and `<!-- /generated:NAME -->`; this script
 * rewrites what is between them and nothing else. test/docs/performance-figures.test.ts renders
 * the same blocks in memory and fails when the page differs (a figure edited by hand).
 *
 *   node --import tsx scripts/docs/performance-doc.ts [--results FILE] [--instructions FILE] [--check]
 *                                                                                  (npm run bench:doc)
 *
 * The blocks themselves are rendered in performance-blocks.ts and performance-targets.ts.
 * Deterministic: the same results give the same bytes.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Paired, Target } from '../../bench/measure';
import type { WritersResult } from '../../bench/writers';
import {
  floorBlock,
  instructionsBlock,
  perCallBlock,
  runBlock,
  summaryBlock,
  writersBlock,
} from './performance-blocks';
import { targetsBlock } from './performance-targets';

export const REPO = path.resolve(__dirname, '..', '..');
export const DOC = path.join(REPO, 'docs', 'PERFORMANCE.md');
export const RESULTS = path.join(REPO, 'docs', 'performance', 'results.json');
export const INSTRUCTIONS = path.join(REPO, 'docs', 'performance', 'instructions.json');

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

/**
 * What bench/instructions.ts writes (schema loopx.bench-instructions/1): each call's instructions
 * under callgrind, in millions, and against the first row, the floor `node -e 0`.
 */
export interface InstructionsDoc {
  schema: string;
  node: string;
  started: string;
  revision?: { commit: string; dirty: boolean } | null;
  rows: { name: string; millions: number; vsFloor: number }[];
}

/** The blocks the renderer writes, in the order they appear on the page. */
export const BLOCKS = ['run', 'summary', 'targets', 'per-call', 'floor', 'writers', 'instructions'] as const;
export type BlockName = (typeof BLOCKS)[number];

/**
 * Every generated block's text (without its markers), from one run's results and the instruction
 * counts, when there are any.
 */
export function renderBlocks(r: BenchResults, instructions?: InstructionsDoc): Record<BlockName, string> {
  if (r.schema !== 'loopx.bench/1') throw new Error(`results: schema ${r.schema}, expected loopx.bench/1`);
  if (instructions && instructions.schema !== 'loopx.bench-instructions/1')
    throw new Error(`instructions: schema ${instructions.schema}, expected loopx.bench-instructions/1`);
  return {
    run: runBlock(r),
    summary: summaryBlock(r),
    targets: targetsBlock(r),
    'per-call': perCallBlock(r),
    floor: floorBlock(r),
    writers: writersBlock(r),
    instructions: instructionsBlock(instructions),
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

/** The committed instruction counts, or undefined when the file does not exist. */
export function readInstructions(file = INSTRUCTIONS): InstructionsDoc | undefined {
  if (!fs.existsSync(file)) return undefined;
  return JSON.parse(fs.readFileSync(file, 'utf8')) as InstructionsDoc;
}

const USAGE =
  'usage: node --import tsx scripts/docs/performance-doc.ts [--results FILE] [--instructions FILE] [--check]';

/** The value of `--name FILE` or `--name=FILE`; exits with the usage when `--name` has none. */
function option(argv: string[], name: string): string | undefined {
  const at = argv.indexOf(name);
  const value = at >= 0 ? argv[at + 1] : argv.find((a) => a.startsWith(`${name}=`))?.slice(name.length + 1);
  if (at >= 0 && (!value || value.startsWith('--'))) {
    console.error(USAGE);
    process.exit(2);
  }
  return value;
}

if (require.main === module) {
  const argv = process.argv.slice(2);
  const results = path.resolve(option(argv, '--results') ?? RESULTS);
  const instructions = path.resolve(option(argv, '--instructions') ?? INSTRUCTIONS);
  const doc = fs.readFileSync(DOC, 'utf8');
  const next = applyBlocks(doc, renderBlocks(readResults(results), readInstructions(instructions)));
  const rel = path.relative(REPO, DOC);
  const from = `${path.relative(REPO, results)} and ${path.relative(REPO, instructions)}${fs.existsSync(instructions) ? '' : ' (absent)'}`;
  if (argv.includes('--check')) {
    if (next !== doc) {
      console.error(`${rel} does not match ${from}: run npm run bench:doc`);
      process.exit(1);
    }
    console.log(`${rel} matches ${from}`);
  } else if (next === doc) console.log(`${rel} is current with ${from}`);
  else {
    fs.writeFileSync(DOC, next);
    console.log(`${rel}: rendered ${BLOCKS.length} blocks from ${from}`);
  }
}
