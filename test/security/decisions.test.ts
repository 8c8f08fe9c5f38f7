/**
 * "Only a person decides": each attack an agent with a shell could try on a person's decision,
 * through the built CLI, and the person who still can. A decision counts only when signed by a
 * key pinned in the user's config folder (docs/TRUST.md).
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import type { Sandbox } from '../helpers/security';
import { appendByHand, gatedSandbox, removeTempDirs, loopx, ok, fails } from '../helpers/security';
import { newKeyPair, decisionStatement, signerFor } from '../../src/core/index';
import { PASSPHRASE, shq } from '../helpers/cli';
import { writerLog } from '../helpers/log-kit';

after(removeTempDirs);

const BIN = path.resolve(__dirname, '..', '..', 'bin', 'loopx.js');

const setUp = gatedSandbox;

const logFile = (sb: Sandbox) => writerLog(sb.dir, 'g');
const lines = (sb: Sandbox) => fs.readFileSync(logFile(sb), 'utf8').split('\n').filter(Boolean);

/** Appends a well-formed line with the right seq and prev, as a forger would, in alice's name. */
function forge(sb: Sandbox, ev: { type: string; data: unknown } & Record<string, unknown>) {
  appendByHand(sb, 'g', {
    actor: { kind: 'user', id: 'alice', channel: 'cli' },
    id: `ev-forge${lines(sb).length}`,
    ...ev,
  });
}

async function gateStatus(sb: Sandbox): Promise<string> {
  const gates = (await sb.run(['--json', 'gate', 'list', '--goal-id', 'g'])).stdout;
  return (JSON.parse(gates) as { id: string; status: string }[]).find((g) => g.id === 'prod')!.status;
}

async function listedActions(sb: Sandbox): Promise<string[]> {
  const out = await sb.json(['quota', 'should-run', '--goal-id', 'g']);
  return (out.interaction_contract as { cli_channel: { next_cli_actions: string[] } }).cli_channel
    .next_cli_actions;
}

/** Runs `loopx args` in a pseudo-terminal (`script`), typing `typed` when asked. */
function inPty(sb: Sandbox, args: string[], typed: string) {
  const command = [process.execPath, BIN, ...args].map(shq).join(' ');
  return new Promise<{ code: number; output: string }>((resolve) => {
    const child = spawn('script', ['-qec', command, '/dev/null'], {
      cwd: sb.dir,
      env: { ...process.env, LOOPX_CONFIG_DIR: sb.config },
      detached: true,
    });
    let output = '';
    child.stdout.on('data', (b) => (output += b));
    child.stderr.on('data', (b) => (output += b));
    child.on('close', (code) => resolve({ code: code ?? -1, output: output.replace(/\r/g, '') }));
    child.stdin.end(`${typed}\n`);
  });
}

describe('security: only a person decides', () => {
  it('a faked terminal (script -qc) cannot approve, grant or reward without the passphrase', async () => {
    const sb = await setUp();
    const before = lines(sb).length;
    for (const args of [
      ['gate', 'approve', '--goal-id', 'g', '--gate-id', 'prod'],
      ['quota', 'grant', '--goal-id', 'g', '--turns', '1000'],
    ]) {
      const r = await inPty(sb, args, 'a guess at it');
      assert.notEqual(r.code, 0, r.output);
      assert.match(r.output, /wrong passphrase/);
    }
    assert.equal(lines(sb).length, before, 'nothing was written');
    assert.equal(await gateStatus(sb), 'pending');
  });

  it('naming yourself a person, with no terminal, is refused and says how a person does it', async () => {
    const sb = await setUp();
    fails(
      await sb.run(['gate', 'approve', '--goal-id', 'g', '--gate-id', 'prod'], { LOOPX_ACTOR: 'alice' }),
      4,
      /no terminal here/,
      /--passphrase-fd/,
      /Agents and scripts cannot approve a gate/,
    );
  });

  it('an unsigned gate.approved line appended to the log has no effect; verify and status name it', async () => {
    const sb = await setUp();
    forge(sb, { type: 'gate.approved', data: { gateId: 'prod' } });
    assert.equal(await gateStatus(sb), 'pending');
    assert.deepEqual(await listedActions(sb), [], 'the gated command is not listed');
    const v = await sb.run(['verify', '--goal-id', 'g']);
    assert.match(v.stdout, /gate\.approved ev-forge\d+ by user alice .* is ignored: it is not signed/);
    const status = await sb.json(['status', '--goal-id', 'g']);
    assert.ok((status.warnings as string[]).some((w) => /is ignored: it is not signed/.test(w)));
  });

  it('a key the agent writes into .loopx/approvers/ signs nothing that counts', async () => {
    const sb = await setUp();
    const { privateKey, pub } = newKeyPair('alice', new Date().toISOString());
    const { keyId, publicKey: pem } = pub;
    fs.mkdirSync(sb.file('.loopx', 'approvers'), { recursive: true });
    fs.writeFileSync(
      sb.file('.loopx', 'approvers', `${keyId}.json`),
      JSON.stringify({ v: 1, keyId, name: 'alice', publicKey: pem, createdAt: new Date().toISOString() }),
    );
    const last = JSON.parse(lines(sb).at(-1)!);
    const facts = {
      id: 'ev-forgedsig1',
      ts: new Date().toISOString(),
      writer: last.writer,
      actor: { kind: 'user' as const, id: 'alice', channel: 'cli' as const },
      type: 'gate.approved',
      data: { gateId: 'prod' },
    };
    const ws = JSON.parse(fs.readFileSync(sb.file('.loopx', 'workspace.json'), 'utf8')).id as string;
    const sig = {
      keyId,
      ws,
      sig: signerFor(privateKey, keyId, 'alice').sign(decisionStatement({ goalId: 'g', ...facts }, ws)),
    };
    forge(sb, { ...facts, sig });
    ok(await sb.run(['verify', '--goal-id', 'g']));
    assert.equal(await gateStatus(sb), 'pending');
    assert.deepEqual(await listedActions(sb), []);
    const v = await sb.run(['verify', '--goal-id', 'g']);
    assert.match(v.stdout, /not pinned on this machine/);
  });

  it('unsigned quota.granted and reward.added lines add no budget and no reward', async () => {
    const sb = await setUp();
    const before = await sb.json(['quota', 'show', '--goal-id', 'g']);
    forge(sb, { type: 'quota.granted', data: { budgets: { turns: 100000 } } });
    const run = await sb.json(['quota', 'should-run', '--goal-id', 'g']);
    forge(sb, {
      type: 'reward.added',
      data: { reward: { id: 'rw-forged1', runId: run.run_id ?? 'run-x', score: 1, comment: 'self-praise' } },
    });
    const after_ = await sb.json(['quota', 'show', '--goal-id', 'g']);
    const limit = (q: Record<string, unknown>) => (q.budgets as { turns: { limit: number } }).turns.limit;
    assert.equal(limit(after_), limit(before), 'the forged grant added no turns');
    const status = await sb.json(['status', '--goal-id', 'g']);
    assert.equal((status.rewards as { count: number }).count, 0);
  });

  it('a person with the key approves through --passphrase-fd and through a real terminal, and it counts', async () => {
    const sb = await setUp();
    const env = { LOOPX_CONFIG_DIR: sb.config };
    ok(
      await loopx(['gate', 'approve', '--goal-id', 'g', '--gate-id', 'prod', '--passphrase-fd', '0'], {
        cwd: sb.dir,
        env,
        input: `${PASSPHRASE}\n`,
      }),
    );
    assert.equal(await gateStatus(sb), 'approved');
    const listed = await listedActions(sb);
    assert.equal(listed.length, 1, JSON.stringify(listed));
    assert.match(listed[0]!, /--todo deploy .*echo deployed/);
    const limit = async () =>
      ((await sb.json(['quota', 'show', '--goal-id', 'g'])).budgets as { turns: { limit: number } }).turns
        .limit;
    const before = await limit();
    const r = await inPty(sb, ['quota', 'grant', '--goal-id', 'g', '--turns', '5'], PASSPHRASE);
    assert.equal(r.code, 0, r.output);
    assert.equal(await limit(), before + 5, 'the grant of 5 turns counts');
  });
});
