/**
 * Store and start-up hardening, attacked the way an agent with a shell (or another account on a
 * shared machine) would:
 * - a V8 code cache planted where `loopx` would load it runs as whoever calls `loopx`: only the
 *   user's own private cache folder and file are used;
 * - a symbolic link under `.loopx/` (local/, an events file, a goal folder, artifacts/) would send
 *   writes outside the workspace: every one is refused, naming the link, and nothing is written;
 * - `.loopx/.gitignore` ignores `local` as a link too;
 * - a lock dated in the future, or held too long, does not block writes for good, and
 *   self-repair reports and clears it;
 * - a contract never lasts longer than the policy's TTL: capped when issued, refused when checked;
 * - an empty LOOPX_AGENT is unset.
 *
 * Black box: the built CLI (`npm run build` first).
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { hostname } from 'node:os';
import * as os from 'node:os';
import * as path from 'node:path';
import { Store } from '../../src/core/store/store';
import { checkContract } from '../../src/core/contract/exec';
import { LoopxError } from '../../src/core/model/errors';
import { REPO, listTree, loopx } from '../helpers/cli';
import {
  Sandbox,
  appendRunStarted,
  execArgs,
  fails,
  mintContract,
  ok,
  removeTempDirs,
  tempDir,
} from '../helpers/security';
import { writerLog } from '../helpers/log-kit';

after(removeTempDirs);

const MIN = 60_000;

// -------------------------------------------------------------------------------------------------

describe('the V8 code cache is used only from the user’s own private folder', () => {
  const DIST = path.join(REPO, 'dist', 'cli.js');
  const FROM = 'durable goals, signed per-turn contracts';
  const MARK = 'PLANTED-CODE-CACHE-RAN'.padEnd(FROM.length, '!');

  /**
   * A cache compiled from a different source of the same length (V8 checks only the length):
   * if loaded, `loopx --help` prints MARK. Named as bin/loopx.js names the cache of dist/cli.js.
   */
  function plantedCache(): { name: string; bytes: Buffer } {
    const work = tempDir('loopx-sec-cc-');
    const out = path.join(work, 'evil.bin');
    const maker = path.join(work, 'make.js');
    fs.writeFileSync(
      maker,
      `const fs = require('fs'), path = require('path'), vm = require('vm'), Module = require('module');
const file = ${JSON.stringify(DIST)};
const real = fs.readFileSync(file, 'utf8');
const evil = real.replace(${JSON.stringify(FROM)}, ${JSON.stringify(MARK)});
if (evil === real || evil.length !== real.length) throw new Error('no same-length change');
const script = new vm.Script(Module.wrap(evil), { filename: file, importModuleDynamically: vm.constants?.USE_MAIN_CONTEXT_DEFAULT_LOADER });
process.once('exit', () => fs.writeFileSync(${JSON.stringify(out)}, script.createCachedData()));
const m = { exports: {}, filename: file, id: file, loaded: false };
script.runInThisContext()(m.exports, Module.createRequire(file), m, file, path.dirname(file));
`,
    );
    const r = spawnSync(process.execPath, [maker, '--help'], {
      encoding: 'utf8',
      env: { ...process.env, NO_COLOR: '1' },
    });
    assert.ok(fs.existsSync(out), `could not make the planted cache: ${r.stderr}`);
    const st = fs.statSync(DIST);
    return {
      name: `cli-${st.size}-${Math.floor(st.mtimeMs)}-${process.version}-${process.arch}.bin`,
      bytes: fs.readFileSync(out),
    };
  }

  const uid = process.getuid?.() ?? -1;
  const isRoot = uid === 0;

  /** `loopx --help` with XDG_CACHE_HOME=`xdg`: whether the planted code ran. */
  async function ranPlanted(xdg: string, extraEnv: Record<string, string> = {}): Promise<boolean> {
    const r = await loopx(['--help'], { cwd: xdg, env: { XDG_CACHE_HOME: xdg, ...extraEnv } });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Usage: loopx/);
    return r.stdout.includes('PLANTED-CODE-CACHE-RAN');
  }

  /** `<xdg>/loopx/<name>` with the planted cache, folder and file modes as given. */
  function plant(c: { name: string; bytes: Buffer }, dirMode: number, fileMode: number) {
    const xdg = tempDir('loopx-sec-xdg-');
    const dir = path.join(xdg, 'loopx');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, c.name), c.bytes);
    fs.chmodSync(path.join(dir, c.name), fileMode);
    fs.chmodSync(dir, dirMode);
    return { xdg, dir, file: path.join(dir, c.name) };
  }

  it('planted in a folder others can write, or as a file others can write, it is not loaded (and loaded from a private one)', async () => {
    const c = plantedCache();
    // The control: the same bytes in the user's own private folder are loaded, so the attack is real.
    assert.equal(
      await ranPlanted(plant(c, 0o700, 0o600).xdg),
      true,
      'the planted cache did not load even where it may',
    );
    const open = plant(c, 0o777, 0o600);
    assert.equal(await ranPlanted(open.xdg), false, 'loaded from a world-writable folder');
    assert.deepEqual(fs.readFileSync(open.file), c.bytes, 'rewrote a file in a folder others can write');
    assert.equal(await ranPlanted(plant(c, 0o770, 0o600).xdg), false, 'loaded from a group-writable folder');
    assert.equal(await ranPlanted(plant(c, 0o700, 0o666).xdg), false, 'loaded a world-writable file');
  });

  it(
    'planted behind a link, or in a folder another account owns, it is not loaded',
    { skip: !isRoot && 'needs root to give a folder to another account' },
    async () => {
      const c = plantedCache();
      const owned = plant(c, 0o700, 0o600);
      fs.chownSync(owned.file, 65534, 65534);
      fs.chownSync(owned.dir, 65534, 65534);
      assert.equal(await ranPlanted(owned.xdg), false, 'loaded from a folder another account owns');

      const real = plant(c, 0o700, 0o600);
      const linked = tempDir('loopx-sec-xdg-');
      fs.symlinkSync(real.dir, path.join(linked, 'loopx'));
      assert.equal(await ranPlanted(linked), false, 'followed a link to the cache folder');
    },
  );

  it('the old shared location /tmp/loopx-code-cache-<uid> is not read any more', async () => {
    const c = plantedCache();
    const old = path.join(os.tmpdir(), `loopx-code-cache-${uid}`);
    const existed = fs.existsSync(old);
    fs.mkdirSync(old, { recursive: true, mode: 0o700 });
    const file = path.join(old, c.name);
    // A real cache of an older loopx there is kept aside for the test and put back after.
    const aside = `${file}.kept-${process.pid}`;
    const had = fs.existsSync(file);
    if (had) fs.renameSync(file, aside);
    fs.writeFileSync(file, c.bytes, { mode: 0o600 });
    try {
      const home = tempDir('loopx-sec-home-');
      assert.equal(await ranPlanted(home, { HOME: home }), false, 'loaded the cache planted in /tmp');
    } finally {
      fs.rmSync(file, { force: true });
      if (had) fs.renameSync(aside, file);
      if (!existed) fs.rmSync(old, { recursive: true, force: true });
    }
  });
});

// -------------------------------------------------------------------------------------------------

describe('no symbolic link under .loopx/ is followed', { concurrency: true }, () => {
  const NAMES_LINK = /is a symbolic link: LoopX never follows a link inside \.loopx\//;

  it('a .loopx/local that is a link is refused by every command, naming it; nothing is written where it points', async () => {
    const sb = new Sandbox();
    ok(await sb.run(['init']));
    await sb.goalWithTodo();
    const outside = tempDir('loopx-sec-outside-');
    fs.rmSync(sb.file('.loopx', 'local'), { recursive: true });
    fs.symlinkSync(outside, sb.file('.loopx', 'local'));
    const local = new RegExp(
      `${sb.file('.loopx', 'local').replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} is a symbolic link`,
    );
    for (const args of [
      ['status'],
      ['todo', 'add', '--goal-id', 'g', '--title', 'more'],
      ['quota', 'should-run', '--goal-id', 'g'],
      ['init'],
      ['self-repair'],
    ]) {
      fails(await sb.run(args), 4, local, NAMES_LINK);
    }
    assert.deepEqual(listTree(outside), [], 'something was written through the link');
  });

  it('an events file linked to a file outside is refused; the outside file is not touched', async () => {
    const sb = new Sandbox();
    ok(await sb.run(['init']));
    await sb.goalWithTodo();
    const log = writerLog(sb.dir, 'g');
    const outside = path.join(tempDir('loopx-sec-outside-'), path.basename(log));
    fs.copyFileSync(log, outside);
    fs.rmSync(log);
    fs.symlinkSync(outside, log);
    const before = fs.readFileSync(outside);
    for (const args of [
      ['todo', 'add', '--goal-id', 'g', '--title', 'more'],
      ['quota', 'should-run', '--goal-id', 'g'],
      ['goal', 'show', '--goal-id', 'g'],
    ]) {
      fails(await sb.run(args), 4, /events\/w-[\w-]+\.jsonl is a symbolic link/);
    }
    assert.deepEqual(fs.readFileSync(outside), before, 'the file outside the workspace changed');
  });

  it('a goal folder linked to a folder outside is refused; nothing is written there', async () => {
    const sb = new Sandbox();
    ok(await sb.run(['init']));
    await sb.goalWithTodo('echo listed', 'g');
    const outside = tempDir('loopx-sec-outside-');
    fs.cpSync(sb.file('.loopx', 'goals', 'g'), outside, { recursive: true });
    fs.symlinkSync(outside, sb.file('.loopx', 'goals', 'g2'));
    const snapshot = () =>
      listTree(outside).map((p) => {
        const file = path.join(outside, p);
        return [p, fs.statSync(file).isDirectory() ? 'dir' : fs.readFileSync(file).toString('base64')];
      });
    const before = snapshot();
    for (const args of [
      ['todo', 'add', '--goal-id', 'g2', '--title', 'more'],
      ['quota', 'should-run', '--goal-id', 'g2'],
      ['goal', 'show', '--goal-id', 'g2'],
    ]) {
      fails(await sb.run(args), 4, /goals\/g2 is a symbolic link/);
    }
    // Creating a goal of that name does not go through the link either.
    const create = await sb.run(['goal', 'create', '--goal-id', 'g2', '--title', 'through the link']);
    assert.notEqual(create.code, 0, 'goal create wrote through the link');
    assert.deepEqual(snapshot(), before, 'the folder outside the workspace changed');
  });

  it('an artifacts folder linked outside: exec refuses before running the command; nothing is written there', async () => {
    const sb = new Sandbox();
    ok(await sb.run(['init']));
    const todo = await sb.goalWithTodo('touch ran-it');
    const sr = await sb.json(['quota', 'should-run', '--goal-id', 'g']);
    const cid = (sr.interaction_contract as { id: string }).id;
    const outside = tempDir('loopx-sec-outside-');
    fs.symlinkSync(outside, sb.file('.loopx', 'goals', 'g', 'artifacts'));
    fails(
      await sb.run(['exec', '--contract', cid, '--todo', todo, '--', 'touch ran-it']),
      4,
      /artifacts is a symbolic link/,
    );
    assert.ok(!fs.existsSync(sb.file('ran-it')), 'the command ran although its output could not be kept');
    assert.deepEqual(listTree(outside), []);
  });

  it('.loopx/.gitignore ignores `local` (a link named local too); init adds it to an old `local/` file', async () => {
    const sb = new Sandbox();
    ok(await sb.run(['init']));
    const ignore = sb.file('.loopx', '.gitignore');
    const ignored = () =>
      fs
        .readFileSync(ignore, 'utf8')
        .split('\n')
        .filter((l) => l && !l.startsWith('#'));
    assert.deepEqual(ignored(), ['local', '/index.json', 'goals/*/goal.json']);
    fs.writeFileSync(ignore, 'local/\n');
    ok(await sb.run(['init']));
    assert.deepEqual(ignored(), ['local/', 'local', '/index.json', 'goals/*/goal.json']);

    const git = (...args: string[]) => spawnSync('git', args, { cwd: sb.dir, encoding: 'utf8' });
    if (git('--version').status !== 0) return; // no git here: the file's content is checked above
    assert.equal(git('init', '-q').status, 0);
    fs.rmSync(sb.file('.loopx', 'local'), { recursive: true });
    fs.symlinkSync(tempDir('loopx-sec-outside-'), sb.file('.loopx', 'local'));
    const status = git('status', '--porcelain', '--untracked-files=all', '.loopx');
    assert.equal(status.status, 0, status.stderr);
    assert.doesNotMatch(status.stdout, /\.loopx\/local/, 'git would commit the local link');
  });
});

// -------------------------------------------------------------------------------------------------

describe(
  'a lock file is no lock: only a live holder of the kernel lock blocks',
  { concurrency: true },
  () => {
    const lockOf = (sb: Sandbox) => sb.file('.loopx', 'local', 'locks', 'goal-g.lock');
    /** A lock file as the exclusive-file lock wrote it: a live process of this host, dated `at`. */
    const plantLock = (sb: Sandbox, at: number) => {
      fs.mkdirSync(path.dirname(lockOf(sb)), { recursive: true });
      fs.writeFileSync(
        lockOf(sb),
        JSON.stringify({ pid: process.pid, host: hostname(), nonce: 'planted', at }),
      );
    };

    it('a lock file dated a year ahead, naming a live pid, or unreadable and dated ahead, does not block a write', async () => {
      const sb = new Sandbox();
      ok(await sb.run(['init']));
      await sb.goalWithTodo();
      plantLock(sb, Date.now() + 365 * 24 * 3600_000);
      const t0 = Date.now();
      ok(await sb.run(['todo', 'add', '--goal-id', 'g', '--title', 'after the planted lock']));
      assert.ok(Date.now() - t0 < 10_000, 'the write waited for the lock to time out');

      fs.writeFileSync(lockOf(sb), 'not a lock');
      const future = new Date(Date.now() + 365 * 24 * 3600_000);
      fs.utimesSync(lockOf(sb), future, future);
      ok(await sb.run(['todo', 'add', '--goal-id', 'g', '--title', 'after the garbage lock']));
    });

    it('self-repair finds no stale lock to break: a planted file blocks nothing, and nothing is removed', async () => {
      const sb = new Sandbox();
      ok(await sb.run(['init']));
      await sb.goalWithTodo();
      const other = sb.file('.loopx', 'local', 'locks', 'index.lock');
      plantLock(sb, Date.now() + 3600_000);
      fs.writeFileSync(
        other,
        JSON.stringify({ pid: process.pid, host: hostname(), nonce: 'hung', at: Date.now() - 10 * MIN }),
      );
      type Finding = { kind: string; fixed: boolean; message: string };
      const fixed = (await sb.json(['self-repair'])).findings as Finding[];
      assert.equal(fixed.filter((f) => f.kind === 'lock-stale').length, 0, JSON.stringify(fixed));
      ok(await sb.run(['todo', 'add', '--goal-id', 'g', '--title', 'after self-repair']));
    });
  },
);

// -------------------------------------------------------------------------------------------------

describe('a contract never outlives the policy’s TTL', { concurrency: true }, () => {
  it('should-run --ttl-minutes 1440 under a 30-minute policy issues at most 30 minutes, and says so', async () => {
    const sb = new Sandbox();
    ok(await sb.run(['init']));
    await sb.goalWithTodo();
    const r = await sb.run(['--json', 'quota', 'should-run', '--goal-id', 'g', '--ttl-minutes', '1440']);
    ok(r);
    const out = JSON.parse(r.stdout) as {
      interaction_contract: { issued_at: string; expires_at: string };
      warnings?: string[];
    };
    const ic = out.interaction_contract;
    assert.ok(Date.parse(ic.expires_at) - Date.parse(ic.issued_at) <= 30 * MIN, JSON.stringify(ic));
    assert.match(
      out.warnings?.join('\n') ?? '',
      /--ttl-minutes 1440 is longer than the policy allows: contracts last at most 30 minutes/,
    );
    assert.match(r.stderr, /warning: --ttl-minutes 1440 is longer than the policy allows/);
  });

  it('a hand-made contract lasting a year, signed with the real key, is refused by exec, contract verify and the hook', async () => {
    const sb = new Sandbox();
    ok(await sb.run(['init']));
    const todo = await sb.goalWithTodo('echo listed');
    ok(await sb.run(['quota', 'should-run', '--goal-id', 'g']));
    ok(await sb.run(['goal', 'show', '--goal-id', 'g']));
    // The key as an older LoopX kept it in the workspace (or as it leaked): a valid signature.
    const key = Buffer.from(sb.secretHex('contract-key'), 'hex');
    const c = mintContract(key, {
      goalId: 'g',
      todoId: todo,
      command: 'touch year-long',
      agent: 'mallory',
      lifetimeMinutes: 365 * 24 * 60,
    });
    appendRunStarted(sb, 'g', c);
    const tooLong = /longer than the policy's contractTtlMinutes \(30\)/;
    fails(await sb.run(execArgs(c)), 4, tooLong);
    fails(await sb.run(['contract', 'verify', '--contract', c.id]), 4, tooLong);
    assert.ok(!fs.existsSync(sb.file('year-long')), 'the year-long contract ran its command');

    const payload = {
      session_id: 'sec',
      cwd: sb.dir,
      hook_event_name: 'PreToolUse',
      tool_name: 'Bash',
      tool_input: { command: `loopx ${execArgs(c).slice(0, -1).join(' ')} 'touch year-long'` },
    };
    const hook = await loopx(['hook', 'pre-tool-use'], {
      cwd: sb.dir,
      env: { LOOPX_CONFIG_DIR: sb.config, LOOPX_AGENT: 'mallory' },
      input: JSON.stringify(payload),
    });
    assert.doesNotMatch(hook.stdout, /"permissionDecision":"allow"/, hook.stdout);
    assert.match(hook.stdout + hook.stderr, /deny|contractTtlMinutes/, hook.stdout + hook.stderr);

    // The refusal carries a machine-readable reason.
    const store = Store.open(sb.dir, { configDir: sb.config });
    assert.throws(
      () => checkContract(store, c.id),
      (e: unknown) =>
        e instanceof LoopxError && e.kind === 'refused' && e.details.reason === 'contract_ttl_exceeded',
    );

    // The agent it names gets a fresh, capped contract instead: the long one's run is ended.
    const next = await sb.json(['quota', 'should-run', '--goal-id', 'g'], { LOOPX_AGENT: 'mallory' });
    const ic = next.interaction_contract as { id: string | null; issued_at: string; expires_at: string };
    assert.notEqual(ic.id, c.id);
  });
});

describe('an empty LOOPX_AGENT counts as unset', () => {
  it('should-run, todo add and exec work with LOOPX_AGENT=""; the agent is named "agent"', async () => {
    const sb = new Sandbox();
    ok(await sb.run(['init']));
    await sb.goalWithTodo('echo listed');
    const env = { LOOPX_AGENT: '' };
    ok(await sb.run(['todo', 'add', '--goal-id', 'g', '--title', 'more'], env));
    const out = await sb.json(['quota', 'should-run', '--goal-id', 'g'], env);
    assert.equal(out.decision, 'run');
    const runs = (await sb.json(['goal', 'show', '--goal-id', 'g'], env)) as { runs?: { agent: string }[] };
    const agents = (runs.runs ?? []).map((r) => r.agent);
    assert.ok(agents.length > 0 && agents.every((a) => a === 'agent'), JSON.stringify(agents));
    const line = (out.interaction_contract as { cli_channel: { next_cli_actions: string[] } }).cli_channel
      .next_cli_actions[0]!;
    assert.match(line, /^loopx exec /);
  });
});
