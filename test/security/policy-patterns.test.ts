/**
 * Policy patterns match what a command runs, not the raw string: an agent that rewords a gated or
 * denied command (`env git push`, `/bin/rm -rf`, an assignment in front, a list) still meets the
 * gate or the denial. Through the built CLI, as an agent with a shell would try it; reasons are
 * asserted by code (`--json` errors are one JSON line on stderr).
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { after, describe, it } from 'node:test';
import { Sandbox, ok, removeTempDirs } from '../helpers/security';
import type { Result } from '../helpers/security';
import { ensurePersonKey, loopxAsPerson } from '../helpers/cli';

after(removeTempDirs);

const GATE_PUSH = { pattern: 'git push*', gate: 'prod' };
const DENY_RM = { pattern: 'rm -rf *', reason: 'never delete trees' };

/** A workspace whose person made a key and signed `policy` (v 1 and a TTL added). */
async function withPolicy(policy: Record<string, unknown>, s = new Sandbox()): Promise<Sandbox> {
  if (!fs.existsSync(s.file('.loopx'))) ok(await s.run(['init']));
  const o = { cwd: s.dir, env: { LOOPX_CONFIG_DIR: s.config } };
  await ensurePersonKey(o);
  fs.writeFileSync(
    s.file('.loopx', 'policy.json'),
    JSON.stringify({ v: 1, contractTtlMinutes: 30, ...policy }, null, 2),
  );
  ok(await loopxAsPerson(['policy', 'sign'], o));
  return s;
}

/** `todo add` as the agent: the todo it made. */
async function addTodo(s: Sandbox, todoId: string, action: string) {
  const out = await s.addTodo('g', todoId, todoId, ['--action', action]);
  return out.todo as { id: string; gate?: string; action: string };
}

/** The `{error}` line of a `--json` run that failed. */
function jsonError(r: Result): { kind: string; reason: string; exit_code: number } {
  assert.notEqual(r.code, 0, `expected a refusal, got exit 0: ${r.stdout}`);
  const line = r.stderr.trim().split('\n').at(-1)!;
  return (JSON.parse(line) as { error: { kind: string; reason: string; exit_code: number } }).error;
}

interface ShouldRun {
  decision: string;
  interaction_contract: {
    id: string | null;
    user_channel: { gates: { id: string; status: string }[] };
    cli_channel: { next_cli_actions: string[] };
  };
}
const shouldRun = async (s: Sandbox) =>
  (await s.json(['quota', 'should-run', '--goal-id', 'g'])) as unknown as ShouldRun;
/** The todo ids a should-run contract lists as command actions. */
const listed = (r: ShouldRun) =>
  r.interaction_contract.cli_channel.next_cli_actions.map((a) => /--todo (\S+)/.exec(a)?.[1]);

describe('security: policy patterns match parsed commands', () => {
  it('a gated push, however worded, waits for a person; a plain harmless action runs', async () => {
    const s = await withPolicy({ gatedActions: [GATE_PUSH], deniedActions: [DENY_RM] });
    await s.json(['goal', 'create', '--goal-id', 'g', '--title', 'Ship']);
    const reworded = {
      'push-env': 'env git push origin main',
      'push-assign': 'FOO=1 command git push',
      'push-list': 'git push origin main && echo ok',
    };
    for (const [id, action] of Object.entries(reworded))
      assert.equal((await addTodo(s, id, action)).gate, 'prod', `${action} needs gate prod`);
    assert.equal((await addTodo(s, 'harmless', 'echo harmless')).gate, undefined);

    // Before a person approves: only the harmless action is listed, and gate prod is asked for.
    const first = await shouldRun(s);
    assert.deepEqual(listed(first), ['harmless']);
    const prod = first.interaction_contract.user_channel.gates.find((g) => g.id === 'prod');
    assert.equal(prod?.status, 'pending');
    const contract = first.interaction_contract.id!;
    const run = await s.run([
      '--json',
      'exec',
      '--contract',
      contract,
      '--todo',
      'harmless',
      '--',
      'echo harmless',
    ]);
    ok(run);
    assert.match(run.stdout, /harmless/);
    ok(await s.run(['summary_all', '--goal-id', 'g']));

    // A person approves prod, seeing each command: now they are listed (and only now).
    ok(
      await loopxAsPerson(['gate', 'approve', '--goal-id', 'g', '--gate-id', 'prod'], {
        cwd: s.dir,
        env: { LOOPX_CONFIG_DIR: s.config },
      }),
    );
    const second = await shouldRun(s);
    assert.deepEqual(listed(second).sort(), Object.keys(reworded).sort());
  });

  it('a denied program is refused however it is written, with the reason code policy_denied', async () => {
    const s = await withPolicy({ gatedActions: [GATE_PUSH], deniedActions: [DENY_RM] });
    await s.json(['goal', 'create', '--goal-id', 'g', '--title', 'Clean']);
    for (const action of [
      '/bin/rm -rf build',
      'env rm -rf build',
      'cd app && rm -rf build',
      `sh -c 'rm -rf build'`,
      'echo $(rm -rf build)',
    ]) {
      const r = await s.run([
        '--json',
        'todo',
        'add',
        '--goal-id',
        'g',
        '--title',
        'Clean',
        '--action',
        action,
      ]);
      const e = jsonError(r);
      assert.equal(e.reason, 'policy_denied', `${action}: ${r.stderr}`);
      assert.equal(e.kind, 'refused');
      assert.equal(e.exit_code, 4);
    }
    // An ordinary list of plain commands is not denied by a pattern none of its pieces matches.
    assert.equal((await addTodo(s, 'checks', 'npm test && npm run lint')).gate, undefined);
  });

  it('a listed command the policy denies later is refused by exec', async () => {
    const s = await withPolicy({});
    await s.json(['goal', 'create', '--goal-id', 'g', '--title', 'Clean']);
    fs.mkdirSync(s.file('build'));
    await addTodo(s, 'clean', '/bin/rm -rf build');
    const r = await shouldRun(s);
    assert.deepEqual(listed(r), ['clean']);
    await withPolicy({ deniedActions: [DENY_RM] }, s);
    const refused = await s.run([
      '--json',
      'exec',
      '--contract',
      r.interaction_contract.id!,
      '--todo',
      'clean',
      '--',
      '/bin/rm -rf build',
    ]);
    assert.equal(jsonError(refused).reason, 'policy_denied', refused.stderr);
    assert.ok(fs.existsSync(s.file('build')), 'nothing ran');
  });
});
