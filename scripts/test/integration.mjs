// Runs the integration suite inside a real VS Code (code-server) on a fresh demo workspace.
// Usage: node scripts/test/integration.mjs
import * as esbuild from 'esbuild';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ownConfigDir } from './own-config-dir.mjs';

const root = resolve(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..', '..');
await esbuild.build({
  entryPoints: [join(root, 'test/integration/suite/index.ts')],
  outfile: join(root, 'out/integration/suite.js'),
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  external: ['vscode', 'mocha'],
  logLevel: 'warning',
});

const ws = mkdtempSync(join(tmpdir(), 'loopx-it-'));
// The LoopX config folder (workspace secrets, keys) of the run: the same for the workspace's
// preparation and for the editor, and never the user's own ~/.config/loopx.
const config = ownConfigDir('loopx-it-config-');
const env = config.env;
try {
  const prep = spawnSync(
    process.execPath,
    ['--import', 'tsx', join(root, 'scripts/demo/demo-workspace.ts'), ws],
    {
      cwd: root,
      stdio: ['ignore', 'ignore', 'inherit'],
      env,
    },
  );
  if (prep.status !== 0) process.exit(prep.status ?? 1);
  const r = spawnSync(
    process.execPath,
    [
      join(root, 'scripts/hosts/vscode-host/run-integration.mjs'),
      '--extension',
      root,
      '--tests',
      join(root, 'out/integration/suite.js'),
      '--workspace',
      ws,
    ],
    { cwd: root, stdio: 'inherit', env: { ...env, NO_COLOR: '1' } },
  );
  process.exitCode = r.status ?? 1;
} finally {
  rmSync(ws, { recursive: true, force: true });
  config.cleanup();
}
