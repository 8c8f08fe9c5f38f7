#!/usr/bin/env node
// Runs an extension's integration suite in a real VS Code (code-server), the standard way:
// @vscode/test-electron's runTests() with code-server-runner.mjs as the "VS Code executable".
//
//   node scripts/hosts/vscode-host/run-integration.mjs --extension <dir> --tests <entry.js> [--workspace <dir>]
//
// The suite sees the workspace path as env LOOPX_TEST_WORKSPACE. Without --workspace an empty
// temporary folder is used. Exits with the suite's exit code.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const require = createRequire(import.meta.url);
const { runTests } = require('@vscode/test-electron');
const runner = fileURLToPath(new URL('./code-server-runner.mjs', import.meta.url));

const { values } = parseArgs({
  options: { extension: { type: 'string' }, tests: { type: 'string' }, workspace: { type: 'string' } },
});
if (!values.extension || !values.tests) {
  console.error('usage: run-integration.mjs --extension <dir> --tests <entry.js> [--workspace <dir>]');
  process.exit(2);
}

const tempWorkspace = values.workspace ? undefined : fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-ws-'));
const workspace = path.resolve(values.workspace ?? tempWorkspace);
let code;
try {
  code = await runTests({
    vscodeExecutablePath: runner,
    extensionDevelopmentPath: path.resolve(values.extension),
    extensionTestsPath: path.resolve(values.tests),
    launchArgs: [workspace],
    extensionTestsEnv: { LOOPX_TEST_WORKSPACE: workspace },
  });
} catch (err) {
  // runTests rejects with TestRunFailedError { code } when the suite fails.
  code = typeof err?.code === 'number' && err.code !== 0 ? err.code : 1;
  if (err?.code === undefined) console.error(err);
} finally {
  if (tempWorkspace) fs.rmSync(tempWorkspace, { recursive: true, force: true });
}
process.exit(code);
