/**
 * A store written by the version before team mode (test/fixtures/store-v1: one `events.jsonl` per
 * goal, committed snapshots and index) is read as it is, migrated on the first write by this
 * version (its log becomes the head of this clone's log, byte for byte, then `log.migrated`), and
 * keeps every event, decision and rule. Black box: the built CLI.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { createHash } from 'node:crypto';
import { REPO, fails, json, loopx, loopxAsPerson, ok, tempDir, removeTempDirs } from '../helpers/cli';
import { appendChained, writerLog } from '../helpers/log-kit';

after(removeTempDirs);

const FIXTURE = path.join(REPO, 'test', 'fixtures', 'store-v1');
const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
const OLD_KEY = '8fb34c6d';

/** A workspace holding the old store, with the person's published key pinned here. */
async function oldWorkspace(): Promise<string> {
  const ws = tempDir('loopx-v1-');
  fs.cpSync(path.join(FIXTURE, 'loopx'), path.join(ws, '.loopx'), { recursive: true });
  ok(await loopxAsPerson(['approvers', 'trust', OLD_KEY], { cwd: ws }));
  return ws;
}

const Status = z.object({
  revision: z.number(),
  state_hash: z.string(),
  progress: z.object({ done: z.number(), total: z.number() }),
  counts: z.unknown(),
  todos: z.array(z.object({ id: z.string(), status: z.string() }).passthrough()),
  gates: z.array(z.object({ id: z.string(), status: z.string() }).passthrough()),
  runs: z.array(
    z.object({ id: z.string(), spend: z.unknown(), outcome: z.string().optional() }).passthrough(),
  ),
  rewards: z.unknown(),
  overruled: z.array(z.unknown()),
});
const status = async (ws: string, goal: string) =>
  json(await loopx(['--json', 'status', '--goal-id', goal], { cwd: ws }), Status);

/** What the old version printed for the same state (fields both versions have, time aside). */
function comparable(doc: Record<string, unknown>) {
  const runs = doc.runs as { id: string; spend: unknown; outcome?: string; evidence: unknown }[];
  return {
    revision: doc.revision,
    progress: doc.progress,
    counts: doc.counts,
    todos: (doc.todos as { id: string; status: string }[]).map((t) => [t.id, t.status]),
    gates: (doc.gates as { id: string; status: string }[]).map((g) => [g.id, g.status]),
    runs: runs.map((r) => [r.id, r.spend, r.outcome, r.evidence]),
    rewards: doc.rewards,
  };
}

describe('a store written before team mode', () => {
  it('is read as it is, migrates on the first write with its chain intact, and keeps every decision', async () => {
    const ws = await oldWorkspace();
    const oldLog = fs.readFileSync(path.join(ws, '.loopx', 'goals', 'ship', 'events.jsonl'));
    const before = JSON.parse(fs.readFileSync(path.join(FIXTURE, 'status-ship.json'), 'utf8'));

    // Reading changes nothing and sees what the old version saw, but for the person's decisions:
    // signed before signatures named their workspace, they could be copies from any workspace, so
    // they count nowhere now and are named; the person decides again.
    const read = await status(ws, 'ship');
    const { gates: _g, rewards: _r, counts: _c, ...same } = comparable(read);
    const { gates: _bg, rewards: _br, counts: _bc, ...sameBefore } = comparable(before);
    assert.deepEqual(same, sameBefore);
    assert.equal(read.gates.find((g) => g.id === 'prod')!.status, 'pending', 'the old approval is ignored');
    assert.deepEqual(read.rewards, { count: 0, mean: null, trend: [] }, 'and so is the old reward');
    const verify = json(
      await loopx(['--json', 'verify'], { cwd: ws }),
      z.object({ ok: z.boolean(), goals: z.array(z.any()) }),
    );
    assert.equal(verify.ok, true);
    assert.match(
      JSON.stringify(verify.goals.find((g) => g.goal_id === 'ship').ignored_decisions),
      /gate\.approved .* is ignored: it was signed by an older LoopX, before signatures named their workspace/,
    );
    assert.deepEqual(
      verify.goals.map((g) => [
        g.goal_id,
        g.writers.map((w: { writer: string; events: number }) => [w.writer, w.events]),
      ]),
      [
        ['docs', [['events.jsonl', 3]]],
        ['ship', [['events.jsonl', 22]]],
      ],
    );
    assert.deepEqual(fs.readFileSync(path.join(ws, '.loopx', 'goals', 'ship', 'events.jsonl')), oldLog);

    // The first write migrates: the old log, byte for byte, heads this clone's log.
    ok(
      await loopx(
        ['todo', 'add', '--goal-id', 'ship', '--todo-id', 'after', '--title', 'After the upgrade'],
        { cwd: ws },
      ),
    );
    const mine = fs.readFileSync(writerLog(ws, 'ship'));
    assert.deepEqual(mine.subarray(0, oldLog.length), oldLog, 'the chain is intact');
    const added = mine
      .subarray(oldLog.length)
      .toString('utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    const lastOld = oldLog.toString('utf8').trimEnd().split('\n').at(-1)!;
    assert.deepEqual(
      added.map((e) => [e.type, e.seq, e.v]),
      [
        ['log.migrated', 23, 2],
        ['todo.added', 24, 2],
      ],
    );
    assert.deepEqual(added[0].data, { from: 'events.jsonl', events: 22, lastHash: sha256(lastOld) });
    assert.equal(added[0].prev, sha256(lastOld));
    for (const gone of ['goals/ship/events.jsonl', 'goals/ship/goal.json', 'index.json'])
      assert.equal(fs.existsSync(path.join(ws, '.loopx', gone)), false, `${gone} is left`);
    const ignore = fs.readFileSync(path.join(ws, '.loopx', '.gitignore'), 'utf8');
    assert.match(ignore, /^\/index\.json$/m);
    assert.match(fs.readFileSync(path.join(ws, '.loopx', '.gitattributes'), 'utf8'), /^\*\.jsonl -text$/m);

    const after = await status(ws, 'ship');
    assert.equal(after.revision, 24);
    assert.deepEqual(
      after.todos.map((t) => [t.id, t.status]),
      [...comparable(before).todos, ['after', 'open']],
    );
    assert.equal(after.gates.find((g) => g.id === 'prod')!.status, 'pending');
    ok(await loopxAsPerson(['gate', 'approve', '--goal-id', 'ship', '--gate-id', 'prod'], { cwd: ws }));
    assert.equal((await status(ws, 'ship')).gates.find((g) => g.id === 'prod')!.status, 'approved');
    assert.equal(
      json(
        await loopx(['--json', 'verify', '--goal-id', 'ship'], { cwd: ws }),
        z.object({ ok: z.literal(true) }),
      ).ok,
      true,
    );

    // The approval given again lets the guarded work run, under this version's contract.
    const sr = json(
      await loopx(['--json', 'quota', 'should-run', '--goal-id', 'ship'], {
        cwd: ws,
        env: { LOOPX_AGENT: 'codex' },
      }),
      z.object({ decision: z.string(), interaction_contract: z.object({ id: z.string() }).passthrough() }),
    );
    assert.equal(sr.decision, 'run');
    ok(
      await loopx(
        ['exec', '--contract', sr.interaction_contract.id, '--todo', 'release', '--', 'echo', 'released'],
        {
          cwd: ws,
          env: { LOOPX_AGENT: 'codex' },
        },
      ),
    );
    assert.equal((await status(ws, 'ship')).todos.find((t) => t.id === 'release')!.status, 'done');

    // self-repair migrates a goal no one wrote to yet.
    const repaired = json(
      await loopx(['--json', 'self-repair'], { cwd: ws }),
      z.object({
        findings: z.array(z.object({ goal_id: z.string().nullable(), kind: z.string(), fixed: z.boolean() })),
      }),
    );
    assert.deepEqual(
      repaired.findings.filter((f) => f.kind === 'log-legacy').map((f) => [f.goal_id, f.fixed]),
      [['docs', true]],
    );
    assert.equal(fs.existsSync(path.join(ws, '.loopx', 'goals', 'docs', 'events.jsonl')), false);
    // The old log's claim is kept by the move; self-repair then releases it once it is older than
    // the default claim timeout (two hours), which the fixture's is after the day it was made.
    const claimedAt = Date.parse('2026-11-30T20:05:37.326Z');
    const stale = Date.now() - claimedAt > 120 * 60_000;
    assert.equal((await status(ws, 'docs')).todos[0]!.status, stale ? 'open' : 'claimed');
  });

  it('two clones that each migrate the same old log agree once synced: every event counts once', async () => {
    const [a, b] = [await oldWorkspace(), await oldWorkspace()];
    ok(await loopx(['todo', 'add', '--goal-id', 'ship', '--todo-id', 'from-a', '--title', 'A'], { cwd: a }));
    ok(await loopx(['todo', 'add', '--goal-id', 'ship', '--todo-id', 'from-b', '--title', 'B'], { cwd: b }));
    // What git would give both after a pull: each clone's log, the old file gone on both.
    const logA = writerLog(a, 'ship');
    const logB = writerLog(b, 'ship');
    fs.copyFileSync(logA, path.join(b, path.relative(a, logA)));
    fs.copyFileSync(logB, path.join(a, path.relative(b, logB)));
    const [sa, sb] = [await status(a, 'ship'), await status(b, 'ship')];
    assert.equal(sa.state_hash, sb.state_hash);
    assert.equal(sa.revision, 22 + 2 + 2, 'the old events once, and each clone’s migration and todo');
    assert.deepEqual(sa.overruled, []);
    assert.deepEqual(
      sa.todos
        .map((t) => t.id)
        .slice(-2)
        .sort(),
      ['from-a', 'from-b'],
    );
    const history = json(
      await loopx(['--json', 'log', '--goal-id', 'ship'], { cwd: a }),
      z.array(z.object({ id: z.string() })),
    );
    assert.equal(new Set(history.map((e) => e.id)).size, history.length, 'no event twice in the history');
    fails(await loopx(['log', '--goal-id', 'nope'], { cwd: a }), 3, /no goal "nope"/);
  });

  it('an older LoopX that still appends to events.jsonl after the move: its events are read, and nothing is lost', async () => {
    const ws = await oldWorkspace();
    ok(
      await loopx(
        ['todo', 'add', '--goal-id', 'ship', '--todo-id', 'after', '--title', 'After the upgrade'],
        { cwd: ws },
      ),
    );
    // A teammate on the old version appends to the old file, and git brings it back here.
    const legacy = path.join(ws, '.loopx', 'goals', 'ship', 'events.jsonl');
    fs.copyFileSync(path.join(FIXTURE, 'loopx', 'goals', 'ship', 'events.jsonl'), legacy);
    appendChained(legacy, {
      type: 'todo.added',
      data: {
        todo: { id: 'old-clone', title: 'From an old clone', owner: 'agent', priority: 'P2', dependsOn: [] },
      },
    });
    const s = await status(ws, 'ship');
    assert.equal(s.revision, 24 + 1, 'the old events once, the move, the new todo, and the old clone’s todo');
    assert.deepEqual(
      s.todos.map((t) => t.id).slice(-2),
      ['after', 'old-clone'],
      'in clock order: an old event (no stamp) sorts by its time, here after the move',
    );
    const v = json(
      await loopx(['--json', 'verify', '--goal-id', 'ship'], { cwd: ws }),
      z.object({ ok: z.boolean(), goals: z.array(z.any()) }),
    );
    assert.equal(v.ok, true);
    assert.deepEqual(
      v.goals[0].writers.map((w: { writer: string; events: number }) => w.events).sort(),
      [23, 24],
    );
    // The next write keeps the old file: it holds an event no log of this version has.
    ok(await loopx(['todo', 'add', '--goal-id', 'ship', '--title', 'Later'], { cwd: ws }));
    assert.ok(fs.existsSync(legacy));
    // self-repair leaves it, and says so with exit 6: a person has an old clone to upgrade.
    const repaired = await loopx(['--json', 'self-repair', '--goal-id', 'ship'], { cwd: ws });
    assert.equal(repaired.code, 6, repaired.stderr);
    const r = z
      .object({ findings: z.array(z.object({ kind: z.string(), fixed: z.boolean(), message: z.string() })) })
      .parse(JSON.parse(repaired.stdout));
    const f = r.findings.find((x) => x.kind === 'log-legacy')!;
    assert.equal(f.fixed, false);
    assert.match(f.message, /kept and read as one more log/);
    assert.equal(
      (await status(ws, 'ship')).todos.some((t) => t.id === 'old-clone'),
      true,
    );
  });
});
