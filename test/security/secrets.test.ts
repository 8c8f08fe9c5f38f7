/**
 * No secret in the workspace. An agent that reads and edits every file of the workspace finds
 * neither the contract-signing key, nor the snapshot key, nor the status server's token: they
 * live in the user's LoopX config folder (LOOPX_CONFIG_DIR here), one set per workspace. A key
 * the agent makes up, written where older versions kept the key, signs nothing LoopX accepts.
 *
 * Black box: the built CLI (`npm run build` first), attacked the way an agent with a shell would.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { workspaceId } from '../../src/core/store/config-dir';
import {
  Sandbox,
  appendRunStarted,
  execArgs,
  fails,
  filesUnder,
  mintContract,
  ok,
  removeTempDirs,
} from '../helpers/security';

after(removeTempDirs);

describe('secrets live outside the workspace', { concurrency: true }, () => {
  it('after init, should-run, exec and the status token, no file of the workspace holds a secret, in hex or in raw bytes', async () => {
    const sb = new Sandbox();
    ok(await sb.run(['init']));
    const todo = await sb.goalWithTodo('echo listed');
    const sr = await sb.json(['quota', 'should-run', '--goal-id', 'g']);
    const ic = sr.interaction_contract as { id: string; cli_channel: { next_cli_actions: string[] } };
    assert.ok(ic.id, 'should-run issued a contract');
    ok(await sb.run(['exec', '--contract', ic.id, '--todo', todo, '--', 'echo listed']));
    const printed = ok(await sb.run(['status-server', '--print-token'])).stdout.trim();

    // The secrets exist, in the config folder, private to the user.
    const dir = sb.secretsDir();
    assert.equal(fs.statSync(dir).mode & 0o777, 0o700, `${dir} is not 0700`);
    const secrets = ['contract-key', 'snapshot-key', 'status-token'].map((name) => {
      const file = path.join(dir, name);
      assert.equal(fs.statSync(file).mode & 0o777, 0o600, `${file} is not 0600`);
      const hex = fs.readFileSync(file, 'utf8').trim();
      assert.match(hex, /^[0-9a-f]{64}$/, name);
      return { name, hex, raw: Buffer.from(hex, 'hex') };
    });
    assert.equal(printed, secrets[2]!.hex, '--print-token prints the token kept in the config folder');

    // Not a byte of them anywhere in the workspace: every file, .loopx/ included, scanned.
    const files = filesUnder(sb.dir);
    assert.ok(
      files.some((f) => f.includes(`${path.sep}.loopx${path.sep}local${path.sep}`)),
      'local/ was scanned',
    );
    for (const f of files) {
      const bytes = fs.readFileSync(f);
      for (const s of secrets) {
        assert.ok(!bytes.includes(Buffer.from(s.hex)), `${f} holds the ${s.name} (hex)`);
        assert.ok(!bytes.includes(Buffer.from(s.hex.toUpperCase())), `${f} holds the ${s.name} (HEX)`);
        assert.ok(!bytes.includes(s.raw), `${f} holds the ${s.name} (raw bytes)`);
      }
    }
    for (const name of ['contract-key', 'snapshot-key', 'status-token'])
      assert.ok(!fs.existsSync(sb.file('.loopx', 'local', name)), `.loopx/local/${name} exists`);
  });

  it('a contract signed with a key the agent made up (and wrote where the key used to be) does not run', async () => {
    const sb = new Sandbox();
    ok(await sb.run(['init']));
    const todo = await sb.goalWithTodo('echo listed');
    ok(await sb.run(['quota', 'should-run', '--goal-id', 'g']));
    // The agent's own key, planted where LoopX kept its key before, and a contract signed with it
    // for a command nobody listed, with an ordinary 30-minute lifetime: only the key is wrong.
    const key = randomBytes(32);
    fs.writeFileSync(sb.file('.loopx', 'local', 'contract-key'), key.toString('hex') + '\n', { mode: 0o600 });
    const c = mintContract(key, { goalId: 'g', todoId: todo, command: 'touch pwned' });
    appendRunStarted(sb, 'g', c);

    fails(await sb.run(execArgs(c)), 4, /fails signature verification/);
    fails(await sb.run(['contract', 'verify', '--contract', c.id]), 4, /fails signature verification/);
    assert.ok(!fs.existsSync(sb.file('pwned')), 'the forged command ran');
  });

  it('each workspace has its own keys: a contract of one does not verify in another', async () => {
    const a = new Sandbox();
    const b = new Sandbox();
    // The same config folder for both, as on one machine.
    const run = (sb: Sandbox, args: string[]) => sb.run(args, { LOOPX_CONFIG_DIR: a.config });
    ok(await run(a, ['init']));
    ok(await run(b, ['init']));
    for (const sb of [a, b]) {
      ok(await run(sb, ['goal', 'create', '--goal-id', 'g', '--title', 'G']));
      ok(
        await run(sb, [
          'todo',
          'add',
          '--goal-id',
          'g',
          '--todo-id',
          't',
          '--title',
          'T',
          '--action',
          'echo x',
        ]),
      );
      ok(await run(sb, ['quota', 'should-run', '--goal-id', 'g']));
    }
    const dirs = fs.readdirSync(path.join(a.config, 'workspaces'));
    assert.equal(dirs.length, 2, 'one secrets folder per workspace');
    const keyOf = (sb: Sandbox) =>
      Buffer.from(
        fs
          .readFileSync(path.join(a.config, 'workspaces', workspaceId(sb.dir), 'contract-key'), 'utf8')
          .trim(),
        'hex',
      );
    assert.ok(!keyOf(a).equals(keyOf(b)));

    // A contract signed with A's key, appended to both logs: A accepts it, B refuses it.
    const c = mintContract(keyOf(a), { goalId: 'g', todoId: 't', command: 'echo x' });
    appendRunStarted(a, 'g', c);
    appendRunStarted(b, 'g', c);
    ok(await run(a, ['contract', 'verify', '--contract', c.id]));
    fails(await run(b, ['contract', 'verify', '--contract', c.id]), 4, /fails signature verification/);
  });

  it('init removes the secrets an older version left in .loopx/local/; self-repair reports and removes them too', async () => {
    const sb = new Sandbox();
    ok(await sb.run(['init']));
    const plant = () => {
      for (const name of ['contract-key', 'snapshot-key', 'status-token'])
        fs.writeFileSync(sb.file('.loopx', 'local', name), randomBytes(32).toString('hex') + '\n', {
          mode: 0o600,
        });
    };
    plant();
    ok(await sb.run(['init']));
    for (const name of ['contract-key', 'snapshot-key', 'status-token'])
      assert.ok(!fs.existsSync(sb.file('.loopx', 'local', name)), `init left .loopx/local/${name}`);
    plant();
    const dry = await sb.json(['self-repair', '--dry-run']);
    const found = (dry.findings as { kind: string; fixed: boolean; message: string }[]).filter(
      (f) => f.kind === 'secret-in-workspace',
    );
    assert.equal(found.length, 3, JSON.stringify(dry.findings));
    assert.ok(fs.existsSync(sb.file('.loopx', 'local', 'contract-key')), 'a dry run removed a file');
    const fixed = await sb.json(['self-repair']);
    assert.equal(
      (fixed.findings as { kind: string; fixed: boolean }[]).filter(
        (f) => f.kind === 'secret-in-workspace' && f.fixed,
      ).length,
      3,
    );
    for (const name of ['contract-key', 'snapshot-key', 'status-token'])
      assert.ok(!fs.existsSync(sb.file('.loopx', 'local', name)), `self-repair left .loopx/local/${name}`);
  });
});
