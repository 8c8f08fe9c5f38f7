/**
 * The standalone CLI tarball (scripts/build/package-cli.mjs, made by `npm run package`): exactly the
 * shim, the bundles, the manifest, README and LICENSE; no dependencies; and the real npm installs
 * it globally with no network (an unreachable registry, --offline) into a fresh prefix, where
 * `loopx` runs from any folder.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { REPO, VERSION, removeTempDirs, run, tempDir, userEnv } from '../helpers/install';

interface PackageCliModule {
  packageCli(opts: { out: string; build?: boolean }): {
    file: string;
    bytes: number;
    files: string[];
    version: string;
  };
  CLI_TARBALL_FILES: string[];
}

describe('the loopx-cli tarball', () => {
  let out = '';
  let tgz = '';
  let files: string[] = [];
  let mod: PackageCliModule;
  before(async () => {
    mod = (await import(
      pathToFileURL(path.join(REPO, 'scripts', 'build', 'package-cli.mjs')).href
    )) as PackageCliModule;
    out = tempDir('loopx-tgz-');
    const res = mod.packageCli({ out, build: false });
    tgz = res.file;
    files = res.files;
  });
  after(removeTempDirs);

  it('is loopx-cli-<version>.tgz, holding exactly the shim, the bundles, package.json, README and LICENSE', () => {
    assert.equal(path.basename(tgz), `loopx-cli-${VERSION}.tgz`);
    // The dashboard page's files too: `loopx status-server` serves them at /assets/.
    const expected = [
      'LICENSE',
      'README.md',
      'bin/loopx.js',
      'dist/cli.js',
      'dist/decide.js',
      'dist/mcp.js',
      // The kernel lock's binding (store/lock.ts), for each platform VS Code runs on.
      ...['darwin-arm64', 'darwin-x64', 'linux-arm64', 'linux-x64', 'win32-arm64', 'win32-x64'].map(
        (p) => `dist/prebuilds/${p}/fs-native-extensions.node`,
      ),
      'dist/webauthn.js',
      'dist/webview.js',
      'media/browser-theme.css',
      'media/dashboard.css',
      'package.json',
    ];
    assert.deepEqual(files, expected);
    assert.deepEqual(mod.CLI_TARBALL_FILES, expected);
    // What tar really holds, not only what npm said.
    const listed = run('tar', ['tzf', tgz], { cwd: out, env: process.env });
    assert.deepEqual(listed.stdout.trim().split('\n').sort(), expected.map((f) => `package/${f}`).sort());
    const manifest = JSON.parse(
      run('tar', ['xzOf', tgz, 'package/package.json'], { cwd: out, env: process.env }).stdout,
    );
    assert.equal(manifest.name, 'loopx-cli');
    assert.equal(manifest.version, VERSION);
    assert.deepEqual(manifest.bin, { loopx: 'bin/loopx.js' });
    assert.equal(manifest.dependencies, undefined);
    assert.equal(manifest.scripts, undefined, 'nothing runs at install');
    // The bundles are the built ones, byte for byte.
    const cli = run('tar', ['xzOf', tgz, 'package/dist/cli.js'], { cwd: out, env: process.env }).stdout;
    assert.equal(cli, fs.readFileSync(path.join(REPO, 'dist', 'cli.js'), 'utf8'));
    for (const f of ['dist/webview.js', 'media/browser-theme.css', 'media/dashboard.css']) {
      const packed = run('tar', ['xzOf', tgz, `package/${f}`], { cwd: out, env: process.env }).stdout;
      assert.equal(packed, fs.readFileSync(path.join(REPO, f), 'utf8'), f);
    }
  });

  it('installs with `npm install -g` offline into a fresh prefix; loopx --version, init and status work from another folder', () => {
    const home = tempDir('loopx-home-');
    const prefix = path.join(home, 'prefix');
    const env = userEnv(home, { npm_config_prefix: prefix });
    const inst = run('npm', ['install', '-g', '--offline', tgz], { cwd: home, env });
    assert.equal(inst.status, 0, inst.stderr);
    const loopx = path.join(prefix, 'bin', 'loopx');
    assert.ok(fs.lstatSync(loopx).isSymbolicLink(), 'npm links the bin');
    const project = path.join(home, 'project');
    fs.mkdirSync(project);
    const v = run(loopx, ['--version'], { cwd: project, env });
    assert.equal(v.status, 0, v.stderr);
    assert.equal(v.stdout.trim(), VERSION);
    const init = run(loopx, ['init', '--json'], { cwd: project, env });
    assert.equal(init.status, 0, init.stderr);
    assert.ok(fs.existsSync(path.join(project, '.loopx', 'policy.json')));
    const created = run(loopx, ['goal', 'create', '--goal-id', 'ship', '--title', 'Ship it'], {
      cwd: project,
      env,
    });
    assert.equal(created.status, 0, created.stderr);
    const status = run(loopx, ['status', '--json'], { cwd: project, env });
    assert.equal(status.status, 0, status.stderr);
    const doc = JSON.parse(status.stdout);
    assert.equal(doc.schema, 'loopx.status/1');
    assert.match(JSON.stringify(doc), /"ship"/);
    // The MCP bundle is there too: `loopx mcp` loads dist/mcp.js next to dist/cli.js.
    assert.ok(fs.existsSync(path.join(prefix, 'lib', 'node_modules', 'loopx-cli', 'dist', 'mcp.js')));
  });
});
