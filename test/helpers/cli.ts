/**
 * Helpers for the CLI tests: they spawn the BUILT command (`node bin/loopx.js`, which loads
 * dist/cli.js) in a temp folder, with an environment free of the parent's LOOPX_* variables.
 * A person at a terminal is simulated with util-linux `script`, which gives the command a pseudo-TTY.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { z } from 'zod';
import { OUTPUT_SCHEMAS } from '../../src/core/views/output-schemas';
import { writerLog } from './log-kit';

export const REPO = path.resolve(__dirname, '..', '..');
export const BIN = path.join(REPO, 'bin', 'loopx.js');
const DIST = path.join(REPO, 'dist', 'cli.js');

/** Fails early and clearly when dist/ is missing; warns when it is older than the sources it is built from. */
function checkBuilt() {
  if (!fs.existsSync(DIST)) throw new Error(`${DIST} is missing: run \`npm run build\` before the CLI tests`);
  const built = fs.statSync(DIST).mtimeMs;
  const newer: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (p.endsWith('.ts') && fs.statSync(p).mtimeMs > built) newer.push(path.relative(REPO, p));
    }
  };
  // What dist/cli.js is bundled from.
  for (const d of ['cli', 'core', 'server'])
    if (fs.existsSync(path.join(REPO, 'src', d))) walk(path.join(REPO, 'src', d));
  // A warning, not a failure: the tests still say what the built command does.
  if (newer.length)
    process.stderr.write(
      `warning: dist/cli.js is older than ${newer.slice(0, 3).join(', ')}: run \`npm run build\` to test the current sources\n`,
    );
}
checkBuilt();

// ---------------------------------------------------------------------------------------------
// Temp folders

const created: string[] = [];

/** A fresh temp folder (realpath, so it compares equal to what the CLI prints). */
export function tempDir(prefix = 'loopx-cli-'): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  created.push(dir);
  return dir;
}

export function removeTempDirs(): void {
  for (const dir of created.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
}

/** Every path under `dir` (relative), skipping folders named in `skip`. */
export function listTree(dir: string, skip: string[] = []): string[] {
  const out: string[] = [];
  (function walk(d: string) {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      const rel = path.relative(dir, p);
      if (skip.includes(rel)) continue;
      out.push(rel);
      if (e.isDirectory()) walk(p);
    }
  })(dir);
  return out.sort();
}

// ---------------------------------------------------------------------------------------------
// Running the command

export interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  cwd: string;
  /** Added to the clean environment (LOOPX_* from the parent never leak in). */
  env?: Record<string, string>;
  /** Standard input (a pipe, so never a TTY). */
  input?: string;
  /** Written to file descriptor 3 of the child (a person's script passing --passphrase-fd 3). */
  fd3?: string;
  timeoutMs?: number;
}

/** The parent's environment without any LOOPX_* variable, plus `extra`. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!k.startsWith('LOOPX_') || k === 'LOOPX_CONFIG_DIR') env[k] = v;
  return { ...env, NO_COLOR: '1', FORCE_COLOR: '0', ...extra };
}

/**
 * Runs `loopx args...` with stdin a pipe: to the CLI, the caller is a script or an agent.
 * Asynchronous, so that tests of different groups overlap (each spawn is mostly CPU: two cores).
 * `onStdout` sees the output as it comes.
 */
export async function loopx(
  args: string[],
  o: RunOptions & { onStdout?: (chunk: string) => void },
): Promise<Result> {
  const r = await spawnCollect(process.execPath, [BIN, ...args], o);
  checkPrintedDocument(r.stdout, `loopx ${args.join(' ')}`);
  return r;
}

function spawnCollect(
  file: string,
  args: string[],
  o: RunOptions & { onStdout?: (chunk: string) => void },
): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      cwd: o.cwd,
      env: cleanEnv(o.env),
      stdio: o.fd3 === undefined ? ['pipe', 'pipe', 'pipe'] : ['pipe', 'pipe', 'pipe', 'pipe'],
      // A session of its own: no controlling terminal, as an agent's tool call has none (run from
      // a developer's terminal, the CLI would otherwise ask there for a passphrase).
      detached: true,
    });
    if (o.fd3 !== undefined) (child.stdio[3] as NodeJS.WritableStream).end(o.fd3);
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      stdout += c;
      o.onStdout?.(c);
    });
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), o.timeoutMs ?? 30_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? (signal ? -1 : -2), stdout, stderr });
    });
    // A child that ends before reading its stdin (completion, --help) is not the test's failure.
    child.stdin.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code !== 'EPIPE') reject(e);
    });
    child.stdin.end(o.input ?? '');
  });
}

/** Runs a shell command line (`/bin/sh -c`), as an executor that `eval`s a contract action does. */
export function sh(command: string, o: RunOptions): Promise<Result> {
  return spawnCollect('/bin/sh', ['-c', command], o);
}

let shim: string | undefined;
/** A folder holding a `loopx` that runs the built CLI, to put first on PATH (as an installed CLI). */
export function loopxOnPath(): string {
  if (!shim) {
    shim = tempDir('loopx-bin-');
    fs.writeFileSync(
      path.join(shim, 'loopx'),
      `#!/bin/sh\nexec ${shq(process.execPath)} ${shq(BIN)} "$@"\n`,
      { mode: 0o755 },
    );
  }
  return shim;
}

/** Runs many invocations, a few at a time (this machine has two cores). Results in order. */
export async function loopxMany(calls: { args: string[]; o: RunOptions }[], parallel = 3): Promise<Result[]> {
  const results: Result[] = new Array(calls.length);
  let next = 0;
  async function worker() {
    while (next < calls.length) {
      const i = next++;
      results[i] = await loopx(calls[i]!.args, calls[i]!.o);
    }
  }
  await Promise.all(Array.from({ length: Math.min(parallel, calls.length) }, worker));
  return results;
}

/** Quotes a word for a POSIX shell. */
export function shq(s: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** The passphrase of the test person's key (see `ensurePersonKey`). */
export const PASSPHRASE = 'correct horse battery';

/**
 * Makes the person's terminal key once per config folder (`loopx key create`, passphrase on fd 3),
 * as a person does before their first decision.
 */
export async function ensurePersonKey(o: RunOptions): Promise<void> {
  const dir = o.env?.LOOPX_CONFIG_DIR ?? process.env.LOOPX_CONFIG_DIR;
  if (!dir) throw new Error('the tests need LOOPX_CONFIG_DIR (scripts/test/run-suite.mjs sets it)');
  if (fs.existsSync(path.join(dir, 'keys')) && fs.readdirSync(path.join(dir, 'keys')).length > 0) return;
  ok(
    await loopx(['key', 'create', '--name', 'alice', '--passphrase-fd', '3'], {
      ...o,
      fd3: `${PASSPHRASE}\n`,
    }),
  );
}

/**
 * Runs `loopx args...` as a person at a terminal: `script -qec "<command>" /dev/null` gives it a
 * pseudo-terminal, and the person types the passphrase when asked (`typed`, default the right
 * one). The terminal merges stdout and stderr into `output` (CRs removed).
 */
export async function loopxTty(
  args: string[],
  o: RunOptions & { typed?: string },
): Promise<{ code: number; output: string }> {
  await ensurePersonKey(o);
  const command = [process.execPath, BIN, ...args].map(shq).join(' ');
  const r = await spawnCollect('script', ['-qec', command, '/dev/null'], {
    ...o,
    input: `${o.typed ?? PASSPHRASE}\n`,
  });
  return { code: r.code, output: (r.stdout + r.stderr).replace(/\r/g, '') };
}

/** Runs `loopx args...` as a person's own script: the passphrase on fd 3 (`--passphrase-fd 3`). */
export async function loopxAsPerson(args: string[], o: RunOptions): Promise<Result> {
  await ensurePersonKey(o);
  return loopx(['--passphrase-fd', '3', ...args], { ...o, fd3: `${PASSPHRASE}\n` });
}

// ---------------------------------------------------------------------------------------------
// Assertions

/**
 * Every document the CLI prints is checked against its schema (OUTPUT_SCHEMAS,
 * src/core/views/output-schemas.ts, whose JSON Schemas are in schemas/): when stdout is one JSON
 * object with a `loopx.<name>/<version>` id in `schema`, the schema of that id must exist, accept
 * the document, and describe each of its fields (a field it would drop is one nobody documented).
 * `loopx` runs it on every call, `json` on what it parses; any other output is left alone.
 */
export function checkPrintedDocument(stdout: string, what: string): void {
  const text = stdout.trim();
  if (!text.startsWith('{')) return;
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return;
  }
  const id = (raw as { schema?: unknown }).schema;
  if (typeof id !== 'string' || !/^loopx\.[a-z][a-z0-9-]*\/[0-9]+$/.test(id)) return;
  const schema = OUTPUT_SCHEMAS[id];
  assert.ok(
    schema,
    `${what} printed a ${id} document, and OUTPUT_SCHEMAS (src/core/views/output-schemas.ts) has no schema for ${id}`,
  );
  const parsed = schema.safeParse(raw);
  assert.ok(
    parsed.success,
    `${what} printed a ${id} document that its schema (OUTPUT_SCHEMAS, src/core/views/output-schemas.ts) does not accept:\n` +
      `${parsed.success ? '' : z.prettifyError(parsed.error)}\n--- stdout\n${stdout.slice(0, 2000)}`,
  );
  const unknown = undescribed(raw, parsed.data, '');
  assert.deepEqual(
    unknown,
    [],
    `${what} printed fields of a ${id} document that its schema (OUTPUT_SCHEMAS, src/core/views/output-schemas.ts) does not describe: ${unknown.join(', ')}`,
  );
}

/** The paths of the fields of `raw` that parsing dropped (zod's objects strip what they do not know). */
function undescribed(raw: unknown, parsed: unknown, at: string): string[] {
  if (Array.isArray(raw)) {
    const out = Array.isArray(parsed) ? parsed : [];
    return raw.flatMap((v, i) => undescribed(v, out[i], `${at}[${i}]`));
  }
  if (!raw || typeof raw !== 'object' || !parsed || typeof parsed !== 'object') return [];
  const kept = parsed as Record<string, unknown>;
  return Object.entries(raw).flatMap(([k, v]) => {
    const p = at ? `${at}.${k}` : k;
    return Object.hasOwn(kept, k) ? undescribed(v, kept[k], p) : [p];
  });
}

/** A user error never shows a stack trace. */
export function assertNoStack(text: string, what = 'stderr'): void {
  assert.doesNotMatch(text, /^\s{4}at /m, `${what} shows a stack trace:\n${text}`);
  assert.doesNotMatch(text, /unexpected error/, `${what} reports an unexpected error:\n${text}`);
}

/** A result in full, for an assertion message. */
export const show = (r: Result) => `exit ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;

/** Success: exit 0 and nothing alarming on stderr. */
export function ok(r: Result): Result {
  assert.equal(r.code, 0, `expected success, got ${show(r)}`);
  assertNoStack(r.stderr);
  return r;
}

/**
 * Failure with the documented exit code: nothing on stdout, a `loopx:` message on stderr that
 * matches every pattern (the flag, the id, the file...), and no stack trace.
 */
export function fails(r: Result, code: number, ...patterns: RegExp[]): Result {
  assert.equal(r.code, code, `expected exit ${code}, got ${show(r)}`);
  assert.equal(r.stdout, '', `stdout must stay empty on an error, got ${show(r)}`);
  assert.match(r.stderr, /^loopx: /, `stderr must start with "loopx: ", got ${show(r)}`);
  for (const p of patterns) assert.match(r.stderr, p, show(r));
  assertNoStack(r.stderr);
  return r;
}

/**
 * Stdout is exactly one JSON document (nothing before or after it) that the schema accepts (and,
 * naming its `schema` id, the one OUTPUT_SCHEMAS has for it: checkPrintedDocument). Returns the
 * parsed value.
 */
export function json<S extends z.ZodType>(r: Result, schema: S): z.infer<S> {
  ok(r);
  const text = r.stdout.trim();
  assert.ok(text.startsWith('{') || text.startsWith('['), `stdout is not JSON:\n${r.stdout}`);
  let raw: unknown;
  try {
    raw = JSON.parse(r.stdout);
  } catch (e) {
    assert.fail(`stdout is not one JSON document (${(e as Error).message}):\n${r.stdout}`);
  }
  checkPrintedDocument(r.stdout, 'the command');
  const parsed = schema.safeParse(raw);
  assert.ok(
    parsed.success,
    `JSON does not match its schema: ${parsed.error?.message}\n${r.stdout.slice(0, 2000)}`,
  );
  return parsed.data;
}

// ---------------------------------------------------------------------------------------------
// A workspace with shortcuts

export class Ws {
  readonly dir: string;
  constructor(dir?: string) {
    this.dir = dir ?? tempDir();
  }
  /** `loopx` in the workspace folder (non-interactive). */
  run(...args: string[]): Promise<Result> {
    return loopx(args, { cwd: this.dir });
  }
  /** `loopx --json ...`: stdout parsed and checked against the schema. */
  async json<S extends z.ZodType>(schema: S, ...args: string[]): Promise<z.infer<S>> {
    return json(await loopx(['--json', ...args], { cwd: this.dir }), schema);
  }
  /** `loopx todo add` of a todo with the id and command given (`extra`: more flags), as a script would. */
  addTodo(
    goalId: string,
    todoId: string,
    title: string,
    action: string,
    ...extra: string[]
  ): Promise<Result> {
    return this.run(
      'todo',
      'add',
      '--goal-id',
      goalId,
      '--title',
      title,
      '--action',
      action,
      '--todo-id',
      todoId,
      ...extra,
    );
  }
  /** `loopx` as a person at a terminal, who types the passphrase when asked. */
  tty(...args: string[]): Promise<{ code: number; output: string }> {
    return loopxTty(args, { cwd: this.dir });
  }
  /** `loopx` as a person's own script, with the passphrase on fd 3. */
  person(...args: string[]): Promise<Result> {
    return loopxAsPerson(args, { cwd: this.dir });
  }
  file(...parts: string[]): string {
    return path.join(this.dir, ...parts);
  }
  /** The goal's event log, parsed line by line (straight from disk). */
  events(goalId: string): {
    type: string;
    seq: number;
    actor: { kind: string; id: string; channel: string };
    data: Record<string, unknown>;
  }[] {
    return fs
      .readFileSync(writerLog(this.dir, goalId), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
  }
}
