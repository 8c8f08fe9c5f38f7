/**
 * The `loopx` shim of "Install 'loopx' Command in PATH" (src/core/setup/cli-shim.ts), run by the real sh:
 * which runtime it picks, what it says when the target or the CLI is gone, and that install and
 * uninstall touch only a shim of ours.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  CLI_SHIM_MARKER,
  cliShimState,
  installCliShim,
  onPath,
  pathHint,
  uninstallCliShim,
  writeCliTarget,
} from '../../../../src/core/setup/cli-shim';
import { LoopxError } from '../../../../src/core/model/errors';

const dirs: string[] = [];
after(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));
function tmp(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "loopx-cli-shim-it's "));
  dirs.push(d);
  return d;
}

/** A fake CLI that prints which runtime ran it and with what. */
function fakeCli(dir: string): string {
  const cli = path.join(dir, 'cli.js');
  fs.writeFileSync(
    cli,
    'console.log(JSON.stringify({ argv: process.argv.slice(2), electron: process.env.ELECTRON_RUN_AS_NODE ?? null, via: process.env.VIA ?? null }))\n',
  );
  return cli;
}

/** A folder with a `node` that marks itself (VIA=path-node) and runs the real one. */
function pathNode(dir: string): string {
  const d = path.join(dir, 'path-node');
  fs.mkdirSync(d);
  fs.writeFileSync(path.join(d, 'node'), `#!/bin/sh\nVIA=path-node exec '${process.execPath}' "$@"\n`, {
    mode: 0o755,
  });
  return d;
}

function runShim(shim: string, PATH: string, ...args: string[]) {
  return spawnSync(shim, args, { encoding: 'utf8', env: { PATH, HOME: os.tmpdir() } });
}

function setup() {
  const root = tmp();
  const storage = path.join(root, 'storage');
  const target = writeCliTarget(storage, { node: process.execPath, cli: fakeCli(root) });
  const bin = path.join(root, 'bin');
  const res = installCliShim(bin, target, '/usr/bin');
  return { root, storage, target, bin, shim: res.file, res };
}

describe('the loopx command shim', () => {
  it('writes an executable shim with the marker, and reports the folder is not on PATH', () => {
    const { bin, shim, res } = setup();
    assert.deepEqual(res, { file: path.join(bin, 'loopx'), changed: true, onPath: false });
    assert.equal(fs.readFileSync(shim, 'utf8').split('\n')[1], CLI_SHIM_MARKER);
    assert.equal(fs.statSync(shim).mode & 0o777, 0o755);
    assert.equal(cliShimState(bin).state, 'ours');
  });

  it('runs the CLI with the node on PATH when there is one, passing every argument', () => {
    const { root, shim } = setup();
    const r = runShim(shim, pathNode(root), 'status', 'a b', "it's");
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), {
      argv: ['status', 'a b', "it's"],
      electron: null,
      via: 'path-node',
    });
  });

  it("runs it with the editor's runtime (ELECTRON_RUN_AS_NODE=1) when PATH has no node", () => {
    const { root, shim } = setup();
    const r = runShim(shim, path.join(root, 'empty'), '--version');
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), { argv: ['--version'], electron: '1', via: null });
  });

  it('follows the target file: the extension rewrites it after an update', () => {
    const { root, storage, shim } = setup();
    const newer = path.join(root, 'v2');
    fs.mkdirSync(newer);
    fs.writeFileSync(path.join(newer, 'cli.js'), 'console.log("v2")\n');
    writeCliTarget(storage, { node: process.execPath, cli: path.join(newer, 'cli.js') });
    assert.equal(runShim(shim, '/nonexistent').stdout, 'v2\n');
  });

  it('says what is missing, and how to fix it, when the target, the CLI or every runtime is gone', () => {
    const { root, storage, target, shim } = setup();
    writeCliTarget(storage, { node: path.join(root, 'gone-node'), cli: path.join(root, 'cli.js') });
    let r = runShim(shim, '/nonexistent');
    assert.equal(r.status, 1);
    assert.match(
      r.stderr,
      /^loopx: no node on PATH, and the editor's runtime .*gone-node is gone: install Node\.js/,
    );
    writeCliTarget(storage, { node: process.execPath, cli: path.join(root, 'gone.js') });
    r = runShim(shim, '/nonexistent');
    assert.equal(r.status, 1);
    assert.match(
      r.stderr,
      /the LoopX CLI .*gone\.js is missing \(LoopX was updated or removed\): open VS Code/,
    );
    fs.rmSync(target);
    r = runShim(shim, '/nonexistent');
    assert.equal(r.status, 1);
    assert.ok(r.stderr.startsWith(`loopx: ${target} is missing: open VS Code with LoopX once`), r.stderr);
  });

  it('is idempotent, and refuses to replace a loopx it did not write (a file or a link)', () => {
    const { bin, target } = setup();
    assert.equal(installCliShim(bin, target).changed, false);
    const other = tmp();
    fs.writeFileSync(path.join(other, 'loopx'), '#!/bin/sh\necho mine\n');
    const refusal = (fn: () => unknown) =>
      assert.throws(fn, (e: unknown) => e instanceof LoopxError && e.reason === 'cli_shim_not_ours');
    refusal(() => installCliShim(other, target));
    assert.equal(fs.readFileSync(path.join(other, 'loopx'), 'utf8'), '#!/bin/sh\necho mine\n');
    // A link to a shim of ours is still someone's link (npm's global bin, say).
    const linked = tmp();
    fs.symlinkSync(path.join(bin, 'loopx'), path.join(linked, 'loopx'));
    assert.equal(cliShimState(linked).state, 'foreign');
    refusal(() => installCliShim(linked, target));
    refusal(() => uninstallCliShim(other));
  });

  it('uninstalls only its shim, and answers undefined when there is none', () => {
    const { bin } = setup();
    assert.equal(uninstallCliShim(bin), path.join(bin, 'loopx'));
    assert.equal(fs.existsSync(path.join(bin, 'loopx')), false);
    assert.equal(uninstallCliShim(bin), undefined);
  });

  it("speaks for whoever installed it: the origin's wording, quotes and all, in its messages", () => {
    const { root, storage, target } = setup();
    const bin = path.join(root, 'bin2');
    const origin = { installedBy: 'by a `test`', reinstall: `run "it's $HOME" again`, runtime: 'the node' };
    const { file } = installCliShim(bin, target, '', origin);
    assert.match(fs.readFileSync(file, 'utf8'), /^# The `loopx` command, installed by a `test`\.$/m);
    writeCliTarget(storage, { node: path.join(root, 'gone-node'), cli: path.join(root, 'cli.js') });
    const r = runShim(file, '/nonexistent');
    assert.equal(r.status, 1);
    assert.match(
      r.stderr,
      /^loopx: no node on PATH, and the node .*gone-node is gone: install Node\.js 20 or later, or run "it's \$HOME" again\n$/,
    );
    // The same target, another origin: the shim is rewritten, still ours.
    assert.equal(installCliShim(bin, target).changed, true);
    assert.equal(cliShimState(bin).state, 'ours');
    assert.throws(() => installCliShim(bin, target, '', { ...origin, reinstall: 'a\nb' }), /one line/);
  });

  it('checks paths: absolute, no line breaks', () => {
    const d = tmp();
    assert.throws(() => writeCliTarget(d, { node: 'node', cli: '/x/cli.js' }), /absolute path/);
    assert.throws(() => writeCliTarget(d, { node: '/n', cli: '/x\n/cli.js' }), /line breaks/);
    assert.throws(() => installCliShim('bin', '/t'), /absolute path/);
  });

  it('knows whether a folder is on PATH, and the line that adds it', () => {
    assert.equal(onPath('/home/u/.local/bin', '/usr/bin:/home/u/.local/bin/:relative'), true);
    assert.equal(onPath('/home/u/.local/bin', '/usr/bin:.local/bin'), false);
    assert.equal(pathHint("/home/o'k/bin"), `export PATH='/home/o'\\''k/bin':"$PATH"`);
  });
});
