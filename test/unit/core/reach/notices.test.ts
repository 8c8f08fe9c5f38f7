/** Which queue items become notices, their keys (reach/notices.ts) and their links. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { NeedsYouDoc, NeedsYouItem } from '../../../../src/core/index';
import { NEEDS_YOU_SCHEMA, noticeKey, noticesFrom } from '../../../../src/core/index';

const WS = { path: '/home/p/shop', name: 'shop', key: '0123456789abcdef0123456789abcdef' };

function item(o: Partial<NeedsYouItem> & Pick<NeedsYouItem, 'kind' | 'id'>): NeedsYouItem {
  return { workspace: WS, goal_id: 'g', goal_title: 'Ship', title: o.id, detail: 'd', ...o };
}

const gate = (o: Partial<NeedsYouItem> = {}) =>
  item({
    kind: 'gate',
    id: 'prod',
    title: 'Deploy to prod',
    detail: 'release day',
    requested_by: 'agent codex at the command line (unsigned)',
    requested_at: '2026-11-30T10:00:00.000Z',
    commands: ['make deploy'],
    ...o,
  });

function doc(items: NeedsYouItem[]): NeedsYouDoc {
  return {
    schema: NEEDS_YOU_SCHEMA,
    generated_at: '2026-11-30T11:00:00.000Z',
    workspaces: [],
    items,
    pruned: [],
  };
}

describe('notices from the queue', () => {
  it('gates, lanes and used-up budgets are notices; the rest of the queue is not', () => {
    const all = noticesFrom(
      doc([
        gate(),
        item({ kind: 'lane', id: 'l1', title: 'lane l1 needs you', detail: 'gate prod is pending' }),
        item({ kind: 'quota', id: 'tokens', title: 'tokens budget used up', detail: '100 of 100 used' }),
        item({ kind: 'quota', id: 'usd', title: 'usd budget nearly used up', detail: '9 of 10 used' }),
        item({ kind: 'user-todo', id: 'you', title: 'Rotate the key' }),
        item({ kind: 'denied', id: 'd1', title: 'refused' }),
        item({ kind: 'plan', id: 'plan', title: 'needs a plan' }),
      ]),
      { linkBase: 'http://localhost:8080' },
    );
    assert.deepEqual(
      all.map((n) => [n.kind, n.id]),
      [
        ['gate', 'prod'],
        ['lane', 'l1'],
        ['quota', 'tokens'],
      ],
    );
    const [g, lane] = all;
    assert.equal(g!.link, `http://localhost:8080/decide/${WS.key}/g/prod`);
    assert.equal(lane!.link, 'http://localhost:8080/all');
    assert.deepEqual(g!.commands, ['make deploy']);
    assert.equal(g!.requested_by, 'agent codex at the command line (unsigned)');
    assert.equal(g!.at, '2026-11-30T10:00:00.000Z');
    assert.equal(lane!.at, '2026-11-30T11:00:00.000Z');
    assert.match(g!.key, /^gate-[0-9a-f]{40}$/);
  });

  it('a trailing slash of the link base makes no double slash', () => {
    const [n] = noticesFrom(doc([gate()]), { linkBase: 'https://loopx.example/base/' });
    assert.equal(n!.link, `https://loopx.example/base/decide/${WS.key}/g/prod`);
  });

  it('a key stays while the thing stays the same, and changes when it happens again', () => {
    // The same gate read twice, even with another reason shown or another doc time: one key.
    assert.equal(noticeKey(gate()), noticeKey(gate({ detail: 'edited', title: 'Other words' })));
    // Asked again (a new request time): another key.
    assert.notEqual(noticeKey(gate()), noticeKey(gate({ requested_at: '2026-12-01T10:00:00.000Z' })));
    // Another gate, goal or workspace: another key.
    assert.notEqual(noticeKey(gate()), noticeKey(gate({ id: 'staging' })));
    assert.notEqual(noticeKey(gate()), noticeKey(gate({ goal_id: 'g2' })));
    assert.notEqual(noticeKey(gate()), noticeKey(gate({ workspace: { ...WS, path: '/home/p/shop2' } })));

    const lane = (detail: string) => item({ kind: 'lane', id: 'l1', detail });
    assert.equal(noticeKey(lane('gate prod is pending')), noticeKey(lane('gate prod is pending')));
    assert.notEqual(noticeKey(lane('gate prod is pending')), noticeKey(lane('the tokens budget is used up')));

    const quota = (detail: string) =>
      item({ kind: 'quota', id: 'tokens', title: 'tokens budget used up', detail });
    assert.equal(noticeKey(quota('100 of 100 used')), noticeKey(quota('100 of 100 used')));
    assert.notEqual(noticeKey(quota('100 of 100 used')), noticeKey(quota('200 of 200 used')));
    assert.notEqual(
      noticeKey(quota('100 of 100 used')),
      noticeKey({ ...quota('100 of 100 used'), id: 'usd' }),
    );
  });
});
