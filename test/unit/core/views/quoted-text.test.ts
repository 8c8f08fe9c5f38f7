import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { quotedBlock, quoteText } from '../../../../src/core/views/quoted-text';

const BOUNDS = { lines: 3, chars: 20 };

describe('quoted-text: someone else’s words inside LoopX’s text', () => {
  it('marks every line and closes a whole text with LoopX’s own line', () => {
    assert.deepEqual(quotedBlock('one\n\ntwo', 'the agent’s words', BOUNDS, 'see X'), {
      lines: ['│ one', '│', '│ two', '└ end of the agent’s words'],
      cut: false,
    });
  });

  it('stops at the line bound and says how much is not shown and where it is', () => {
    const text = `a\nb\nc${'\n'.repeat(1900)}last`;
    const block = quotedBlock(text, 'the agent’s words', BOUNDS, 'see X');
    assert.deepEqual(block.lines, ['│ a', '│ b', '│ c', '└ not all shown (3 of 1903 lines): see X']);
    assert.equal(block.cut, true);
  });

  it('stops at the character bound, cutting the last shown line', () => {
    const q = quoteText(`${'x'.repeat(15)}\n${'y'.repeat(15)}`, BOUNDS);
    assert.deepEqual(q.lines, [`│ ${'x'.repeat(15)}`, `│ ${'y'.repeat(5)}…`]);
    assert.equal(q.cut && q.lastCut, true);
    assert.match(
      quotedBlock(`${'x'.repeat(30)}`, 'w', BOUNDS, 'm').lines.at(-1)!,
      /^└ not all shown \(1 of 1 line, the last one cut\): m$/,
    );
  });

  it('ignores trailing blank lines: they show nothing', () => {
    assert.deepEqual(quoteText(`a${'\n'.repeat(50)}`, BOUNDS), {
      lines: ['│ a'],
      cut: false,
      total: 1,
      lastCut: false,
    });
  });
});
