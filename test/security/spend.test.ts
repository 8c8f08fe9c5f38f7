/**
 * Spend stays finite and capped (security finding 8). The attack: two
 * `loopx_report_spend {costUsd: 1e308}` calls made the goal's spend `Infinity`, which no grant can
 * exceed, and `status --json` printed `costUsd: null`. Replayed against the BUILT command (run
 * `npm run build` first), over MCP with the SDK's own client and through the CLI; then a log
 * edited by hand to hold huge spend, which must still read finite; then a person's grant over
 * that spend, which must leave room to run.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Sandbox, appendByHand, fails, ok, removeTempDirs } from '../helpers/security';
import type { Result } from '../helpers/security';
import { BIN, cleanEnv, loopxAsPerson, show } from '../helpers/cli';

const clients: Client[] = [];
after(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  removeTempDirs();
});

/** A goal g with a $10 cost budget, one todo, and an agent's open run (the shell's default agent). */
async function spending(): Promise<{ sb: Sandbox; contractId: string; runId: string }> {
  const sb = new Sandbox();
  ok(await sb.run(['init']));
  await sb.goalWithTodo('echo listed');
  await sb.json(['quota', 'set', '--goal-id', 'g', '--cost', '10']);
  const out = await sb.json(['quota', 'should-run', '--goal-id', 'g']);
  assert.equal(out.decision, 'run', JSON.stringify(out));
  return { sb, contractId: (out.interaction_contract as { id: string }).id, runId: out.run_id as string };
}

interface CostUse {
  used: number;
  limit: number;
  left: number;
}
/**
 * The goal's cost budget and total spend as `status --json` prints them; no number of its quota,
 * its burn or its runs' spend may print as null (what JSON makes of Infinity and NaN).
 */
async function costOf(sb: Sandbox): Promise<{ use: CostUse; spent: number }> {
  const r = await sb.run(['--json', 'status', '--goal-id', 'g']);
  assert.equal(r.code, 0, show(r));
  const doc = JSON.parse(r.stdout) as {
    quota: { budgets: { costUsd: CostUse }; spend: { costUsd: number } };
    burn: unknown[];
    runs: { spend: unknown }[];
  };
  for (const part of [doc.quota, doc.burn, doc.runs.map((x) => x.spend)])
    assert.doesNotMatch(JSON.stringify(part), /null/, `a number printed as null: ${r.stdout}`);
  for (const n of [...Object.values(doc.quota.budgets.costUsd), doc.quota.spend.costUsd])
    assert.ok(Number.isFinite(n), `not finite: ${r.stdout}`);
  return { use: doc.quota.budgets.costUsd, spent: doc.quota.spend.costUsd };
}

/** The reason code of a failed `loopx --json ...` (the error document on stderr). */
function reasonOf(r: Result): string {
  assert.notEqual(r.code, 0, show(r));
  return (JSON.parse(r.stderr.trim().split('\n').at(-1)!) as { error: { reason: string } }).error.reason;
}

describe('one spend report is finite and under its ceiling', () => {
  it('over MCP: two loopx_report_spend {costUsd: 1e308} are refused (spend_too_large); the spend stays true', async () => {
    const sb = new Sandbox();
    ok(await sb.run(['init']));
    await sb.goalWithTodo('echo listed');
    await sb.json(['quota', 'set', '--goal-id', 'g', '--cost', '10']);
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, '--workspace', sb.dir, 'mcp'],
      env: cleanEnv({ LOOPX_CONFIG_DIR: sb.config }) as Record<string, string>,
      cwd: sb.dir,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'spender', version: '1.0.0' });
    await client.connect(transport);
    clients.push(client);
    type Answer = {
      isError?: boolean;
      content: { text: string }[];
      structuredContent?: { error?: { reason: string } };
    };
    const call = async (name: string, args: Record<string, unknown>) =>
      (await client.callTool({ name, arguments: args })) as Answer;
    const contract = JSON.parse((await call('loopx_get_contract', {})).content[0]!.text) as {
      interaction_contract: { id: string };
    };
    const contractId = contract.interaction_contract.id;
    for (let i = 0; i < 2; i++) {
      const r = await call('loopx_report_spend', { contractId, costUsd: 1e308 });
      assert.equal(r.isError, true, r.content[0]!.text);
      assert.equal(r.structuredContent?.error?.reason, 'spend_too_large');
      assert.match(
        r.content[0]!.text,
        /costUsd 1e\+308 is too large: one spend report adds at most 100000 USD/,
      );
    }
    const tokens = await call('loopx_report_spend', { contractId, tokens: 1e12 });
    assert.equal(tokens.structuredContent?.error?.reason, 'spend_too_large');
    assert.match(tokens.content[0]!.text, /tokens 1000000000000 is too large: .* at most 1000000000 tokens/);
    // A true report still counts.
    const real = await call('loopx_report_spend', { contractId, tokens: 1200, costUsd: 0.25 });
    assert.notEqual(real.isError, true, real.content[0]!.text);
    const { use, spent } = await costOf(sb);
    assert.equal(spent, 0.25);
    assert.deepEqual(use, { used: 0.25, limit: 10, left: 9.75 });
  });

  it('through the CLI: `run spend --cost 1e308` and `--tokens 1e10` are refused; `--cost 1e309` is not a number', async () => {
    const { sb, runId } = await spending();
    const spend = (...flags: string[]) => ['run', 'spend', '--goal-id', 'g', '--run-id', runId, ...flags];
    for (let i = 0; i < 2; i++)
      fails(
        await sb.run(spend('--cost', '1e308')),
        4,
        /costUsd 1e\+308 is too large: one spend report adds at most 100000 USD/,
      );
    assert.equal(reasonOf(await sb.run(['--json', ...spend('--cost', '1e308')])), 'spend_too_large');
    assert.equal(reasonOf(await sb.run(['--json', ...spend('--tokens', '1e10')])), 'spend_too_large');
    assert.equal(reasonOf(await sb.run(['--json', ...spend('--wall-seconds', '1e7')])), 'spend_too_large');
    fails(await sb.run(spend('--cost', '1e309')), 2, /--cost must be a number/);
    ok(await sb.run(spend('--cost', '100000')));
    const { use, spent } = await costOf(sb);
    assert.equal(spent, 100000);
    assert.deepEqual(use, { used: 100000, limit: 10, left: 0 });
  });
});

describe('totals stay finite, and a grant leaves room', () => {
  it('a log edited by hand to hold huge spend reads finite in status --json; a person’s grant over it gives room to run', async () => {
    const { sb, runId } = await spending();
    for (let i = 0; i < 2; i++)
      appendByHand(sb, 'g', {
        type: 'run.spend',
        data: { runId, spend: { tokens: 9e15, costUsd: 1.7e308, wallSeconds: 1e308 } },
      });
    const { use, spent } = await costOf(sb);
    assert.equal(spent, 1e15, 'saturated at the ceiling, not Infinity');
    assert.deepEqual(use, { used: 1e15, limit: 10, left: 0 });
    const quota = await sb.run(['--json', 'quota', 'show', '--goal-id', 'g']);
    assert.doesNotMatch(quota.stdout, /null/, quota.stdout);
    ok(await sb.run(['verify', '--goal-id', 'g']));

    const stopped = await sb.json(['quota', 'should-run', '--goal-id', 'g']);
    assert.equal(stopped.decision, 'stop', JSON.stringify(stopped));
    assert.match(JSON.stringify(stopped.reasons), /cost/);

    // A person grants $5: five dollars of room above what is spent, however much that is.
    const env = { LOOPX_CONFIG_DIR: sb.config };
    ok(
      await loopxAsPerson(
        ['quota', 'grant', '--goal-id', 'g', '--cost', '5', '--note', 'after the incident'],
        { cwd: sb.dir, env },
      ),
    );
    const after = await costOf(sb);
    assert.equal(after.use.used, 1e15);
    assert.equal(after.use.left, 5);
    const again = await sb.json(['quota', 'should-run', '--goal-id', 'g']);
    assert.equal(again.decision, 'run', JSON.stringify(again));
  });
});
