/**
 * The storm (issue 35): 32 writer processes (test/fixtures/writer.ts `loop`, through `invoke` like
 * the CLI) add todos to one goal at once, and the process holding the goal's lock (named in the
 * lock file) is killed with SIGKILL again and again, often with others' calls claimed in its
 * batch, and replaced. The kernel releases a dead holder's lock at once; the next holder finishes
 * its batch. What must hold: no acknowledged todo lost, none written twice, the log one valid
 * chain, the others keep going.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { invoke } from '../../src/core/capabilities/registry';
import { parseLog } from '../../src/core/store/event-log';
import { Store } from '../../src/core/store/store';
import type { LoopWriter, WriterEnd } from '../helpers/reliability';
import {
  endWriters,
  figure,
  killWriters,
  loopWriter,
  progress,
  removeTempDirs,
  sleep,
  tempDir,
} from '../helpers/reliability';
import { human } from '../helpers/store';

const WRITERS = 32;
const KILLS = 16;

after(() => {
  killWriters();
  removeTempDirs();
});

/** The pid the lock file names: whoever took the goal's lock last (store/lock.ts recordHolder). */
function holderPid(lock: string): number | undefined {
  try {
    const pid = (JSON.parse(fs.readFileSync(lock, 'utf8')) as { pid?: unknown }).pid;
    return typeof pid === 'number' ? pid : undefined;
  } catch {
    return undefined;
  }
}

describe('the storm', () => {
  it(
    `${WRITERS} writers on one goal, the lock holder killed ${KILLS} times: nothing acknowledged lost or written twice`,
    { timeout: 300_000 },
    async (t) => {
      const ws = tempDir('loopx-storm-');
      const store = Store.init(ws);
      invoke(store, 'goal.create', { goalId: 'g', title: 'Storm' }, human);
      const lock = path.join(ws, '.loopx', 'local', 'locks', 'goal-g.lock');
      const acked: string[] = [];
      const onAck = (id: string) => acked.push(id);
      const writers: (LoopWriter & { name: string })[] = Array.from({ length: WRITERS }, (_, k) => ({
        name: `w${k}`,
        ...loopWriter(ws, 'g', `w${k}`, onAck),
      }));
      const finished: WriterEnd[] = [];
      let holdersKilled = 0;

      await progress(() => acked.length, 64, 120_000, 'start');
      for (let kill = 0; kill < KILLS; kill++) {
        await sleep(10 + Math.floor(Math.random() * 60));
        const pid = holderPid(lock);
        let k = writers.findIndex((w) => w.child.pid === pid);
        if (k === -1) k = Math.floor(Math.random() * writers.length);
        else holdersKilled++;
        const victim = writers[k]!;
        victim.child.kill('SIGKILL');
        finished.push({ name: victim.name, ...(await victim.done) });
        writers[k] = { name: `w${k}k${kill}`, ...loopWriter(ws, 'g', `w${k}k${kill}`, onAck) };
        await progress(() => acked.length, 16, 60_000, `after kill ${kill + 1} (${victim.name})`);
      }
      await endWriters(writers, finished);

      invoke(store, 'todo.add', { goalId: 'g', todoId: 'after', title: 'After the storm' }, human);
      const ids = new Set(new Store(ws).load('g').state.todos.map((x) => x.id));
      const lost = acked.filter((id) => !ids.has(id));
      assert.deepEqual(lost, [], `${lost.length} acknowledged todos lost`);
      const log = parseLog(fs.readFileSync(store.logPath('g')), store.logPath('g'), store.writerId());
      assert.equal(log.forks, undefined, 'the log forked: two writers held the lock at once');
      const added = log.events.filter((e) => e.type === 'todo.added').map((e) => e.data.todo.id);
      assert.equal(new Set(added).size, added.length, 'a todo was added twice');
      assert.ok(holdersKilled >= KILLS / 2, `only ${holdersKilled} of ${KILLS} kills hit the lock holder`);
      figure(
        t,
        `storm: ${acked.length} acknowledged, 0 lost; ${holdersKilled} of ${KILLS} kills hit the lock holder`,
      );
    },
  );
});
