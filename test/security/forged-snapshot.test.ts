/**
 * "Nothing runs off-contract", against an agent that reads the snapshot's MAC key (it runs as the
 * same user, so it can) and writes a snapshot of its own in which a person's gate is approved.
 * Writes plan against the snapshot, so should-run may then list the gated command; it must still
 * never run, through `loopx turn` (one process) or `loopx exec`: running is authorised only on
 * the goal's logs, where the approval would need the person's signature. `self-repair` finds the
 * forgery (the snapshot does not match the logs) and rebuilds the snapshot from them.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { Sandbox, removeTempDirs, fails } from '../helpers/security';
import { writeSnapshotFile } from '../../src/core/store/snapshot';
import type { Snapshot } from '../../src/core/store/snapshot';
import type { GoalState } from '../../src/core/model/goal-state';

after(removeTempDirs);

const AGENT = { LOOPX_AGENT: 'codex' };

/** goal g whose only todo, `deploy`, touches `deployed` once gate prod is approved. */
async function setUp(): Promise<Sandbox> {
  const sb = new Sandbox();
  await sb.json(['goal', 'create', '--goal-id', 'g', '--title', 'Target']);
  await sb.addTodo('g', 'deploy', 'Deploy', ['--action', 'touch deployed', '--gate', 'prod']);
  return sb;
}

/** What the agent does: the snapshot rewritten with every gate approved, and MAC'd with the key. */
function forgeApproval(sb: Sandbox) {
  const file = sb.file('.loopx', 'local', 'cache', 'goals', 'g.json');
  const [header, stateText] = fs.readFileSync(file, 'utf8').split('\n');
  const { v: _v, mac: _mac, ...head } = JSON.parse(header!) as Snapshot & { v: number; mac: string };
  const state = JSON.parse(stateText!) as GoalState;
  // Approved, and covering the work it guards (as a signed approval lists it), by "alice".
  for (const g of state.gates) {
    g.status = 'approved';
    g.decidedBy = { kind: 'user', id: 'alice', channel: 'cli' };
    g.decidedAt = state.updatedAt;
    g.approvedFor = state.todos
      .filter((t) => g.guards.includes(t.id))
      .map((t) => ({ todoId: t.id, title: t.title, action: t.action }));
  }
  writeSnapshotFile(file, Buffer.from(sb.secretHex('snapshot-key'), 'hex'), { ...head, state });
}

describe('a snapshot forged with its own key', () => {
  it('makes should-run list the gated command, but neither `loopx turn` nor `loopx exec` runs it', async () => {
    const sb = await setUp();
    // The gate is pending: nothing is listed.
    const before = await sb.json(['quota', 'should-run', '--goal-id', 'g', '--preview'], AGENT);
    assert.notEqual(before.decision, 'run');
    forgeApproval(sb);

    const turn = await sb.run(['--json', 'turn', '--goal-id', 'g'], AGENT);
    assert.equal(turn.code, 4, turn.stderr);
    assert.equal(turn.stdout, '');
    const refusal = JSON.parse(turn.stderr) as { error: { reason: string } };
    assert.equal(refusal.error.reason, 'gate_not_approved');
    assert.equal(fs.existsSync(sb.file('deployed')), false, '`loopx turn` ran the gated command');

    // The contract the forged snapshot got issued lists it: exec of it is refused on the log.
    const sr = await sb.json(['quota', 'should-run', '--goal-id', 'g'], AGENT);
    const listed = (sr.interaction_contract as { cli_channel: { next_cli_actions: string[] } }).cli_channel
      .next_cli_actions;
    const line = listed.find((l) => l.endsWith("-- 'touch deployed'"));
    assert.ok(line, `the forged snapshot should have got the command listed: ${JSON.stringify(listed)}`);
    const [, contract, todo] = /--contract (\S+) --todo (\S+)/.exec(line)!;
    const exec = await sb.run(
      ['exec', '--contract', contract!, '--todo', todo!, '--', 'touch deployed'],
      AGENT,
    );
    fails(exec, 4, /gate/);
    assert.equal(fs.existsSync(sb.file('deployed')), false, '`loopx exec` ran the gated command');

    // The forgery is found (the snapshot does not match the logs), and undone from them.
    const check = JSON.parse((await sb.run(['--json', 'self-repair', '--dry-run'])).stdout) as {
      findings: { goal_id: string | null; kind: string }[];
    };
    assert.ok(check.findings.some((f) => f.goal_id === 'g' && f.kind === 'snapshot-stale'));
    await sb.run(['self-repair']);
    const gates = JSON.parse((await sb.run(['--json', 'gate', 'list', '--goal-id', 'g'])).stdout) as {
      id: string;
      status: string;
    }[];
    assert.equal(gates.find((g) => g.id === 'prod')?.status, 'pending');
  });
});
