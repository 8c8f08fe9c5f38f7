/**
 * The host installer's nested `npm install` sees the machine's npm settings, not the enclosing
 * `npm run`'s. Checked with the real npm: a probe script is run by `npm run` and asks a nested
 * npm for its settings, once with the environment it inherited and once with nestedNpmEnv's.
 * (Under `npm run setup`, the inherited user agent told code-server's postinstall that the Node
 * running it was 20, and a new user's first setup failed.)
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { REPO, loadScript, type NpmEnvModule } from '../helpers/workbench';

const PROBE = `
import { spawnSync } from 'node:child_process';
import { nestedNpmEnv } from ${JSON.stringify(pathToFileURL(path.join(REPO, 'scripts/hosts/vscode-host/npm-env.mjs')).href)};
const env = process.argv[2] === 'nested' ? nestedNpmEnv(process.env) : process.env;
const get = (key) => spawnSync('npm', ['config', 'get', key], { env, encoding: 'utf8' }).stdout.trim();
console.log(JSON.stringify({
  userAgent: get('user-agent'),
  registry: get('registry'),
  proxy: get('https-proxy'),
  nodedir: get('nodedir'),
  path: env.PATH.split(':'),
  lifecycle: Object.keys(env).filter((k) => /^npm_(lifecycle|package)_/.test(k)),
}));
`;

// The PATH of a person's shell (this file itself may run under `npm run`, which adds to it).
const SHELL_PATH = (process.env.PATH ?? '')
  .split(':')
  .filter((d) => d && !/\/node_modules\/\.bin$|\/node-gyp-bin$/.test(d))
  .join(':');

interface Probe {
  userAgent: string;
  registry: string;
  proxy: string;
  nodedir: string;
  path: string[];
  lifecycle: string[];
}

describe('the nested npm of the host installer', () => {
  let dir = '';
  // Settings a user gives npm in the environment: they must reach the nested install.
  const userEnv = {
    npm_config_registry: 'http://127.0.0.1:9/registry/',
    npm_config_https_proxy: 'http://127.0.0.1:9/proxy/',
  };
  const probe = (mode: 'inherited' | 'nested'): Probe => {
    const r = spawnSync('npm', ['run', '--silent', 'probe', '--', mode], {
      cwd: dir,
      env: { ...process.env, PATH: SHELL_PATH, ...userEnv, npm_config_nodedir: '/outer/nodedir' },
      encoding: 'utf8',
    });
    assert.equal(r.status, 0, r.stderr);
    return JSON.parse(r.stdout) as Probe;
  };

  // Each probe is an `npm run` with four nested npm calls: run each mode once, read it many times.
  let inherited: Probe;
  let nested: Probe;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-npm-env-'));
    fs.writeFileSync(
      path.join(dir, 'package.json'),
      JSON.stringify({ name: 'probe', version: '1.0.0', scripts: { probe: 'node probe.mjs' } }),
    );
    fs.writeFileSync(path.join(dir, 'probe.mjs'), PROBE);
    inherited = probe('inherited');
    nested = probe('nested');
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("inherits the outer npm run's user agent when the environment is passed as is (the bug)", () => {
    const p = inherited;
    assert.match(p.userAgent, new RegExp(`^npm/\\S+ node/${process.version} `), 'expanded by the outer npm');
    assert.ok(p.lifecycle.includes('npm_lifecycle_event'));
  });

  it('gives the nested npm its own user agent, so it names the Node that runs it', () => {
    const p = nested;
    assert.equal(
      p.userAgent,
      'npm/{npm-version} node/{node-version} {platform} {arch} workspaces/{workspaces} {ci}',
    );
    assert.deepEqual(p.lifecycle, []);
  });

  it("keeps the registry and proxy the user set, and drops the outer run's build settings", () => {
    const p = nested;
    assert.equal(p.registry, userEnv.npm_config_registry);
    assert.equal(p.proxy, userEnv.npm_config_https_proxy);
    assert.notEqual(p.nodedir, '/outer/nodedir');
  });

  it("gives the nested npm the shell's PATH: without the outer package's node_modules/.bin or npm's node-gyp shim", () => {
    assert.ok(inherited.path.includes(path.join(dir, 'node_modules', '.bin')), 'npm run added it');
    assert.deepEqual(nested.path, SHELL_PATH.split(':'));
  });

  it("lets the caller's own settings win (Node 24 first on PATH, its headers)", async () => {
    const { nestedNpmEnv } = await loadScript<NpmEnvModule>('scripts/hosts/vscode-host/npm-env.mjs');
    const env = nestedNpmEnv(
      {
        PATH: '/a/node_modules/.bin:/usr/bin',
        npm_config_nodedir: '/usr',
        npm_config_cache: '/c',
        NODE: '/x',
      },
      { npm_config_nodedir: '/node24', PATH: '/node24/bin:/usr/bin' },
    );
    assert.deepEqual(env, {
      PATH: '/node24/bin:/usr/bin',
      npm_config_nodedir: '/node24',
      npm_config_cache: '/c',
    });
  });
});
