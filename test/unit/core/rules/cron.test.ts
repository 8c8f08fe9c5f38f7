/** Cron schedules (core/rules/cron.ts, evaluated by core/rules/recurrence.ts): syntax, Vixie rules, zones. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { LoopxError } from '../../../../src/core/model/errors';
import type { Recurrence } from '../../../../src/core/model/recurrence';
import { parseCron } from '../../../../src/core/rules/cron';
import { dueOccurrence, nextOccurrence } from '../../../../src/core/rules/recurrence';

const at = (iso: string) => new Date(iso);
const cron = (expr: string, tz = 'UTC'): Recurrence => ({ kind: 'cron', expr, tz });
/** The next `n` slots after `from`, as ISO strings without the milliseconds. */
function slots(expr: string, from: string, n: number, tz = 'UTC'): string[] {
  const out: string[] = [];
  let t = at(from);
  for (let i = 0; i < n; i++) out.push((t = nextOccurrence(cron(expr, tz), t)).toISOString().slice(0, 16));
  return out;
}
const values = (set: readonly boolean[]) => set.flatMap((on, v) => (on ? [v] : []));

describe('cron syntax', () => {
  it('reads *, lists, ranges and steps', () => {
    assert.deepEqual(values(parseCron('*/15 * * * *').minutes), [0, 15, 30, 45]);
    assert.deepEqual(values(parseCron('10-50/10 * * * *').minutes), [10, 20, 30, 40, 50]);
    assert.deepEqual(values(parseCron('0 1,2,9-11 * * *').hours), [1, 2, 9, 10, 11]);
    assert.deepEqual(values(parseCron('0 0 5/10 * *').daysOfMonth), [5, 15, 25]);
    assert.equal(values(parseCron('* * * * *').minutes).length, 60);
  });
  it('reads month and day names in any case, and 7 as Sunday', () => {
    assert.deepEqual(values(parseCron('0 0 1 jan,Jul,DEC *').months), [1, 7, 12]);
    assert.deepEqual(values(parseCron('0 0 * * mon-FRI').daysOfWeek), [1, 2, 3, 4, 5]);
    assert.deepEqual(values(parseCron('0 0 * * 7').daysOfWeek), [0]);
    assert.deepEqual(values(parseCron('0 0 * * 5-7').daysOfWeek), [0, 5, 6]);
  });
  it('expands the macros', () => {
    assert.deepEqual(parseCron('@hourly'), parseCron('0 * * * *'));
    assert.deepEqual(parseCron('@DAILY'), parseCron('0 0 * * *'));
    assert.deepEqual(parseCron('@midnight'), parseCron('0 0 * * *'));
    assert.deepEqual(parseCron('@weekly'), parseCron('0 0 * * 0'));
    assert.deepEqual(parseCron('@monthly'), parseCron('0 0 1 * *'));
    assert.deepEqual(parseCron('@yearly'), parseCron('0 0 1 1 *'));
    assert.deepEqual(parseCron('@annually'), parseCron('0 0 1 1 *'));
  });
  it('says which field is wrong, and why', () => {
    const cases: [string, RegExp][] = [
      ['61 * * * *', /^--cron "61 \* \* \* \*": the minute field \(61\) must be 0-59$/],
      ['0 24 * * *', /the hour field \(24\) must be 0-23$/],
      ['0 0 0 * *', /the day-of-month field \(0\) must be 1-31$/],
      ['0 0 * FOO *', /the month field \(FOO\) must be 1-12 or JAN-DEC$/],
      ['0 0 * * 1,8', /the day-of-week field \(1,8\) must be 0-7 or SUN-SAT \(8 is not\)$/],
      ['*/0 * * * *', /the minute field \(\*\/0\): a step must be at least 1/],
      ['0 5-1 * * *', /the hour field \(5-1\): a range must go up/],
      ['0 0 ? * *', /the day-of-month field \(\?\) is not understood: expected a number, \*, a list/],
      ['0 9 * *', /expected 5 fields \(minute hour day-of-month month day-of-week\) or a macro .*got 4/],
      ['@sometimes', /unknown macro; expected one of @hourly, @daily/],
      ['0 0 31 4,6 *', /never matches/],
    ];
    for (const [expr, message] of cases)
      assert.throws(
        () => parseCron(expr, '--cron'),
        (e: unknown) =>
          e instanceof LoopxError &&
          e.reason === 'bad_schedule' &&
          e.details.field === 'cron' &&
          message.test(e.message),
        expr,
      );
  });
});

describe('cron slots', () => {
  it('weekdays at 09:00 skip the weekend', () => {
    // 2026-01-02 is a Friday.
    assert.deepEqual(slots('0 9 * * 1-5', '2026-01-02T09:00:00Z', 2), [
      '2026-01-05T09:00',
      '2026-01-06T09:00',
    ]);
  });
  it('steps and ranges within the hour', () => {
    assert.deepEqual(slots('10-50/20 8-9 * * *', '2026-01-01T08:30:00Z', 4), [
      '2026-01-01T08:50',
      '2026-01-01T09:10',
      '2026-01-01T09:30',
      '2026-01-01T09:50',
    ]);
  });
  it('month names and the macros', () => {
    assert.deepEqual(slots('0 12 1 jan,JUL *', '2026-02-01T00:00:00Z', 2), [
      '2026-07-01T12:00',
      '2027-01-01T12:00',
    ]);
    assert.deepEqual(slots('@weekly', '2026-03-02T00:00:00Z', 1), ['2026-03-08T00:00']); // a Sunday
    assert.deepEqual(slots('@monthly', '2026-03-02T00:00:00Z', 1), ['2026-04-01T00:00']);
    assert.deepEqual(slots('@hourly', '2026-03-02T10:00:00Z', 1), ['2026-03-02T11:00']);
    assert.deepEqual(slots('@annually', '2026-03-02T00:00:00Z', 1), ['2027-01-01T00:00']);
  });
  it('Vixie: a day matches on either a restricted day of month or a restricted day of week', () => {
    // The 13th or any Monday: Friday 13 March, then Monday 16 March.
    assert.deepEqual(slots('0 0 13 * 1', '2026-03-10T00:00:00Z', 2), [
      '2026-03-13T00:00',
      '2026-03-16T00:00',
    ]);
  });
  it('Vixie: a field starting with * makes the days AND', () => {
    // Days 1, 11, 21, 31 that are Mondays: the first is 11 May 2026.
    assert.deepEqual(slots('0 0 */10 * 1', '2026-03-01T00:00:00Z', 1), ['2026-05-11T00:00']);
  });
  it('a leap day comes round every four years', () => {
    assert.deepEqual(slots('0 0 29 2 *', '2026-01-01T00:00:00Z', 2), [
      '2028-02-29T00:00',
      '2032-02-29T00:00',
    ]);
  });
});

describe('cron in local time', () => {
  it('Europe/Paris: a 02:30 job runs once at 03:00 on the spring-forward day, once on fall-back day', () => {
    assert.deepEqual(slots('30 2 * * *', '2026-03-27T12:00:00Z', 3, 'Europe/Paris'), [
      '2026-03-28T01:30',
      '2026-03-29T01:00',
      '2026-03-30T00:30',
    ]);
    assert.deepEqual(slots('30 2 * * *', '2026-10-24T12:00:00Z', 2, 'Europe/Paris'), [
      '2026-10-25T00:30',
      '2026-10-26T01:30',
    ]);
  });
  it('America/New_York: the repeated hour runs once, and due and next agree on it', () => {
    const every20 = cron('*/20 * * * *', 'America/New_York');
    assert.deepEqual(slots('*/20 * * * *', '2026-11-01T05:10:00Z', 3, 'America/New_York'), [
      '2026-11-01T05:20', // 01:20 EDT
      '2026-11-01T05:40', // 01:40 EDT
      '2026-11-01T07:00', // 02:00 EST: 01:00-01:59 EST repeats wall minutes that ran already
    ]);
    // From inside the repeated hour (01:10 EST), the next slot is 02:00 EST, not 01:20 again.
    assert.equal(
      nextOccurrence(every20, at('2026-11-01T06:10:00Z')).toISOString(),
      '2026-11-01T07:00:00.000Z',
    );
    // At 01:30 EST, the latest slot is 01:40 EDT, which is earlier.
    const due = dueOccurrence(every20, at('2026-11-01T05:10:00Z'), at('2026-11-01T06:30:00Z'));
    assert.equal(due?.toISOString(), '2026-11-01T05:40:00.000Z');
    assert.equal(dueOccurrence(every20, due!, at('2026-11-01T06:59:00Z')), undefined);
  });
  it('weekdays 09:00 in New York: a week off is due once, for the latest slot', () => {
    const rec = cron('0 9 * * 1-5', 'America/New_York');
    const due = dueOccurrence(rec, at('2026-01-02T14:30:00Z'), at('2026-01-11T12:00:00Z')); // Sunday
    assert.equal(due?.toISOString(), '2026-01-09T14:00:00.000Z'); // Friday 09:00 EST
    assert.equal(dueOccurrence(rec, at('2026-01-09T15:00:00Z'), at('2026-01-11T12:00:00Z')), undefined);
  });
  it('a year off costs a few milliseconds at most', () => {
    const rec = cron('0 9 29 2 1', 'Europe/Paris');
    const start = performance.now();
    for (let i = 0; i < 20; i++) dueOccurrence(rec, at('2026-01-01T00:00:00Z'), at('2027-01-01T00:00:00Z'));
    assert.ok((performance.now() - start) / 20 < 3, 'per call');
  });
});
