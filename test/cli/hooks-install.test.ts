/**
 * `loopx hooks install` shows what it will write (each file, new or merged; the hook commands with
 * the shim's absolute path; the CLI the shim runs) and asks on the terminal before writing.
 * `--yes` skips the question; with no terminal and no `--yes` it writes nothing and exits 2.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { BIN, Ws, fails, loopxTty, ok, removeTempDirs, tempDir } from '../helpers/cli';

after(removeTempDirs);

const CLI = fs.realpathSync(BIN);
const VSCODE = path.join('.github', 'hooks', 'loopx.json');
const CLAUDE = path.join('.claude', 'settings.local.json');

async function workspace() {
  const ws = new Ws();
  ok(await ws.run('init'));
  // Claude Code settings of the person's own, which install merges into.
  fs.mkdirSync(ws.file('.claude'));
  fs.writeFileSync(ws.file(CLAUDE), JSON.stringify({ model: 'opus' }));
  return ws;
}

/** The shim in a config folder (by default the tests', from scripts/test/run-suite.mjs). */
const shim = (config = process.env.LOOPX_CONFIG_DIR!) => path.join(config, 'bin', 'loopx-hook');

/** The plan as it is shown: every file, the commands with the shim's path, the CLI it runs. */
function assertPlan(text: string, config = process.env.LOOPX_CONFIG_DIR!) {
  assert.match(text, /loopx hooks install will write, in /);
  assert.ok(text.includes(`  ${VSCODE} (new file)`), text);
  assert.ok(text.includes(`  ${CLAUDE} (LoopX hooks merged into the existing file, the rest kept)`), text);
  assert.ok(text.includes(`  ${shim(config)} pre-tool-use || exit 2`), text);
  assert.ok(text.includes(`  ${shim(config)} stop`), text);
  assert.ok(text.includes(`the shim runs: ${process.execPath} ${CLI} hook <event>`), text);
}

describe('loopx hooks install', () => {
  it('without a terminal and without --yes: the plan, nothing written, exit 2 saying to pass --yes', async () => {
    const ws = await workspace();
    const r = await ws.run('hooks', 'install');
    assert.equal(r.code, 2, r.stderr);
    assertPlan(r.stdout);
    assert.match(
      r.stderr,
      /^loopx: there is no terminal to ask on: nothing was written; pass --yes to write them without asking/,
    );
    assert.equal(fs.existsSync(ws.file(VSCODE)), false);
    assert.equal(fs.readFileSync(ws.file(CLAUDE), 'utf8'), JSON.stringify({ model: 'opus' }));
    // With --json the plan goes to stderr: stdout stays empty on an error.
    const j = await ws.run('--json', 'hooks', 'install');
    assert.equal(j.code, 2);
    assert.equal(j.stdout, '');
    assertPlan(j.stderr);
    assert.equal(JSON.parse(j.stderr.trim().split('\n').at(-1)!).error.reason, 'confirmation_needed');
  });

  it('--yes writes without asking; the JSON document is as before', async () => {
    const ws = await workspace();
    const r = ok(await ws.run('--json', 'hooks', 'install', '--yes'));
    const doc = JSON.parse(r.stdout) as { schema: string; shim: string; cli: string; written: string[] };
    assert.equal(doc.schema, 'loopx.hooks-install/1');
    assert.deepEqual([doc.shim, doc.cli], [shim(), CLI]);
    assert.deepEqual(doc.written, [ws.file(VSCODE), ws.file(CLAUDE)]);
    const claude = JSON.parse(fs.readFileSync(ws.file(CLAUDE), 'utf8')) as { model: string };
    assert.equal(claude.model, 'opus');
    // Installed already: nothing to ask, nothing to write.
    const again = ok(await ws.run('hooks', 'install'));
    assert.match(again.stdout, /the hooks are already installed/);
  });

  it('at a terminal: the plan with the new shim, and "Write these 3 files? [y/N]"; y writes them', async () => {
    const ws = await workspace();
    const config = tempDir('loopx-config-');
    const r = await loopxTty(['hooks', 'install'], {
      cwd: ws.dir,
      typed: 'y',
      env: { LOOPX_CONFIG_DIR: config },
    });
    assert.equal(r.code, 0, r.output);
    assertPlan(r.output, config);
    assert.ok(r.output.includes(`  ${shim(config)} (the hook shim, in your LoopX config folder)`), r.output);
    assert.match(r.output, /Write these 3 files\? \[y\/N\] /);
    assert.ok(fs.existsSync(ws.file(VSCODE)));
    assert.ok(fs.readFileSync(ws.file(CLAUDE), 'utf8').includes(shim(config)));
    assert.ok(fs.statSync(shim(config)).mode & 0o100, 'the shim is executable');
  });

  it('at a terminal, anything but yes writes nothing and exits 4', async () => {
    const ws = await workspace();
    for (const typed of ['', 'n', 'sure']) {
      const r = await loopxTty(['hooks', 'install'], { cwd: ws.dir, typed });
      assert.equal(r.code, 4, r.output);
      assert.match(r.output, /you answered no: nothing was written/);
      assert.equal(fs.existsSync(ws.file(VSCODE)), false);
    }
  });

  it('--dry-run asks nothing and writes nothing', async () => {
    const ws = await workspace();
    const r = ok(await ws.run('hooks', 'install', '--dry-run'));
    assert.match(r.stdout, /^would write .*loopx\.json$/m);
    assert.equal(fs.existsSync(ws.file(VSCODE)), false);
    fails(await ws.run('hooks', 'install', '--dry-run', '--bogus'), 2);
  });
});
