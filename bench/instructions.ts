/**
 * `npm run bench:instructions`: what each CLI call executes, counted in instructions under
 * valgrind's callgrind, which do not move with the machine's load (the wall-clock ratios of
 * `npm run bench` do). The profile behind docs/PERFORMANCE.md's "what remains".
 *
 * Each call runs as `node bin/loopx.js` in the environment the shim gives the CLI (no
 * NODE_EXTRA_CA_CERTS; valgrind would count the shim's `sh` instead of Node), on a 1-goal bench
 * store, after two runs that make the code cache and the snapshot current. `node -e 0` in the same
 * environment is the floor; `loopx --version` is the CLI's load and start-up with no work.
 * Prints a table and one JSON line, and writes bench/instructions.json.
 *
 *   node --import tsx bench/instructions.ts
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { childEnv, FLOOR, ROOT, revision } from './measure';
import { agentEnv, contractForTrue, hookPayload, makeStore } from './stores';

const BIN = path.join(ROOT, 'bin', 'loopx.js');
const OUT = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-callgrind-'));
process.on('exit', () => fs.rmSync(OUT, { recursive: true, force: true }));

if (spawnSync('valgrind', ['--version']).status !== 0) {
  console.error('bench:instructions: valgrind is not installed (Debian: apt-get install valgrind)');
  process.exit(2);
}

/** The CLI's code cache goes to a folder of this run's own (bin/loopx.js honours XDG_CACHE_HOME). */
const CACHE = path.join(OUT, 'cache');
/** The shim's environment (what FLOOR's run lacks, the call lacks too), as the agent. */
const env = () => childEnv({ env: { ...agentEnv, XDG_CACHE_HOME: CACHE }, without: FLOOR.without });

interface Call {
  name: string;
  /** Node's arguments, or a function making them before each run (a fresh contract for exec). */
  args: string[] | (() => string[]);
  input?: string;
}

/** Runs `node args` (under callgrind when `outFile` is given); a non-zero exit throws. */
function node(cwd: string, args: string[], input?: string, outFile?: string): void {
  const argv = outFile
    ? ['--tool=callgrind', `--callgrind-out-file=${outFile}`, process.execPath, ...args]
    : args;
  const r = spawnSync(outFile ? 'valgrind' : process.execPath, argv, {
    cwd,
    env: env(),
    input: input ?? '',
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.status !== 0)
    throw new Error(
      `node ${args.join(' ')}${outFile ? ' under callgrind' : ''} exited ${r.status}: ${r.stderr.slice(-400)}`,
    );
}

/** Millions of instructions of one run of `node args` under callgrind (every thread). */
function instructions(cwd: string, args: string[], input?: string): number {
  const file = path.join(OUT, `cg-${Date.now()}-${Math.random().toString(36).slice(2)}.out`);
  node(cwd, args, input, file);
  const total = /^(?:summary|totals): (\d+)/m.exec(fs.readFileSync(file, 'utf8'));
  if (!total) throw new Error(`no total in ${file}`);
  return Number(total[1]) / 1e6;
}

const b = makeStore(1);
const { dir, goal } = b;
const execArgs = () => {
  const { contract, todoId } = contractForTrue(b);
  return [BIN, 'exec', '--contract', contract.interaction_contract.id!, '--todo', todoId, '--', 'true'];
};
// The agent's run open, as should-run's row says ("open run"): it polls that run.
contractForTrue(b);
const shouldRun = [BIN, '--json', 'quota', 'should-run', '--goal-id', goal];
const calls: Call[] = [
  { name: 'node -e 0 (the floor)', args: ['-e', '0'] },
  { name: 'loopx --version (load and start-up)', args: [BIN, '--version'] },
  { name: 'quota should-run --goal-id (open run)', args: shouldRun },
  { name: 'status --goal-id --json', args: [BIN, 'status', '--goal-id', goal, '--json'] },
  { name: 'hook pre-tool-use (Bash ls)', args: [BIN, 'hook', 'pre-tool-use'], input: hookPayload(dir) },
  {
    name: 'todo add --goal-id --title',
    args: [BIN, 'todo', 'add', '--goal-id', goal, '--title', 'bench todo'],
  },
  { name: 'exec --contract --todo -- true', args: execArgs },
];

// The code cache is made by the first call that finds none, with what that call compiled: a
// should-run makes it, as an agent's first call of a turn would.
node(dir, shouldRun);
const rows: { name: string; millions: number; vsFloor: number }[] = [];
let floor = 0;
for (const c of calls) {
  const args = () => (typeof c.args === 'function' ? c.args() : c.args);
  for (let i = 0; i < 2; i++) node(dir, args(), c.input);
  const m = instructions(dir, args(), c.input);
  if (!floor) floor = m;
  rows.push({ name: c.name, millions: Math.round(m), vsFloor: Math.round((m / floor) * 100) / 100 });
}

const w = Math.max(...rows.map((r) => r.name.length));
console.log(`| ${'call'.padEnd(w)} | instructions | vs floor |`);
console.log(`| ${'-'.repeat(w)} | ------------ | -------- |`);
for (const r of rows)
  console.log(
    `| ${r.name.padEnd(w)} | ${`${r.millions} M`.padStart(12)} | ${`${r.vsFloor.toFixed(2)}x`.padStart(8)} |`,
  );
const doc = {
  schema: 'loopx.bench-instructions/1',
  node: process.version,
  started: new Date().toISOString(),
  revision: revision(),
  rows,
};
fs.writeFileSync(path.join(ROOT, 'bench', 'instructions.json'), `${JSON.stringify(doc, null, 2)}\n`);
console.log(`\n${JSON.stringify(doc)}`);
