/**
 * When a recurring todo is due again. Every due time is computed from stored facts (the schedule,
 * the last completion, the time now, all parameters), never from a timer, so it survives restarts;
 * and a machine that was off for a week is owed one reopening, for the latest slot it missed
 * (`dueOccurrence`), not one per slot.
 *
 * Time zones use only Intl: a zone's offset at an instant is read from the formatted wall time.
 * A wall time a zone skips (spring forward) moves to the first valid minute after the gap; one it
 * repeats (fall back) is the earlier instant; so a daily 02:30 runs once on both days.
 */
import type { CronRecurrence, EveryRecurrence, Recurrence } from '../model';
import {
  AT_PATTERN,
  CRON_EXPR_MAX,
  EVERY_MAX_SECONDS,
  quote,
  SECONDS_PER_DAY,
  TimeZoneName,
  usageError,
} from '../model';
import { type CronSpec, nextCronWall, parseCron, prevCronWall } from './cron';

const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
/**
 * How far a cron search looks. A parsed expression always matches some day (parseCron refuses
 * `0 0 30 2 *` outright), but rarely: a leap day on a given weekday (`0 0 29 2 *\/7`) comes round
 * every 28 years, up to 40 across a century that is not a leap year. Searching skips by month and
 * day, so even the whole span costs about a millisecond; past it, the expression is refused.
 */
const CRON_SEARCH = 41 * 366 * DAY;

export interface ScheduleInput {
  every?: string;
  at?: string;
  cron?: string;
  tz?: string;
}

const bad = (field: 'every' | 'at' | 'cron' | 'tz', message: string) =>
  usageError(message, { reason: 'bad_schedule', field });

const EVERY_UNITS: Readonly<Record<string, number>> = {
  m: 60,
  h: 3600,
  d: SECONDS_PER_DAY,
  w: 7 * SECONDS_PER_DAY,
};

/**
 * A schedule from the flags of `loopx todo add` (`--every 1d --at 09:00`, `--cron "0 9 * * 1-5"`,
 * `--tz`), anchored at `now`. Throws `usageError` (reason `bad_schedule`, `field` the flag) naming
 * the flag, the value and what is accepted.
 */
export function parseRecurrence(input: ScheduleInput, now: Date): Recurrence {
  const { every, at, cron } = input;
  if (every !== undefined && cron !== undefined)
    throw bad('cron', `--every ${quote(every)} and --cron ${quote(cron)}: give one schedule, not both`);
  if (cron !== undefined) {
    if (at !== undefined)
      throw bad(
        'at',
        `--at ${quote(at)} goes with --every; with --cron put the time in the expression, e.g. "0 9 * * *"`,
      );
    // One space between fields, so the stored expression reads as the schema expects.
    const expr = cron.trim().split(/\s+/).join(' ');
    if (expr.length > CRON_EXPR_MAX)
      throw bad('cron', `--cron ${quote(cron)}: must be at most ${CRON_EXPR_MAX} characters`);
    parseCron(expr, `--cron`);
    return { kind: 'cron', expr, tz: parseTimeZone(input.tz) };
  }
  if (every === undefined && at !== undefined)
    throw bad('at', `--at ${quote(at)} needs --every in whole days, e.g. --every 1d --at 09:00`);
  if (every === undefined)
    throw bad('every', 'a recurring todo needs --every (e.g. 1d) or --cron (e.g. "0 9 * * 1-5")');
  const seconds = parseEvery(every);
  const anchor = instant(now, 'now').toISOString();
  if (at === undefined) return { kind: 'every', seconds, anchor, tz: parseTimeZone(input.tz) };
  const hhmm = /^([0-9]{1,2}):([0-9]{2})$/.exec(at.trim());
  const wallTime = hhmm ? `${hhmm[1]!.padStart(2, '0')}:${hhmm[2]}` : '';
  if (!AT_PATTERN.test(wallTime))
    throw bad('at', `--at ${quote(at)}: expected a 24-hour time HH:MM, e.g. 09:00 or 18:30`);
  if (seconds % SECONDS_PER_DAY !== 0)
    throw bad(
      'at',
      `--at ${quote(at)} needs --every in whole days or weeks (e.g. 1d, 1w), not ${quote(every)}`,
    );
  return { kind: 'every', seconds, at: wallTime, anchor, tz: parseTimeZone(input.tz) };
}

function parseEvery(text: string): number {
  const m = /^([0-9]{1,9})([mhdw])$/.exec(text.trim());
  if (!m)
    throw bad(
      'every',
      `--every ${quote(text)}: expected a number and a unit (m, h, d or w), e.g. 30m, 2h, 1d`,
    );
  const seconds = Number(m[1]) * EVERY_UNITS[m[2]!]!;
  if (seconds < 60) throw bad('every', `--every ${quote(text)}: must be at least 1 minute (1m)`);
  if (seconds > EVERY_MAX_SECONDS)
    throw bad('every', `--every ${quote(text)}: must be at most ${EVERY_MAX_SECONDS / SECONDS_PER_DAY} days`);
  return seconds;
}

/** The zone as Intl spells it (`europe/paris` is `Europe/Paris`); unset, this machine's zone. */
function parseTimeZone(text: string | undefined): string {
  if (text === undefined) {
    const own = zoneFormat(undefined, false).resolvedOptions().timeZone;
    // A machine without zone data reports none, or an odd name: its clock is then UTC to Intl too.
    return own && TimeZoneName.safeParse(own).success ? own : 'UTC';
  }
  let resolved: string | undefined;
  try {
    resolved = zoneFormat(text.trim(), false).resolvedOptions().timeZone;
  } catch {
    resolved = undefined;
  }
  if (!resolved || !text.trim() || !TimeZoneName.safeParse(resolved).success)
    throw bad(
      'tz',
      `--tz ${quote(text)}: expected a time zone this machine knows (IANA), e.g. Europe/Paris or UTC`,
    );
  return resolved;
}

/** The first slot strictly after `after`. */
export function nextOccurrence(rec: Recurrence, after: Date): Date {
  const t = instant(after, 'after').getTime();
  return new Date(rec.kind === 'every' ? nextEvery(rec, t) : nextCron(rec, t));
}

/**
 * The latest slot `s` with `lastDone < s <= now`, or undefined. One slot however many were missed:
 * the caller reopens the todo once for it and asks again after the next completion.
 */
export function dueOccurrence(rec: Recurrence, lastDone: Date, now: Date): Date | undefined {
  const done = instant(lastDone, 'lastDone').getTime();
  const t = instant(now, 'now').getTime();
  const latest = rec.kind === 'every' ? latestEvery(rec, t) : latestCron(rec, t, done);
  return latest !== undefined && latest > done ? new Date(latest) : undefined;
}

/** For people: `every day at 09:00 (Europe/Paris)`, `every 2 hours`, `cron "0 9 * * 1-5" (UTC)`. */
export function describeRecurrence(rec: Recurrence): string {
  if (rec.kind === 'cron') return `cron ${quote(rec.expr, CRON_EXPR_MAX)} (${rec.tz})`;
  const every = describeInterval(rec.seconds);
  return rec.at === undefined ? every : `${every} at ${rec.at} (${rec.tz})`;
}

const INTERVAL_UNITS: readonly [string, number][] = [
  ['week', 7 * SECONDS_PER_DAY],
  ['day', SECONDS_PER_DAY],
  ['hour', 3600],
  ['minute', 60],
  ['second', 1],
];
function describeInterval(seconds: number): string {
  const [unit, size] = INTERVAL_UNITS.find(([, size]) => seconds % size === 0) ?? ['second', 1];
  const n = seconds / size;
  return n === 1 ? `every ${unit}` : `every ${n} ${unit}s`;
}

// ---- every ----
// Without `at`, the slots are anchor + k * seconds, k >= 1: the schedule is made when the todo is
// open, which stands for slot 0. With `at`, they are at that wall time on every Nth local day
// from the anchor's, strictly after the anchor.

/** The slots of an `every` with `at`: `slot(j)` is the one on local day j after the anchor's. */
function dailySlots(rec: EveryRecurrence, at: string) {
  const [hh = 0, mm = 0] = at.split(':').map(Number);
  const firstDay = Math.floor(wallOf(rec.tz, anchorOf(rec)) / DAY);
  const slot = (j: number) => instantOf(rec.tz, (firstDay + j) * DAY + hh * HOUR + mm * MINUTE);
  /** The slot day on or before the local date of `t`, as a day count from the anchor's. */
  const dayOnOrBefore = (t: number) => floorTo(Math.floor(wallOf(rec.tz, t) / DAY) - firstDay, days);
  const days = rec.seconds / SECONDS_PER_DAY;
  return { slot, dayOnOrBefore, days };
}

const floorTo = (x: number, n: number) => Math.floor(x / n) * n;

function nextEvery(rec: EveryRecurrence, after: number): number {
  const anchor = anchorOf(rec);
  const from = Math.max(after, anchor);
  if (rec.at === undefined) {
    const period = rec.seconds * 1000;
    return anchor + (Math.floor((from - anchor) / period) + 1) * period;
  }
  const { slot, dayOnOrBefore, days } = dailySlots(rec, rec.at);
  // That day's slot may still be ahead; the one after is on a later local date, so after `from`.
  const first = Math.max(0, dayOnOrBefore(from));
  for (const j of [first, first + days, first + 2 * days]) {
    const s = slot(j);
    if (s > from) return s;
  }
  throw new RangeError(`no slot after ${new Date(from).toISOString()} for ${describeRecurrence(rec)}`);
}

function latestEvery(rec: EveryRecurrence, now: number): number | undefined {
  const anchor = anchorOf(rec);
  if (rec.at === undefined) {
    const k = Math.floor((now - anchor) / (rec.seconds * 1000));
    return k >= 1 ? anchor + k * rec.seconds * 1000 : undefined;
  }
  const { slot, dayOnOrBefore, days } = dailySlots(rec, rec.at);
  // That day's slot may be later than `now`; the one before is on an earlier local date.
  const last = dayOnOrBefore(now);
  for (const j of [last, last - days]) {
    const s = j >= 0 ? slot(j) : NaN;
    if (s <= now) return s > anchor ? s : undefined;
  }
  return undefined;
}

function anchorOf(rec: EveryRecurrence): number {
  const anchor = Date.parse(rec.anchor);
  if (!Number.isFinite(anchor)) throw bad('every', `anchor ${quote(rec.anchor)}: not a timestamp`);
  return anchor;
}

// ---- cron ----
// Slots are wall-clock minutes in `tz`. A matching minute whose instant is not after `after` (the
// repeated hour of a fall back maps to its earlier pass) is skipped: the wall minute ran already.

function nextCron(rec: CronRecurrence, after: number): number {
  const spec = cronSpec(rec);
  let from = floorTo(wallOf(rec.tz, after), MINUTE) + MINUTE;
  const until = from + CRON_SEARCH;
  for (;;) {
    const w = nextCronWall(spec, from, until);
    if (w === undefined) throw bad('cron', `cron ${quote(rec.expr)}: never matches`);
    const s = instantOf(rec.tz, w);
    if (s > after) return s;
    from = w + MINUTE;
  }
}

function latestCron(rec: CronRecurrence, now: number, lastDone: number): number | undefined {
  const spec = cronSpec(rec);
  // After a fall back, the first pass's wall minutes run ahead of the clock now and are past too.
  let from = floorTo(now + Math.max(offsetAt(rec.tz, now), offsetAt(rec.tz, now - DAY)), MINUTE);
  // A wall minute two days before lastDone's is before lastDone whatever the offsets did.
  const until = Math.max(from - CRON_SEARCH, wallOf(rec.tz, lastDone) - 2 * DAY);
  for (;;) {
    const w = prevCronWall(spec, from, until);
    if (w === undefined) return undefined;
    const s = instantOf(rec.tz, w);
    if (s <= now) return s;
    from = w - MINUTE;
  }
}

/** Parsed on each call: a few microseconds, and a schedule edited by hand is checked as it is read. */
const cronSpec = (rec: CronRecurrence): CronSpec => parseCron(rec.expr, 'cron');

// ---- time zones ----
// A wall time is milliseconds since 1970-01-01T00:00 on the zone's clock, as if that were UTC.

const WALL_PARTS = {
  hourCycle: 'h23',
  year: 'numeric',
  month: 'numeric',
  day: 'numeric',
  hour: 'numeric',
  minute: 'numeric',
  second: 'numeric',
} as const;
/**
 * The one use of Intl here, on one line, for src/'s rule against Intl (its first use costs a call
 * ~10 ms; test/unit/core/model/lazy.test.ts) to list: zone data comes from nowhere else without a
 * dependency. Undefined `timeZone`: this machine's zone. `parts`: the fields `offsetAt` reads.
 */
const zoneFormat = (timeZone: string | undefined, parts: boolean) =>
  new Intl.DateTimeFormat('en-US', parts ? { timeZone, ...WALL_PARTS } : { timeZone });
type ZoneFormat = ReturnType<typeof zoneFormat>;
/** Zones whose clock is UTC's all year: no Intl needed (nor its first-use cost). */
const UTC_ZONES = new Set(['UTC', 'Etc/UTC', 'GMT', 'Etc/GMT']);

const formatters = new Map<string, ZoneFormat>();

function formatterFor(tz: string): ZoneFormat {
  let f = formatters.get(tz);
  if (f) return f;
  try {
    f = zoneFormat(tz, true);
  } catch {
    throw bad('tz', `tz ${quote(tz)}: not a time zone this machine knows (IANA), e.g. Europe/Paris or UTC`);
  }
  // Building one costs ~100 µs, using one ~5; a few zones are in use, so the cache stays small.
  if (formatters.size >= 64) formatters.clear();
  formatters.set(tz, f);
  return f;
}

/** How far `tz`'s clock is ahead of UTC at `at`, in milliseconds. */
function offsetAt(tz: string, at: number): number {
  if (UTC_ZONES.has(tz)) return 0;
  const f: Record<string, number> = {};
  for (const part of formatterFor(tz).formatToParts(at)) f[part.type] = Number(part.value);
  const d = new Date(0);
  d.setUTCFullYear(f.year ?? 1970, (f.month ?? 1) - 1, f.day ?? 1);
  d.setUTCHours(f.hour ?? 0, f.minute ?? 0, f.second ?? 0, 0);
  return d.getTime() - floorTo(at, 1000);
}

function wallOf(tz: string, at: number): number {
  return at + offsetAt(tz, at);
}

/** The instant of a wall time: the earlier of two in a fall back, the end of the gap in a spring forward. */
function instantOf(tz: string, wall: number): number {
  // Offsets a day either side bracket any transition near this wall time.
  const before = offsetAt(tz, wall - DAY);
  const after = offsetAt(tz, wall + DAY);
  if (before === after) return wall - before;
  const fits = [wall - before, wall - after].filter((c) => wallOf(tz, c) === wall);
  if (fits.length > 0) return Math.min(...fits);
  // In the gap: the transition instant, found to the second. Its wall time is the first valid one after the gap.
  let lo = wall - after;
  let hi = wall - before;
  while (hi - lo > 1000) {
    const mid = lo + Math.max(1000, floorTo((hi - lo) / 2, 1000));
    if (offsetAt(tz, mid) === before) lo = mid;
    else hi = mid;
  }
  return hi;
}

function instant(d: Date, name: string): Date {
  if (!(d instanceof Date) || !Number.isFinite(d.getTime()))
    throw new RangeError(`${name}: not a valid Date`);
  return d;
}
