/**
 * Shared pieces of the reliability and security suite: temp folders, the BUILT `loopx` command
 * spawned as a script would (stdin a pipe, no LOOPX_* from the parent), tree hashes to prove
 * that nothing changed, stack-trace detection, and a time budget every loop is bounded by.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { TestContext } from 'node:test';
import { tryLock } from '../../src/core/store/lock';

export const REPO = path.resolve(__dirname, '..', '..');
export const BIN = path.join(REPO, 'bin', 'loopx.js');
export const WRITER = path.join(REPO, 'test', 'fixtures', 'writer.ts');

// ---------------------------------------------------------------------------------------------
// Writer processes

/** Writer processes still running: `killWriters` (from an `after` hook) ends them. */
const writers = new Set<ChildProcess>();

export function killWriters(): void {
  for (const c of writers) c.kill('SIGKILL');
}

export interface LoopWriter {
  child: ChildProcess;
  /** Its exit, with what it wrote on stderr. */
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
}

/**
 * Starts `test/fixtures/writer.ts loop` (todos added for ever through `invoke`, like the CLI) on
 * goal `goalId` of `ws` as writer `name`, and calls `onAck` with each todo it acknowledged.
 */
export function loopWriter(
  ws: string,
  goalId: string,
  name: string,
  onAck: (todoId: string) => void,
): LoopWriter {
  const child = spawn(process.execPath, ['--import', 'tsx', WRITER, 'loop', ws, goalId, name], {
    cwd: REPO,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  writers.add(child);
  let buf = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    buf += chunk;
    let nl: number;
    while ((nl = buf.indexOf('\n')) !== -1) {
      const m = /^ack (\S+)$/.exec(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
      if (m) onAck(m[1]!);
    }
  });
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>(
    (resolve, reject) => {
      child.on('error', reject);
      child.on('close', (code, signal) => {
        writers.delete(child);
        resolve({ code, signal, stderr });
      });
    },
  );
  return { child, done };
}

/** The CLI tests run `dist/cli.js`: fail at once, clearly, when it is missing. */
export function requireBuilt(): void {
  const dist = path.join(REPO, 'dist', 'cli.js');
  if (!fs.existsSync(dist))
    throw new Error(`${dist} is missing: run \`npm run build\` first (npm run test:reliability does)`);
}

// ---------------------------------------------------------------------------------------------
// Temp folders

const created: string[] = [];

/** A fresh temp folder (realpath, so paths compare equal to what the CLI prints). */
export function tempDir(prefix = 'loopx-rel-'): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  created.push(dir);
  return dir;
}

export function removeTempDirs(): void {
  for (const dir of created.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
}

// ---------------------------------------------------------------------------------------------
// Files

export const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

/** sha256 of every file under `dir` (relative path -> hash; folders as 'dir'), skipping the relative paths in `skip`. */
export function hashTree(dir: string, skip: string[] = []): Record<string, string> {
  const out: Record<string, string> = {};
  (function walk(d: string) {
    for (const e of fs.readdirSync(d, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const p = path.join(d, e.name);
      const rel = path.relative(dir, p);
      if (skip.includes(rel)) continue;
      if (e.isDirectory()) {
        out[rel + '/'] = 'dir';
        walk(p);
      } else out[rel] = e.isFile() ? sha256(fs.readFileSync(p)) : 'special';
    }
  })(dir);
  return out;
}

export { listTree } from './cli';

// ---------------------------------------------------------------------------------------------
// The command

export interface Result {
  code: number;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** The parent's environment without LOOPX_* (a stray LOOPX_AGENT would change the actor). */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!k.startsWith('LOOPX_') || k === 'LOOPX_CONFIG_DIR') env[k] = v;
  return { ...env, NO_COLOR: '1', FORCE_COLOR: '0', ...extra };
}

export interface RunOptions {
  cwd: string;
  env?: Record<string, string>;
  input?: string | Buffer;
  timeoutMs?: number;
}

/** Spawns `file args...` and collects everything; never rejects for a non-zero exit. */
export function spawnCollect(file: string, args: string[], o: RunOptions): Promise<Result> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { cwd: o.cwd, env: cleanEnv(o.env), stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    const timer = setTimeout(() => child.kill('SIGKILL'), o.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({
        code: code ?? -1,
        signal,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        ms: performance.now() - started,
      });
    });
    child.stdin.on('error', () => {
      /* the command may exit before reading all of its input */
    });
    child.stdin.end(o.input ?? '');
  });
}

/** `loopx args...` (the built command) with stdin a pipe: to the CLI, a script or an agent. */
export function loopx(args: string[], o: RunOptions): Promise<Result> {
  return spawnCollect(process.execPath, [BIN, ...args], o);
}

/** Runs many calls, `parallel` at a time, results in order. */
export async function pool<T, R>(
  items: readonly T[],
  parallel: number,
  fn: (item: T, i: number) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  async function worker() {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!, i);
    }
  }
  await Promise.all(Array.from({ length: Math.min(parallel, items.length) }, worker));
  return results;
}

/** A V8 stack frame (`    at fn (file:1:2)`) or the CLI's catch-all for bugs. */
export function hasStackTrace(text: string): boolean {
  return /^\s+at .+(:\d+:\d+\)?|\(native\)|<anonymous>)$/m.test(text) || /unexpected error/.test(text);
}

// ---------------------------------------------------------------------------------------------
// Time and figures

/** A deadline every loop checks, so a loaded machine makes a test shorter, never endless. */
export class Budget {
  private readonly end: number;
  constructor(readonly ms: number) {
    this.end = Date.now() + ms;
  }
  get left(): number {
    return Math.max(0, this.end - Date.now());
  }
  get over(): boolean {
    return Date.now() >= this.end;
  }
}

/** Prints a figure in the test report (`# ...` lines under the test), for docs/RELIABILITY.md. */
export function figure(t: TestContext, text: string): void {
  t.diagnostic(text);
}

export const rssMb = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;

/** VmRSS and VmHWM (peak) of a process, in bytes (Linux). */
export function procMemory(pid: number): { rss: number; hwm: number } {
  const text = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) =>
    Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN) * 1024;
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * The CLI in this process: `run` from src/cli/main.ts, exactly as bin/loopx.js calls it, without
 * the process start-up (so a matrix of hundreds of calls takes seconds). `run` must never throw;
 * if it did, that is reported as the crash it would be in the real command.
 */
const configEnv = (): Record<string, string> =>
  process.env.LOOPX_CONFIG_DIR ? { LOOPX_CONFIG_DIR: process.env.LOOPX_CONFIG_DIR } : {};

export async function loopxInProcess(
  args: string[],
  o: { cwd: string; env?: Record<string, string> },
): Promise<Result> {
  const { run } = await import('../../src/cli/main');
  let stdout = '';
  let stderr = '';
  const t0 = performance.now();
  let code: number;
  try {
    code = await run(args, {
      stdout: (s) => (stdout += s),
      stderr: (s) => (stderr += s),
      // The call's environment, with the run's own LoopX config folder, as a spawned CLI gets it.
      env: { ...configEnv(), ...o.env },
      cwd: o.cwd,
    });
  } catch (e) {
    code = 1;
    stderr += `loopx: unexpected error: ${(e as Error)?.stack ?? String(e)}`;
  }
  return { code, signal: null, stdout, stderr, ms: performance.now() - t0 };
}

/** C0/C1 controls other than newline and tab: what would steer a terminal if echoed raw. */
export const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

/** Whether some process holds the lock at `file` now (the kernel lock: a file alone is no lock). */
export function lockHeld(file: string): boolean {
  if (!fs.existsSync(file)) return false;
  const release = tryLock(file);
  release?.();
  return release === undefined;
}

/** The todo ids of goal `goalId`, after `verify` found every log of the workspace one valid chain. */
export async function verifiedTodoIds(ws: string, goalId = 'g'): Promise<string[]> {
  const verify = await loopx(['verify'], { cwd: ws });
  assert.equal(verify.code, 0, verify.stdout + verify.stderr);
  const status = await loopx(['status', '--goal-id', goalId, '--json'], { cwd: ws });
  assert.equal(status.code, 0, status.stderr);
  return (JSON.parse(status.stdout) as { todos: { id: string }[] }).todos.map((t) => t.id);
}

/** Resolves once `n` more acknowledgements have come in (or fails after `ms`). */
export function progress(count: () => number, n: number, ms: number, what: string): Promise<void> {
  const target = count() + n;
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    const tick = setInterval(() => {
      if (count() >= target) {
        clearInterval(tick);
        resolve();
      } else if (Date.now() - t0 > ms) {
        clearInterval(tick);
        reject(new Error(`${what}: no progress in ${ms} ms (${count()} of ${target} acknowledgements)`));
      }
    }, 5);
  });
}

/** Stops or shifts the built CLI at exact points of the write protocol (see the file). */
export const FAULT_PRELOAD = path.join(REPO, 'test', 'fixtures', 'fault-preload.cjs');

export interface Running {
  pid: number;
  /** Its exit code, what it wrote on stderr, and when it exited (Date.now()). */
  exited: Promise<{ code: number | null; stderr: string; at: number }>;
}

/**
 * Starts the built `loopx args...` with the fault preload (LOOPX_FAULT_* in `env` say where it
 * stops); `wrap` runs it under another command (`unshare --pid --fork`).
 */
export function startFaulted(
  args: string[],
  cwd: string,
  env: Record<string, string>,
  wrap: string[] = [],
): Running {
  const cmd = [...wrap, process.execPath, '--require', FAULT_PRELOAD, BIN, ...args];
  const child = spawn(cmd[0]!, cmd.slice(1), {
    cwd,
    env: cleanEnv(env),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c));
  const exited = new Promise<{ code: number | null; stderr: string; at: number }>((resolve) =>
    child.on('close', (code) => resolve({ code, stderr, at: Date.now() })),
  );
  return { pid: child.pid!, exited };
}

/** Waits for `file` to appear (a stopped writer's marker). */
export async function waitForFile(file: string, ms = 20_000): Promise<void> {
  const t = Date.now();
  while (!fs.existsSync(file)) {
    if (Date.now() - t > ms) throw new Error(`${file} did not appear in ${ms} ms`);
    await sleep(10);
  }
}

/** A writer's end: who it was and how it exited. */
export type WriterEnd = { name: string; code: number | null; signal: NodeJS.Signals | null; stderr: string };

/**
 * Kills every writer still running and checks that each one that ended (`finished` too) ended
 * by a kill, never on its own (an error exit is a refused or failed write).
 */
export async function endWriters(
  writers: (LoopWriter & { name: string })[],
  finished: WriterEnd[],
): Promise<void> {
  for (const w of writers) w.child.kill('SIGKILL');
  for (const w of writers) finished.push({ name: w.name, ...(await w.done) });
  for (const f of finished)
    assert.equal(
      f.signal,
      'SIGKILL',
      `writer ${f.name} failed on its own (${f.code}): ${f.stderr.slice(0, 2000)}`,
    );
}
