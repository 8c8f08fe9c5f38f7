/**
 * `loopx doctor`'s checks (src/core/setup/doctor.ts), each run on a machine the test builds: PATH,
 * runtime version, workspace found or not, policy, installed hooks and their shim, keys, pinned
 * approvers, git attributes. And the doctor writes nothing, not even the config folder.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { shellQuote } from '../../../../src/core';
import { applyHooks, planHooks } from '../../../../src/core/hooks/install';
import { writeHookShim } from '../../../../src/core/hooks/shim';
import { cliShimScript, writeCliTarget } from '../../../../src/core/setup/cli-shim';
import type { DoctorInput } from '../../../../src/core/setup/doctor';
import { doctor, DOCTOR_CHECKS, DoctorDoc } from '../../../../src/core/setup/doctor';
import { Store } from '../../../../src/core/store/store';
import { newKeyPair, pinKey, publishKey } from '../../../../src/core/trust/keys';
import { createTerminalKey } from '../../../../src/core/trust/terminal-key';
import { removeTempDirs, tempDir } from '../../../helpers/store';

after(removeTempDirs);

/** A folder holding an executable `name` (a script that prints nothing). */
function binWith(name: string, text = '#!/bin/sh\n'): string {
  const dir = tempDir('loopx-doctor-bin-');
  fs.writeFileSync(path.join(dir, name), text, { mode: 0o755 });
  return dir;
}

/** An install like the repository's: bin/loopx.js with its sh wrapper bin/loopx beside it. */
function install(): { bin: string; entry: string } {
  const bin = binWith('loopx', '#!/bin/sh\ndir=$(dirname "$0")\nexec node "$dir/loopx.js" "$@"\n');
  fs.writeFileSync(path.join(bin, 'loopx.js'), '// the CLI\n', { mode: 0o755 });
  return { bin: fs.realpathSync(bin), entry: fs.realpathSync(path.join(bin, 'loopx.js')) };
}

function input(o: Partial<DoctorInput> & { cwd: string }): DoctorInput {
  const { entry } = install();
  return {
    entry,
    execPath: process.execPath,
    nodeVersion: '22.1.0',
    env: { PATH: '' },
    configDir: path.join(tempDir('loopx-doctor-cfg-'), 'loopx'),
    runtimeRuns: () => true,
    ...o,
  };
}

function check(doc: DoctorDoc, id: (typeof DOCTOR_CHECKS)[number]) {
  assert.ok(DoctorDoc.safeParse(doc).success);
  const c = doc.checks.find((x) => x.id === id);
  assert.ok(c, id);
  return c;
}

/** Every file and folder under `dir`, with its size and mtime: what "wrote nothing" compares. */
function tree(dir: string): string[] {
  if (!fs.existsSync(dir)) return ['(missing)'];
  const out: string[] = [];
  (function walk(d: string) {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      const st = fs.lstatSync(p);
      out.push(`${path.relative(dir, p)} ${st.size} ${st.mtimeMs}`);
      if (e.isDirectory()) walk(p);
    }
  })(dir);
  return out.sort();
}

describe('doctor: the CLI and its runtime', () => {
  it('every check, in a stable order, with ok false only when one fails', () => {
    const doc = doctor(input({ cwd: tempDir() }));
    assert.deepEqual(
      doc.checks.map((c) => c.id),
      [...DOCTOR_CHECKS],
    );
    assert.equal(doc.schema, 'loopx.doctor/1');
    assert.ok(doc.checks.every((c) => c.status !== 'fail'));
    assert.equal(doc.ok, true);
  });

  it('cli: ok when the loopx first on PATH is this one (or its sh wrapper); a warn naming both when another comes first', () => {
    const { bin, entry } = install();
    const cwd = tempDir();
    const same = check(doctor(input({ cwd, entry, env: { PATH: bin } })), 'cli');
    assert.equal(same.status, 'ok', same.message);
    assert.match(same.message, new RegExp(`runs from ${entry}`));

    const other = binWith('loopx');
    const c = check(doctor(input({ cwd, entry, env: { PATH: `${other}:${bin}` } })), 'cli');
    assert.equal(c.status, 'warn');
    assert.ok(c.message.includes(path.join(other, 'loopx')), c.message);
    assert.ok(c.message.includes(entry), c.message);
    // The fix: this CLI installs itself (a copy and the shim), wherever PATH's loopx points.
    const installSelf = `${shellQuote(process.execPath)} ${shellQuote(entry)} install-command`;
    assert.equal(c.fix, installSelf);

    const none = check(doctor(input({ cwd, entry, env: { PATH: '/nonexistent' } })), 'cli');
    assert.equal(none.status, 'warn');
    assert.match(none.message, /no loopx on PATH/);
    assert.equal(none.fix, installSelf);
  });

  it('cli: a LoopX command shim on PATH counts as this CLI when its target file names it', () => {
    const { entry } = install();
    const target = writeCliTarget(tempDir(), { node: process.execPath, cli: entry });
    const shimDir = binWith('loopx', cliShimScript(target));
    const c = check(doctor(input({ cwd: tempDir(), entry, env: { PATH: shimDir } })), 'cli');
    assert.equal(c.status, 'ok', c.message);
    fs.writeFileSync(target, `${process.execPath}\n/elsewhere/loopx.js\n`);
    const moved = check(doctor(input({ cwd: tempDir(), entry, env: { PATH: shimDir } })), 'cli');
    assert.equal(moved.status, 'warn');
    assert.match(moved.message, /\/elsewhere\/loopx\.js/);
  });

  it('node: below 20 fails and names the version needed', () => {
    const c = check(doctor(input({ cwd: tempDir(), nodeVersion: '18.19.0' })), 'node');
    assert.equal(c.status, 'fail');
    assert.match(c.message, /18\.19\.0.*20 or later/);
    assert.match(c.fix!, /Node\.js 20 or later/);
    assert.equal(check(doctor(input({ cwd: tempDir(), nodeVersion: '20.0.0' })), 'node').status, 'ok');
  });
});

describe('doctor: the workspace', () => {
  it('says how it was found: --workspace, LOOPX_WORKSPACE, or discovery; none is a warn with `loopx init`', () => {
    const ws = fs.realpathSync(tempDir());
    Store.init(ws);
    fs.mkdirSync(path.join(ws, 'sub'));
    const elsewhere = tempDir();
    assert.match(
      check(doctor(input({ cwd: path.join(ws, 'sub') })), 'workspace').message,
      /found at or above/,
    );
    assert.match(
      check(doctor(input({ cwd: elsewhere, env: { PATH: '', LOOPX_WORKSPACE: ws } })), 'workspace').message,
      /from LOOPX_WORKSPACE/,
    );
    assert.match(
      check(doctor(input({ cwd: elsewhere, workspaceFlag: ws })), 'workspace').message,
      /from --workspace/,
    );
    const none = doctor(input({ cwd: elsewhere }));
    const w = check(none, 'workspace');
    assert.equal(w.status, 'warn');
    assert.match(w.fix!, /^loopx init/);
    // What needs a workspace says it was not checked, rather than look healthy.
    for (const id of ['policy', 'hooks', 'git_attributes'] as const)
      assert.match(check(none, id).message, /not checked/);

    const missing = check(doctor(input({ cwd: elsewhere, workspaceFlag: '/no/such/folder' })), 'workspace');
    assert.equal(missing.status, 'fail');
    assert.match(missing.message, /\/no\/such\/folder.*--workspace.*does not exist/);
  });

  it('policy: a policy.json that does not parse fails, naming the file and the line', () => {
    const ws = tempDir();
    const store = Store.init(ws);
    fs.writeFileSync(store.policyPath, '{\n  "v": 1,\n  oops\n}\n');
    const doc = doctor(input({ cwd: ws }));
    const c = check(doc, 'policy');
    assert.equal(c.status, 'fail');
    assert.ok(c.message.includes(store.policyPath), c.message);
    assert.match(c.message, /line 3/);
    assert.match(c.fix!, /policy\.json by hand/);
    assert.equal(doc.ok, false);
  });

  it('git_attributes: in a git repository, .loopx/.gitattributes without `*.jsonl -text` fails with `loopx init`', () => {
    const ws = tempDir();
    const store = Store.init(ws);
    assert.match(check(doctor(input({ cwd: ws })), 'git_attributes').message, /not in a git repository/);
    fs.mkdirSync(path.join(ws, '.git'));
    assert.equal(check(doctor(input({ cwd: ws })), 'git_attributes').status, 'ok');
    fs.writeFileSync(path.join(store.root, '.gitattributes'), '# emptied\n');
    const c = check(doctor(input({ cwd: ws })), 'git_attributes');
    assert.equal(c.status, 'fail');
    assert.match(c.message, /\*\.jsonl -text/);
    assert.match(c.fix!, /^loopx init/);
  });
});

describe('doctor: hooks', () => {
  function withHooks() {
    const ws = tempDir();
    const store = Store.init(ws);
    const shimDir = path.join(tempDir(), 'bin');
    const { entry } = install();
    const shim = writeHookShim(shimDir, { node: process.execPath, cli: entry });
    applyHooks(planHooks(store.workspace, shim));
    return { ws, shim, shimDir, entry };
  }

  it('none installed is a warn with `loopx hooks install`; installed ones name the shim and what it runs', () => {
    const ws = tempDir();
    Store.init(ws);
    const none = check(doctor(input({ cwd: ws })), 'hooks');
    assert.equal(none.status, 'warn');
    assert.equal(none.fix, 'loopx hooks install');

    const { ws: ws2, shim, entry } = withHooks();
    const c = check(doctor(input({ cwd: ws2 })), 'hooks');
    assert.equal(c.status, 'ok', c.message);
    assert.ok(c.message.includes(`${shim} runs ${process.execPath} ${entry}`), c.message);
  });

  it('fails when the shim cannot answer: missing, its CLI gone, its runtime not starting', () => {
    let h = withHooks();
    fs.rmSync(h.shim);
    let c = check(doctor(input({ cwd: h.ws })), 'hooks');
    assert.equal(c.status, 'fail');
    assert.match(c.message, /shim .* is missing/);
    assert.equal(c.fix, 'loopx hooks install');

    h = withHooks();
    fs.rmSync(h.entry);
    c = check(doctor(input({ cwd: h.ws })), 'hooks');
    assert.equal(c.status, 'fail');
    assert.match(c.message, /the CLI the shim runs .* is missing/);

    h = withHooks();
    c = check(doctor(input({ cwd: h.ws, runtimeRuns: () => false })), 'hooks');
    assert.equal(c.status, 'fail');
    assert.match(c.message, /does not start/);

    h = withHooks();
    fs.chmodSync(h.shim, 0o644);
    assert.match(check(doctor(input({ cwd: h.ws })), 'hooks').message, /not executable/);
  });

  it('an older install’s bare `loopx hook` is a warn; a settings file that does not parse fails', () => {
    const ws = tempDir();
    Store.init(ws);
    fs.mkdirSync(path.join(ws, '.claude'));
    fs.writeFileSync(
      path.join(ws, '.claude', 'settings.json'),
      JSON.stringify({
        hooks: { PreToolUse: [{ hooks: [{ type: 'command', command: 'loopx hook pre-tool-use' }] }] },
      }),
    );
    const bare = check(doctor(input({ cwd: ws })), 'hooks');
    assert.equal(bare.status, 'warn');
    assert.match(bare.message, /bare `loopx hook`/);
    fs.writeFileSync(path.join(ws, '.claude', 'settings.local.json'), '{ nope');
    const broken = check(doctor(input({ cwd: ws })), 'hooks');
    assert.equal(broken.status, 'fail');
    assert.match(broken.message, /settings\.local\.json is not valid JSON/);
  });
});

describe('doctor: keys and approvers', () => {
  it('no key: a warn with `loopx key create`; a key: its fingerprint and name', () => {
    const cwd = tempDir();
    const configDir = path.join(tempDir(), 'cfg');
    const k = check(doctor(input({ cwd, configDir })), 'keys');
    assert.equal(k.status, 'warn');
    assert.equal(k.fix, 'loopx key create');
    const a = check(doctor(input({ cwd, configDir })), 'approvers');
    assert.equal(a.status, 'warn');
    assert.match(a.message, /no approver key is pinned/);
    createTerminalKey(configDir, 'ada', 'correct horse battery', '2026-11-30T00:00:00.000Z');
    const k2 = check(doctor(input({ cwd, configDir })), 'keys');
    assert.equal(k2.status, 'ok');
    assert.match(k2.message, /1 signing key: [0-9a-f ]+ \(ada\)/);
    assert.equal(check(doctor(input({ cwd, configDir })), 'approvers').status, 'ok');
  });

  it('keys published in the workspace and not pinned here are listed, each with `loopx approvers trust <id>`', () => {
    const ws = tempDir();
    const store = Store.init(ws);
    const configDir = path.join(tempDir(), 'cfg');
    const mine = newKeyPair('ada', '2026-11-30T00:00:00.000Z').pub;
    pinKey(configDir, mine);
    publishKey(store.root, mine);
    const bob = newKeyPair('bob', '2026-11-30T00:00:00.000Z').pub;
    const eve = newKeyPair('eve', '2026-11-30T00:00:00.000Z').pub;
    publishKey(store.root, bob);
    publishKey(store.root, eve);
    const c = check(doctor(input({ cwd: ws, configDir })), 'approvers');
    assert.equal(c.status, 'warn');
    assert.match(c.message, /1 key pinned/);
    assert.match(c.message, /\(bob\)/);
    assert.match(c.message, /\(eve\)/);
    assert.doesNotMatch(c.message, /\(ada\)/);
    assert.deepEqual(
      c.fix!.split('\n').sort(),
      [
        `loopx approvers trust ${bob.keyId.slice(0, 16)}`,
        `loopx approvers trust ${eve.keyId.slice(0, 16)}`,
      ].sort(),
    );
  });
});

describe('doctor writes nothing', () => {
  it('neither in the workspace nor in the config folder (not even creating it)', () => {
    const ws = tempDir();
    const store = Store.init(ws, { configDir: path.join(tempDir(), 'unused') });
    fs.mkdirSync(path.join(ws, '.git'));
    fs.writeFileSync(store.policyPath, '{ "v": 1, "nope": true }');
    const configDir = path.join(tempDir(), 'never-made');
    const before = tree(ws);
    const doc = doctor(input({ cwd: ws, configDir }));
    assert.equal(check(doc, 'policy').status, 'fail');
    assert.deepEqual(tree(ws), before);
    assert.equal(fs.existsSync(configDir), false);
  });
});
