/**
 * A team shares `.loopx/` through git. With REAL git and the BUILT CLI (`npm run build` first):
 * a first clone plans two goals and pushes them to a bare repository; three teammates clone it
 * (A, B, C), each with its own agent, and work on the same goals at once: the same todo claimed on
 * two clones, the same gate approved on one and rejected on another, the same todo completed on
 * two, tokens spent on each, one goal closed. They commit `.loopx` after each round and sync with
 * plain `git pull` / `git push` in a seeded random order (the seed is printed; set
 * LOOPX_TEAM_SEED to replay it), with at least one rebase and one merge commit. No pull or push
 * may conflict, and after a final full sync every clone must verify, agree on every goal's state
 * to the byte (state_hash and the whole status document), and settle each conflict by its rule.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ensurePersonKey, fails, json, ok, removeTempDirs, show, tempDir } from '../helpers/cli';
import type { Result } from '../helpers/cli';
import { Clone, Prng, evidenceOf, gitOk, todoOf } from './git-kit';
import type { PullMode, PullOutcome } from './git-kit';
import { ShouldRun, GoalStatus, Verify, Log, AllStatus } from './team-docs';
import type { LogEvent } from './team-docs';

after(() => removeTempDirs());

const SEED = process.env.LOOPX_TEAM_SEED
  ? Number(process.env.LOOPX_TEAM_SEED) >>> 0
  : (Date.now() ^ (process.pid << 16)) >>> 0;

/** Stdout parsed as it is: documents are compared whole, not through a schema's reading of them. */
const raw = (r: Result): unknown => JSON.parse(r.stdout);

// ---------------------------------------------------------------------------------------------
// The plan

const G1 = 'release';
const G2 = 'docs';
/** Todos the random work leaves alone: each is the subject of one scripted conflict. */
const RESERVED = new Set(['claim2', 'done2']);
const TOKEN_BUDGET = 1_000_000;

describe('a team sharing .loopx through git', () => {
  it(
    'clones that work at once and sync with plain git pull/push never conflict and end in one state',
    { timeout: 180_000 },
    async () => {
      const t0 = Date.now();
      const prng = new Prng(SEED);
      console.log(`team/git: seed ${SEED} (LOOPX_TEAM_SEED=${SEED} replays this run's choices)`);
      // git must be there: this test is about git, a missing binary fails it (git() rejects).
      assert.match(await gitOk(['--version'], process.cwd()), /^git version /);

      // -------------------------------------------------------------------------------------
      // 1. A bare repository and a first clone that plans the work and pushes it.
      const root = tempDir('loopx-team-');
      const bare = path.join(root, 'team.git');
      await gitOk(['init', '-q', '--bare', '-b', 'main', bare], root);
      const seed = new Clone(
        'seed',
        path.join(root, 'seed'),
        { name: 'Pat Planner', email: 'pat@example.test' },
        '',
      );
      await gitOk(['init', '-q', '-b', 'main', seed.dir], root);
      await seed.gitOk('remote', 'add', 'origin', bare);
      ok(await seed.loopx(['init']));
      // The person's key (in the test run's config folder, shared by every clone here: one person
      // on one machine with four clones) publishes the approver and signs the default policy.
      await ensurePersonKey({ cwd: seed.dir });
      // Two goals, each todo's command an `echo` of its id (what an executor prints is checked).
      const addTodo = (goal: string, id: string, ...more: string[]) => [
        'todo',
        'add',
        '--goal-id',
        goal,
        '--todo-id',
        id,
        '--title',
        `Do ${id}`,
        '--action',
        `echo ${id}`,
        ...more,
      ];
      const plan: string[][] = [
        ['goal', 'create', '--goal-id', G1, '--title', 'Ship the release'],
        addTodo(G1, 'done2', '--priority', 'P0'),
        addTodo(G1, 'claim2', '--priority', 'P1'),
        addTodo(G1, 'deploy', '--gate', 'prod'),
        ...['r1', 'r2', 'r3', 'r4'].map((id) => addTodo(G1, id)),
        ['goal', 'create', '--goal-id', G2, '--title', 'Refresh the docs'],
        ...['d1', 'd2', 'd3', 'd4', 'd5', 'd6', 'd7', 'd8'].map((id) => addTodo(G2, id)),
        // A token budget, so the team's spend shows as the quota's used tokens.
        ...[G1, G2].map((g) => ['quota', 'set', '--goal-id', g, '--tokens', String(TOKEN_BUDGET)]),
      ];
      // The planner signs each command as they add it: the teammates' clones run what a person
      // signed without a review of their own (another clone's unsigned command waits for one).
      for (const args of plan)
        ok(await (args[0] === 'todo' ? seed.person([...args, '--sign']) : seed.loopx(args)));
      await seed.assertLocalHidden('after planning');
      assert.ok(await seed.commit('loopx: plan the release and the docs'));
      await seed.gitOk('push', '-q', '-u', 'origin', 'main');

      const tracked = (await seed.gitOk('ls-files', '.loopx')).split('\n');
      for (const f of ['.loopx/.gitignore', '.loopx/.gitattributes', '.loopx/policy.json'])
        assert.ok(tracked.includes(f), `${f} is not committed:\n${tracked.join('\n')}`);
      assert.deepEqual(
        tracked.filter((f) => f.startsWith('.loopx/local')),
        [],
        'nothing under .loopx/local is committed',
      );
      const seedWriter = seed.writerId();
      assert.ok(seedWriter, 'the first clone has a writer id after its first write');
      const seedLog = `.loopx/goals/${G1}/events/${seedWriter}.jsonl`;
      assert.ok(tracked.includes(seedLog), `the writer's log ${seedLog} is committed`);
      // `.gitattributes` keeps the logs' bytes as written (no end-of-line conversion).
      assert.equal(await seed.gitOk('check-attr', 'text', '--', seedLog), `${seedLog}: text: unset`);
      assert.equal(
        (await seed.git('check-ignore', '-q', '.loopx/local/writer-id')).code,
        0,
        '.loopx/local is ignored by git',
      );

      // -------------------------------------------------------------------------------------
      // 2. Three teammates clone it; each clone has its own agent and `pull.rebase` setting.
      const [A, B, C] = [
        new Clone('A', path.join(root, 'A'), { name: 'Ann', email: 'ann@example.test' }, 'alpha'),
        new Clone('B', path.join(root, 'B'), { name: 'Bob', email: 'bob@example.test' }, 'beta'),
        new Clone('C', path.join(root, 'C'), { name: 'Cat', email: 'cat@example.test' }, 'gamma'),
      ] as const;
      const clones = [A, B, C];
      const pullRebase: Record<string, string> = { A: 'false', B: 'true', C: 'false' };
      for (const c of clones) {
        await gitOk(['clone', '-q', bare, c.dir], root);
        await c.gitOk('config', 'pull.rebase', pullRebase[c.name]!);
        assert.ok(
          fs.existsSync(path.join(c.dir, '.loopx', '.gitignore')),
          `${c.name}: .loopx/.gitignore came with the clone`,
        );
        assert.equal(
          c.writerId(),
          undefined,
          `${c.name}: a fresh clone has no writer id before its first write`,
        );
      }

      // What the test expects the merged state to hold.
      const tokens: Record<string, number> = { [G1]: 0, [G2]: 0 };
      const runs: Record<string, Set<string>> = { [G1]: new Set(), [G2]: new Set() };
      const spentOn: Record<string, Set<string>> = { [G1]: new Set(), [G2]: new Set() };

      /**
       * One agent turn in clone `c`, as the README's loop does it: ask for a contract, claim and
       * run some of its actions exactly as listed (`must`: that todo only), report spend, end the
       * run. Returns the evidence id of the last command it ran.
       */
      async function turn(c: Clone, goal: string, rnd: Prng, must?: string): Promise<string | undefined> {
        const sr = await c.json(ShouldRun, ['quota', 'should-run', '--goal-id', goal], {
          LOOPX_AGENT: c.agent,
        });
        if (must)
          assert.equal(
            sr.decision,
            'run',
            `${c.name}: ${c.agent} should get a contract on ${goal}: ${JSON.stringify(sr)}`,
          );
        if (sr.decision !== 'run') return undefined;
        const run = sr.run_id!;
        runs[goal]!.add(run);
        const actions = sr.interaction_contract.cli_channel.next_cli_actions;
        const chosen = must
          ? actions.filter((a) => todoOf(a) === must)
          : rnd.shuffle(actions.filter((a) => !RESERVED.has(todoOf(a)))).slice(0, rnd.int(1, 2));
        if (must)
          assert.equal(chosen.length, 1, `${c.name}: the contract lists ${must}: ${actions.join('\n')}`);
        let evidence: string | undefined;
        for (const action of chosen) {
          const todo = todoOf(action);
          ok(await c.asAgent(['todo', 'claim', '--goal-id', goal, '--todo-id', todo]));
          const r = ok(await c.shell(action, { LOOPX_AGENT: c.agent }));
          assert.equal(r.stdout, `${todo}\n`, `${c.name}: ${action}: ${show(r)}`);
          evidence = evidenceOf(r);
        }
        const n = rnd.int(10, 900);
        ok(await c.asAgent(['run', 'spend', '--goal-id', goal, '--run-id', run, '--tokens', String(n)]));
        tokens[goal]! += n;
        spentOn[goal]!.add(c.name);
        ok(await c.asAgent(['summary_all', '--goal-id', goal]));
        await c.assertLocalHidden(`after ${c.agent}'s turn on ${goal}`);
        return evidence;
      }

      /** Every clone commits what it did this round (at once: they are different folders). */
      const commitAll = (round: string) =>
        Promise.all(clones.map((c) => c.commit(`loopx: ${round} on ${c.name}`)));

      const pulls: PullOutcome[] = [];
      /** Each clone in `order` pulls (with its mode) then pushes, one after the other. */
      async function sync(round: string, order: Clone[], modes: PullMode[]) {
        console.log(
          `team/git: ${round}: ${order.map((c, i) => `${c.name} pull ${modes[i] || '(pull.rebase=' + pullRebase[c.name] + ')'}`).join(', ')}`,
        );
        for (const [i, c] of order.entries()) {
          pulls.push(await c.pull(modes[i]!));
          await c.push();
          await c.assertLocalHidden(`after ${round}`);
        }
      }
      const randomModes = (n: number) =>
        Array.from({ length: n }, () => prng.pick<PullMode>(['', '--rebase', '--no-rebase']));

      // -------------------------------------------------------------------------------------
      // 3. Round 1: the conflicts, each pair ordered in time (the one that should win runs and
      // ends first; the hlc follows the wall clock), then concurrent agent turns.
      ok(await A.asAgent(['todo', 'claim', '--goal-id', G1, '--todo-id', 'claim2']));
      ok(await B.asAgent(['todo', 'claim', '--goal-id', G1, '--todo-id', 'claim2']));
      // B has not seen A's claim: beta holds the todo there until the clones sync.
      const claim2OnB = (await B.json(GoalStatus, ['status', '--goal-id', G1])).todos.find(
        (t) => t.id === 'claim2',
      );
      assert.equal(claim2OnB?.claimed_by, 'beta', 'before any sync, B knows only its own claim');
      ok(await A.person(['gate', 'approve', '--goal-id', G1, '--gate-id', 'prod', '--note', 'ship it']));
      ok(await B.person(['gate', 'reject', '--goal-id', G1, '--gate-id', 'prod', '--note', 'not this week']));
      const gateOnB = (await B.json(GoalStatus, ['status', '--goal-id', G1])).gates.find(
        (g) => g.id === 'prod',
      );
      assert.equal(gateOnB?.status, 'rejected', 'before any sync, B knows only its own decision');

      // done2 is completed on A and on C at the same time, each under its own clone's contract.
      const rnd1 = clones.map(() => new Prng(prng.int(0, 2 ** 32 - 1)));
      const g1or2 = prng.pick([G1, G2]);
      const [evA, , evC] = await Promise.all([
        turn(A, G1, rnd1[0]!, 'done2'),
        turn(B, g1or2, rnd1[1]!),
        turn(C, G1, rnd1[2]!, 'done2'),
      ]);
      assert.ok(evA && evC);

      const writers = { seed: seedWriter, A: A.writerId(), B: B.writerId(), C: C.writerId() };
      for (const [name, w] of Object.entries(writers))
        assert.match(w ?? '', /\S/, `${name} has a writer id after its first write`);
      assert.equal(
        new Set(Object.values(writers)).size,
        4,
        `each clone has its own writer id: ${JSON.stringify(writers)}`,
      );
      await commitAll('round 1');

      // 4. Sync 1: random order; of the two clones that find the branch diverged, one rebases and
      // one merges (which one is random).
      const order1 = prng.shuffle(clones);
      const [m1, m2] = prng.shuffle<PullMode>(['--rebase', '--no-rebase']);
      await sync('sync 1', order1, [prng.pick<PullMode>(['', '--rebase', '--no-rebase']), m1!, m2!]);

      // Round 2: concurrent turns on random goals, then a random sync.
      const rnd2 = clones.map(() => new Prng(prng.int(0, 2 ** 32 - 1)));
      const plan2 = clones.map(() => Array.from({ length: prng.int(1, 2) }, () => prng.pick([G1, G2])));
      await Promise.all(
        clones.map(async (c, i) => {
          for (const g of plan2[i]!) await turn(c, g, rnd2[i]!);
        }),
      );
      await commitAll('round 2');
      await sync('sync 2', prng.shuffle(clones), randomModes(3));

      // Round 3: more turns; one clone closes the docs goal; alpha takes a contract on A.
      const closer = prng.pick(clones);
      const rnd3 = clones.map(() => new Prng(prng.int(0, 2 ** 32 - 1)));
      const goals3 = clones.map(() => prng.pick([G1, G2]));
      let contractA: { id: string; command: string } | undefined;
      await Promise.all(
        clones.map(async (c, i) => {
          await turn(c, goals3[i]!, rnd3[i]!);
          if (c === closer) {
            const closed = await c.json(GoalStatus, ['goal', 'close', '--goal-id', G2]);
            assert.equal(closed.status, 'closed');
          }
          if (c === A) {
            const sr = await A.json(ShouldRun, ['quota', 'should-run', '--goal-id', G1], {
              LOOPX_AGENT: 'alpha',
            });
            assert.equal(sr.decision, 'run', JSON.stringify(sr));
            runs[G1]!.add(sr.run_id!);
            const command = sr.interaction_contract.cli_channel.next_cli_actions.find(
              (a) => todoOf(a) === 'claim2',
            );
            assert.ok(command, `alpha's contract lists claim2, which alpha holds: ${JSON.stringify(sr)}`);
            contractA = { id: sr.interaction_contract.id!, command };
          }
        }),
      );
      assert.ok(contractA);
      for (const c of clones.filter((x) => x !== closer)) {
        // Not closed here yet: the close reaches this clone only through git.
        const preview = await c.json(ShouldRun, ['quota', 'should-run', '--goal-id', G2, '--preview'], {
          LOOPX_AGENT: c.agent,
        });
        assert.notEqual(preview.decision, 'stop', `${c.name} before the sync: ${JSON.stringify(preview)}`);
      }
      // B does not know A's contract yet: it is no contract of this workspace (not found).
      fails(await B.shell(contractA.command, { LOOPX_AGENT: 'alpha' }), 3, /no contract/);
      await commitAll('round 3');

      // 5. The final sync: everyone pulls and pushes in a random order, then everyone pulls.
      await sync('final sync', prng.shuffle(clones), randomModes(3));
      for (const c of clones) pulls.push(await c.pull(''));
      const head = await gitOk(['rev-parse', 'main'], bare);
      for (const c of clones) {
        assert.equal(await c.gitOk('rev-parse', 'HEAD'), head, `${c.name} is at the team's head`);
        assert.deepEqual(await c.status(), [], `${c.name}: clean after the final sync`);
      }
      console.log(
        `team/git: pulls: ${pulls.filter((p) => p.merged).length} merge commits, ` +
          `${pulls.filter((p) => p.rebased).length} rebases, ${pulls.filter((p) => p.fastForward).length} fast-forwards`,
      );
      assert.ok(
        pulls.some((p) => p.merged),
        'at least one pull made a merge commit',
      );
      assert.ok(
        pulls.some((p) => p.rebased && p.mode === '--rebase'),
        'at least one `git pull --rebase` replayed local commits',
      );
      assert.ok(
        Number(await gitOk(['rev-list', '--merges', '--count', 'main'], bare)) >= 1,
        'the history has a merge',
      );

      // -------------------------------------------------------------------------------------
      // Every clone reads the merged logs (each clone's commands one after the other).
      const seen = await Promise.all(
        clones.map(async (c) => {
          const verify = await c.loopx(['--json', 'verify']);
          const s1 = await c.loopx(['--json', 'status', '--goal-id', G1]);
          const s2 = await c.loopx(['--json', 'status', '--goal-id', G2]);
          const l1 = await c.loopx(['--json', 'log', '--goal-id', G1]);
          const l2 = await c.loopx(['--json', 'log', '--goal-id', G2]);
          const all = await c.loopx(['--json', 'status']);
          const status: Record<string, Result> = { [G1]: s1, [G2]: s2 };
          const log: Record<string, Result> = { [G1]: l1, [G2]: l2 };
          return { c, verify, status, log, all };
        }),
      );

      for (const { c, verify } of seen) {
        const v = json(verify, Verify);
        assert.ok(v.ok, `${c.name}: loopx verify: ${verify.stdout}`);
        assert.deepEqual(v.goals.map((g) => g.goal_id).sort(), [G2, G1].sort());
        for (const g of v.goals) {
          assert.ok(g.ok, `${c.name}: ${g.goal_id} does not verify: ${JSON.stringify(g)}`);
          for (const w of g.writers) {
            assert.ok(w.ok, `${c.name}: ${g.goal_id}'s log of ${w.writer}: ${JSON.stringify(w)}`);
            assert.equal(
              w.file,
              path.join(c.dir, '.loopx', 'goals', g.goal_id, 'events', `${w.writer}.jsonl`),
            );
          }
          assert.equal(
            g.events,
            g.writers.reduce((n, w) => n + w.events, 0),
            `${c.name}: ${g.goal_id} merges every writer's events`,
          );
        }
        // Every clone wrote to the release goal, each to its own log.
        const g1 = v.goals.find((g) => g.goal_id === G1)!;
        assert.deepEqual(g1.writers.map((w) => w.writer).sort(), Object.values(writers).sort());
      }
      // The verify documents are one, apart from `file`: an absolute path into each clone.
      const verifyDocs = seen.map(({ c, verify }) =>
        JSON.parse(verify.stdout, (k, v: unknown) =>
          k === 'file' && typeof v === 'string' ? path.relative(c.dir, v) : v,
        ),
      );
      for (const d of verifyDocs.slice(1))
        assert.deepEqual(d, verifyDocs[0], 'loopx verify says the same on every clone');

      for (const goal of [G1, G2]) {
        const docs = seen.map(({ c, status }) => ({ c, doc: json(status[goal]!, GoalStatus) }));
        const hashes = docs.map(({ c, doc }) => `${c.name} ${doc.state_hash}`);
        assert.equal(
          new Set(docs.map((d) => d.doc.state_hash)).size,
          1,
          `${goal}: state_hash differs:\n${hashes.join('\n')}`,
        );
        for (const { c, verify } of seen) {
          const v = Verify.parse(raw(verify));
          assert.equal(
            v.goals.find((g) => g.goal_id === goal)!.state_hash,
            docs[0]!.doc.state_hash,
            `${c.name}: verify's state_hash of ${goal}`,
          );
        }
        // The whole status document is equal on every clone. Nothing is left out: diffing the
        // clones' documents showed no field that depends on when the command ran. The one part
        // that could (budgets counted over a rolling window) does not here: the goals count spend
        // over their whole life, which this checks.
        assert.equal(docs[0]!.doc.quota.window, 'life');
        const first = raw(seen[0]!.status[goal]!);
        for (const { c, status } of seen.slice(1))
          assert.deepEqual(raw(status[goal]!), first, `${goal}: ${c.name}'s status differs from A's`);
        // The merged history too, event by event, in the same order.
        const logs = seen.map(({ log }) => raw(ok(log[goal]!)));
        for (const [i, l] of logs.entries())
          assert.deepEqual(l, logs[0], `${goal}: ${clones[i]!.name}'s log differs from A's`);
      }
      // The workspace status is equal too, apart from what is the reading's own: when it was
      // read (`generated_at`) and which folder (`workspace`: each clone's path).
      const alls = seen.map(({ all }) => {
        const { generated_at: _at, workspace: _ws, ...rest } = AllStatus.parse(raw(ok(all)));
        return rest;
      });
      for (const [i, a] of alls.entries())
        assert.deepEqual(a, alls[0], `${clones[i]!.name}: loopx status differs from A's`);

      // -------------------------------------------------------------------------------------
      // Each conflict, settled by its rule, on every clone.
      for (const { c, status, log } of seen) {
        const s1 = GoalStatus.parse(raw(status[G1]!));
        const s2 = GoalStatus.parse(raw(status[G2]!));
        const l1 = Log.parse(raw(log[G1]!));
        const l2 = Log.parse(raw(log[G2]!));
        const at = (e: LogEvent) => l1.indexOf(e);
        const overruled = (e: LogEvent) => s1.overruled.filter((o) => o.event_id === e.id);
        const where = `${c.name}`;

        // claimed_first: A's claim of claim2 came first and holds; B's is overruled.
        const claimA = l1.find(
          (e) => e.type === 'todo.claimed' && e.data.todoId === 'claim2' && e.log === writers.A,
        );
        const claimB = l1.find(
          (e) => e.type === 'todo.claimed' && e.data.todoId === 'claim2' && e.log === writers.B,
        );
        assert.ok(claimA && claimB, `${where}: both claims of claim2 are in the merged log`);
        assert.ok(
          claimA.hlc < claimB.hlc && at(claimA) < at(claimB),
          `${where}: A claimed first (${claimA.hlc} < ${claimB.hlc})`,
        );
        const claim2 = s1.todos.find((t) => t.id === 'claim2')!;
        assert.equal(claim2.status, 'claimed');
        assert.equal(claim2.claimed_by, 'alpha', `${where}: the earlier claim holds`);
        assert.deepEqual(overruled(claimA), [], `${where}: A's claim is not overruled`);
        const oc = overruled(claimB);
        assert.equal(oc.length, 1, `${where}: B's claim is overruled once: ${JSON.stringify(s1.overruled)}`);
        assert.deepEqual(
          { type: oc[0]!.type, writer: oc[0]!.writer, by: oc[0]!.by, rule: oc[0]!.rule },
          { type: 'todo.claimed', writer: writers.B, by: 'agent:beta', rule: 'claimed_first' },
        );
        assert.match(oc[0]!.reason, /claim2/);

        // decided_first: A's approval of prod came first and stands; B's rejection is overruled.
        const approval = l1.find((e) => e.type === 'gate.approved' && e.data.gateId === 'prod');
        const rejection = l1.find((e) => e.type === 'gate.rejected' && e.data.gateId === 'prod');
        assert.ok(approval && rejection, `${where}: both decisions on prod are in the merged log`);
        assert.equal(approval.log, writers.A);
        assert.equal(rejection.log, writers.B);
        assert.ok(approval.hlc < rejection.hlc && at(approval) < at(rejection), `${where}: A decided first`);
        const prod = s1.gates.find((g) => g.id === 'prod')!;
        assert.equal(prod.status, 'approved', `${where}: the earlier decision stands`);
        assert.equal(prod.signed, true);
        assert.equal(prod.decided_by, 'user:alice');
        assert.deepEqual(overruled(approval), []);
        const og = overruled(rejection);
        assert.equal(
          og.length,
          1,
          `${where}: B's rejection is overruled once: ${JSON.stringify(s1.overruled)}`,
        );
        assert.deepEqual(
          { type: og[0]!.type, writer: og[0]!.writer, by: og[0]!.by, rule: og[0]!.rule },
          { type: 'gate.rejected', writer: writers.B, by: 'user:alice', rule: 'decided_first' },
        );
        assert.notEqual(
          s1.todos.find((t) => t.id === 'deploy')!.status,
          'cancelled',
          `${where}: the overruled rejection cancels nothing`,
        );

        // Completed on two clones: one done todo that keeps both clones' evidence.
        const done2 = s1.todos.filter((t) => t.id === 'done2');
        assert.equal(done2.length, 1);
        assert.equal(done2[0]!.status, 'done');
        assert.deepEqual(
          [...done2[0]!.evidence].sort(),
          [evA, evC].sort(),
          `${where}: the evidence of both clones is kept`,
        );
        const completions = l1.filter((e) => e.type === 'todo.completed' && e.data.todoId === 'done2');
        assert.deepEqual(
          completions.map((e) => e.log).sort(),
          [writers.A, writers.C].sort(),
          `${where}: done2 was completed on A and on C`,
        );
        assert.equal(
          s1.counts.todos.done,
          s1.todos.filter((t) => t.status === 'done').length,
          `${where}: each done todo counts once`,
        );

        // Spend adds up across clones: the quota is the team's.
        for (const [goal, s] of [
          [G1, s1],
          [G2, s2],
        ] as [string, GoalStatus][]) {
          assert.deepEqual(
            s.quota.budgets.tokens,
            { used: tokens[goal], limit: TOKEN_BUDGET, left: TOKEN_BUDGET - tokens[goal]! },
            `${where}: ${goal}'s tokens, spent on ${[...spentOn[goal]!].join(', ')}`,
          );
          assert.equal(s.quota.spend.tokens, tokens[goal]);
          assert.equal(s.quota.spend.turns, runs[goal]!.size, `${where}: ${goal}'s turns, one per run`);
        }
        assert.ok(spentOn[G1]!.size >= 2, 'tokens were spent on the release goal on two clones at least');

        // The docs goal was closed on one clone, and is closed on all.
        assert.equal(s2.status, 'closed', `${where}: ${G2} is closed`);
        assert.deepEqual(
          l2.filter((e) => e.type === 'goal.closed').map((e) => e.log),
          [closer.writerId()],
          `${where}: closed once, by ${closer.name}`,
        );
      }

      // A goal closed on one clone stops agent work on every clone after the merge.
      for (const c of clones) {
        const sr = await c.json(ShouldRun, ['quota', 'should-run', '--goal-id', G2], {
          LOOPX_AGENT: c.agent,
        });
        assert.equal(sr.decision, 'stop', `${c.name} (closed on ${closer.name}): ${JSON.stringify(sr)}`);
        assert.equal(sr.interaction_contract.id, null);
        assert.match(sr.reasons.join('\n'), /closed/);
      }

      // A contract issued on A authorises nothing on B, now that B knows it.
      const onB = fails(await B.shell(contractA.command, { LOOPX_AGENT: 'alpha' }), 4, /another clone/);
      assert.match(onB.stderr, new RegExp(`contract ${contractA.id}`));
      const onBJson = await B.loopx(
        ['--json', 'exec', '--contract', contractA.id, '--todo', 'claim2', '--', 'echo claim2'],
        { LOOPX_AGENT: 'alpha' },
      );
      assert.equal(onBJson.code, 4, show(onBJson));
      assert.equal(JSON.parse(onBJson.stderr.trim()).error.reason, 'contract_other_clone', show(onBJson));
      assert.deepEqual(await B.status(), [], 'the refused command changed nothing committed on B');
      // On A, where it was issued, the same command line runs.
      const onA = ok(await A.shell(contractA.command, { LOOPX_AGENT: 'alpha' }));
      assert.equal(onA.stdout, 'claim2\n');

      console.log(`team/git: done in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    },
  );
});
