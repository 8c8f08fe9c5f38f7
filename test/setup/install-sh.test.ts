/**
 * scripts/install.sh, run by the real sh: from this checkout (built, or built by it), and from a
 * .vsix that `packageVsix` made, read with unzip, else python3, else node; it hands over to the
 * CLI's `loopx install-command`. Then `loopx` runs from another folder. Running it again changes
 * nothing; a `loopx` that is not LoopX's is left alone; without node it says so.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { REPO, VERSION, need, pathWithout, removeTempDirs, run, tempDir, userEnv } from '../helpers/install';
import { installCliShim, pathHint, writeCliTarget } from '../../src/core/setup/cli-shim';
import type { PackageModule } from '../helpers/workbench';

const SCRIPT = path.join(REPO, 'scripts', 'install.sh');
// The CLI's run-time files, the dashboard page's among them (`loopx status-server` serves them).
const CLI_FILES: readonly string[] = JSON.parse(
  fs.readFileSync(path.join(REPO, 'packaging', 'cli', 'files.json'), 'utf8'),
) as string[];

function install(args: string[], env: NodeJS.ProcessEnv, script = SCRIPT) {
  return run('sh', [script, ...args], { cwd: env.HOME!, env });
}

/** `loopx --version` and `loopx init` in a new folder, found on PATH as a person would. */
function works(bin: string, env: NodeJS.ProcessEnv) {
  const project = tempDir('loopx-project-');
  const e = { ...env, PATH: `${bin}:${env.PATH}` };
  const v = run('loopx', ['--version'], { cwd: project, env: e });
  assert.equal(v.status, 0, v.stderr);
  assert.equal(v.stdout.trim(), VERSION);
  const init = run('loopx', ['init'], { cwd: project, env: e });
  assert.equal(init.status, 0, init.stderr);
  assert.ok(fs.existsSync(path.join(project, '.loopx', 'policy.json')));
}

describe('scripts/install.sh', () => {
  let vsix = '';
  before(async () => {
    const { packageVsix } = (await import(
      pathToFileURL(path.join(REPO, 'scripts', 'build', 'package.mjs')).href
    )) as PackageModule;
    vsix = packageVsix({ out: path.join(tempDir('loopx-vsix-'), 'loopx.vsix'), build: false }).file;
  });
  after(removeTempDirs);

  it('installs from the checkout into --prefix, says the folder is not on PATH, and loopx runs', () => {
    const home = tempDir();
    const prefix = path.join(home, 'opt');
    const env = userEnv(home);
    const r = install(['--prefix', prefix], env);
    assert.equal(r.status, 0, r.stderr);
    const share = path.join(prefix, 'share', 'loopx', VERSION);
    const lines = r.stdout.trim().split('\n');
    assert.deepEqual(lines.slice(0, CLI_FILES.length + 4), [
      `loopx ${VERSION} from ${REPO}`,
      ...CLI_FILES.map((f) => `  wrote       ${path.join(share, f)}`),
      `  wrote       ${path.join(share, 'package.json')}`,
      `  wrote       ${path.join(prefix, 'share', 'loopx', 'cli.target')}`,
      `  wrote       ${path.join(prefix, 'bin', 'loopx')}`,
    ]);
    assert.match(r.stdout, new RegExp(`${prefix}/bin is not on PATH: add this line`));
    assert.ok(r.stdout.includes(`\n  ${pathHint(path.join(prefix, 'bin'))}\n`), r.stdout);
    assert.equal(r.stderr, '');
    for (const f of CLI_FILES)
      assert.ok(fs.readFileSync(path.join(share, f)).equals(fs.readFileSync(path.join(REPO, f))), f);
    works(path.join(prefix, 'bin'), env);
    // With no node on PATH, the node found at install time runs it.
    const bare = run(path.join(prefix, 'bin', 'loopx'), ['--version'], {
      cwd: home,
      env: { PATH: '/nonexistent' },
    });
    assert.equal(bare.status, 0, bare.stderr);
    assert.equal(bare.stdout.trim(), VERSION);
  });

  it('is idempotent: a second run writes nothing, and says the folder is on PATH', () => {
    const home = tempDir();
    const env = userEnv(home, { LOOPX_PREFIX: path.join(home, 'p') });
    assert.equal(install([], env).status, 0);
    const shim = path.join(home, 'p', 'bin', 'loopx');
    const before = fs.statSync(shim).mtimeMs;
    const again = install([], { ...env, PATH: `${path.join(home, 'p', 'bin')}:${env.PATH}` });
    assert.equal(again.status, 0, again.stderr);
    const changes = again.stdout.split('\n').filter((l) => /^ {2}\w/.test(l));
    assert.equal(changes.length, CLI_FILES.length + 3);
    assert.ok(
      changes.every((l) => l.startsWith('  unchanged   ')),
      again.stdout,
    );
    assert.match(again.stdout, /p\/bin is on PATH: run `loopx --version`/);
    assert.equal(fs.statSync(shim).mtimeMs, before);
  });

  it('installs into ~/.local by default; --prefix wins over LOOPX_PREFIX, and may be relative', () => {
    const home = tempDir();
    const env = userEnv(home);
    assert.equal(install([], env).status, 0);
    assert.ok(fs.existsSync(path.join(home, '.local', 'bin', 'loopx')));
    assert.ok(fs.existsSync(path.join(home, '.local', 'share', 'loopx', VERSION, 'dist', 'cli.js')));
    const r = install(['--prefix=rel'], { ...env, LOOPX_PREFIX: path.join(home, 'not-this') });
    assert.equal(r.status, 0, r.stderr);
    assert.ok(fs.existsSync(path.join(home, 'rel', 'bin', 'loopx')), 'relative to the folder it ran in');
    assert.ok(!fs.existsSync(path.join(home, 'not-this')));
  });

  for (const [how, hidden] of [
    ['unzip', []],
    ['python3 (no unzip)', ['unzip']],
    ['node (no unzip, no python3)', ['unzip', 'python3']],
  ] as const) {
    it(`installs from a .vsix read with ${how}, and loopx runs`, () => {
      // Each reader this way is the first one left (else the test would check another).
      need(['unzip', 'python3', 'node'].find((x) => !(hidden as readonly string[]).includes(x))!);
      const home = tempDir();
      const env = userEnv(home, hidden.length ? { PATH: pathWithout([...hidden]) } : {});
      const r = install([vsix], env);
      assert.equal(r.status, 0, r.stderr);
      assert.ok(r.stdout.startsWith(`unpacking the CLI from ${vsix} ...\nloopx ${VERSION} from `), r.stdout);
      const share = path.join(home, '.local', 'share', 'loopx', VERSION);
      for (const f of CLI_FILES)
        assert.ok(fs.readFileSync(path.join(share, f)).equals(fs.readFileSync(path.join(REPO, f))), f);
      // Only the CLI (and its dashboard page): the extension's own bundle stays in the .vsix.
      assert.deepEqual(fs.readdirSync(share).sort(), ['bin', 'dist', 'media', 'package.json']);
      assert.deepEqual(fs.readdirSync(path.join(share, 'dist')).sort(), [
        'cli.js',
        'decide.js',
        'mcp.js',
        'prebuilds',
        'webauthn.js',
        'webview.js',
      ]);
      assert.deepEqual(fs.readdirSync(path.join(share, 'media')).sort(), [
        'browser-theme.css',
        'dashboard.css',
      ]);
      works(path.join(home, '.local', 'bin'), env);
      // The CLI ran from the unpacked .vsix, which is gone once it is installed.
      const from = /^loopx \S+ from (.*)$/m.exec(r.stdout)![1]!;
      assert.ok(!fs.existsSync(from), `${from} is left behind`);
    });
  }

  it('builds the CLI first in a checkout that has node_modules but no dist/', () => {
    const checkout = tempDir('loopx-checkout-');
    for (const d of [
      'src',
      'scripts',
      'bin',
      'webview',
      'media',
      'packaging',
      'package.json',
      'tsconfig.json',
    ])
      if (fs.existsSync(path.join(REPO, d)))
        fs.cpSync(path.join(REPO, d), path.join(checkout, d), { recursive: true });
    const home = tempDir();
    const env = userEnv(home);
    const bare = install([], env, path.join(checkout, 'scripts', 'install.sh'));
    assert.equal(bare.status, 3);
    assert.match(
      bare.stderr,
      /the CLI is not built in .*: run `npm install` and `npm run build` there first/,
    );
    fs.symlinkSync(path.join(REPO, 'node_modules'), path.join(checkout, 'node_modules'));
    const r = install([], env, path.join(checkout, 'scripts', 'install.sh'));
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^building the CLI in /);
    works(path.join(home, '.local', 'bin'), env);
  });

  it("replaces a shim LoopX wrote (VS Code's Install command), and leaves anyone else's loopx alone", () => {
    const home = tempDir();
    const env = userEnv(home);
    const bin = path.join(home, '.local', 'bin');
    const target = writeCliTarget(path.join(home, 'storage'), {
      node: process.execPath,
      cli: '/gone/loopx.js',
    });
    installCliShim(bin, target);
    assert.match(fs.readFileSync(path.join(bin, 'loopx'), 'utf8'), /installed from VS Code/);
    assert.equal(install([], env).status, 0);
    assert.match(fs.readFileSync(path.join(bin, 'loopx'), 'utf8'), /installed by `scripts\/install\.sh`/);
    works(bin, env);

    const other = tempDir();
    const theirs = path.join(other, '.local', 'bin', 'loopx');
    fs.mkdirSync(path.dirname(theirs), { recursive: true });
    fs.writeFileSync(theirs, '#!/bin/sh\necho mine\n');
    const r = install([], userEnv(other));
    assert.equal(r.status, 4);
    assert.equal(
      r.stderr,
      `loopx: ${theirs} exists and is not a LoopX shim: LoopX leaves it alone; choose another folder, or remove that file first\n`,
    );
    assert.equal(fs.readFileSync(theirs, 'utf8'), '#!/bin/sh\necho mine\n');
    assert.ok(!fs.existsSync(path.join(other, '.local', 'share')), 'nothing written');
  });

  it('refuses bad input with a clear message: exit 2 usage, 3 not found, 6 not a LoopX .vsix', () => {
    const home = tempDir();
    const env = userEnv(home);
    let r = install(['--frobnicate'], env);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /^install\.sh: unknown option --frobnicate \(usage: scripts\/install\.sh/);
    r = install(['--prefix'], env);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /--prefix needs a folder/);
    r = install([path.join(home, 'nope.vsix')], env);
    assert.equal(r.status, 3);
    assert.match(r.stderr, /nope\.vsix: no such file/);
    const junk = path.join(home, 'junk.vsix');
    fs.writeFileSync(junk, 'not a zip');
    r = install([junk], env);
    assert.equal(r.status, 6);
    assert.match(r.stderr, /junk\.vsix is not a LoopX \.vsix/);
    assert.ok(!fs.existsSync(path.join(home, '.local')), 'nothing written');
  });

  it('says it needs node, and exits 3 having written nothing, when there is none on PATH', () => {
    const home = tempDir();
    for (const args of [[], [vsix]]) {
      const r = install(args, userEnv(home, { PATH: pathWithout(['node']) }));
      assert.equal(r.status, 3, r.stderr);
      assert.match(r.stderr, /^install\.sh: no node on PATH: the loopx CLI runs on Node\.js 20 or later/);
      assert.ok(!fs.existsSync(path.join(home, '.local')), 'nothing written');
    }
  });
});
