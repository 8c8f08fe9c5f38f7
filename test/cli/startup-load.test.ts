/**
 * What a `loopx` call loads before it does its work: Node's own modules are part of every call's
 * start-up (docs/PERFORMANCE.md). child_process brings net, dgram and the stream stack with it,
 * http and https bring net and tls, so the bundle loads them only on first use: the hot calls of
 * an agent's turn never do, while `exec` still starts its command through child_process and
 * the notices still post through http (test/reach/notify.test.ts).
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Ws, loopx, removeTempDirs, tempDir, ok } from '../helpers/cli';

after(removeTempDirs);

const probeDir = tempDir('loopx-load-');
const PRELOAD = path.join(probeDir, 'record-loads.js');
// Written at exit, so it sees everything the call loaded, including what ran after the output.
fs.writeFileSync(
  PRELOAD,
  "process.on('exit', () => require('fs').writeFileSync(process.env.LOOPX_TEST_LOADS, process.moduleLoadList.join('\\n')));\n",
);

let calls = 0;
/** Runs `loopx args` in `ws` and returns the call's result and Node's list of what it loaded. */
async function loads(ws: Ws, ...args: string[]) {
  const out = path.join(probeDir, `loads-${++calls}.txt`);
  const r = await loopx(args, {
    cwd: ws.dir,
    env: { NODE_OPTIONS: `--require ${PRELOAD}`, LOOPX_TEST_LOADS: out, LOOPX_AGENT: 'codex' },
  });
  return { r, modules: fs.readFileSync(out, 'utf8').split('\n') };
}

const CHILD_PROCESS = 'NativeModule child_process';
/** Loaded on first use only (scripts/build/build.mjs LAZY_BUILTINS). */
const LAZY = ['child_process', 'http', 'https', 'net'].map((m) => `NativeModule ${m}`);

describe('what a loopx call loads', () => {
  it('should-run, status, todo add and summary_all load neither child_process nor http, https or net; exec does load child_process, and runs', async () => {
    const ws = new Ws();
    ok(await ws.run('goal', 'create', '--title', 'Loads', '--goal-id', 'g'));

    const add = await loads(ws, ...'todo add --goal-id g --todo-id t --title T --action true'.split(' '));
    ok(add.r);
    const shouldRun = await loads(ws, '--json', 'quota', 'should-run', '--goal-id', 'g');
    ok(shouldRun.r);
    const contract = (JSON.parse(shouldRun.r.stdout) as { interaction_contract: { id: string } })
      .interaction_contract.id;
    assert.match(contract, /^c-/, shouldRun.r.stdout);
    const status = await loads(ws, '--json', 'status', '--goal-id', 'g');
    ok(status.r);
    for (const [name, call] of Object.entries({ 'todo add': add, 'should-run': shouldRun, status }))
      for (const m of LAZY) assert.ok(!call.modules.includes(m), `${name} loaded ${m}`);

    // The same probe sees it when the command needs it: exec starts its command through it.
    const exec = await loads(ws, 'exec', '--contract', contract, '--todo', 't', '--', 'true');
    ok(exec.r);
    assert.ok(exec.modules.includes(CHILD_PROCESS), 'exec ran without loading child_process?');
    const summary = await loads(ws, '--json', 'summary_all', '--goal-id', 'g', '--contract', contract);
    ok(summary.r);
    for (const m of LAZY) assert.ok(!summary.modules.includes(m), `summary_all loaded ${m}`);
    const done = await ws.run('--json', 'todo', 'list', '--goal-id', 'g');
    assert.match(ok(done).stdout, /"status":\s*"done"/);
  });
});
