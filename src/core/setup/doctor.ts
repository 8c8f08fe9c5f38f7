/**
 * `loopx doctor`: a new user's checklist. Each check says what it found and, for a problem, the
 * command that fixes it. Everything here only reads: no store is created, no config folder made
 * (a doctor that wrote would hide what it is asked to find). The caller passes the process facts
 * (entry script, runtime, environment), so the checks run the same in a unit test.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { installedHooks, readHookShim } from '../hooks';
import { lazy, LoopxError } from '../model';
import { shellQuote } from '../shell';
import { findWorkspace, GITATTRIBUTES_LINES, lockKind, LOOPX_DIR, Store } from '../store';
import { fingerprint, pinnedKeys, publishedKeys, terminalKeys } from '../trust';
import { policyStatus } from '../views';
import { cliShimTarget } from './cli-shim';

export const DOCTOR_SCHEMA = 'loopx.doctor/1';

/** The checks, in the order they run and print; their ids are stable (scripts read them). */
export const DOCTOR_CHECKS = [
  'cli',
  'node',
  'workspace',
  'policy',
  'hooks',
  'keys',
  'approvers',
  'git_attributes',
  'notify',
] as const;
export type DoctorCheckId = (typeof DOCTOR_CHECKS)[number];

export const DoctorCheck = lazy(() =>
  z.object({
    id: z.enum(DOCTOR_CHECKS),
    status: z.enum(['ok', 'warn', 'fail']),
    message: z.string(),
    /** The command (one a line) that fixes it, for a warn or a fail. */
    fix: z.string().optional(),
  }),
);
export type DoctorCheck = z.infer<typeof DoctorCheck>;

export const DoctorDoc = lazy(() =>
  z.object({
    schema: z.literal(DOCTOR_SCHEMA),
    /** No check failed (warnings allowed). */
    ok: z.boolean(),
    checks: z.array(DoctorCheck),
  }),
);
export type DoctorDoc = z.infer<typeof DoctorDoc>;

/** package.json's `engines.node` (">=20"); the bundle cannot read package.json at run time. */
export const MIN_NODE_MAJOR = 20;

export interface DoctorInput {
  /** The script the CLI runs from (process.argv[1]). */
  entry: string;
  /** The runtime (process.execPath) and its version (process.versions.node). */
  execPath: string;
  nodeVersion: string;
  /** PATH and LOOPX_WORKSPACE are read from it. */
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** --workspace, when given. */
  workspaceFlag?: string;
  /** The user's LoopX config folder. */
  configDir: string;
  /** Whether a runtime starts (`<runtime> --version`); tests may stand in for it. */
  runtimeRuns?: (runtime: string) => boolean;
  /**
   * The notification channels and their health (reach/outbox.ts `channelHealth`), read by the
   * caller: setup does not depend on reach. `problem`: channels.json does not read.
   */
  notify?: NotifyFacts;
}

/** What `doctor` is told of the notification channels. */
export interface NotifyFacts {
  channels: { name: string; status: 'ok' | 'failing'; last_error?: string; last_error_at?: string }[];
  problem?: string;
}

type Check = Omit<DoctorCheck, 'id'>;
const ok = (message: string): Check => ({ status: 'ok', message });
const warn = (message: string, fix?: string): Check => ({ status: 'warn', message, ...(fix ? { fix } : {}) });
const fail = (message: string, fix?: string): Check => ({ status: 'fail', message, ...(fix ? { fix } : {}) });

const realpath = (p: string) => {
  try {
    return fs.realpathSync(p);
  } catch {
    return path.resolve(p);
  }
};

function isExecutableFile(p: string): boolean {
  try {
    if (!fs.statSync(p).isFile()) return false;
    fs.accessSync(p, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** `command -v name`: the first executable `name` in PATH's folders. */
export function firstOnPath(name: string, pathVar: string | undefined): string | undefined {
  for (const dir of (pathVar ?? '').split(path.delimiter)) {
    if (!dir || !path.isAbsolute(dir)) continue;
    const p = path.join(dir, name);
    if (isExecutableFile(p)) return p;
  }
  return undefined;
}

function readText(p: string, max = 64 * 1024): string | undefined {
  try {
    const fd = fs.openSync(p, 'r');
    try {
      const buf = Buffer.alloc(max);
      return buf.subarray(0, fs.readSync(fd, buf, 0, max, 0)).toString('utf8');
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return undefined;
  }
}

/**
 * The CLI a `loopx` command on PATH runs, when it is a LoopX script rather than the CLI itself:
 * the sh wrapper beside bin/loopx.js, or the command shim VS Code installs (`target=<file>`
 * naming the runtime and CLI, one a line; src/core/setup/cli-shim.ts).
 */
function cliRunBy(found: string): string | undefined {
  const real = realpath(found);
  const beside = path.join(path.dirname(real), 'loopx.js');
  const text = readText(real);
  if (text === undefined || !text.startsWith('#!')) return undefined;
  if (/\$dir\/loopx\.js/.test(text) && fs.existsSync(beside)) return beside;
  return cliShimTarget(text)?.cli;
}

function checkCli(i: DoctorInput): Check {
  const entry = realpath(i.entry);
  const found = firstOnPath('loopx', i.env.PATH);
  // This very CLI installs itself: a copy and the shim VS Code's command writes, in ~/.local/bin.
  const putFirst = `${shellQuote(i.execPath)} ${shellQuote(entry)} install-command`;
  if (!found)
    return warn(
      `runs from ${entry}; there is no loopx on PATH, so agents and scripts that call \`loopx\` cannot`,
      putFirst,
    );
  const runs = cliRunBy(found);
  if (realpath(found) === entry || (runs !== undefined && realpath(runs) === entry))
    return ok(`runs from ${entry}, the loopx first on PATH (${found})`);
  return warn(
    `runs from ${entry}, but the loopx first on PATH is ${found} (${runs ?? realpath(found)}): agents and scripts that call \`loopx\` get that one`,
    putFirst,
  );
}

function checkNode(i: DoctorInput): Check {
  const major = Number(/^v?(\d+)/.exec(i.nodeVersion)?.[1] ?? NaN);
  const what = `Node.js ${i.nodeVersion} (${i.execPath})`;
  if (Number.isFinite(major) && major >= MIN_NODE_MAJOR) {
    const lock = lockKind();
    if (lock.kind === 'file')
      return warn(
        `${what}: the kernel lock's binding for ${process.platform}-${process.arch} did not load (${lock.problem}), ` +
          'so goals are locked with an exclusive file, whose holder is judged by pid and clock (a clock jump or another PID namespace can fool it)',
        'use a platform LoopX ships the binding for (Linux, macOS or Windows on x64 or arm64, glibc)',
      );
    return ok(
      `${what}; LoopX needs ${MIN_NODE_MAJOR} or later; goals are locked with the kernel's file locks`,
    );
  }
  return fail(
    `${what}: LoopX needs Node.js ${MIN_NODE_MAJOR} or later (package.json engines)`,
    `install Node.js ${MIN_NODE_MAJOR} or later, then run \`loopx doctor\` again`,
  );
}

type Found = { store?: Store; check: Check };

function findStore(i: DoctorInput): Found {
  const given = i.workspaceFlag ?? (i.env.LOOPX_WORKSPACE || undefined);
  const from = i.workspaceFlag !== undefined ? '--workspace' : 'LOOPX_WORKSPACE';
  let dir: string | undefined;
  let how: string;
  if (given !== undefined) {
    dir = path.resolve(i.cwd, given);
    how = `from ${from}`;
    if (!fs.existsSync(dir))
      return {
        check: fail(
          `the folder ${dir} (${how}) does not exist`,
          `loopx --workspace DIR doctor (an existing folder)`,
        ),
      };
    if (!fs.existsSync(path.join(dir, LOOPX_DIR, 'goals')))
      return {
        check: warn(
          `no LoopX workspace in ${dir} (${how}): no ${LOOPX_DIR}/goals`,
          `loopx --workspace ${shellQuote(dir)} init`,
        ),
      };
  } else {
    dir = findWorkspace(i.cwd);
    how = `found at or above ${i.cwd}`;
    if (!dir)
      return {
        check: warn(`no LoopX workspace at or above ${i.cwd}`, 'loopx init   (in your project’s folder)'),
      };
  }
  try {
    const store = Store.open(dir, { configDir: i.configDir });
    return { store, check: ok(`${store.workspace} (${how})`) };
  } catch (e) {
    if (!(e instanceof LoopxError)) throw e;
    return { check: fail(`${dir} (${how}): ${e.message}`) };
  }
}

const NO_WORKSPACE = warn('not checked: there is no workspace (see above)');

function checkPolicy(store: Store, hasKey: boolean): Check {
  const p = policyStatus(store);
  if (p.state === 'invalid') return fail(p.error?.message ?? p.message ?? 'policy.json is invalid', p.fix);
  if (p.state === 'signed') return ok(`policy.json signed by ${p.signed_by} at ${p.signed_at}`);
  const sign = hasKey ? 'loopx policy sign' : 'loopx key create';
  if (p.state === 'unsigned_changes')
    return warn(
      `policy.json has edits no person signed (${p.unsigned_changes.join(', ')}): they have no effect until signed`,
      sign,
    );
  return warn(
    `no person has signed policy.json yet: the default policy applies${p.message ? ` (${p.message})` : ''}`,
    hasKey ? 'loopx policy sign' : 'loopx key create   (it signs the first policy too)',
  );
}

/** Why a shim cannot answer, or undefined when it can; `runs` says what it runs. */
function shimProblem(shim: string, i: DoctorInput): { problem?: string; runs?: string } {
  if (!fs.existsSync(shim)) return { problem: `the shim ${shim} they call is missing` };
  if (!isExecutableFile(shim)) return { problem: `the shim ${shim} they call is not executable` };
  const read = readHookShim(shim);
  if (!read) return { problem: `${shim} is not a LoopX hook shim` };
  if ('older' in read)
    return {
      problem: `the shim ${shim} is of an older LoopX: it runs what the file beside it names, which an agent could rewrite`,
    };
  const { target } = read;
  if (!target.cli || !fs.existsSync(target.cli))
    return { problem: `the CLI the shim runs (${target.cli || 'none named'}) is missing` };
  // The shim falls back on the node on PATH when the runtime it recorded is gone.
  const runtime = isExecutableFile(target.node) ? target.node : firstOnPath('node', i.env.PATH);
  if (!runtime)
    return {
      problem: `the shim's runtime ${target.node || '(none named)'} is gone and there is no node on PATH`,
    };
  if (!(i.runtimeRuns ?? runtimeRuns)(runtime))
    return { problem: `the shim's runtime ${runtime} does not start` };
  return { runs: `${runtime} ${target.cli}` };
}

function runtimeRuns(runtime: string): boolean {
  const r = spawnSync(runtime, ['--version'], {
    env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
    stdio: 'ignore',
    timeout: 10_000,
  });
  return r.status === 0;
}

function checkHooks(store: Store, i: DoctorInput): Check {
  const files = installedHooks(store.workspace);
  const rel = (f: string) => path.relative(store.workspace, f);
  const fix = 'loopx hooks install';
  const broken = files.find((f) => f.error);
  if (broken)
    return fail(`${rel(broken.file)} is ${broken.error}`, `fix ${rel(broken.file)} by hand, then ${fix}`);
  const bare = files.filter((f) => f.bare > 0);
  if (bare.length)
    return warn(
      `${bare.map((f) => rel(f.file)).join(', ')} still call the bare \`loopx hook\` of an older install, which lets tools run where loopx is not on PATH`,
      fix,
    );
  const installed = files.filter((f) => f.shims.length > 0);
  if (installed.length === 0)
    return warn('no LoopX hooks in .github/hooks/loopx.json or .claude/settings.local.json', fix);
  const shims = [...new Set(installed.flatMap((f) => f.shims))];
  const runs: string[] = [];
  for (const shim of shims) {
    const s = shimProblem(shim, i);
    if (s.problem) return fail(`hooks are installed but cannot answer: ${s.problem}`, fix);
    runs.push(`${shim} runs ${s.runs}`);
  }
  return ok(`${installed.map((f) => rel(f.file)).join(' and ')} call LoopX; ${runs.join('; ')}`);
}

function checkKeys(i: DoctorInput): Check {
  const keys = terminalKeys(i.configDir);
  if (keys.length === 0)
    return warn(
      `no signing key in ${i.configDir}: a person's decisions (gate approve, reward add, policy sign) need one`,
      'loopx key create',
    );
  return ok(
    `${keys.length} signing key${keys.length > 1 ? 's' : ''}: ${keys.map((k) => `${fingerprint(k.keyId)} (${k.name})`).join(', ')}`,
  );
}

function checkApprovers(i: DoctorInput, store: Store | undefined): Check {
  const pinned = pinnedKeys(i.configDir);
  const ids = new Set(pinned.map((k) => k.keyId));
  const unpinned = store ? publishedKeys(store.root).filter((k) => !ids.has(k.keyId)) : [];
  if (pinned.length === 0)
    return warn(
      'no approver key is pinned on this machine: no signed decision counts here',
      unpinned.length
        ? unpinned.map((k) => `loopx approvers trust ${k.keyId.slice(0, 16)}`).join('\n')
        : 'loopx key create',
    );
  const head = `${pinned.length} key${pinned.length > 1 ? 's' : ''} pinned`;
  if (unpinned.length === 0) return ok(head);
  return warn(
    `${head}; published in ${LOOPX_DIR}/approvers/ but not pinned here (their decisions are ignored here): ${unpinned
      .map((k) => `${fingerprint(k.keyId)} (${k.name})`)
      .join(', ')}. Pin the ones you know are your teammates'`,
    unpinned.map((k) => `loopx approvers trust ${k.keyId.slice(0, 16)}`).join('\n'),
  );
}

/** The git work tree holding `dir`, if any (a `.git` folder or file at or above it). */
function gitRoot(dir: string): string | undefined {
  for (let d = dir; ;) {
    if (fs.existsSync(path.join(d, '.git'))) return d;
    const up = path.dirname(d);
    if (up === d) return undefined;
    d = up;
  }
}

function checkGitAttributes(store: Store): Check {
  const repo = gitRoot(store.workspace);
  if (!repo) return ok('the workspace is not in a git repository: nothing to check');
  const file = path.join(store.root, '.gitattributes');
  const have = new Set((readText(file) ?? '').split(/\r?\n/).map((l) => l.trim()));
  const missing = GITATTRIBUTES_LINES.filter((l) => !have.has(l));
  if (missing.length === 0) return ok(`${path.relative(repo, file)} keeps the event logs' bytes as written`);
  return fail(
    `${path.relative(repo, file)} lacks ${missing.map((l) => `\`${l}\``).join(', ')}: git may convert the logs' line ends and break their hash chains for teammates`,
    'loopx init   (idempotent: it adds the lines)',
  );
}

function checkNotify(i: DoctorInput): Check {
  const n = i.notify;
  if (n?.problem)
    return warn(
      `notification channels: ${n.problem}; nothing is sent until it reads`,
      'fix the file by hand, then loopx notify list',
    );
  if (!n || n.channels.length === 0)
    return ok('no notification channel set up: LoopX tells you only where you look (loopx notify add)');
  const failing = n.channels.filter((c) => c.status === 'failing');
  if (failing.length)
    return warn(
      failing
        .map(
          (c) =>
            `channel ${c.name} is failing: ${c.last_error ?? 'an error'}${c.last_error_at ? ` (at ${c.last_error_at})` : ''}`,
        )
        .join('; '),
      failing.map((c) => `loopx notify test --name ${c.name}`).join('\n'),
    );
  return ok(`notification channels: ${n.channels.map((c) => c.name).join(', ')}; none failing`);
}

/** Every check, in DOCTOR_CHECKS order. Reads only. */
export function doctor(i: DoctorInput): DoctorDoc {
  const found = findStore(i);
  const store = found.store;
  const hasKey = terminalKeys(i.configDir).length > 0;
  const results: Record<DoctorCheckId, Check> = {
    cli: checkCli(i),
    node: checkNode(i),
    workspace: found.check,
    policy: store ? checkPolicy(store, hasKey) : NO_WORKSPACE,
    hooks: store ? checkHooks(store, i) : NO_WORKSPACE,
    keys: checkKeys(i),
    approvers: checkApprovers(i, store),
    git_attributes: store ? checkGitAttributes(store) : NO_WORKSPACE,
    notify: checkNotify(i),
  };
  const checks = DOCTOR_CHECKS.map((id) => ({ id, ...results[id] }));
  return { schema: DOCTOR_SCHEMA, ok: checks.every((c) => c.status !== 'fail'), checks };
}
