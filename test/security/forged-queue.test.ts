/**
 * "Only a person decides", against an agent that writes a call into the group-commit queue
 * (`.loopx/local/queue/<goal>/`, commit-batch.ts) in a person's name, with the context a holder of
 * this clone answers (computed as LoopX does: the version and the config folder are no secret).
 * The next `loopx` write holds the lock and plans the queued call as its caller's own: a person's
 * decision needs the person's signature, which a queued call never carries, so it is refused, the
 * gate stays pending and the gated command never runs. A queued call to a capability only people
 * call is refused by the same rule as at the command line.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createHash } from 'node:crypto';
import { Sandbox, removeTempDirs } from '../helpers/security';

after(removeTempDirs);

const AGENT = { LOOPX_AGENT: 'codex' };
const VERSION = (
  JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string }
).version;

/** The agent's forgery: call `id` queued for goal g as if by another process of this clone. */
function queueCall(
  sb: Sandbox,
  id: string,
  capability: string,
  input: Record<string, unknown>,
  actor: unknown,
) {
  const ctx = createHash('sha256')
    .update(JSON.stringify([1, VERSION, sb.config]))
    .digest('hex')
    .slice(0, 32);
  const dir = sb.file('.loopx', 'local', 'queue', 'g');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, `${id}.req`), JSON.stringify({ v: 1, ctx, capability, input, actor }));
  return path.join(dir, `${id}.res`);
}

describe('a call queued by hand for the lock holder', () => {
  it('cannot approve a gate in a person’s name: refused as unsigned, the gate stays pending, nothing runs', async () => {
    const sb = new Sandbox();
    await sb.json(['goal', 'create', '--goal-id', 'g', '--title', 'Target']);
    await sb.addTodo('g', 'deploy', 'Deploy', ['--action', 'touch deployed', '--gate', 'prod']);
    const approve = queueCall(
      sb,
      'a'.repeat(24),
      'gate.approve',
      { goalId: 'g', gateId: 'prod' },
      { kind: 'user', id: 'alice', channel: 'cli' },
    );
    const grant = queueCall(
      sb,
      'b'.repeat(24),
      'quota.grant',
      { goalId: 'g', turns: 50 },
      {
        kind: 'agent',
        id: 'codex',
        channel: 'cli',
      },
    );

    // Any write holds the goal's lock, and its process answers what is queued.
    await sb.addTodo('g', 'other', 'Other work');
    // A call refused half-way through its events ends the batch: the rest go to the next write.
    await sb.addTodo('g', 'more', 'More work');
    const answers = [approve, grant].map(
      (f) => JSON.parse(fs.readFileSync(f, 'utf8')) as { ok: boolean; details?: { reason?: string } },
    );
    assert.deepEqual(
      answers.map((a) => [a.ok, a.details?.reason]),
      [
        [false, 'unsigned_decision'],
        [false, 'human_only'],
      ],
      'the queued calls were not both refused (or not answered at all: the context did not match)',
    );

    const gates = JSON.parse((await sb.run(['--json', 'gate', 'list', '--goal-id', 'g'])).stdout) as {
      id: string;
      status: string;
    }[];
    assert.equal(gates.find((g) => g.id === 'prod')?.status, 'pending');
    await sb.run(['--json', 'turn', '--goal-id', 'g'], AGENT);
    assert.equal(fs.existsSync(sb.file('deployed')), false, 'the gated command ran');
  });
});
