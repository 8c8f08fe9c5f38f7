/**
 * The policy is a person's decision: an agent with a shell edits `policy.json` (or forges the
 * signed copy) to loosen what it may run, and the edit has no effect until a person signs it.
 * Through the built CLI, as a black box.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { after, describe, it } from 'node:test';
import { Sandbox, fails, ok, removeTempDirs } from '../helpers/security';
import { PASSPHRASE, ensurePersonKey, loopx, loopxAsPerson, loopxTty } from '../helpers/cli';

after(removeTempDirs);

const GATED = { v: 1, gatedActions: [{ pattern: 'deploy *', gate: 'prod' }], contractTtlMinutes: 30 };

/** A workspace whose person made a key and signed a policy that gates `deploy *`. */
async function signedWorkspace(): Promise<Sandbox> {
  const s = new Sandbox();
  ok(await s.run(['init']));
  const o = { cwd: s.dir, env: { LOOPX_CONFIG_DIR: s.config } };
  await ensurePersonKey(o);
  fs.writeFileSync(s.file('.loopx', 'policy.json'), JSON.stringify(GATED, null, 2));
  ok(await loopxAsPerson(['policy', 'sign'], o));
  return s;
}

describe('an unsigned policy edit', () => {
  it('`loopx key create` signs a new workspace’s default policy', async () => {
    const s = new Sandbox();
    ok(await s.run(['init']));
    const r = await loopx(['key', 'create', '--name', 'alice', '--passphrase-fd', '3', '--json'], {
      cwd: s.dir,
      env: { LOOPX_CONFIG_DIR: s.config },
      fd3: `${PASSPHRASE}\n`,
    });
    assert.equal(JSON.parse(ok(r).stdout).policy, 'signed');
    const shown = await s.json(['policy', 'show']);
    assert.equal(shown.state, 'signed');
    assert.equal(shown.signed_by, 'alice');
  });

  it('an agent that removes a gate and lengthens contracts changes nothing, and every report says so', async () => {
    const s = await signedWorkspace();
    const todo = await s.goalWithTodo('deploy prod');
    fs.writeFileSync(s.file('.loopx', 'policy.json'), JSON.stringify({ v: 1, contractTtlMinutes: 1440 }));
    const run = await s.json([
      'quota',
      'should-run',
      '--goal-id',
      'g',
      '--agent',
      'a',
      '--ttl-minutes',
      '1440',
    ]);
    assert.notEqual(run.decision, 'run', `the gated todo ${todo} was listed: ${JSON.stringify(run)}`);
    const shown = await s.json(['policy', 'show']);
    assert.equal(shown.state, 'unsigned_changes');
    assert.deepEqual((shown.unsigned_changes as string[]).sort(), ['contractTtlMinutes', 'gatedActions']);
    assert.deepEqual((shown.effective as typeof GATED).gatedActions, GATED.gatedActions);
    const status = await s.json(['status']);
    assert.match((status.policy as { message: string }).message, /no person signed .*no effect until signed/);
    const goal = await s.json(['status', '--goal-id', 'g']);
    assert.match((goal.warnings as string[]).join('\n'), /policy\.json has changes no person signed/);
    const verify = await s.json(['verify']);
    assert.equal((verify.policy as { state: string }).state, 'unsigned_changes');
  });

  it('the agent cannot sign it: no passphrase, a faked terminal or a forged signed file all fail', async () => {
    const s = await signedWorkspace();
    fs.writeFileSync(s.file('.loopx', 'policy.json'), JSON.stringify({ v: 1, contractTtlMinutes: 1440 }));
    fails(await s.run(['policy', 'sign']), 4, /no terminal here to ask it on/);
    const faked = await loopxTty(['policy', 'sign'], {
      cwd: s.dir,
      env: { LOOPX_CONFIG_DIR: s.config },
      typed: 'not the passphrase',
    });
    assert.notEqual(faked.code, 0, faked.output);
    assert.match(faked.output, /wrong passphrase/);
    // A signed file the agent wrote, with a key of its own published in the workspace.
    const signedFile = s.file('.loopx', 'policy.signed.json');
    const real = JSON.parse(fs.readFileSync(signedFile, 'utf8'));
    fs.writeFileSync(signedFile, JSON.stringify({ ...real, policy: { v: 1, contractTtlMinutes: 1440 } }));
    const shown = await s.json(['policy', 'show']);
    assert.equal((shown.effective as { contractTtlMinutes?: number }).contractTtlMinutes, 30);
    assert.deepEqual((shown.effective as typeof GATED).gatedActions, GATED.gatedActions);
  });

  it('a person signs it at a terminal after seeing the diff, and then it applies', async () => {
    const s = await signedWorkspace();
    fs.writeFileSync(s.file('.loopx', 'policy.json'), JSON.stringify({ v: 1, contractTtlMinutes: 60 }));
    const r = await loopxTty(['policy', 'sign'], { cwd: s.dir, env: { LOOPX_CONFIG_DIR: s.config } });
    assert.equal(r.code, 0, r.output);
    assert.match(r.output, /^- +"contractTtlMinutes": 30,?$/m);
    assert.match(r.output, /^\+ +"contractTtlMinutes": 60,?$/m);
    assert.match(r.output, /^- +"gatedActions": \[$/m);
    assert.ok(r.output.indexOf('gatedActions') < r.output.indexOf('LoopX passphrase'), r.output);
    const shown = await s.json(['policy', 'show']);
    assert.equal(shown.state, 'signed');
    assert.equal((shown.effective as { contractTtlMinutes: number }).contractTtlMinutes, 60);
  });
});
