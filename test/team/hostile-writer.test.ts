/**
 * A team sharing `.loopx/` through git, with a hostile writer among them (issue 34): anyone with
 * push rights, or an agent running outside the hooks, can put files into `.loopx/`. With REAL git
 * and the BUILT CLI (`npm run build` first), a planner signs the plan and a newer policy, a
 * teammate approves the gate, and then a hostile clone pushes four attacks at once: a rejection
 * copied from another workspace, an event stamped in the year 9999, a backdated creation of the
 * goal with a budget of a billion turns, and the older signed policy restored. Every clone pulls,
 * and they must still agree on one state, with every decision the person made intact.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { ensurePersonKey, loopx, loopxAsPerson, ok, removeTempDirs, tempDir } from '../helpers/cli';
import { Clone, gitOk } from './git-kit';
import { agentEvent, plantWriterLog } from '../helpers/log-kit';

after(() => removeTempDirs());

const GOAL = 'rel';
const GATED_POLICY = { v: 1, gatedActions: [{ pattern: './deploy.sh *', gate: 'deploy' }] };

/** The goal: five turns, todo `ship` (signed by the planner) behind gate `prod`. */
async function plan(run: (args: string[]) => Promise<unknown>, sign: (args: string[]) => Promise<unknown>) {
  await run(['goal', 'create', '--goal-id', GOAL, '--title', 'Release', '--turns', '5']);
  const todo = ['todo', 'add', '--goal-id', GOAL, '--todo-id', 'ship', '--title', 'Ship'];
  await sign([...todo, '--action', 'echo ship', '--gate', 'prod', '--sign']);
}

describe('a team with a hostile writer', () => {
  it(
    'copied decisions, far-future stamps, backdated creations and restored policies change nothing',
    { timeout: 180_000 },
    async () => {
      const root = tempDir('loopx-hostile-team-');
      const bare = path.join(root, 'team.git');
      await gitOk(['init', '-q', '--bare', '-b', 'main', bare], root);
      const seed = new Clone('seed', path.join(root, 'seed'), { name: 'Pat', email: 'pat@example.test' }, '');
      await gitOk(['init', '-q', '-b', 'main', seed.dir], root);
      await seed.gitOk('remote', 'add', 'origin', bare);
      ok(await seed.loopx(['init']));
      await ensurePersonKey({ cwd: seed.dir });
      // The first signed policy (v1): made with the key, or now when the key was made before.
      const shown = JSON.parse(ok(await seed.loopx(['--json', 'policy', 'show'])).stdout) as {
        state: string;
      };
      if (shown.state !== 'signed') ok(await seed.person(['policy', 'sign']));
      assert.ok(await seed.commit('loopx: init'));
      const v1Commit = await seed.gitOk('rev-parse', 'HEAD');
      fs.writeFileSync(path.join(seed.dir, '.loopx', 'policy.json'), JSON.stringify(GATED_POLICY, null, 2));
      ok(await seed.person(['policy', 'sign']));
      await plan(
        async (a) => ok(await seed.loopx(a)),
        async (a) => ok(await seed.person(a)),
      );
      assert.ok(await seed.commit('loopx: the plan and policy v2'));
      await seed.gitOk('push', '-q', '-u', 'origin', 'main');

      const [A, B, H] = ['A', 'B', 'H'].map(
        (n) => new Clone(n, path.join(root, n), { name: n, email: `${n}@example.test` }, n.toLowerCase()),
      ) as [Clone, Clone, Clone];
      for (const c of [A, B, H]) await gitOk(['clone', '-q', bare, c.dir], root);

      // A person approves the gate on A; B learns of it by pulling.
      ok(await A.person(['gate', 'approve', '--goal-id', GOAL, '--gate-id', 'prod']));
      assert.ok(await A.commit('loopx: approve prod'));
      await A.push();
      await B.pull('');

      // Another workspace on the same machine, the same ids, where the person rejected prod.
      const other = tempDir('loopx-other-ws-');
      ok(await loopx(['init'], { cwd: other }));
      await plan(
        async (a) => ok(await loopx(a, { cwd: other })),
        async (a) => ok(await loopxAsPerson(a, { cwd: other })),
      );
      ok(await loopxAsPerson(['gate', 'reject', '--goal-id', GOAL, '--gate-id', 'prod'], { cwd: other }));
      const otherLogs = path.join(other, '.loopx', 'goals', GOAL, 'events');
      const rejection = fs
        .readdirSync(otherLogs)
        .flatMap((f) => fs.readFileSync(path.join(otherLogs, f), 'utf8').split('\n').filter(Boolean))
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .find((e) => e.type === 'gate.rejected')!;

      // The hostile clone pulls, plants its four attacks, and pushes them.
      await H.pull('');
      plantWriterLog(H.dir, GOAL, rejection.writer as string, [rejection]);
      plantWriterLog(H.dir, GOAL, `w${randomBytes(6).toString('hex')}`, [
        agentEvent('goal.paused', '9999-12-31T23:59:59.999Z.9999', {}),
      ]);
      plantWriterLog(H.dir, GOAL, `w${randomBytes(6).toString('hex')}`, [
        agentEvent('goal.created', '2000-01-01T00:00:00.000Z.0000', {
          title: 'Release',
          objective: '',
          quota: { budgets: { turns: 1_000_000_000 }, window: { kind: 'life' }, cooldownSeconds: 0 },
          handoff: [],
        }),
      ]);
      for (const f of ['policy.json', 'policy.signed.json']) {
        const old = await H.gitOk('show', `${v1Commit}:.loopx/${f}`);
        fs.writeFileSync(path.join(H.dir, '.loopx', f), `${old}\n`);
      }
      assert.ok(await H.commit('loopx: hostile'));
      await H.push();
      for (const c of [A, B]) await c.pull('');

      // Every clone still writes, and all agree on the person's state.
      ok(await A.loopx(['todo', 'add', '--goal-id', GOAL, '--title', 'After the attack']));
      assert.ok(await A.commit('loopx: more work'));
      await A.push();
      for (const c of [B, H]) await c.pull('');
      const seen = await Promise.all(
        [A, B, H].map(async (c) => {
          const status = JSON.parse(ok(await c.loopx(['--json', 'status', '--goal-id', GOAL])).stdout);
          const policy = JSON.parse(ok(await c.loopx(['--json', 'policy', 'show'])).stdout);
          const verify = ok(await c.loopx(['verify', '--goal-id', GOAL])).stdout;
          return { c, status, policy, verify };
        }),
      );
      const hashes = new Set(seen.map((s) => s.status.state_hash));
      assert.equal(hashes.size, 1, `one state on every clone: ${[...hashes].join(', ')}`);
      for (const { c, status, policy, verify } of seen) {
        const where = `clone ${c.name}`;
        assert.equal(status.status, 'active', `${where}: the pause stamped 9999 waits`);
        const prod = (status.gates as { id: string; status: string }[]).find((g) => g.id === 'prod')!;
        assert.equal(prod.status, 'approved', `${where}: the person's approval stands`);
        assert.equal(status.quota.budgets.turns.limit, 5, `${where}: the budget is the person's`);
        assert.match(JSON.stringify(policy.effective), /deploy\.sh/, `${where}: policy v2 holds`);
        assert.match(verify, /gate\.rejected .* is ignored: it was signed in workspace ws_/, where);
        assert.match(verify, /goal\.paused .* is overruled: it is stamped 9999/, where);
        assert.match(verify, /goal\.created .* is overruled/, where);
      }
    },
  );
});
