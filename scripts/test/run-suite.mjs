// Runs one test suite on Node's test runner against the TypeScript sources (through tsx).
// Node 20's `--test` takes no globs, so this lists the files: node scripts/test/run-suite.mjs <dir> [file-filter]
// The tests get their own LoopX config folder (LOOPX_CONFIG_DIR, a fresh temp folder removed at the
// end) unless one is set: the workspaces they make never write secrets into the user's ~/.config.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { ownConfigDir } from './own-config-dir.mjs';

const [dir, filter = ''] = process.argv.slice(2);
if (!dir) {
  console.error('usage: node scripts/test/run-suite.mjs <test dir> [filter]');
  process.exit(2);
}
const files = [];
(function walk(d) {
  for (const name of readdirSync(d).sort()) {
    const p = join(d, name);
    if (statSync(p).isDirectory()) walk(p);
    else if (name.endsWith('.test.ts') && p.includes(filter)) files.push(p);
  }
})(dir);
if (files.length === 0) {
  console.error(`no test files under ${dir}${filter ? ` matching ${filter}` : ''}`);
  process.exit(1);
}
const config = ownConfigDir();
let r;
try {
  r = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=spec', ...files], {
    stdio: 'inherit',
    env: { ...config.env, LOOPX_CHECK_PLANS: '1' },
  });
} finally {
  config.cleanup();
}
process.exit(r.status ?? 1);
