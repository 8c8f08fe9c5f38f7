/**
 * Helpers for the `loopx drive` tests: a git workspace with a goal, a runtime with no model (a
 * script that runs its contract's commands, then its finish command: what a well-behaved agent
 * does, in a few milliseconds), a person's signed policy declaring it, and `loopx drive` as a
 * real process the tests can watch, signal and kill.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { DriveStatus } from '../../src/core/views/drive-status-doc';
import type { GoalState, LoopxEvent } from '../../src/core/index';
import { Store } from '../../src/core/store/store';
import { BIN, cleanEnv, json, loopx, loopxAsPerson, ok, tempDir, type Result } from './cli';
import { z } from 'zod';

/**
 * The model-less runtime: reads the contract file it is given, runs each listed command with the
 * shell, then the finish command. `SCRIPT_RUNTIME_MARK` (if set) names a file it appends its pid to,
 * so a test can tell that (and how often) it was started.
 */
export const SCRIPT_RUNTIME = `
const { execSync } = require('node:child_process');
const fs = require('node:fs');
if (process.env.SCRIPT_RUNTIME_MARK) fs.appendFileSync(process.env.SCRIPT_RUNTIME_MARK, process.pid + '\\n');
const doc = JSON.parse(fs.readFileSync(process.argv[1], 'utf8'));
const c = doc.interaction_contract;
let failed = 0;
for (const a of c.cli_channel.next_cli_actions) {
  try { execSync(a, { stdio: 'inherit', shell: '/bin/sh' }); } catch { failed++; }
}
if (c.agent_channel.finish_with) execSync(c.agent_channel.finish_with, { stdio: 'inherit', shell: '/bin/sh' });
process.exit(failed ? 1 : 0);
`;

/** The policy's declaration of the model-less runtime (`node -e SCRIPT {contract_file}`). */
export function scriptRuntime(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { command: [process.execPath, '-e', SCRIPT_RUNTIME, '{contract_file}'], ...extra };
}

export interface DriveWorkspace {
  ws: string;
  env: Record<string, string>;
  goal: string;
  run(...args: string[]): Promise<Result>;
  asPerson(...args: string[]): Promise<Result>;
  store(): Store;
  state(): GoalState;
  events(): LoopxEvent[];
  /** `loopx drive status --json`. */
  status(): Promise<DriveStatus>;
  /** policy.json's `runtimes` set to `runtimes` and signed by the person (sign: false leaves it unsigned). */
  setRuntimes(runtimes: Record<string, unknown>, o?: { sign?: boolean }): Promise<void>;
}

function git(ws: string, ...args: string[]) {
  const r = spawnSync('git', ['-c', 'user.name=dev', '-c', 'user.email=dev@example.com', ...args], {
    cwd: ws,
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

/** A git repository with one commit, `loopx init`, and the goal `goal` (no todos yet). */
export async function driveWorkspace(name: string, goal = 'g'): Promise<DriveWorkspace> {
  const ws = tempDir(`lxd-${name}-`);
  const env = { LOOPX_CONFIG_DIR: tempDir(`lxd-${name}-config-`) };
  fs.writeFileSync(path.join(ws, 'README.md'), `# ${name}\n`);
  git(ws, 'init', '-q', '-b', 'main');
  git(ws, 'add', '.');
  git(ws, 'commit', '-q', '-m', 'initial');
  const run = (...args: string[]) => loopx(args, { cwd: ws, env });
  const asPerson = (...args: string[]) => loopxAsPerson(args, { cwd: ws, env });
  ok(await run('init'));
  ok(await run('goal', 'create', '--goal-id', goal, '--title', `Goal of ${name}`));
  // The workspace's first commit of .loopx/, as a team shares it.
  git(ws, 'add', '.');
  git(ws, 'commit', '-q', '-m', 'loopx init');
  const store = () => Store.open(ws, { configDir: env.LOOPX_CONFIG_DIR });
  return {
    ws,
    env,
    goal,
    run,
    asPerson,
    store,
    state: () => store().load(goal).state,
    events: () => store().readLog(goal).events,
    status: async () =>
      json(
        await run('--json', 'drive', 'status'),
        z.object({ schema: z.literal('loopx.drive-status/1') }).passthrough(),
      ) as unknown as DriveStatus,
    async setRuntimes(runtimes, o = {}) {
      const file = path.join(ws, '.loopx', 'policy.json');
      const policy = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
      fs.writeFileSync(file, JSON.stringify({ ...policy, runtimes }, null, 2) + '\n');
      if (o.sign !== false) ok(await asPerson('policy', 'sign'));
    },
  };
}

export interface DriverProcess {
  child: ChildProcess;
  /** Everything it wrote to stderr so far (one line per lane step). */
  log(): string;
  /** Resolves with its exit code. */
  exited: Promise<number | null>;
  /** SIGTERM and wait. */
  stop(): Promise<number | null>;
}

/** `loopx drive [args]` as a process of its own (its own process group, as a service runs it). */
export function startDriver(
  w: Pick<DriveWorkspace, 'ws' | 'env'>,
  args: string[] = [],
  extraEnv: Record<string, string> = {},
): DriverProcess {
  const child = spawn(process.execPath, [BIN, 'drive', ...args], {
    cwd: w.ws,
    env: cleanEnv({ ...w.env, ...extraEnv }),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let err = '';
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (err += c));
  child.stdout!.resume();
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    log: () => err,
    exited,
    async stop() {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

/** Waits until `check` returns a value (polling every 50 ms), or fails after `timeoutMs` with `what`. */
export async function until<T>(
  what: string,
  check: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Adds a command todo (as a person's script would), returning nothing. */
export async function addTodo(
  w: DriveWorkspace,
  id: string,
  action: string,
  ...more: string[]
): Promise<void> {
  ok(
    await w.run(
      'todo',
      'add',
      '--goal-id',
      w.goal,
      '--todo-id',
      id,
      '--title',
      `Todo ${id}`,
      '--action',
      action,
      ...more,
    ),
  );
}

/** The lines of `file` in the workspace ([] when it does not exist). */
export function linesOf(w: Pick<DriveWorkspace, 'ws'>, file: string): string[] {
  const p = path.join(w.ws, file);
  return fs.existsSync(p) ? fs.readFileSync(p, 'utf8').split('\n').filter(Boolean) : [];
}

export { git };

/** CPU time (user + system) a process has used so far, in ms (Linux /proc; 10 ms steps). */
export function cpuMsOf(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
}
