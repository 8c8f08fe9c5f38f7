/**
 * What a session's transcript costs (hooks/transcript.ts, rules/prices.ts) and how it is counted on a
 * run (`run.capture`): each message once, by session and message id, whatever calls it again.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { invoke } from '../../../../src/core/capabilities/registry';
import { applyInPlace } from '../../../../src/core/rules/apply-event';
import { transcriptUsage, usageKey } from '../../../../src/core/hooks/transcript';
import { costOf, priceOf, totalTokens, DEFAULT_PRICES } from '../../../../src/core/rules/prices';
import { DEFAULT_POLICY } from '../../../../src/core/model/policy';
import { agent, human, removeTempDirs, tempDir, tempStore } from '../../../helpers/store';

after(removeTempDirs);

/** A Claude Code transcript line for one content block of assistant message `id`. */
const assistant = (id: string, model: string, usage: Record<string, number>) =>
  JSON.stringify({
    type: 'assistant',
    sessionId: 's1',
    message: { id, model, role: 'assistant', usage },
  });
const usage = (input: number, output: number, cacheWrite = 0, cacheRead = 0) => ({
  input_tokens: input,
  output_tokens: output,
  cache_creation_input_tokens: cacheWrite,
  cache_read_input_tokens: cacheRead,
});

/** A message's usage as `transcriptUsage` reads it and `run.capture` takes it (session s1, Sonnet). */
const message = (id: string, input: number, output: number, cacheWrite = 0, cacheRead = 0) => ({
  key: usageKey('s1', id),
  model: 'claude-sonnet-4-5',
  usage: { input, output, cacheWrite, cacheRead },
});

function transcript(lines: string[]): string {
  const file = path.join(tempDir('loopx-transcript-'), 's1.jsonl');
  fs.writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

describe('reading a transcript', () => {
  it('counts each assistant message once (a message split over lines repeats its id) and skips the rest', () => {
    const file = transcript([
      JSON.stringify({ type: 'user', message: { role: 'user', content: 'hi "usage" "assistant"' } }),
      assistant('msg_1', 'claude-sonnet-4-5', usage(100, 1, 5, 7)),
      assistant('msg_1', 'claude-sonnet-4-5', usage(100, 20, 5, 7)),
      '{"type":"assistant","message":{"id":"msg_torn","usage":{"input_tok',
      assistant('msg_2', 'claude-sonnet-4-5', usage(300, 40)),
      assistant('msg_0', '<synthetic>', usage(0, 0)),
      JSON.stringify({ type: 'summary', usage: { input_tokens: 9 } }),
    ]);
    const got = transcriptUsage(file, 's1');
    assert.deepEqual(got, [message('msg_1', 100, 20, 5, 7), message('msg_2', 300, 40)]);
    assert.notEqual(usageKey('s1', 'msg_1'), usageKey('s2', 'msg_1'), 'the key is per session');
  });

  it('refuses a relative path, a link and a missing file with a reason, and reads nothing through them', () => {
    const file = transcript([assistant('m', 'x', usage(1, 1))]);
    const link = path.join(path.dirname(file), 'link.jsonl');
    fs.symlinkSync(file, link);
    assert.throws(() => transcriptUsage('s1.jsonl', 's1'), /is not absolute/);
    assert.throws(() => transcriptUsage(link, 's1'), /symbolic link/);
    assert.throws(() => transcriptUsage(path.join(path.dirname(file), 'none.jsonl'), 's1'), /does not exist/);
    assert.throws(() => transcriptUsage(path.dirname(file), 's1'), /not a plain file|EISDIR/);
  });
});

describe('prices', () => {
  it('the policy comes first, then the table; an unknown model is priced as the dearest entry', () => {
    const p = { ...DEFAULT_POLICY, prices: { 'claude-sonnet-*': { inputPerMTok: 1, outputPerMTok: 2 } } };
    assert.deepEqual(priceOf('claude-sonnet-4-5', p), {
      price: { inputPerMTok: 1, outputPerMTok: 2 },
      pattern: 'claude-sonnet-*',
      from: 'policy',
    });
    assert.equal(priceOf('claude-haiku-4-5', p).from, 'default');
    const unknown = priceOf('model-of-2027', p);
    assert.equal(unknown.from, 'fallback');
    const dearest = Math.max(...Object.values(DEFAULT_PRICES).map((x) => x.inputPerMTok + x.outputPerMTok));
    assert.equal(unknown.price.inputPerMTok + unknown.price.outputPerMTok, dearest);
  });

  it('cache writes cost 1.25x input and cache reads 0.1x unless the entry says otherwise', () => {
    const u = { input: 1_000_000, output: 1_000_000, cacheWrite: 1_000_000, cacheRead: 1_000_000 };
    assert.equal(costOf(u, { inputPerMTok: 3, outputPerMTok: 15 }), 3 + 15 + 3.75 + 0.3);
    assert.equal(costOf(u, { inputPerMTok: 3, outputPerMTok: 15, cacheReadPerMTok: 1 }), 3 + 15 + 3.75 + 1);
    assert.equal(totalTokens(u), 4_000_000);
  });
});

describe('run.capture', () => {
  const messages = [message('a', 1000, 50, 200, 300), message('b', 1000, 50, 200, 300)];
  const setup = () => {
    const store = tempStore();
    invoke(store, 'goal.create', { goalId: 'g', title: 'G' }, human);
    const { input } = invoke<{ runId: string }>(store, 'run.start', { goalId: 'g', agent: 'codex' }, agent);
    return { store, runId: input.runId };
  };

  it('adds the tokens and their cost to the run, with the breakdown, once per message', () => {
    const { store, runId } = setup();
    invoke(store, 'run.capture', { goalId: 'g', runId, messages }, agent);
    const cost = 2 * costOf(messages[0]!.usage, priceOf('claude-sonnet-4-5', DEFAULT_POLICY).price);
    let run = store.load('g').state.runs[0]!;
    assert.equal(run.spend.tokens, 2 * 1550);
    assert.equal(run.spend.costUsd, Math.round(cost * 1e6) / 1e6);
    assert.deepEqual(run.usage, { input: 2000, output: 100, cacheWrite: 400, cacheRead: 600 });

    // The same messages again (a second Stop, a retry): nothing is written, nothing counts twice.
    const before = store.readLog('g').events.length;
    const again = invoke(store, 'run.capture', { goalId: 'g', runId, messages }, agent);
    assert.equal(again.events.length, 0);
    assert.equal(store.readLog('g').events.length, before);
    // One new message with the old ones: only the new one counts.
    const c = message('c', 10, 0);
    invoke(store, 'run.capture', { goalId: 'g', runId, messages: [...messages, c, c] }, agent);
    run = store.load('g').state.runs[0]!;
    assert.equal(run.spend.tokens, 2 * 1550 + 10);
    assert.equal(store.load('g').state.counted!.length, 3);
  });

  it('counts on an open run only, and a replay of a copied capture line adds nothing', () => {
    const { store, runId } = setup();
    invoke(store, 'run.end', { goalId: 'g', runId, outcome: 'succeeded' }, agent);
    assert.throws(
      () => invoke(store, 'run.capture', { goalId: 'g', runId, messages }, agent),
      /already ended/,
    );
    const second = setup();
    invoke(second.store, 'run.capture', { goalId: 'g', runId: second.runId, messages }, agent);
    const spendEvent = second.store.readLog('g').events.find((e) => e.type === 'run.spend')!;
    const state = structuredClone(second.store.load('g').state);
    applyInPlace(state, { ...spendEvent, id: 'copy1', seq: 99 }, 'g');
    assert.equal(state.runs[0]!.spend.tokens, 2 * 1550, 'a copy of the line counts nothing');
  });

  it('refuses an agent channel that is not one: a person or a tool may not call it', () => {
    const { store, runId } = setup();
    assert.throws(
      () => invoke(store, 'run.capture', { goalId: 'g', runId, messages }, human),
      /may be called by agent or system/,
    );
  });
});
