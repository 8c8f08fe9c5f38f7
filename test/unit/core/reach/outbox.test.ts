/**
 * The outbox and one sending pass (reach/outbox.ts, reach/sender.ts), with a fake POST and a
 * fixed clock: once per channel, the retry schedule, giving up, a second sender skipping, a crash
 * mid-send sending again, records of notices gone from the queue pruned, the channel's health.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { OutboxRecord } from '../../../../src/core/index';
import {
  beginAttempt,
  channelHealth,
  endAttempt,
  invoke,
  isDue,
  PRUNE_AFTER_MS,
  readRecord,
  retryDelaySeconds,
  sendDue,
  Store,
  takeOutbox,
} from '../../../../src/core/index';
import { agent, human, removeTempDirs, signed, tempDir } from '../../../helpers/store';

after(removeTempDirs);

const T0 = new Date('2026-11-30T10:00:00.000Z');
const at = (s: number) => new Date(T0.getTime() + s * 1000);

/** A config folder with `channels`, and a workspace in it with the pending gate `prod`. */
function machine(channels: Record<string, unknown>) {
  const config = tempDir('loopx-outbox-config-');
  fs.writeFileSync(path.join(config, 'channels.json'), JSON.stringify({ v: 1, ...channels }));
  const dir = path.join(fs.realpathSync(tempDir('loopx-outbox-')), 'shop');
  fs.mkdirSync(dir);
  const store = Store.init(dir, { configDir: config });
  invoke(store, 'goal.create', { goalId: 'g', title: 'Ship', objective: 'o' }, human);
  invoke(
    store,
    'todo.add',
    { goalId: 'g', todoId: 't', title: 'Deploy', action: 'make deploy', gate: 'prod' },
    agent,
  );
  return { config, store };
}

/** A POST that records what it got and answers as `answer` says. */
function fakePost(answer: (url: string) => string | undefined = () => undefined) {
  const got: { url: string; body: string }[] = [];
  return {
    got,
    post: async (url: string, body: string) => {
      got.push({ url, body });
      const error = answer(url);
      if (error) throw new Error(error);
    },
  };
}

describe('the retry schedule', () => {
  it('waits the first delay, then doubles it, and gives up after max_attempts', () => {
    assert.deepEqual(
      [1, 2, 3, 4, 5].map((n) => retryDelaySeconds(n, 30)),
      [30, 60, 120, 240, 480],
    );
    assert.equal(retryDelaySeconds(40, 30), 24 * 3600, 'never more than a day');
    const retry = { first_seconds: 10, max_attempts: 3 };
    let rec: OutboxRecord | undefined;
    const times: string[] = [];
    let now = T0;
    for (let i = 0; i < 3; i++) {
      assert.ok(isDue(rec, now));
      rec = beginAttempt(rec, { key: `gate-${'0'.repeat(40)}`, channel: 'a', now, retry });
      rec = endAttempt(rec, { now, error: 'answered 500', retry });
      if (rec.next_at) {
        times.push(rec.next_at);
        assert.ok(!isDue(rec, new Date(Date.parse(rec.next_at) - 1)));
        now = new Date(rec.next_at);
      }
    }
    assert.deepEqual(times, [at(10).toISOString(), at(30).toISOString()]);
    assert.equal(rec!.attempts, 3);
    assert.ok(rec!.failed_at, 'given up after the third');
    assert.equal(rec!.next_at, undefined);
    assert.ok(!isDue(rec, at(99999)));
  });
});

describe('a sending pass', () => {
  it('sends each notice once per channel; a second pass (another process) sends nothing', async () => {
    const m = machine({
      webhooks: [
        { name: 'a', kind: 'generic', url: 'http://127.0.0.1:1/a' },
        { name: 'b', kind: 'slack', url: 'http://127.0.0.1:1/b' },
      ],
    });
    const f = fakePost();
    const first = await sendDue({ configDir: m.config, now: T0, post: f.post });
    assert.deepEqual(first.sent.map((d) => [d.channel, d.kind]).sort(), [
      ['a', 'gate'],
      ['b', 'gate'],
    ]);
    assert.deepEqual(f.got.map((g) => g.url).sort(), ['http://127.0.0.1:1/a', 'http://127.0.0.1:1/b']);
    const again = await sendDue({ configDir: m.config, now: at(3600), post: f.post });
    assert.deepEqual([again.sent, again.failed], [[], []]);
    assert.equal(f.got.length, 2);
    assert.deepEqual(
      channelHealth(m.config).map((h) => [h.name, h.status, h.last_sent_at]),
      [
        ['a', 'ok', T0.toISOString()],
        ['b', 'ok', T0.toISOString()],
      ],
    );
  });

  it('retries a failing channel on schedule, gives up, and reports it failing with its last error', async () => {
    const m = machine({
      webhooks: [
        { name: 'good', kind: 'generic', url: 'http://127.0.0.1:1/good' },
        { name: 'bad', kind: 'generic', url: 'http://127.0.0.1:1/bad' },
      ],
      retry: { first_seconds: 5, max_attempts: 3 },
    });
    const f = fakePost((url) => (url.endsWith('/bad') ? 'answered 500' : undefined));
    const one = await sendDue({ configDir: m.config, now: T0, post: f.post });
    assert.equal(one.failed[0]!.channel, 'bad');
    assert.equal(one.next_at, at(5).toISOString());
    // Not yet due: nothing is sent.
    await sendDue({ configDir: m.config, now: at(4), post: f.post });
    assert.equal(f.got.filter((g) => g.url.endsWith('/bad')).length, 1);
    const two = await sendDue({ configDir: m.config, now: at(5), post: f.post });
    assert.equal(two.failed[0]!.attempts, 2);
    assert.equal(two.next_at, at(15).toISOString());
    const three = await sendDue({ configDir: m.config, now: at(15), post: f.post });
    assert.equal(three.failed[0]!.gave_up, true);
    assert.equal(three.next_at, undefined);
    await sendDue({ configDir: m.config, now: at(99999), post: f.post });
    assert.equal(f.got.filter((g) => g.url.endsWith('/bad')).length, 3, 'three attempts, then no more');
    assert.equal(f.got.filter((g) => g.url.endsWith('/good')).length, 1);
    const bad = channelHealth(m.config).find((h) => h.name === 'bad')!;
    assert.deepEqual(
      [bad.status, bad.last_error, bad.last_error_at, bad.gave_up],
      ['failing', 'answered 500', at(15).toISOString(), 1],
    );
  });

  it('a second sender skips while the first holds the outbox', async () => {
    const m = machine({ webhooks: [{ name: 'a', kind: 'generic', url: 'http://127.0.0.1:1/a' }] });
    const release = takeOutbox(m.config)!;
    try {
      const f = fakePost();
      const doc = await sendDue({ configDir: m.config, now: T0, post: f.post });
      assert.equal(doc.busy, true);
      assert.equal(f.got.length, 0);
    } finally {
      release();
    }
  });

  it('a sender killed mid-send sends again once that attempt’s retry is due (at least once)', async () => {
    const m = machine({ webhooks: [{ name: 'a', kind: 'generic', url: 'http://127.0.0.1:1/a' }] });
    // What a crash leaves: the attempt written down, nothing after it.
    const key = JSON.parse(
      JSON.stringify(await sendDue({ configDir: m.config, now: T0, post: fakePost().post })),
    ).sent[0].key as string;
    const file = path.join(m.config, 'notify', 'a', `${key}.json`);
    const rec = readRecord(m.config, 'a', key)!;
    fs.writeFileSync(
      file,
      JSON.stringify({ v: 1, key, channel: 'a', attempts: rec.attempts, next_at: at(30).toISOString() }),
    );
    const f = fakePost();
    await sendDue({ configDir: m.config, now: at(29), post: f.post });
    assert.equal(f.got.length, 0);
    await sendDue({ configDir: m.config, now: at(30), post: f.post });
    assert.equal(f.got.length, 1);
  });

  it('records of a notice gone from the queue are kept a while, then pruned', async () => {
    const m = machine({ webhooks: [{ name: 'a', kind: 'generic', url: 'http://127.0.0.1:1/a' }] });
    const f = fakePost();
    const key = (await sendDue({ configDir: m.config, now: T0, post: f.post })).sent[0]!.key;
    invoke(m.store, 'gate.approve', { goalId: 'g', gateId: 'prod' }, human, signed(m.store));
    await sendDue({ configDir: m.config, now: at(1), post: f.post });
    assert.ok(readRecord(m.config, 'a', key)?.gone_at, 'marked gone');
    await sendDue({ configDir: m.config, now: at(1 + PRUNE_AFTER_MS / 1000 + 1), post: f.post });
    assert.equal(readRecord(m.config, 'a', key), undefined, 'pruned');
    assert.equal(f.got.length, 1);
  });

  it('no channels.json: nothing is read, locked or sent', async () => {
    const config = tempDir('loopx-outbox-none-');
    const f = fakePost();
    const doc = await sendDue({ configDir: config, now: T0, post: f.post });
    assert.equal(doc.configured, false);
    assert.equal(f.got.length, 0);
    assert.deepEqual(fs.readdirSync(config), []);
  });
});
