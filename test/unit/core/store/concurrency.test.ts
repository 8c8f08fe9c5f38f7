/**
 * Several processes writing to one goal at once, and a writer killed in the middle of its work.
 * The children are real processes running `test/fixtures/writer.ts` through `invoke`, the same
 * path the CLI and the agent tools take.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Store } from '../../../../src/core/store/store';
import { parseLog } from '../../../../src/core/store/event-log';
import { invoke } from '../../../../src/core/capabilities/registry';
import { replay } from '../../../../src/core/rules/apply-event';
import { human, tempDir, removeTempDirs } from '../../../helpers/store';

const WRITER = path.join(__dirname, '..', '..', '..', 'fixtures', 'writer.ts');

after(removeTempDirs);

/** Children still running; killed when the file ends so that a failed test leaves none behind. */
const live = new Set<ChildProcess>();
after(() => {
  for (const c of live) c.kill('SIGKILL');
});

function startWriter(args: string[]): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', WRITER, ...args], {
    cwd: path.join(__dirname, '..', '..', '..', '..'),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  live.add(child);
  child.on('exit', () => live.delete(child));
  return child;
}

/** Collects a child's stdout lines and calls `onLine` for each. */
function lines(child: ChildProcess, onLine: (line: string) => void) {
  let buf = '';
  child.stdout!.setEncoding('utf8');
  child.stdout!.on('data', (chunk: string) => {
    buf += chunk;
    let nl: number;
    while ((nl = buf.indexOf('\n')) !== -1) {
      onLine(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
    }
  });
}

function exited(
  child: ChildProcess,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  let stderr = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (c: string) => (stderr += c));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stderr }));
  });
}

// The two scenarios run side by side: the writers of the first spend much of their time waiting
// for the goal lock or for fsync, which leaves a core free for the second.
describe('several processes', { concurrency: 2 }, () => {
  describe('concurrent writers', () => {
    it(
      '8 processes × 250 calls to one goal: all 2,000 events, contiguous seq, valid chain, no torn line',
      { timeout: 300_000 },
      async () => {
        const ws = tempDir();
        const store = Store.init(ws);
        invoke(store, 'goal.create', { goalId: 'shared', title: 'Shared goal' }, human);
        const before = store.load('shared').revision;
        const WRITERS = 8;
        const PER_WRITER = 250;

        const children = Array.from({ length: WRITERS }, (_, k) =>
          startWriter(['burst', ws, 'shared', String(k), String(PER_WRITER)]),
        );
        const done = children.map(exited);
        const ready = children.map(
          (c) =>
            new Promise<void>((resolve) => {
              lines(c, (l) => {
                if (l === 'ready') resolve();
              });
            }),
        );
        // Start everyone at the same moment, once all have loaded.
        await Promise.race([
          Promise.all(ready),
          Promise.all(done).then(() => assert.fail('a writer exited before it was ready')),
        ]);
        for (const c of children) c.stdin!.write('go\n');
        const results = await Promise.all(done);
        results.forEach((r, k) =>
          assert.equal(r.code, 0, `writer ${k} failed (${r.signal ?? r.code}): ${r.stderr}`),
        );

        const raw = fs.readFileSync(store.logPath('shared'));
        assert.equal(raw.at(-1), 10, 'the log ends with a complete line');
        const log = parseLog(raw, store.logPath('shared'), store.writerId()); // throws on a torn, interleaved or unchained line
        assert.equal(log.torn, undefined);
        assert.equal(log.events.length - before, WRITERS * PER_WRITER, 'exactly 2,000 new events');
        assert.deepEqual(
          log.events.map((e) => e.seq),
          log.events.map((_, i) => i + 1),
          'seq is contiguous from 1',
        );
        assert.ok(log.events.every((e, i) => i === 0 || e.prev === log.hashes[i - 1]));

        // Every call of every writer is there exactly once, and each writer's calls are in its own order.
        const marks = new Map<number, number[]>();
        for (const ev of log.events.slice(before)) {
          const mark =
            ev.type === 'todo.added'
              ? ev.data.todo.title
              : ev.type === 'todo.updated'
                ? ev.data.note
                : undefined;
          const m = /^w(\d+) #(\d+)$/.exec(mark ?? '');
          assert.ok(m, `unexpected event ${ev.type} ${JSON.stringify(ev.data)}`);
          const list = marks.get(Number(m[1])) ?? [];
          list.push(Number(m[2]));
          marks.set(Number(m[1]), list);
        }
        for (let k = 0; k < WRITERS; k++) {
          assert.deepEqual(
            marks.get(k),
            Array.from({ length: PER_WRITER }, (_, i) => i),
            `writer ${k}'s calls`,
          );
        }

        const state = store.load('shared');
        assert.deepEqual(state.warnings, []);
        assert.equal(state.revision, log.events.length);
        assert.deepEqual(
          state.state,
          replay('shared', log.events, store.trust()),
          'the snapshot equals a replay',
        );
        const ids = new Set(state.state.todos.map((t) => t.id));
        for (let k = 0; k < WRITERS; k++) {
          for (let i = 0; i < PER_WRITER; i += 10)
            assert.ok(ids.has(`w${k}-t${i}`), `todo w${k}-t${i} is present`);
          const last = state.state.todos.find((t) => t.id === `w${k}-t${PER_WRITER - 10}`);
          assert.equal(last?.note, `w${k} #${PER_WRITER - 1}`);
        }
        assert.equal(state.state.todos.length, WRITERS * (PER_WRITER / 10));
        assert.equal(
          store.listGoals().goals.find((g) => g.id === 'shared')?.todosTotal,
          WRITERS * (PER_WRITER / 10),
          'index.json is up to date',
        );
        // Group commit (store/group-commit.ts) leaves its queue empty: every call answered and collected.
        const queue = path.join(ws, '.loopx', 'local', 'queue', 'shared');
        const left = fs.existsSync(queue) ? fs.readdirSync(queue).filter((f) => f !== 'batch.json') : [];
        assert.deepEqual(left, [], 'files left in the queue');
        if (fs.existsSync(path.join(queue, 'batch.json')))
          assert.equal(fs.statSync(path.join(queue, 'batch.json')).size, 0, 'a batch left unfinished');
      },
    );
  });

  describe('a writer killed with SIGKILL in the middle of its work', () => {
    it(
      'leaves a store that loads and keeps every acknowledged event (10 kills at random moments)',
      { timeout: 300_000 },
      async () => {
        const ws = tempDir();
        const store = Store.init(ws);
        // Two lanes of five rounds each, on two goals of one workspace, to halve the wall time; they
        // share index.json and its lock, so a kill in one lane can leave a lock the other must break.
        const LANES = ['crash-a', 'crash-b'];
        const ROUNDS = 5;
        for (const g of LANES) invoke(store, 'goal.create', { goalId: g, title: `Crash test ${g}` }, human);
        const acknowledged = new Map<string, string[]>(LANES.map((g) => [g, []]));
        let tornSeen = 0;

        async function lane(goalId: string, laneNo: number) {
          const acks = acknowledged.get(goalId)!;
          for (let round = 0; round < ROUNDS; round++) {
            const child = startWriter(['loop', ws, goalId, `${laneNo}r${round}`]);
            const done = exited(child);
            // Kill at a random moment once the writer is under way: 0-150 ms after its first acknowledgement.
            const delay = Math.floor(Math.random() * 150);
            let killTimer: NodeJS.Timeout | undefined;
            lines(child, (l) => {
              const m = /^ack (\S+)$/.exec(l);
              if (!m) return;
              acks.push(m[1]!);
              killTimer ??= setTimeout(() => child.kill('SIGKILL'), delay);
            });
            const r = await done;
            clearTimeout(killTimer);
            assert.ok(
              acks.length > round,
              `${goalId} round ${round}: the writer acknowledged nothing: ${r.stderr}`,
            );
            assert.equal(
              r.signal,
              'SIGKILL',
              `${goalId} round ${round}: the writer should have been killed, it exited with ${r.code}: ${r.stderr}`,
            );

            // The goal loads after every kill; a torn tail is reported, never silently dropped.
            const raw = fs.readFileSync(store.logPath(goalId));
            const loaded = new Store(ws).load(goalId);
            if (raw.at(-1) !== 10) {
              tornSeen++;
              assert.ok(
                loaded.warnings.some((w) => /events\/[\w-]+\.jsonl:\d+ is an incomplete line/.test(w)),
                `${goalId} round ${round}: a torn tail must be reported: ${JSON.stringify(loaded.warnings)}`,
              );
            } else {
              assert.ok(!loaded.warnings.some((w) => /incomplete line/.test(w)));
            }
            const ids = new Set(loaded.state.todos.map((t) => t.id));
            for (const id of acks)
              assert.ok(ids.has(id), `${goalId} round ${round}: acknowledged todo ${id} is missing`);
          }
        }
        await Promise.all(LANES.map((g, i) => lane(g, i)));

        for (const goalId of LANES) {
          // The next write goes through (a stale lock of a killed writer does not block it), quarantines a
          // torn tail if one is left, and the whole log is one valid chain.
          invoke(store, 'todo.add', { goalId, todoId: 'after-crashes', title: 'after the crashes' }, human);
          const log = parseLog(
            fs.readFileSync(store.logPath(goalId)),
            store.logPath(goalId),
            store.writerId(),
          );
          assert.equal(log.torn, undefined);
          assert.deepEqual(
            log.events.map((e) => e.seq),
            log.events.map((_, i) => i + 1),
          );
          const state = new Store(ws).load(goalId);
          assert.deepEqual(state.warnings, []);
          assert.deepEqual(state.state, replay(goalId, log.events, store.trust()));
          const ids = new Set(state.state.todos.map((t) => t.id));
          const acks = acknowledged.get(goalId)!;
          assert.ok(acks.length >= ROUNDS, 'every round acknowledged at least one write');
          for (const id of [...acks, 'after-crashes'])
            assert.ok(ids.has(id), `${goalId}: todo ${id} is missing`);
          // Quarantined tails are kept as files, each recorded in the log with its size.
          const quarantined = log.events.filter((e) => e.type === 'log.quarantined');
          for (const q of quarantined) {
            if (q.type !== 'log.quarantined') continue;
            assert.equal(fs.readFileSync(path.join(store.goalDir(goalId), q.data.file)).length, q.data.bytes);
          }
          assert.ok(quarantined.length <= tornSeen);
        }
        // index.json survived the kills too (rebuilt entries where a kill cut an update short).
        assert.deepEqual(store.listGoals().errors, []);
      },
    );
  });
});
