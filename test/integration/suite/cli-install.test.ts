/**
 * "LoopX: Install 'loopx' Command in PATH" and Uninstall in a real VS Code host, with the folder
 * given as the command's argument (as tests and automation do): the shim it writes is then run
 * from another folder, with a `node` on PATH and with none (the editor's runtime runs the CLI).
 * Also: the extension is a workspace extension, and in code-server (a remote) it runs there.
 */
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { api, withStub, EXTENSION_ID } from './util';
import { CLI_SHIM_MARKER } from '../../../src/core/setup/cli-shim';

type Shown = { kind: string; text: string }[];

/** Runs `fn` with the notifications replaced; returns what it showed and what it returned. */
async function capture<R>(fn: () => PromiseLike<R>): Promise<{ shown: Shown; result: R }> {
  const shown: Shown = [];
  const stub = (kind: string) =>
    ((text: string) => {
      shown.push({ kind, text });
      return Promise.resolve(undefined);
    }) as never;
  const result = await withStub('showInformationMessage', stub('info'), () =>
    withStub('showWarningMessage', stub('warning'), () => withStub('showErrorMessage', stub('error'), fn)),
  );
  return { shown, result };
}

export function registerCliInstallTests(): void {
  describe("the 'loopx' command in PATH", function () {
    let tmp = '';
    let bin = '';
    let elsewhere = '';
    const env = (PATH: string) => ({
      ...process.env,
      PATH,
      XDG_CACHE_HOME: path.join(tmp, 'cache'),
      LOOPX_WORKSPACE: '',
    });

    before(async () => {
      await api();
      tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-cli-it-'));
      bin = path.join(tmp, 'bin');
      elsewhere = path.join(tmp, 'elsewhere');
      fs.mkdirSync(elsewhere);
    });
    after(() => fs.rmSync(tmp, { recursive: true, force: true }));

    it('is a workspace extension, running in the remote extension host', () => {
      const ext = vscode.extensions.getExtension(EXTENSION_ID)!;
      assert.deepEqual(ext.packageJSON.extensionKind, ['workspace']);
      assert.equal(ext.extensionKind, vscode.ExtensionKind.Workspace);
      assert.ok(vscode.env.remoteName, 'code-server is a remote: the extension runs on its side');
    });

    it('installs the shim into the folder given, and says it is not on PATH and how to add it', async () => {
      const started = Date.now();
      const { shown, result } = await capture(() =>
        vscode.commands.executeCommand<{ file: string; changed: boolean; onPath: boolean }>(
          'loopx.installCli',
          {
            dir: bin,
          },
        ),
      );
      const shim = path.join(bin, 'loopx');
      assert.deepEqual(result, { file: shim, changed: true, onPath: false });
      const text = fs.readFileSync(shim, 'utf8');
      assert.equal(text.split('\n')[1], CLI_SHIM_MARKER);
      assert.equal(fs.statSync(shim).mode & 0o777, 0o755);
      assert.equal(shown.length, 1, JSON.stringify(shown));
      assert.equal(shown[0]!.kind, 'warning');
      assert.match(shown[0]!.text, new RegExp(`Installed ${shim}\\.`));
      assert.ok(
        shown[0]!.text.includes(`${bin} is not on your PATH: add \`export PATH=${bin}:"$PATH"\``),
        shown[0]!.text,
      );
      // The shim reads the target the extension keeps current: this extension's CLI and runtime.
      const target = /^target=(.*)$/m.exec(text)![1]!.replace(/^'|'$/g, '');
      const ext = vscode.extensions.getExtension(EXTENSION_ID)!;
      assert.deepEqual(fs.readFileSync(target, 'utf8').split('\n'), [
        process.execPath,
        path.join(ext.extensionPath, 'bin', 'loopx.js'),
        '',
      ]);
      // Written when the extension activated (and left as it was by the install).
      assert.ok(fs.statSync(target).mtimeMs < started, 'the target file predates the command');
      // Again: nothing changes, and the message says it was there already.
      const again = await capture(() => vscode.commands.executeCommand('loopx.installCli', { dir: bin }));
      assert.deepEqual(again.result, { file: shim, changed: false, onPath: false });
      assert.match(again.shown[0]!.text, /Already installed/);
    });

    it('runs `loopx --version` from another folder with the node on PATH', () => {
      // A `node` first on PATH that leaves a trace, then runs the editor's runtime.
      const fake = path.join(tmp, 'fake-node');
      fs.mkdirSync(fake);
      const trace = path.join(tmp, 'node-used');
      fs.writeFileSync(
        path.join(fake, 'node'),
        `#!/bin/sh\necho used >> '${trace}'\nELECTRON_RUN_AS_NODE=1 exec '${process.execPath}' "$@"\n`,
        { mode: 0o755 },
      );
      const r = spawnSync(path.join(bin, 'loopx'), ['--version'], {
        cwd: elsewhere,
        encoding: 'utf8',
        env: env(`${bin}:${fake}`),
      });
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.stdout.trim(), vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON.version);
      assert.equal(fs.readFileSync(trace, 'utf8'), 'used\n');
    });

    it("runs with the editor's runtime when there is no node on PATH: --version, init, status", () => {
      const PATH = bin; // the shim's folder only: no node anywhere on it
      const run = (...args: string[]) =>
        spawnSync('loopx', args, { cwd: elsewhere, encoding: 'utf8', env: env(PATH) });
      const v = run('--version');
      assert.equal(v.status, 0, v.stderr);
      assert.equal(v.stdout.trim(), vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON.version);
      const init = run('init');
      assert.equal(init.status, 0, init.stderr);
      assert.ok(fs.existsSync(path.join(elsewhere, '.loopx', 'policy.json')));
      const status = run('status', '--json');
      assert.equal(status.status, 0, status.stderr);
      assert.match(JSON.parse(status.stdout).schema, /^loopx\./);
    });

    it('refuses to overwrite a loopx it did not write, naming the file', async () => {
      const other = path.join(tmp, 'other-bin');
      fs.mkdirSync(other);
      const theirs = path.join(other, 'loopx');
      fs.writeFileSync(theirs, '#!/bin/sh\necho somebody else\n', { mode: 0o755 });
      const { shown, result } = await capture(() =>
        vscode.commands.executeCommand('loopx.installCli', { dir: other }),
      );
      assert.equal(result, undefined);
      assert.equal(fs.readFileSync(theirs, 'utf8'), '#!/bin/sh\necho somebody else\n');
      assert.equal(shown.length, 1, JSON.stringify(shown));
      assert.equal(shown[0]!.kind, 'error');
      assert.ok(shown[0]!.text.includes(`${theirs} exists and is not a LoopX shim`), shown[0]!.text);
      // Uninstall leaves it alone too.
      const un = await capture(() => vscode.commands.executeCommand('loopx.uninstallCli', { dir: other }));
      assert.deepEqual(un.result, []);
      assert.ok(fs.existsSync(theirs));
      assert.ok(
        un.shown[0]!.text.includes(`Left alone (not written by LoopX): ${theirs}`),
        un.shown[0]!.text,
      );
    });

    it('uninstalls only its shim, and says so when none is installed', async () => {
      const shim = path.join(bin, 'loopx');
      const first = await capture(() => vscode.commands.executeCommand('loopx.uninstallCli', { dir: bin }));
      assert.deepEqual(first.result, [shim]);
      assert.ok(!fs.existsSync(shim));
      assert.match(first.shown[0]!.text, new RegExp(`Removed ${shim}\\.`));
      const second = await capture(() => vscode.commands.executeCommand('loopx.uninstallCli', { dir: bin }));
      assert.deepEqual(second.result, []);
      assert.match(second.shown[0]!.text, /No .loopx. command installed by LoopX was found/);
    });
  });
}
