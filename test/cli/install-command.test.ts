/**
 * `loopx install-command` from the built CLI: it copies its own files under DIR/share/loopx/<version>/,
 * writes the target file and the `loopx` shim, and then `DIR/bin/loopx` runs from any folder, with
 * the node on PATH or, without one, the runtime it recorded. Running it again changes nothing;
 * --dry-run writes nothing; a `loopx` that LoopX did not write is refused before anything is copied.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import * as http from 'node:http';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CLI_SHIM_MARKER, pathHint } from '../../src/core/setup/cli-shim';
import { InstallCommandOutput } from '../../src/core/views/output-schemas';
import { REPO, fails, json, listTree, loopx, ok, removeTempDirs, tempDir } from '../helpers/cli';

after(removeTempDirs);

const VERSION = (JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { version: string })
  .version;
// The CLI's run-time files, the dashboard page's among them (`loopx status-server` serves them).
const CLI_FILES: readonly string[] = JSON.parse(
  fs.readFileSync(path.join(REPO, 'packaging', 'cli', 'files.json'), 'utf8'),
) as string[];

/** Every file install-command reports, in order: the copies, their manifest, the target file, the shim. */
const expectedFiles = (prefix: string) => [
  ...CLI_FILES.map((f) => path.join(prefix, 'share', 'loopx', VERSION, f)),
  path.join(prefix, 'share', 'loopx', VERSION, 'package.json'),
  path.join(prefix, 'share', 'loopx', 'cli.target'),
  path.join(prefix, 'bin', 'loopx'),
];

/** A PATH with `node` (a folder linking only to it) and nothing else of this machine's. */
function pathWithNode(): string {
  const dir = tempDir('loopx-node-only-');
  fs.symlinkSync(process.execPath, path.join(dir, 'node'));
  return dir;
}

/** `DIR/bin/loopx args` from a fresh folder, with exactly this PATH. */
function runShim(prefix: string, PATH: string, ...args: string[]) {
  const r = spawnSync(path.join(prefix, 'bin', 'loopx'), args, {
    cwd: tempDir('loopx-elsewhere-'),
    env: { PATH, HOME: tempDir('loopx-home-') },
    encoding: 'utf8',
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const install = (args: string[], env: Record<string, string> = {}, cwd = tempDir()) =>
  loopx(['install-command', ...args], { cwd, env: { PATH: '/usr/bin:/bin', ...env } });

describe('loopx install-command', () => {
  it('copies the CLI, writes the target and the shim, and loopx runs with or without node on PATH', async () => {
    const prefix = path.join(tempDir(), 'opt');
    const r = ok(await install(['--prefix', prefix]));
    const files = expectedFiles(prefix);
    const bin = path.join(prefix, 'bin');
    assert.equal(
      r.stdout,
      [
        `loopx ${VERSION} from ${REPO}`,
        ...files.map((f) => `  wrote       ${f}`),
        `${bin} is not on PATH: add this line to your shell's startup file (~/.profile, ~/.bashrc or ~/.zshrc), then open a new terminal:`,
        `  ${pathHint(bin)}`,
        '',
      ].join('\n'),
    );
    for (const f of CLI_FILES) {
      const copy = path.join(prefix, 'share', 'loopx', VERSION, f);
      assert.ok(fs.readFileSync(copy).equals(fs.readFileSync(path.join(REPO, f))), f);
      assert.equal(fs.statSync(copy).mode & 0o777, f === 'bin/loopx.js' ? 0o755 : 0o644, f);
    }
    assert.equal(
      fs.readFileSync(files[CLI_FILES.length + 1]!, 'utf8'),
      `${process.execPath}\n${path.join(prefix, 'share', 'loopx', VERSION, 'bin', 'loopx.js')}\n`,
    );
    const shim = fs.readFileSync(files[CLI_FILES.length + 2]!, 'utf8');
    assert.equal(shim.split('\n')[1], CLI_SHIM_MARKER);
    assert.match(shim, /installed by `scripts\/install\.sh` \/ `loopx install-command`/);
    assert.equal(fs.statSync(files[CLI_FILES.length + 2]!).mode & 0o777, 0o755);

    const withNode = runShim(prefix, pathWithNode(), '--version');
    assert.equal(withNode.code, 0, withNode.stderr);
    assert.equal(withNode.stdout, `${VERSION}\n`);
    // No node on PATH: the runtime recorded in the target file runs it.
    const bare = runShim(prefix, '/nonexistent', '--version');
    assert.equal(bare.code, 0, bare.stderr);
    assert.equal(bare.stdout, `${VERSION}\n`);
    // And when that is gone too, the shim says what to do.
    fs.writeFileSync(
      files[CLI_FILES.length + 1]!,
      `/gone/node\n${path.join(prefix, 'share', 'loopx', VERSION, 'bin', 'loopx.js')}\n`,
    );
    const none = runShim(prefix, '/nonexistent', '--version');
    assert.equal(none.code, 1);
    assert.match(
      none.stderr,
      /^loopx: no node on PATH, and the runtime recorded at install \/gone\/node is gone: install Node\.js 20 or later, or run `scripts\/install\.sh` again\n$/,
    );
  });

  it('is idempotent: a rerun reports every file unchanged and touches none, and says DIR/bin is on PATH', async () => {
    const prefix = tempDir();
    ok(await install(['--prefix', prefix]));
    const files = expectedFiles(prefix);
    const mtimes = files.map((f) => fs.statSync(f).mtimeMs);
    const bin = path.join(prefix, 'bin');
    const again = ok(await install(['--prefix', prefix], { PATH: `/usr/bin:${bin}/` }));
    assert.deepEqual(again.stdout.trim().split('\n').slice(1), [
      ...files.map((f) => `  unchanged   ${f}`),
      `${bin} is on PATH: run \`loopx --version\``,
    ]);
    assert.deepEqual(
      files.map((f) => fs.statSync(f).mtimeMs),
      mtimes,
    );
    // The installed copy installs itself just as well: its own files are already there.
    const self = runShim(prefix, pathWithNode(), 'install-command', '--prefix', prefix, '--json');
    assert.equal(self.code, 0, self.stderr);
    const doc = InstallCommandOutput.parse(JSON.parse(self.stdout));
    assert.equal(doc.source, path.join(prefix, 'share', 'loopx', VERSION));
    assert.ok(
      doc.files.every((f) => !f.changed),
      self.stdout,
    );
  });

  it('a new version rewrites the target file, not the shim', async () => {
    const prefix = tempDir();
    ok(await install(['--prefix', prefix]));
    const [target, shim] = expectedFiles(prefix).slice(-2);
    fs.writeFileSync(
      target!,
      `${process.execPath}\n${path.join(prefix, 'share', 'loopx', '0.0.1', 'bin', 'loopx.js')}\n`,
    );
    const doc = json(await install(['--prefix', prefix, '--json']), InstallCommandOutput);
    assert.deepEqual(
      doc.files.map((f) => [f.path, f.changed]),
      expectedFiles(prefix).map((f) => [f, f === target]),
    );
    assert.equal(doc.shim, shim);
  });

  it("the installed copy's status server serves the dashboard page's files from the install folder", async () => {
    const prefix = tempDir();
    ok(await install(['--prefix', prefix]));
    const ws = tempDir();
    const config = tempDir();
    const cli = path.join(prefix, 'share', 'loopx', VERSION, 'bin', 'loopx.js');
    const env = { ...process.env, LOOPX_CONFIG_DIR: config };
    assert.equal(spawnSync(process.execPath, [cli, 'init'], { cwd: ws, env }).status, 0);
    const child = spawn(process.execPath, [cli, '--json', 'status-server', '--port', '0'], { cwd: ws, env });
    try {
      const doc = await new Promise<{ url: string; login_url: string }>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (c: Buffer) => {
          out += c.toString();
          if (out.includes('\n')) resolve(JSON.parse(out) as { url: string; login_url: string });
        });
        child.once('exit', (code) => reject(new Error(`status-server exited ${code}`)));
      });
      assert.match(doc.login_url, new RegExp(`^${doc.url}/login\\?code=`));
      for (const [name, file] of [
        ['webview.js', 'dist/webview.js'],
        ['dashboard.css', 'media/dashboard.css'],
        ['browser-theme.css', 'media/browser-theme.css'],
      ] as const) {
        const body = await new Promise<{ status: number; text: string }>((resolve, reject) =>
          http
            .get(`${doc.url}/assets/${name}`, { agent: false }, (res) => {
              let text = '';
              res.on('data', (c: Buffer) => (text += c.toString()));
              res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
            })
            .on('error', reject),
        );
        assert.equal(body.status, 200, name);
        assert.equal(body.text, fs.readFileSync(path.join(REPO, file), 'utf8'), name);
      }
    } finally {
      child.kill('SIGTERM');
    }
  });

  it('--dry-run says what it would write and writes nothing', async () => {
    const root = tempDir();
    const prefix = path.join(root, 'p');
    const r = ok(await install(['--prefix', prefix, '--dry-run']));
    assert.match(r.stdout, /^loopx \S+ from .* \(dry run: nothing written\)\n/);
    for (const f of expectedFiles(prefix)) assert.ok(r.stdout.includes(`  would write ${f}\n`), r.stdout);
    assert.deepEqual(listTree(root), []);
    const doc = json(await install(['--prefix', prefix, '--dry-run', '--json']), InstallCommandOutput);
    assert.equal(doc.dry_run, true);
    assert.ok(doc.files.every((f) => f.changed));
    assert.deepEqual(listTree(root), []);
    // Installed: a dry run finds nothing to do.
    ok(await install(['--prefix', prefix]));
    const after = json(await install(['--prefix', prefix, '--dry-run', '--json']), InstallCommandOutput);
    assert.ok(after.files.every((f) => !f.changed));
  });

  it('refuses a loopx that LoopX did not write (a file or a link), exit 4, before copying anything', async () => {
    for (const make of [
      (f: string) => fs.writeFileSync(f, '#!/bin/sh\necho mine\n', { mode: 0o755 }),
      (f: string) => fs.symlinkSync('/usr/bin/true', f),
    ]) {
      const prefix = tempDir();
      const theirs = path.join(prefix, 'bin', 'loopx');
      fs.mkdirSync(path.dirname(theirs));
      make(theirs);
      const before = listTree(prefix);
      const theirsNow = () =>
        fs.lstatSync(theirs).isSymbolicLink() ? fs.readlinkSync(theirs) : fs.readFileSync(theirs, 'utf8');
      const kept = theirsNow();
      fails(
        await install(['--prefix', prefix]),
        4,
        new RegExp(`^loopx: ${theirs} exists and is not a LoopX shim: LoopX leaves it alone`),
      );
      for (const extra of [['--dry-run'], ['--json']]) {
        const r = await install(['--prefix', prefix, ...extra]);
        assert.equal(r.code, 4, r.stderr);
        assert.equal(r.stdout, '');
      }
      const err = await install(['--prefix', prefix, '--json']);
      const { error } = JSON.parse(err.stderr) as { error: { reason: string; exit_code: number } };
      assert.equal(error.reason, 'cli_shim_not_ours');
      assert.equal(error.exit_code, 4);
      assert.deepEqual(listTree(prefix), before, 'nothing copied');
      assert.equal(theirsNow(), kept);
    }
  });

  it('the folder: --prefix (relative to where it runs), else LOOPX_PREFIX, else ~/.local', async () => {
    const cwd = tempDir();
    const viaEnv = path.join(tempDir(), 'env-prefix');
    let doc = json(
      await install(['--prefix', 'rel', '--json'], { LOOPX_PREFIX: viaEnv }, cwd),
      InstallCommandOutput,
    );
    assert.equal(doc.prefix, path.join(cwd, 'rel'));
    assert.ok(fs.existsSync(path.join(cwd, 'rel', 'bin', 'loopx')));
    assert.ok(!fs.existsSync(viaEnv));
    doc = json(await install(['--json'], { LOOPX_PREFIX: viaEnv }), InstallCommandOutput);
    assert.equal(doc.prefix, viaEnv);
    assert.ok(fs.existsSync(path.join(viaEnv, 'bin', 'loopx')));
    const home = tempDir();
    doc = json(await install(['--json'], { HOME: home, LOOPX_PREFIX: '' }), InstallCommandOutput);
    assert.equal(doc.prefix, path.join(home, '.local'));
    assert.equal(doc.on_path, false);
    assert.ok(fs.existsSync(path.join(home, '.local', 'bin', 'loopx')));
  });

  it('prints one JSON document: prefix, version, shim, target, files, on_path, dry_run', async () => {
    const prefix = tempDir();
    const bin = path.join(prefix, 'bin');
    const doc = json(
      await install(['--prefix', prefix, '--json'], { PATH: `${bin}:/usr/bin` }),
      InstallCommandOutput,
    );
    assert.deepEqual(doc, {
      schema: 'loopx.install-command/1',
      prefix,
      version: VERSION,
      source: REPO,
      shim: path.join(bin, 'loopx'),
      target: path.join(prefix, 'share', 'loopx', 'cli.target'),
      files: expectedFiles(prefix).map((p) => ({ path: p, changed: true })),
      on_path: true,
      dry_run: false,
    });
  });

  it('refuses an empty or multi-line folder (exit 2), naming where it came from', async () => {
    fails(await install(['--prefix', '']), 2, /--prefix needs a folder/);
    fails(await install(['--prefix', '/tmp/a\nb']), 2, /--prefix must be a folder path without line breaks/);
    fails(await install([], { LOOPX_PREFIX: ' ' }), 2, /LOOPX_PREFIX needs a folder/);
  });
  it('runs under a folder whose package.json says "type": "module" (its own manifest says commonjs)', async () => {
    const home = tempDir('loopx-esm-home-');
    fs.writeFileSync(path.join(home, 'package.json'), '{"type":"module"}\n');
    const prefix = path.join(home, '.local');
    ok(await install(['--prefix', prefix]));
    const r = runShim(prefix, pathWithNode(), '--version');
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `${VERSION}\n`);
  });
});
