/**
 * `num` and `usd` write numbers as en-US's `toLocaleString` does, without Intl (whose first use
 * costs a `loopx` call about 10 ms): checked here against Intl itself.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { num, usd } from '../../../../src/core/views/people-text';

const intl = (n: number, min: number, max: number) =>
  n.toLocaleString('en-US', { minimumFractionDigits: min, maximumFractionDigits: max });

/** A fixed pseudo-random sequence, so a failure names a value that can be tried again. */
function* values(count: number): Generator<number> {
  let seed = 0x9e3779b9;
  const next = () => (seed = (Math.imul(seed ^ (seed >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0) / 2 ** 32;
  for (let i = 0; i < count; i++) {
    const scale = 10 ** Math.floor(next() * 12 - 4);
    const v = (next() - 0.3) * scale;
    yield v;
    yield Math.round(v);
    yield Math.round(v * 10000) / 10000 + 0.00005;
  }
}

describe('numbers in text', () => {
  it('num matches toLocaleString (en-US, up to 4 fraction digits) on edge and random values', () => {
    const edges = [
      0,
      -0,
      1,
      -1,
      0.5,
      0.00005,
      0.00004999,
      0.99995,
      999.99995,
      1234.5,
      12400,
      1e6,
      123456789.123456,
      -0.00001,
      1.00005,
      2.5,
      0.1 + 0.2,
      9007199254740991,
      1e21,
      Infinity,
      -Infinity,
      NaN,
    ];
    for (const n of [...edges, ...values(3000)]) assert.equal(num(n), intl(n, 0, 4), `num(${n})`);
  });

  it('usd keeps cents as toLocaleString writes them', () => {
    for (const n of [0.01, 0.015, 0.125, 1.5, 12.345, 1234.5, 99999.995])
      assert.equal(usd(n), `$${intl(n, 2, 2)}`, `usd(${n})`);
    assert.equal(usd(1234.5), '$1,234.50');
    assert.equal(usd(5), '$5');
    assert.equal(usd(0.004), '$0.0040');
  });
});
