/**
 * Lanes in git worktrees, with real git and a real `loopx drive` process: two lanes on one goal
 * each work in `.loopx/local/worktrees/<lane>` on branch `loopx/<lane>`, share the goal's todos
 * (each runs once), leave the main checkout alone, and bring their branch back only once a person
 * approves; a lane whose runtime asks for no worktree works in the main checkout.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { z } from 'zod';
import { readLaneState } from '../../src/core/drive/lanes';
import { effectiveStatus } from '../../src/core/model/goal-state';
import { json, ok, removeTempDirs, tempDir } from '../helpers/cli';
import {
  addTodo,
  driveWorkspace,
  git,
  scriptRuntime,
  startDriver,
  until,
  type DriveWorkspace,
} from '../helpers/drive-kit';

after(removeTempDirs);

const FILES = ['a1', 'a2', 'b1', 'b2'];
const GoalStatusTodos = z
  .object({ todos: z.array(z.object({ id: z.string(), status: z.string() }).passthrough()) })
  .passthrough();

/** A lane's state as its driver wrote it. */
const laneState = (w: DriveWorkspace, lane: string) => readLaneState(w.store(), lane, new Date());

/** `git status --porcelain` of the main checkout, without the goal's own record (.loopx/goals/, shared in git). */
function mainNoise(w: DriveWorkspace): string[] {
  return git(w.ws, 'status', '--porcelain', '--untracked-files=all')
    .split('\n')
    .filter(Boolean)
    .filter((l) => !l.slice(3).startsWith(`.loopx/goals/${w.goal}/`));
}

describe('lanes in git worktrees', () => {
  it('two lanes share one goal in worktrees of their own; a person approves, the branches are merged', async () => {
    const w = await driveWorkspace('wt');
    const ranLog = path.join(tempDir('lxd-wt-ran-'), 'ran.log');
    await w.setRuntimes({ script: scriptRuntime({ worktree: true }) });
    // The person commits the signed policy, as a team shares it: the main checkout is clean now.
    git(w.ws, 'add', '.');
    git(w.ws, 'commit', '-q', '-m', 'runtimes');
    const base = git(w.ws, 'rev-parse', 'HEAD').trim();
    // Each todo writes where it ran into a file of its own, and says it ran in a log outside git.
    for (const f of FILES) await addTodo(w, f, `sleep 1; pwd > ${f}.txt; echo ${f} >> ${ranLog}`);
    ok(await w.run('lane', 'add', 'a', '--goal-id', w.goal, '--runtime', 'script'));
    ok(await w.run('lane', 'add', 'b', '--goal-id', w.goal, '--runtime', 'script'));
    const wt = (lane: string) => path.join(w.ws, '.loopx', 'local', 'worktrees', lane);

    const d = startDriver(w);
    try {
      await until(
        'the four todos done, then both lanes waiting for a person',
        () =>
          w.state().todos.filter((t) => FILES.includes(t.id) && t.status === 'done').length === 4 &&
          ['a', 'b'].every((l) => laneState(w, l).status === 'waiting_person'),
        60_000,
      ).catch((e: Error) => assert.fail(`${e.message}\n--- driver\n${d.log()}`));

      // Both lanes worked, at the same time, each as its own agent.
      let state = w.state();
      const runsOf = (lane: string) => state.runs.filter((r) => r.agent === `lane:${lane}`);
      const [ra, rb] = [runsOf('a')[0]!, runsOf('b')[0]!];
      assert.ok(ra && rb, 'each lane ran a turn');
      assert.ok(
        ra.startedAt < rb.endedAt! && rb.startedAt < ra.endedAt!,
        `the lanes' first turns overlap: a ${ra.startedAt}..${ra.endedAt}, b ${rb.startedAt}..${rb.endedAt}`,
      );

      // Every todo ran exactly once across the two lanes, in the worktree of the lane that claimed it.
      assert.deepEqual(fs.readFileSync(ranLog, 'utf8').split('\n').filter(Boolean).sort(), FILES);
      for (const f of FILES) {
        const t = state.todos.find((x) => x.id === f)!;
        assert.equal(state.evidence.filter((e) => e.todoId === f).length, 1, `one evidence for ${f}`);
        const lane = t.claimedBy!.replace(/^lane:/, '');
        assert.ok(['a', 'b'].includes(lane), `${f} done by ${t.claimedBy}`);
        const other = lane === 'a' ? 'b' : 'a';
        assert.equal(
          fs.readFileSync(path.join(wt(lane), `${f}.txt`), 'utf8').trim(),
          fs.realpathSync(wt(lane)),
        );
        assert.ok(
          !fs.existsSync(path.join(wt(other), `${f}.txt`)),
          `${f}.txt is not in lane ${other}'s worktree`,
        );
        assert.ok(!fs.existsSync(path.join(w.ws, `${f}.txt`)), `${f}.txt is not in the main checkout yet`);
        assert.match(
          git(w.ws, 'log', '--format=%an', '-1', `loopx/${lane}`, '--', `${f}.txt`),
          new RegExp(`^LoopX lane ${lane}$`, 'm'),
        );
      }
      for (const lane of ['a', 'b']) {
        assert.equal(git(wt(lane), 'rev-parse', '--abbrev-ref', 'HEAD').trim(), `loopx/${lane}`);
        assert.deepEqual(laneState(w, lane).worktree, {
          path: fs.realpathSync(wt(lane)),
          branch: `loopx/${lane}`,
        });
        assert.equal(
          git(w.ws, 'merge-base', 'HEAD', `loopx/${lane}`).trim(),
          base,
          `loopx/${lane} branches from HEAD`,
        );
      }
      // The main checkout: same commit, no lane's file, no .loopx/local in git's view.
      assert.equal(git(w.ws, 'rev-parse', 'HEAD').trim(), base);
      assert.deepEqual(mainNoise(w), []);

      // What is left: one bring-back todo per lane, each behind a pending gate of its own.
      for (const lane of ['a', 'b']) {
        const id = `bring-back-${lane}`;
        const t = state.todos.find((x) => x.id === id);
        assert.ok(t, `todo ${id} exists`);
        assert.equal(t.status, 'open');
        assert.equal(t.gate, id);
        assert.equal(t.action, `git -C ${w.ws} merge --no-ff --no-edit loopx/${lane}`);
        assert.equal(state.gates.find((g) => g.id === id)?.status, 'pending');
      }
      assert.equal(state.todos.length, 6);

      // Every surface says the same: loopx status, the store, loopx drive status.
      const cli = json(await w.run('--json', 'status', '--goal-id', w.goal), GoalStatusTodos);
      state = w.state();
      assert.deepEqual(
        cli.todos.map((t) => [t.id, t.status]),
        state.todos.map((t) => [t.id, t.status]),
      );
      const drive = await w.status();
      assert.equal(drive.driver.running, true);
      assert.deepEqual(
        drive.lanes.map((l) => l.name),
        ['a', 'b'],
      );
      for (const l of drive.lanes) {
        assert.equal(l.status, 'waiting_person');
        assert.equal(l.needs_person, true);
        for (const g of ['bring-back-a', 'bring-back-b'])
          assert.match(l.why ?? '', new RegExp(`gate ${g} is pending`));
        assert.deepEqual(l.worktree, { path: fs.realpathSync(wt(l.name)), branch: `loopx/${l.name}` });
        const runs = runsOf(l.name);
        assert.equal(l.spend.turns, runs.length);
        const last = runs.at(-1)!;
        assert.equal(l.last?.run_id, last.id);
        assert.equal(l.last?.outcome, last.outcome);
      }
      assert.equal(drive.working, 0);

      // A person approves both gates: the lanes merge both branches into the main checkout.
      for (const lane of ['a', 'b'])
        ok(await w.asPerson('gate', 'approve', '--goal-id', w.goal, '--gate-id', `bring-back-${lane}`));
      await until(
        'the goal completed and both lanes stopped',
        () =>
          effectiveStatus(w.state()) === 'completed' &&
          ['a', 'b'].every((l) => laneState(w, l).status === 'stopped'),
        60_000,
      ).catch((e: Error) => assert.fail(`${e.message}\n--- driver\n${d.log()}`));
    } finally {
      await d.stop();
    }

    const state = w.state();
    for (const lane of ['a', 'b']) {
      const t = state.todos.find((x) => x.id === `bring-back-${lane}`)!;
      assert.equal(t.status, 'done');
      const ev = state.evidence.filter((e) => e.todoId === t.id);
      assert.deepEqual(
        ev.map((e) => e.exitCode),
        [0],
        `bring-back-${lane} ran once and succeeded`,
      );
    }
    const tree = git(w.ws, 'ls-tree', '--name-only', 'HEAD').split('\n');
    for (const f of FILES) {
      assert.ok(tree.includes(`${f}.txt`), `HEAD has ${f}.txt`);
      assert.ok(fs.existsSync(path.join(w.ws, `${f}.txt`)), `${f}.txt is in the main checkout`);
    }
    assert.deepEqual(git(w.ws, 'log', '--merges', '--format=%s').split('\n').filter(Boolean).sort(), [
      "Merge branch 'loopx/a'",
      "Merge branch 'loopx/b'",
    ]);
    assert.equal(git(w.ws, 'branch', '--no-merged').trim(), '', 'both branches are merged');
    assert.ok(!fs.existsSync(path.join(w.ws, '.git', 'MERGE_HEAD')), 'no merge left half done');
    assert.equal(git(w.ws, 'diff', '--name-only', '--diff-filter=U').trim(), '', 'no conflict');
    assert.deepEqual(mainNoise(w), []);
    assert.equal(effectiveStatus(state), 'completed');
    assert.deepEqual(
      fs.readFileSync(ranLog, 'utf8').split('\n').filter(Boolean).sort(),
      FILES,
      'nothing ran again',
    );
  });

  it('a lane whose runtime asks for no worktree works in the main checkout', async () => {
    const w = await driveWorkspace('nowt');
    await w.setRuntimes({ script: scriptRuntime() });
    await addTodo(w, 'here', 'pwd > here.txt');
    ok(await w.run('lane', 'add', 'c', '--goal-id', w.goal, '--runtime', 'script'));
    const head = git(w.ws, 'rev-parse', 'HEAD').trim();
    const d = startDriver(w);
    try {
      await until(
        'the todo done and the lane stopped',
        () => w.state().todos[0]?.status === 'done' && laneState(w, 'c').status === 'stopped',
        60_000,
      ).catch((e: Error) => assert.fail(`${e.message}\n--- driver\n${d.log()}`));
    } finally {
      await d.stop();
    }
    assert.equal(fs.readFileSync(path.join(w.ws, 'here.txt'), 'utf8').trim(), w.ws);
    assert.ok(!fs.existsSync(path.join(w.ws, '.loopx', 'local', 'worktrees')), 'no worktree folder');
    assert.equal(git(w.ws, 'worktree', 'list', '--porcelain').match(/^worktree /gm)?.length, 1);
    assert.equal(git(w.ws, 'branch', '--list', 'loopx/*').trim(), '', 'no lane branch');
    assert.equal(git(w.ws, 'rev-parse', 'HEAD').trim(), head, 'nothing committed for the lane');
    assert.equal(laneState(w, 'c').worktree, undefined);
    assert.equal((await w.status()).lanes[0]?.worktree, undefined);
    const state = w.state();
    assert.deepEqual(
      state.todos.map((t) => t.id),
      ['here'],
      'no bring-back todo',
    );
    assert.equal(effectiveStatus(state), 'completed');
  });
});
