/**
 * The one rule for showing a time to a person (src/core/views/when-text.ts): relative while recent,
 * the local date past a week, and the local date and time first where precision matters. Times
 * are built from local dates, so the expectations hold in any time zone.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { localDateTime, relativeTime, whenText } from '../../../../src/core/views/when-text';

/** Dec 5 2026, 14:03:00 on this machine's clock. */
const NOW = new Date(2026, 11, 5, 14, 3, 0).getTime();
const before = (seconds: number) => new Date(NOW - seconds * 1000).toISOString();

describe('relativeTime: how long ago, while it is recent', () => {
  it('says just now within a minute either way, so clocks a little apart read alike', () => {
    for (const s of [0, 1, 59, -30, -59]) assert.equal(relativeTime(before(s), NOW), 'just now', `${s} s`);
  });

  it('counts whole minutes, hours and days, never rounding up', () => {
    const cases: [number, string][] = [
      [60, '1 min ago'],
      [119, '1 min ago'],
      [5 * 60, '5 min ago'],
      [3599, '59 min ago'],
      [3600, '1 h ago'],
      [3 * 3600 + 1800, '3 h ago'],
      [86399, '23 h ago'],
      [86400, '1 d ago'],
      [6 * 86400 + 86399, '6 d ago'],
    ];
    for (const [s, text] of cases) assert.equal(relativeTime(before(s), NOW), text, `${s} s`);
  });

  it('says a time ahead as "in …" (an expiry)', () => {
    assert.equal(relativeTime(before(-20 * 60), NOW), 'in 20 min');
    assert.equal(relativeTime(before(-2 * 3600), NOW), 'in 2 h');
  });

  it('gives the local date past a week, with the year only when it is not this one', () => {
    assert.equal(relativeTime(new Date(2026, 10, 28, 9, 15).toISOString(), NOW), 'Nov 28');
    assert.equal(relativeTime(new Date(2025, 0, 2, 23, 59).toISOString(), NOW), 'Jan 2, 2025');
  });

  it('returns text that is not a time as it is', () => {
    assert.equal(relativeTime('not a time', NOW), 'not a time');
  });
});

describe('localDateTime: the local date and time to the minute', () => {
  it('uses a 24-hour clock and names the year only when it is not this one', () => {
    assert.equal(localDateTime(new Date(2026, 11, 5, 9, 7, 59).toISOString(), NOW), 'Dec 5, 09:07');
    assert.equal(localDateTime(new Date(2026, 0, 31, 23, 0).toISOString(), NOW), 'Jan 31, 23:00');
    assert.equal(localDateTime(new Date(2024, 1, 29, 0, 0).toISOString(), NOW), 'Feb 29, 2024, 00:00');
  });
});

describe('whenText: where precision matters', () => {
  it('puts the local time first and how long ago after it, while recent', () => {
    assert.equal(whenText(before(5 * 60), NOW), 'Dec 5, 13:58 (5 min ago)');
    assert.equal(whenText(before(0), NOW), 'Dec 5, 14:03 (just now)');
    assert.equal(whenText(before(-25 * 60), NOW), 'Dec 5, 14:28 (in 25 min)');
  });

  it('gives the local date and time alone past a week', () => {
    assert.equal(whenText(new Date(2026, 10, 2, 8, 30).toISOString(), NOW), 'Nov 2, 08:30');
  });

  it('never shows a raw ISO time for a stored one', () => {
    const stored = '2026-12-05T13:58:00.000Z';
    assert.doesNotMatch(whenText(stored, NOW), /T\d\d:\d\d|Z\b/);
  });
});
