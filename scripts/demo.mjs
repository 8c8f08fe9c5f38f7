// `npm start`: prepares the demo workspace and shows it through the CLI.
// (The extension in a real VS Code on this workspace replaces this once the extension lands.)
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';

const dir = resolve(process.argv[2] ?? '.loopx-demo');
const prep = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/demo-workspace.ts', dir], { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
if (prep.status !== 0) process.exit(prep.status ?? 1);
const { goalId } = JSON.parse(prep.stdout);
const loopx = (...args) => spawnSync(process.execPath, ['bin/loopx.js', '--workspace', dir, ...args], { stdio: 'inherit' });
console.log(`Demo workspace: ${dir}\n`);
loopx('status');
console.log('');
loopx('status', '--goal-id', goalId);
console.log(`\nTry: node bin/loopx.js --workspace ${dir} quota should-run --goal-id ${goalId} --preview`);
