/**
 * Group commit under kills: four writer processes (test/fixtures/writer.ts `loop`) add todos to
 * one goal at once, so most calls are queued for whichever process holds the lock and committed
 * by it (commit-batch.ts). One writer at a time is killed with SIGKILL at a random moment, often
 * while it holds the lock with others' calls in its batch, and replaced by a new one.
 *
 * What must hold: every todo a writer acknowledged is in the goal, no call is written twice (a
 * re-planned todo.add would be refused as a duplicate and its writer would exit with an error,
 * not SIGKILL), the writers that were not killed keep going (a dead holder's lock is broken and
 * its batch finished by the next), and once the last writer is gone one more write leaves the
 * queue with nothing claimed and no batch open.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Store } from '../../src/core/store/store';
import { parseLog } from '../../src/core/store/event-log';
import { invoke } from '../../src/core/capabilities/registry';
import {
  killWriters,
  endWriters,
  loopWriter,
  progress,
  removeTempDirs,
  tempDir,
} from '../helpers/reliability';
import type { LoopWriter, WriterEnd } from '../helpers/reliability';
import { human } from '../helpers/store';

const WRITERS = 4;
const KILLS = 24;

after(() => {
  killWriters();
  removeTempDirs();
});

interface Writer extends LoopWriter {
  name: string;
}

function startWriter(ws: string, name: string, acked: (id: string) => void): Writer {
  return { name, ...loopWriter(ws, 'g', name, acked) };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('group commit: writers killed while others wait on them', () => {
  it(
    `${KILLS} kills among ${WRITERS} writers of one goal: nothing acknowledged lost, nothing written twice, the rest go on`,
    { timeout: 240_000 },
    async (t) => {
      const ws = tempDir('loopx-group-crash-');
      const store = Store.init(ws);
      invoke(store, 'goal.create', { goalId: 'g', title: 'Group crash' }, human);
      const acked: string[] = [];
      const onAck = (id: string) => acked.push(id);
      const writers: Writer[] = Array.from({ length: WRITERS }, (_, k) => startWriter(ws, `w${k}`, onAck));
      let midBatch = 0;
      const finished: WriterEnd[] = [];

      await progress(() => acked.length, 40, 60_000, 'start');
      for (let kill = 0; kill < KILLS; kill++) {
        await sleep(20 + Math.floor(Math.random() * 120));
        const k = Math.floor(Math.random() * writers.length);
        const victim = writers[k]!;
        victim.child.kill('SIGKILL');
        finished.push({ name: victim.name, ...(await victim.done) });
        // Seen right after the kill: the victim held the lock with others' calls claimed.
        const q = path.join(ws, '.loopx', 'local', 'queue', 'g');
        if (fs.existsSync(q) && fs.readdirSync(q).some((n) => n.endsWith('.claimed'))) midBatch++;
        writers[k] = startWriter(ws, `w${k}k${kill}`, onAck);
        // The others (and the new one) keep going: a dead holder does not stop them.
        await progress(() => acked.length, 8, 30_000, `after kill ${kill + 1} (${victim.name})`);
      }
      await endWriters(writers, finished);

      // One more write finishes whatever the last kill left: a batch under way, calls claimed.
      invoke(store, 'todo.add', { goalId: 'g', todoId: 'after', title: 'After the kills' }, human);
      const queue = path.join(ws, '.loopx', 'local', 'queue', 'g');
      const names = fs.existsSync(queue) ? fs.readdirSync(queue) : [];
      assert.deepEqual(
        names.filter((n) => n.endsWith('.claimed') || n.endsWith('.req')),
        [],
        'calls left claimed or waiting',
      );
      if (names.includes('batch.json')) assert.equal(fs.statSync(path.join(queue, 'batch.json')).size, 0);

      const loaded = new Store(ws).load('g');
      const ids = loaded.state.todos.map((t) => t.id);
      for (const id of acked) assert.ok(ids.includes(id), `acknowledged todo ${id} is missing`);
      const log = parseLog(fs.readFileSync(store.logPath('g')), store.logPath('g'), store.writerId());
      const added = log.events.filter((e) => e.type === 'todo.added').map((e) => e.data.todo.id);
      assert.equal(new Set(added).size, added.length, 'a todo was added twice');
      assert.ok(acked.length >= 40 + KILLS * 8, `only ${acked.length} acknowledgements`);
      t.diagnostic(
        `${acked.length} acknowledged; ${midBatch} of ${KILLS} kills caught a holder with calls claimed`,
      );
    },
  );
});
