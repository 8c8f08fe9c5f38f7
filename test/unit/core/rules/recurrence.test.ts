/** When a recurring todo is due again (core/rules/recurrence.ts): `every`, time zones, bad flags. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { LoopxError } from '../../../../src/core/model/errors';
import { Recurrence } from '../../../../src/core/model/recurrence';
import {
  describeRecurrence,
  dueOccurrence,
  nextOccurrence,
  parseRecurrence,
  type ScheduleInput,
} from '../../../../src/core/rules/recurrence';

const at = (iso: string) => new Date(iso);
const iso = (d: Date | undefined) => d?.toISOString();
/** The next `n` slots after `from`, as ISO strings. */
function slots(rec: Recurrence, from: string, n: number): string[] {
  const out: string[] = [];
  let t = at(from);
  for (let i = 0; i < n; i++) out.push(iso((t = nextOccurrence(rec, t)))!);
  return out;
}
const daily = (time: string, tz: string, anchor: string, every = '1d') =>
  parseRecurrence({ every, at: time, tz }, at(anchor));

describe('parsing --every, --at, --cron and --tz', () => {
  it('makes a schedule the model accepts, anchored at now', () => {
    const rec = parseRecurrence({ every: '1d', at: '9:00', tz: 'europe/paris' }, at('2026-01-01T12:00:00Z'));
    assert.deepEqual(rec, {
      kind: 'every',
      seconds: 86_400,
      at: '09:00',
      anchor: '2026-01-01T12:00:00.000Z',
      tz: 'Europe/Paris',
    });
    assert.deepEqual(Recurrence.parse(rec), rec);
  });
  it('reads the units m, h, d and w', () => {
    const seconds = (every: string) => {
      const rec = parseRecurrence({ every, tz: 'UTC' }, at('2026-01-01T00:00:00Z'));
      return rec.kind === 'every' ? rec.seconds : undefined;
    };
    assert.deepEqual(['1m', '30m', '2h', '1d', '1w'].map(seconds), [60, 1800, 7200, 86_400, 604_800]);
  });
  it("defaults the zone to this machine's", () => {
    const rec = parseRecurrence({ cron: '0  9 * *   1-5' }, at('2026-01-01T00:00:00Z'));
    assert.deepEqual(rec, {
      kind: 'cron',
      expr: '0 9 * * 1-5',
      tz: Intl.DateTimeFormat().resolvedOptions().timeZone,
    });
  });
  it('refuses every bad input naming the flag, the value and what is accepted', () => {
    const cases: [ScheduleInput, string, RegExp][] = [
      [{ every: '3x' }, 'every', /^--every "3x": expected a number and a unit \(m, h, d or w\), e\.g\. 30m/],
      [{ every: '0m' }, 'every', /^--every "0m": must be at least 1 minute/],
      [{ every: '400d' }, 'every', /^--every "400d": must be at most 366 days/],
      [{ every: '-1d' }, 'every', /^--every "-1d": expected a number and a unit/],
      [{ every: '1d', at: '24:00' }, 'at', /^--at "24:00": expected a 24-hour time HH:MM/],
      [{ every: '1d', at: '9h' }, 'at', /^--at "9h": expected a 24-hour time/],
      [{ every: '2h', at: '09:00' }, 'at', /^--at "09:00" needs --every in whole days or weeks .*"2h"/],
      [{ cron: '0 9 * * *', at: '09:00' }, 'at', /^--at "09:00" goes with --every/],
      [{ at: '09:00' }, 'at', /^--at "09:00" needs --every in whole days, e\.g\. --every 1d --at 09:00$/],
      [{}, 'every', /needs --every \(e\.g\. 1d\) or --cron/],
      [{ every: '1d', cron: '@daily' }, 'cron', /^--every "1d" and --cron "@daily": give one schedule/],
      [
        { every: '1d', tz: 'Mars/Olympus' },
        'tz',
        /^--tz "Mars\/Olympus": expected a time zone .* Europe\/Paris/,
      ],
      [{ every: '1d', tz: '' }, 'tz', /^--tz "": expected a time zone/],
      [{ cron: '61 * * * *' }, 'cron', /^--cron "61 \* \* \* \*": the minute field \(61\) must be 0-59$/],
      [{ cron: '0 0 30 2 *' }, 'cron', /^--cron "0 0 30 2 \*": never matches/],
    ];
    for (const [input, field, message] of cases) {
      assert.throws(
        () => parseRecurrence({ tz: 'UTC', ...input }, at('2026-01-01T00:00:00Z')),
        (e: unknown) =>
          e instanceof LoopxError &&
          e.kind === 'usage' &&
          e.reason === 'bad_schedule' &&
          e.details.field === field &&
          message.test(e.message),
        JSON.stringify(input),
      );
    }
  });
  it('the schema refuses what the flags refuse, and unknown keys', () => {
    const ok = { kind: 'every', seconds: 86_400, at: '09:00', anchor: '2026-01-01T00:00:00Z', tz: 'UTC' };
    assert.equal(Recurrence.safeParse(ok).success, true);
    for (const bad of [
      { ...ok, seconds: 3600 }, // at only with whole days
      { ...ok, seconds: 59 },
      { ...ok, seconds: 367 * 86_400 },
      { ...ok, at: '9:00' },
      { ...ok, anchor: '2026-01-01' },
      { ...ok, tz: 'x'.repeat(65) },
      { ...ok, every: '1d' },
      { kind: 'cron', expr: '0 9 * * *\n', tz: 'UTC' },
      { kind: 'cron', expr: '0 9 * * *', tz: 'UTC', at: '09:00' },
    ])
      assert.equal(Recurrence.safeParse(bad).success, false, JSON.stringify(bad));
  });
});

describe('every N minutes, hours or days', () => {
  const twoHours = parseRecurrence({ every: '2h', tz: 'UTC' }, at('2026-01-01T10:05:00Z'));

  it('without --at, the slots are the anchor plus whole intervals, strictly after', () => {
    assert.equal(iso(nextOccurrence(twoHours, at('2026-01-01T10:05:00Z'))), '2026-01-01T12:05:00.000Z');
    assert.equal(iso(nextOccurrence(twoHours, at('2026-01-01T12:05:00Z'))), '2026-01-01T14:05:00.000Z');
    assert.equal(iso(nextOccurrence(twoHours, at('2026-01-01T13:00:00Z'))), '2026-01-01T14:05:00.000Z');
    assert.equal(iso(nextOccurrence(twoHours, at('2025-12-31T00:00:00Z'))), '2026-01-01T12:05:00.000Z');
  });
  it('with --at, the first slot is the next HH:MM after the anchor', () => {
    const rec = daily('09:00', 'UTC', '2026-01-01T12:00:00Z');
    assert.equal(iso(nextOccurrence(rec, at('2026-01-01T12:00:00Z'))), '2026-01-02T09:00:00.000Z');
    const early = daily('09:00', 'UTC', '2026-01-01T08:00:00Z');
    assert.equal(iso(nextOccurrence(early, at('2026-01-01T08:00:00Z'))), '2026-01-01T09:00:00.000Z');
  });
  it('every 3 days counts days from the anchor, not from the calendar', () => {
    const rec = daily('18:30', 'UTC', '2026-01-01T12:00:00Z', '3d');
    assert.deepEqual(slots(rec, '2026-01-01T12:00:00Z', 3), [
      '2026-01-01T18:30:00.000Z',
      '2026-01-04T18:30:00.000Z',
      '2026-01-07T18:30:00.000Z',
    ]);
    assert.equal(iso(nextOccurrence(rec, at('2026-01-02T00:00:00Z'))), '2026-01-04T18:30:00.000Z');
  });
});

describe('what is due after a completion', () => {
  const rec = daily('09:00', 'UTC', '2026-01-01T12:00:00Z');

  it('a week off gives one reopening, for the latest slot', () => {
    const due = dueOccurrence(rec, at('2026-01-02T09:30:00Z'), at('2026-01-09T10:00:00Z'));
    assert.equal(iso(due), '2026-01-09T09:00:00.000Z');
    // Back before that day's slot: the day before's.
    const early = dueOccurrence(rec, at('2026-01-02T09:30:00Z'), at('2026-01-09T08:00:00Z'));
    assert.equal(iso(early), '2026-01-08T09:00:00.000Z');
    const twoHours = parseRecurrence({ every: '2h', tz: 'UTC' }, at('2026-01-01T10:05:00Z'));
    assert.equal(
      iso(dueOccurrence(twoHours, at('2026-01-01T12:30:00Z'), at('2026-01-08T11:00:00Z'))),
      '2026-01-08T10:05:00.000Z',
    );
  });
  it('nothing is due before the next slot, nor before the first', () => {
    assert.equal(dueOccurrence(rec, at('2026-01-02T09:30:00Z'), at('2026-01-03T08:59:59Z')), undefined);
    assert.equal(dueOccurrence(rec, at('2026-01-01T12:00:00Z'), at('2026-01-01T23:00:00Z')), undefined);
    // The 09:00 of the anchor's own day was before the schedule was made.
    assert.equal(dueOccurrence(rec, at('2025-12-01T00:00:00Z'), at('2026-01-01T23:00:00Z')), undefined);
    assert.equal(dueOccurrence(rec, at('2026-01-05T10:00:00Z'), at('2026-01-05T09:30:00Z')), undefined);
  });
  it('under a moving clock, each slot is due once', () => {
    const now1 = at('2026-01-03T09:05:00Z');
    assert.equal(iso(dueOccurrence(rec, at('2026-01-02T09:30:00Z'), now1)), '2026-01-03T09:00:00.000Z');
    // Completed at now1: nothing more that day; the next slot is due the moment it comes.
    assert.equal(dueOccurrence(rec, now1, at('2026-01-03T20:00:00Z')), undefined);
    const now2 = at('2026-01-04T09:00:00Z');
    assert.equal(iso(dueOccurrence(rec, now1, now2)), '2026-01-04T09:00:00.000Z');
  });
  it('a year off costs well under a millisecond', () => {
    const paris = daily('09:00', 'Europe/Paris', '2026-01-01T12:00:00Z'); // UTC needs no zone lookups
    const start = performance.now();
    for (let i = 0; i < 200; i++)
      dueOccurrence(paris, at('2026-01-02T09:30:00Z'), at('2027-01-02T10:00:00Z'));
    assert.ok((performance.now() - start) / 200 < 0.5, 'per call');
  });
});

describe('daylight saving time', () => {
  it('Europe/Paris: 02:30 runs at 03:00 on the spring-forward day', () => {
    const rec = daily('02:30', 'Europe/Paris', '2026-03-27T12:00:00Z');
    assert.deepEqual(slots(rec, '2026-03-27T12:00:00Z', 3), [
      '2026-03-28T01:30:00.000Z', // 02:30 CET
      '2026-03-29T01:00:00.000Z', // 02:30 does not exist: 03:00 CEST
      '2026-03-30T00:30:00.000Z', // 02:30 CEST
    ]);
  });
  it('Europe/Paris: 02:30 runs once, the first time, on the fall-back day', () => {
    const rec = daily('02:30', 'Europe/Paris', '2026-10-23T12:00:00Z');
    assert.deepEqual(slots(rec, '2026-10-24T12:00:00Z', 2), [
      '2026-10-25T00:30:00.000Z', // the first 02:30 (CEST); the second, 01:30Z, is not a slot
      '2026-10-26T01:30:00.000Z',
    ]);
    // Done at the second 02:40 (CET): nothing more until the next day.
    assert.equal(dueOccurrence(rec, at('2026-10-25T01:40:00Z'), at('2026-10-25T23:00:00Z')), undefined);
  });
  it('America/New_York: 09:00 stays 09:00 local across both changes', () => {
    const rec = daily('09:00', 'America/New_York', '2026-03-06T20:00:00Z');
    assert.deepEqual(slots(rec, '2026-03-06T20:00:00Z', 3), [
      '2026-03-07T14:00:00.000Z',
      '2026-03-08T13:00:00.000Z',
      '2026-03-09T13:00:00.000Z',
    ]);
    const fall = daily('01:30', 'America/New_York', '2026-10-30T20:00:00Z');
    assert.deepEqual(slots(fall, '2026-10-31T12:00:00Z', 2), [
      '2026-11-01T05:30:00.000Z', // 01:30 EDT, the earlier of the two
      '2026-11-02T06:30:00.000Z', // 01:30 EST
    ]);
    const spring = daily('02:30', 'America/New_York', '2026-03-06T20:00:00Z');
    assert.equal(iso(nextOccurrence(spring, at('2026-03-08T00:00:00Z'))), '2026-03-08T07:00:00.000Z');
  });
  it("counts days in the zone's local dates, not in UTC's", () => {
    const rec = daily('00:30', 'Asia/Tokyo', '2026-01-01T16:00:00Z', '2d'); // 01:00 on Jan 2 in Tokyo
    assert.deepEqual(slots(rec, '2026-01-01T16:00:00Z', 2), [
      '2026-01-03T15:30:00.000Z', // 00:30 on Jan 4 in Tokyo: two days after Jan 2
      '2026-01-05T15:30:00.000Z',
    ]);
  });
});

describe('describing a schedule', () => {
  it('says it as a person would', () => {
    const describe = (input: ScheduleInput) =>
      describeRecurrence(parseRecurrence(input, at('2026-01-01T00:00:00Z')));
    assert.equal(
      describe({ every: '1d', at: '09:00', tz: 'Europe/Paris' }),
      'every day at 09:00 (Europe/Paris)',
    );
    assert.equal(describe({ every: '2h' }), 'every 2 hours');
    assert.equal(describe({ every: '30m' }), 'every 30 minutes');
    assert.equal(describe({ every: '90m' }), 'every 90 minutes');
    assert.equal(describe({ every: '1w' }), 'every week');
    assert.equal(describe({ every: '3d', at: '18:30', tz: 'UTC' }), 'every 3 days at 18:30 (UTC)');
    assert.equal(describe({ cron: '0 9 * * 1-5', tz: 'UTC' }), 'cron "0 9 * * 1-5" (UTC)');
  });
});
