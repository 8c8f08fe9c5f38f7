/**
 * Corruption: random byte flips, truncation at random offsets and deleted files in a `.loopx/`
 * with four goals of real history (todos, gates, a contract run with command evidence and its
 * artifact, rewards, an open run). For every damaged store, the commands a person or an agent
 * reaches for first:
 *
 *   status, status --goal-id T, quota should-run --preview --goal-id T, verify, self-repair,
 *   and then a write (todo add) to a fifth goal and a goal creation
 *
 * answer with a clear error (exit 3, 5 or 6, the output naming a file under `.loopx/`) or a
 * working/repaired state (exit 0), never a crash (exit 1, a signal, a stack trace); when
 * self-repair says it fixed everything, a second (dry-run) repair finds nothing and every log
 * verifies; and the OTHER goals' logs, artifacts and loaded state are exactly what they were,
 * still listed by `status` and still readable by `status --goal-id`.
 *
 * Most cases run the CLI in-process (`run` from src/cli/main.ts: the same code, no process
 * start-up), a sample runs the BUILT command (`node bin/loopx.js`) to prove the real binary
 * answers the same way. Random choices come from a seeded generator: the seed is printed, and
 * LOOPX_RELIABILITY_SEED replays a run.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Store } from '../../src/core/store/store';
import { invoke } from '../../src/core/capabilities/registry';
import { shouldRun } from '../../src/core/contract/issue';
import { execUnderContract } from '../../src/core/contract/exec';
import { repair } from '../../src/core/setup/repair';
import { canonicalJson } from '../../src/core/store/json-file';
import {
  Budget,
  figure,
  hasStackTrace,
  loopx,
  loopxInProcess,
  pool,
  removeTempDirs,
  requireBuilt,
  sha256,
  tempDir,
} from '../helpers/reliability';
import type { Result } from '../helpers/reliability';
import { human, agent, signed } from '../helpers/store';
import { rng } from '../helpers/rng';

const GOALS = ['alpha', 'beta', 'gamma', 'delta'];
const SCRATCH = 'scratch';
const CREATED = 'created-later';

const SEED = Number(process.env.LOOPX_RELIABILITY_SEED ?? Date.now() % 2 ** 31);
const random = rng(SEED);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;

after(removeTempDirs);

// ---------------------------------------------------------------------------------------------
// The template: four goals with real history, built once through the core.

let template = '';

async function buildTemplate(): Promise<string> {
  const ws = tempDir('loopx-corrupt-template-');
  const store = Store.init(ws);
  for (const [n, g] of GOALS.entries()) {
    invoke(store, 'goal.create', { goalId: g, title: `Goal ${g}`, objective: `objective of ${g}` }, human);
    invoke(
      store,
      'todo.add',
      { goalId: g, todoId: 'build', title: 'build it', action: `echo building ${g}`, priority: 'P0' },
      human,
    );
    invoke(store, 'todo.add', { goalId: g, todoId: 'review', title: 'review it', priority: 'P1' }, human);
    invoke(
      store,
      'todo.add',
      {
        goalId: g,
        todoId: 'ship',
        title: 'ship it',
        action: 'echo ship',
        gate: 'prod',
        dependsOn: ['build'],
      },
      human,
    );
    invoke(store, 'todo.add', { goalId: g, todoId: 'ask', title: 'a person decides', owner: 'user' }, human);
    const out = shouldRun(store, { goalId: g, agent: 'codex' }, agent);
    const contractId = out.interaction_contract.id!;
    await execUnderContract(store, {
      contractId,
      todoId: 'build',
      command: `echo building ${g}`,
      actor: agent,
    });
    invoke(
      store,
      'evidence.add',
      { goalId: g, kind: 'note', summary: `looked at ${g}`, todoId: 'review' },
      agent,
    );
    invoke(store, 'todo.complete', { goalId: g, todoId: 'review', summary: 'reviewed' }, agent);
    const runId = store.load(g).state.runs[0]!.id;
    invoke(store, 'run.spend', { goalId: g, runId, tokens: 1000 + n, costUsd: 0.01 }, agent);
    invoke(store, 'run.end', { goalId: g, runId, outcome: 'succeeded', summary: 'built' }, agent);
    invoke(store, 'reward.add', { goalId: g, runId, score: 0.5, comment: 'fine' }, human, signed(store));
    invoke(store, 'gate.approve', { goalId: g, gateId: 'prod', note: 'ok' }, human, signed(store));
    // Different tails: some goals have events after their last snapshot, one has an open run.
    for (let i = 0; i < n * 3; i++)
      invoke(store, 'todo.update', { goalId: g, todoId: 'ask', note: `note ${i}` }, human);
    if (g === 'gamma') shouldRun(store, { goalId: g, agent: 'codex' }, agent);
  }
  // The index as a listing writes it, and its journal with the entry of the goal created after.
  store.rebuildIndex();
  // A fifth goal that only takes the write made after the damage (its data is not compared).
  invoke(store, 'goal.create', { goalId: SCRATCH, title: 'Scratch' }, human);
  assert.deepEqual(repair(store, { dryRun: true }).findings, [], 'the template is healthy');
  return ws;
}

// ---------------------------------------------------------------------------------------------
// Damage

type Kind = 'flip' | 'truncate' | 'delete';
interface Case {
  no: number;
  kind: Kind;
  /** Relative to `.loopx/`. */
  file: string;
  /** The goal whose files are damaged; undefined for shared files (index, policy, local/). */
  target?: string;
  /** The goal the goal-level commands are asked about. */
  asked: string;
  detail: string;
  /** A fixed truncation offset (negative: from the end) instead of a random one. */
  at?: number;
}

/** A goal's files: its log (twice: the one that matters most) and its cached snapshot. `@` is the writer id. */
function goalFiles(g: string) {
  return [`goals/${g}/events/@.jsonl`, `goals/${g}/events/@.jsonl`, `local/cache/goals/${g}.json`];
}
// `secrets/` is the workspace's folder in the user's config folder (Store.secretsDir), outside .loopx/.
const SHARED = [
  'local/cache/index.json',
  'local/cache/index.log',
  'policy.json',
  'secrets/contract-key',
  'secrets/snapshot-key',
  'local/writer-id',
];

/** Where a case's file is: under `.loopx/`, or (`secrets/...`) in the workspace's secrets folder. */
function caseFile(ws: string, file: string): string {
  if (file.startsWith('secrets/')) return path.join(new Store(ws).secretsDir, file.slice('secrets/'.length));
  return path.join(ws, '.loopx', file.replace('/@.jsonl', `/${templateWriter()}.jsonl`));
}

/** The writer id of the template's clone (each damaged copy starts with it). */
function templateWriter(): string {
  return fs.readFileSync(path.join(template, '.loopx', 'local', 'writer-id'), 'utf8').trim();
}

function makeCases(flips: number, truncations: number): Case[] {
  const cases: Case[] = [];
  const target = (file: string) =>
    /^goals\/([^/]+)\//.exec(file)?.[1] ?? /^local\/cache\/goals\/([^/]+)\.json$/.exec(file)?.[1];
  const choose = () => (random() < 0.7 ? pick(goalFiles(pick(GOALS))) : pick(SHARED));
  for (let i = 0; i < flips; i++) {
    const file = choose();
    cases.push({
      no: cases.length,
      kind: 'flip',
      file,
      target: target(file),
      asked: target(file) ?? pick(GOALS),
      detail: '',
    });
  }
  for (let i = 0; i < truncations; i++) {
    const file = choose();
    cases.push({
      no: cases.length,
      kind: 'truncate',
      file,
      target: target(file),
      asked: target(file) ?? pick(GOALS),
      detail: '',
    });
  }
  // The edges random offsets rarely hit: every file emptied, and the log's last newline cut.
  for (const file of [...goalFiles(pick(GOALS)).slice(1), ...SHARED]) {
    cases.push({
      no: cases.length,
      kind: 'truncate',
      file,
      target: target(file),
      asked: target(file) ?? pick(GOALS),
      detail: '',
      at: 0,
    });
  }
  const g = pick(GOALS);
  cases.push({
    no: cases.length,
    kind: 'truncate',
    file: `goals/${g}/events/@.jsonl`,
    target: g,
    asked: g,
    detail: '',
    at: -1,
  });
  // Every file of the brief's list, deleted, for a goal picked at random.
  for (const file of [
    ...goalFiles(pick(GOALS)).slice(1),
    ...goalFiles(pick(GOALS)).slice(2),
    'local/cache/index.json',
    'local/cache/index.log',
    'policy.json',
    ...SHARED.slice(3),
    'local',
  ]) {
    cases.push({
      no: cases.length,
      kind: 'delete',
      file,
      target: target(file),
      asked: target(file) ?? pick(GOALS),
      detail: '',
    });
  }
  return cases;
}

/** Copies the template and damages it as the case says; returns the workspace. */
function damaged(c: Case): string {
  const ws = tempDir(`loopx-corrupt-${c.no}-`);
  fs.cpSync(template, ws, { recursive: true });
  // The copy is the same workspace on the same machine: it has the template's secrets.
  fs.cpSync(new Store(template).secretsDir, new Store(ws).secretsDir, { recursive: true });
  const file = caseFile(ws, c.file);
  if (c.kind === 'delete') {
    fs.rmSync(file, { recursive: true, force: true });
    c.detail = 'deleted';
    return ws;
  }
  const buf = fs.readFileSync(file);
  if (c.kind === 'flip') {
    const at = Math.floor(random() * buf.length);
    const mask = 1 + Math.floor(random() * 255);
    const was = buf[at]!;
    buf[at] = was ^ mask;
    fs.writeFileSync(file, buf);
    c.detail = `byte ${at} of ${buf.length}: 0x${was.toString(16)} -> 0x${buf[at]!.toString(16)}`;
  } else {
    const at = c.at === undefined ? Math.floor(random() * buf.length) : c.at < 0 ? buf.length + c.at : c.at;
    fs.truncateSync(file, at);
    c.detail = `cut at ${at} of ${buf.length}`;
  }
  return ws;
}

// ---------------------------------------------------------------------------------------------
// Running the commands

type Runner = (ws: string, args: string[]) => Promise<Result>;

/** The CLI in this process (the same code as the built command, without the start-up). */
const inProcess: Runner = (ws, args) =>
  loopxInProcess(['--workspace', ws, '--format', 'json', ...args], { cwd: ws });

/** The built command in its own process. */
const spawned: Runner = (ws, args) =>
  loopx(['--workspace', ws, '--format', 'json', ...args], { cwd: ws, timeoutMs: 60_000 });

const COMMANDS = (asked: string): string[][] => [
  ['status'],
  ['status', '--goal-id', asked],
  ['quota', 'should-run', '--preview', '--goal-id', asked],
  ['verify'],
  ['self-repair'],
  // A write through the damaged store (it needs the writer id, the snapshot key, the policy, the
  // locks and index.json), to a goal of its own.
  ['todo', 'add', '--goal-id', SCRATCH, '--title', 'written after the damage'],
  // A goal created through the damaged store: if it is refused, it must leave no trace.
  ['project_prompt', 'create', '--goal-id', CREATED, '--title', 'created after the damage'],
];

const NAMES_A_FILE =
  /\.loopx\/(goals\/[A-Za-z0-9_-]+\/)?[A-Za-z0-9._-]+|\.loopx\/local\/|\/workspaces\/[0-9a-f]+\/[a-z-]+/;

interface Outcome {
  codes: number[];
  ms: number[];
  repaired: boolean;
}

/** Each file of `dir` with its sha256 (`name:hash`), sorted; none when there is no such folder. */
function filesOf(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .sort()
    .map((n) => `${n}:${sha256(fs.readFileSync(path.join(dir, n)))}`);
}

/** Checks one damaged store end to end; throws with the case in the message. */
async function check(c: Case, runner: Runner): Promise<Outcome> {
  const ws = damaged(c);
  const label = `case ${c.no} (${c.kind} .loopx/${c.file} ${c.detail}; seed ${SEED})`;
  // What must not change: every goal but the damaged one (all goals when a shared file is damaged).
  const others = GOALS.filter((g) => g !== c.target);
  const tpl = new Store(template);
  const expected = new Map(
    others.map((g) => [
      g,
      {
        log: sha256(fs.readFileSync(tpl.logPath(g, templateWriter()))),
        state: canonicalJson(tpl.load(g).state),
      },
    ]),
  );
  const artifactsOf = (root: string, g: string) =>
    filesOf(path.join(root, '.loopx', 'goals', g, 'artifacts'));

  const codes: number[] = [];
  const ms: number[] = [];
  let repairedCode = -1;
  // Every writer's log of the scratch goal (a damaged writer id makes the next write a new writer's).
  const scratchLogs = () => filesOf(path.join(ws, '.loopx', 'goals', SCRATCH, 'events')).join(',');
  for (const args of COMMANDS(c.asked)) {
    const scratchBefore = scratchLogs();
    const r = await runner(ws, args);
    const what = `${label}: loopx ${args.join(' ')}`;
    codes.push(r.code);
    ms.push(r.ms);
    assert.equal(r.signal, null, `${what}: killed by ${r.signal}`);
    assert.ok(
      [0, 3, 5, 6].includes(r.code),
      `${what}: exit ${r.code}, expected 0, 3, 5 or 6\nstderr: ${r.stderr.slice(0, 2000)}`,
    );
    assert.ok(
      !hasStackTrace(r.stderr) && !hasStackTrace(r.stdout),
      `${what}: a stack trace:\n${r.stderr.slice(0, 2000)}`,
    );
    if (r.code !== 0)
      assert.match(
        r.stderr + r.stdout,
        NAMES_A_FILE,
        `${what}: exit ${r.code} without naming a file:\n${r.stderr.slice(0, 1000)}${r.stdout.slice(0, 1000)}`,
      );
    if (r.code === 0 || (r.code === 6 && r.stdout.trim())) {
      // JSON on stdout and nothing else.
      assert.doesNotThrow(
        () => JSON.parse(r.stdout),
        `${what}: stdout is not JSON: ${r.stdout.slice(0, 300)}`,
      );
    }
    if (args[0] === 'status' && args.length === 1 && r.code === 0) {
      // No silent loss: every other goal is listed (not only reported as an error).
      const doc = JSON.parse(r.stdout) as { goals: { id: string }[]; errors: { goal_id: string }[] };
      for (const g of others)
        assert.ok(
          doc.goals.some((x) => x.id === g),
          `${what}: goal ${g} is missing from the list`,
        );
      const listed = new Set([...doc.goals.map((x) => x.id), ...doc.errors.map((x) => x.goal_id)]);
      if (c.target && fs.existsSync(path.join(ws, '.loopx', 'goals', c.target)))
        assert.ok(listed.has(c.target), `${what}: the damaged goal vanished from the list without an error`);
    }
    if (args[0] === 'self-repair') repairedCode = r.code;
    if (args[0] === 'todo' && r.code !== 0) {
      assert.equal(
        scratchLogs(),
        scratchBefore,
        `${what}: the write was refused (exit ${r.code}) but the log changed: an error for an event that was written anyway`,
      );
    }
    if (args[0] === 'project_prompt' && r.code !== 0) {
      assert.ok(
        !fs.existsSync(path.join(ws, '.loopx', 'goals', CREATED)),
        `${what}: the refused create left a goal folder behind (a goal that never existed, listed as broken from now on)`,
      );
    }
  }

  // After self-repair.
  const store = new Store(ws);
  if (repairedCode === 0) {
    // It said it fixed everything: a second look finds nothing and every log verifies.
    const again = repair(store, { dryRun: true });
    assert.deepEqual(
      again.findings,
      [],
      `${label}: self-repair exited 0, yet a second repair finds ${JSON.stringify(again.findings)}`,
    );
    for (const g of store.goalIds()) {
      for (const { parsed } of store.readLogs(g))
        assert.equal(parsed.torn, undefined, `${label}: goal ${g} still has a torn tail after self-repair`);
      assert.deepEqual(store.load(g).warnings, [], `${label}: goal ${g} still warns after self-repair`);
    }
    const v = await runner(ws, ['verify']);
    assert.equal(
      v.code,
      0,
      `${label}: verify after a successful self-repair: ${v.stdout.slice(0, 500)}${v.stderr.slice(0, 500)}`,
    );
  }
  // The other goals: the same log bytes, the same artifacts, the same state, and readable.
  for (const g of others) {
    assert.equal(
      sha256(fs.readFileSync(store.logPath(g, templateWriter()))),
      expected.get(g)!.log,
      `${label}: goal ${g}'s log changed`,
    );
    assert.deepEqual(artifactsOf(ws, g), artifactsOf(template, g), `${label}: goal ${g}'s artifacts changed`);
    assert.equal(
      canonicalJson(store.load(g).state),
      expected.get(g)!.state,
      `${label}: goal ${g}'s state changed`,
    );
  }
  if (c.target) {
    // A damaged goal must not make the others unreadable through the CLI.
    const other = others[c.no % others.length]!;
    const r = await runner(ws, ['status', '--goal-id', other]);
    assert.equal(
      r.code,
      0,
      `${label}: status --goal-id ${other} (an undamaged goal) failed: ${r.stderr.slice(0, 1000)}`,
    );
    assert.equal((JSON.parse(r.stdout) as { id: string }).id, other);
  }
  return { codes, ms, repaired: repairedCode === 0 };
}

// ---------------------------------------------------------------------------------------------

describe('corruption: damaged files in .loopx/', { concurrency: 2 }, () => {
  before(async () => {
    template = await buildTemplate();
  });

  it(
    'in-process CLI: 60 byte flips, 30 random and 7 edge truncations, every file deleted; clear errors or repaired, other goals intact',
    { timeout: 180_000 },
    async (t) => {
      const budget = new Budget(90_000);
      const cases = makeCases(60, 30);
      const tally = { flip: 0, truncate: 0, delete: 0 };
      const byCode: Record<string, number> = {};
      let repaired = 0;
      let done = 0;
      const t0 = performance.now();
      for (const c of cases) {
        if (budget.over) break;
        const o = await check(c, inProcess);
        tally[c.kind]++;
        done++;
        if (o.repaired) repaired++;
        for (const code of o.codes) byCode[code] = (byCode[code] ?? 0) + 1;
      }
      assert.ok(
        done >= Math.min(cases.length, 40),
        `only ${done} of ${cases.length} cases ran within the time budget`,
      );
      figure(
        t,
        `corruption (in-process, seed ${SEED}): ${done} damaged stores (${tally.flip} flips, ${tally.truncate} truncations, ${tally.delete} deletions) x ${COMMANDS('x').length} commands in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
      );
      figure(
        t,
        `corruption (in-process): exit codes ${JSON.stringify(byCode)}; self-repair fixed everything in ${repaired} of ${done}`,
      );
    },
  );

  it(
    'the built command: 9 damaged stores (flips, truncations, deletions), the same guarantees',
    { timeout: 180_000 },
    async (t) => {
      requireBuilt();
      const budget = new Budget(90_000);
      const all = makeCases(3, 2);
      const cases = [
        ...all.filter((c) => c.kind !== 'delete' && c.at === undefined),
        ...all.filter((c) => c.at !== undefined && /writer-id|events\//.test(c.file)).slice(-2),
        ...all.filter((c) => c.kind === 'delete' && /events\/|^local$/.test(c.file)),
      ];
      const byCode: Record<string, number> = {};
      const t0 = performance.now();
      const results = await pool(cases, 3, async (c) => (budget.over ? undefined : check(c, spawned)));
      const done = results.filter(Boolean).length;
      for (const o of results) for (const code of o?.codes ?? []) byCode[code] = (byCode[code] ?? 0) + 1;
      const ms = results.flatMap((o) => o?.ms ?? []).sort((a, b) => a - b);
      assert.ok(done >= 6, `only ${done} of ${cases.length} cases ran within the time budget`);
      figure(
        t,
        `corruption (built CLI, seed ${SEED}): ${done} damaged stores x ${COMMANDS('x').length} commands in ${((performance.now() - t0) / 1000).toFixed(1)} s (median command ${ms[Math.floor(ms.length / 2)]!.toFixed(0)} ms, 3 at a time); exit codes ${JSON.stringify(byCode)}`,
      );
    },
  );
});
