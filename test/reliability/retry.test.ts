/**
 * A caller can retry any failed write without duplicating an event (issue 35): a command named
 * with `--idempotency-key` that is killed after its events reached the log, but before it could
 * say so, is run again with the same key: it appends nothing and answers with what was written
 * (the same todo id). Without the key the retry would add the todo a second time, as the storage
 * review saw (30 of 65 failed calls had their todo in the log).
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import {
  loopx,
  removeTempDirs,
  startFaulted,
  tempDir,
  verifiedTodoIds,
  waitForFile,
} from '../helpers/reliability';

after(removeTempDirs);

describe('a retry with the same idempotency key', () => {
  it(
    'after a crash between the append and the answer: appends nothing, answers with the todo written then',
    { timeout: 60_000 },
    async () => {
      const ws = tempDir();
      const run = (args: string[], env: Record<string, string> = {}) => loopx(args, { cwd: ws, env });
      assert.equal((await run(['init'])).code, 0);
      assert.equal((await run(['goal', 'create', '--goal-id', 'g', '--title', 'G'])).code, 0);
      const add = ['--json', 'todo', 'add', '--goal-id', 'g', '--title', 'deploy notes'];
      const marker = path.join(ws, 'stopped');
      const crashed = startFaulted(['--idempotency-key', 'job-42', ...add], ws, {
        LOOPX_FAULT_PAUSE: 'appended',
        LOOPX_FAULT_MARKER: marker,
      });
      await waitForFile(marker);
      process.kill(crashed.pid, 'SIGKILL');
      await crashed.exited;
      const written = await verifiedTodoIds(ws);
      assert.equal(written.length, 1, 'the killed call’s todo is not in the log');

      const retry = await run(['--idempotency-key', 'job-42', ...add]);
      assert.equal(retry.code, 0, retry.stderr);
      assert.equal((JSON.parse(retry.stdout) as { todo: { id: string } }).todo.id, written[0]);
      assert.deepEqual(await verifiedTodoIds(ws), written, 'the retry added the todo again');

      // The same key from the environment; a new key is a new call.
      const env = await run(add, { LOOPX_IDEMPOTENCY_KEY: 'job-42' });
      assert.equal(env.code, 0, env.stderr);
      assert.deepEqual(await verifiedTodoIds(ws), written);
      assert.equal((await run(['--idempotency-key', 'job-43', ...add])).code, 0);
      assert.equal((await verifiedTodoIds(ws)).length, 2);
      const bad = await run(['--idempotency-key', 'two words', ...add]);
      assert.equal(bad.code, 2);
      assert.match(bad.stdout + bad.stderr, /idempotency key \\"two words\\" is not a valid id/);
    },
  );
});
