/**
 * Crash: 50 writer processes (test/fixtures/writer.ts `loop`, the same `invoke` path the CLI and
 * the agent tools take) killed with SIGKILL at a random moment of their work. After every kill:
 * the store loads, every acknowledged todo is there, the log parses as one valid chain (a torn
 * tail is allowed and reported), self-repair leaves the store consistent (a second repair finds
 * nothing, the snapshot equals a replay, no torn tail, index current), and a bystander goal in
 * the same workspace is byte for byte what it was.
 *
 * Five lanes of ten kills run side by side, each in its own workspace (a repair in one lane must
 * not race a live writer of another over index.json, which would be a test artefact).
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Store } from '../../src/core/store/store';
import { parseLog } from '../../src/core/store/event-log';
import { invoke } from '../../src/core/capabilities/registry';
import { replay } from '../../src/core/rules/apply-event';
import { repair } from '../../src/core/setup/repair';
import type { FindingKind } from '../../src/core/setup/repair';
import { canonicalJson } from '../../src/core/store/json-file';
import {
  Budget,
  figure,
  killWriters,
  lockHeld,
  loopWriter,
  removeTempDirs,
  tempDir,
} from '../helpers/reliability';
import { human } from '../helpers/store';

const LANES = 5;
const KILLS_PER_LANE = 10;
/** Kill 0..MAX_DELAY_MS after the writer's first acknowledgement: under way, at a random point. */
const MAX_DELAY_MS = 300;

after(() => {
  killWriters();
  removeTempDirs();
});

interface Round {
  acks: string[];
  signal: NodeJS.Signals | null;
  code: number | null;
  stderr: string;
  firstAckMs: number;
}

/** Starts a writer, kills it `delay` ms after its first `ack`, and collects every ack until it is gone. */
async function killedWriter(
  ws: string,
  goalId: string,
  name: string,
  delay: number,
  budget: Budget,
): Promise<Round> {
  const started = performance.now();
  const acks: string[] = [];
  let firstAckMs = -1;
  let killTimer: NodeJS.Timeout | undefined;
  const { child, done } = loopWriter(ws, goalId, name, (id) => {
    acks.push(id);
    if (!killTimer) {
      firstAckMs = performance.now() - started;
      killTimer = setTimeout(() => child.kill('SIGKILL'), delay);
    }
  });
  // A writer that never acknowledges (a broken fixture) is killed too, and the round fails below.
  const guard = setTimeout(() => child.kill('SIGKILL'), Math.max(20_000, budget.left));
  try {
    const exit = await done;
    return { acks, firstAckMs, ...exit };
  } finally {
    clearTimeout(guard);
    clearTimeout(killTimer);
  }
}

describe('crash: a writer killed with SIGKILL at a random moment', () => {
  it(
    `${LANES * KILLS_PER_LANE} kills: the store loads, self-repair makes it consistent, no acknowledged event is lost`,
    { timeout: 300_000 },
    async (t) => {
      const budget = new Budget(200_000);
      const startedAt = Date.now();
      const stats = {
        kills: 0,
        acknowledged: 0,
        tornTails: 0,
        locksLeft: 0,
        snapshotBehind: 0,
        findings: {} as Partial<Record<FindingKind, number>>,
        repairMs: [] as number[],
      };

      async function lane(no: number) {
        const ws = tempDir(`loopx-crash-${no}-`);
        const store = Store.init(ws);
        invoke(store, 'goal.create', { goalId: 'crash', title: `Crash lane ${no}` }, human);
        // A bystander goal of the same workspace, with some history: no kill may touch it.
        invoke(store, 'goal.create', { goalId: 'bystander', title: 'Bystander' }, human);
        for (let i = 0; i < 12; i++)
          invoke(store, 'todo.add', { goalId: 'bystander', todoId: `b${i}`, title: `bystander ${i}` }, human);
        const bystanderLog = fs.readFileSync(store.logPath('bystander'));
        const bystanderState = canonicalJson(store.load('bystander').state);
        const acked: string[] = [];
        const lockFile = path.join(store.localDir, 'locks', 'goal-crash.lock');

        for (let round = 0; round < KILLS_PER_LANE; round++) {
          assert.ok(
            !budget.over,
            `lane ${no}: out of time after ${round} kills (the machine is too loaded for this suite)`,
          );
          const where = `lane ${no} kill ${round + 1}`;
          const r = await killedWriter(
            ws,
            'crash',
            `${no}k${round}`,
            Math.floor(Math.random() * MAX_DELAY_MS),
            budget,
          );
          assert.equal(
            r.signal,
            'SIGKILL',
            `${where}: the writer should have been killed; it exited with ${r.code}: ${r.stderr.slice(0, 1000)}`,
          );
          assert.ok(
            r.acks.length > 0,
            `${where}: the writer acknowledged nothing before it was killed: ${r.stderr.slice(0, 1000)}`,
          );
          stats.kills++;
          stats.acknowledged += r.acks.length;
          acked.push(...r.acks);

          // 1. As the kill left it: the log parses as a chain (a torn tail allowed), the goal loads, and
          //    every acknowledged todo is there.
          const fresh = new Store(ws);
          const raw = fs.readFileSync(fresh.logPath('crash'));
          const before = parseLog(raw, fresh.logPath('crash'), fresh.writerId());
          if (before.torn) stats.tornTails++;
          if (lockHeld(lockFile)) stats.locksLeft++;
          const loaded = fresh.load('crash');
          if ((loaded.snapshotLag ?? 0) > 0) stats.snapshotBehind++;
          if (before.torn)
            assert.ok(
              loaded.warnings.some((w) => /incomplete line/.test(w)),
              `${where}: a torn tail is reported: ${JSON.stringify(loaded.warnings)}`,
            );
          const ids = new Set(loaded.state.todos.map((x) => x.id));
          for (const id of acked)
            assert.ok(ids.has(id), `${where}: acknowledged todo ${id} is missing after the kill`);

          // 2. Self-repair fixes everything it finds; a second pass finds nothing.
          const t0 = performance.now();
          const first = repair(fresh);
          stats.repairMs.push(performance.now() - t0);
          for (const f of first.findings) {
            stats.findings[f.kind] = (stats.findings[f.kind] ?? 0) + 1;
            assert.ok(f.fixed, `${where}: self-repair left a finding unfixed: ${JSON.stringify(f)}`);
          }
          const second = repair(new Store(ws));
          assert.deepEqual(second.findings, [], `${where}: a second self-repair still finds something`);

          // 3. After repair: `verify` (readLog) passes with no torn tail, seq contiguous, the chain
          //    linked; loading gives what a replay gives; acknowledged todos all there.
          const after = new Store(ws);
          const log = after.readLog('crash');
          assert.equal(log.torn, undefined, `${where}: a torn tail is left after repair`);
          assert.ok(
            log.events.every(
              (e, i) => e.seq === i + 1 && (i === 0 ? e.prev === null : e.prev === log.hashes[i - 1]),
            ),
            `${where}: the chain is broken`,
          );
          const state = after.load('crash');
          assert.deepEqual(state.warnings, [], `${where}: warnings after repair`);
          assert.equal(
            canonicalJson(state.state),
            canonicalJson(replay('crash', log.events)),
            `${where}: load differs from a replay`,
          );
          const idsAfter = new Set(state.state.todos.map((x) => x.id));
          for (const id of acked)
            assert.ok(idsAfter.has(id), `${where}: acknowledged todo ${id} is missing after repair`);
          assert.deepEqual(after.listGoals().errors, []);
          assert.equal(
            after.listGoals().goals.find((g) => g.id === 'crash')?.todosTotal,
            state.state.todos.length,
            `${where}: index.json is current`,
          );

          // 4. The bystander is untouched.
          assert.ok(
            fs.readFileSync(after.logPath('bystander')).equals(bystanderLog),
            `${where}: the bystander's log changed`,
          );
          assert.equal(
            canonicalJson(after.load('bystander').state),
            bystanderState,
            `${where}: the bystander's state changed`,
          );
        }
        // Quarantined tails are kept, each recorded in the log with its exact size.
        const final = new Store(ws).readLog('crash');
        for (const e of final.events) {
          if (e.type !== 'log.quarantined') continue;
          assert.equal(fs.readFileSync(path.join(store.goalDir('crash'), e.data.file)).length, e.data.bytes);
        }
      }

      await Promise.all(Array.from({ length: LANES }, (_, i) => lane(i)));
      assert.equal(stats.kills, LANES * KILLS_PER_LANE);
      const repairMs = stats.repairMs.sort((a, b) => a - b);
      figure(
        t,
        `crash: ${stats.kills} SIGKILLs in ${((Date.now() - startedAt) / 1000).toFixed(1)} s; ${stats.acknowledged} acknowledged writes, 0 lost`,
      );
      figure(
        t,
        `crash: torn tails ${stats.tornTails}, goal lock left behind ${stats.locksLeft}, snapshot behind the log ${stats.snapshotBehind}`,
      );
      figure(
        t,
        `crash: self-repair findings (all fixed) ${JSON.stringify(stats.findings)}; repair median ${repairMs[Math.floor(repairMs.length / 2)]!.toFixed(1)} ms`,
      );
    },
  );
});
