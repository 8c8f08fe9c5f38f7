/**
 * Standard 5-field cron (minute hour day-of-month month day-of-week) as Vixie cron reads it, and
 * the search for matching wall-clock minutes. Pure: wall times are numbers, milliseconds since
 * 1970-01-01T00:00 of a clock that has no zone (the caller maps them to instants in the
 * schedule's time zone, rules/recurrence.ts).
 */
import { quote, usageError } from '../model';

export interface CronSpec {
  /** Indexed by value: minutes[0..59], hours[0..23], daysOfMonth[1..31], months[1..12], daysOfWeek[0..6] (Sunday 0). */
  minutes: readonly boolean[];
  hours: readonly boolean[];
  daysOfMonth: readonly boolean[];
  months: readonly boolean[];
  daysOfWeek: readonly boolean[];
  /**
   * Vixie cron: when the day-of-month and the day-of-week fields are both restricted, a day matches
   * if either does; when one of them starts with `*` (`*` or `*\/2`), both must. Vixie decides by the
   * first character, not by the set it denotes, and so do we, so a crontab means the same here.
   */
  dayOfMonthStar: boolean;
  dayOfWeekStar: boolean;
}

export const CRON_MACROS: Readonly<Record<string, string>> = {
  '@hourly': '0 * * * *',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@weekly': '0 0 * * 0',
  '@monthly': '0 0 1 * *',
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
};

interface FieldRule {
  name: string;
  min: number;
  max: number;
  /** Names for values from `min` up (JAN = 1, SUN = 0). */
  names?: readonly string[];
  accepted: string;
}
const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const WEEKDAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];
const FIELDS: readonly FieldRule[] = [
  { name: 'minute', min: 0, max: 59, accepted: '0-59' },
  { name: 'hour', min: 0, max: 23, accepted: '0-23' },
  { name: 'day-of-month', min: 1, max: 31, accepted: '1-31' },
  { name: 'month', min: 1, max: 12, names: MONTHS, accepted: '1-12 or JAN-DEC' },
  // 7 is Sunday too: both conventions are in the wild.
  { name: 'day-of-week', min: 0, max: 7, names: WEEKDAYS, accepted: '0-7 or SUN-SAT' },
];
const SYNTAX = 'a number, *, a list (1,2), a range (1-5) or a step (*/15, 10-50/10)';

/** The most days each month can have (index 1-12): February's 29 makes `0 0 29 2 *` possible. */
const MONTH_MAX_DAYS = [0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * Parses a cron expression or macro. Throws `usageError` (reason `bad_schedule`, field `cron`)
 * naming the wrong field; `label` is how the expression is named in it (`--cron` for a flag).
 * An expression no date can satisfy (`0 0 30 2 *`) is refused here, by reasoning, not by search.
 */
export function parseCron(expr: string, label = 'cron'): CronSpec {
  const fail = (problem: string) =>
    usageError(`${label} ${quote(expr, 100)}: ${problem}`, { reason: 'bad_schedule', field: 'cron' });
  const trimmed = expr.trim();
  let body = trimmed;
  if (trimmed.startsWith('@')) {
    const macro = CRON_MACROS[trimmed.toLowerCase()];
    if (!macro) throw fail(`unknown macro; expected one of ${Object.keys(CRON_MACROS).join(', ')}`);
    body = macro;
  }
  const fields = body.split(/\s+/).filter((f) => f !== '');
  if (fields.length !== 5)
    throw fail(
      `expected 5 fields (minute hour day-of-month month day-of-week) or a macro such as @daily, got ${fields.length}`,
    );
  const sets = fields.map((text, i) => parseField(text, FIELDS[i]!, fail));
  const daysOfWeek = sets[4]!;
  if (daysOfWeek[7]) daysOfWeek[0] = true;
  const spec: CronSpec = {
    minutes: sets[0]!,
    hours: sets[1]!,
    daysOfMonth: sets[2]!,
    months: sets[3]!,
    daysOfWeek: daysOfWeek.slice(0, 7),
    dayOfMonthStar: fields[2]!.startsWith('*'),
    dayOfWeekStar: fields[4]!.startsWith('*'),
  };
  if (neverMatches(spec)) throw fail('never matches (no month in it has that day)');
  return spec;
}

function parseField(text: string, rule: FieldRule, fail: (problem: string) => Error): boolean[] {
  const set: boolean[] = new Array<boolean>(rule.max + 1).fill(false);
  const where = `the ${rule.name} field (${text})`;
  const value = (token: string): number => {
    const named = rule.names?.indexOf(token.toUpperCase()) ?? -1;
    const v = /^[0-9]+$/.test(token) ? Number(token) : named >= 0 ? named + rule.min : NaN;
    if (!(v >= rule.min && v <= rule.max))
      throw fail(`${where} must be ${rule.accepted}${token === text ? '' : ` (${token} is not)`}`);
    return v;
  };
  for (const item of text.split(',')) {
    const m = /^(\*|[0-9A-Za-z]+(?:-[0-9A-Za-z]+)?)(?:\/([0-9]+))?$/.exec(item);
    if (!m) throw fail(`${where} is not understood: expected ${SYNTAX}`);
    const [, range = '', stepText] = m;
    const step = stepText === undefined ? 1 : Number(stepText);
    if (step < 1) throw fail(`${where}: a step must be at least 1`);
    const [from = '', to] = range.split('-');
    const lo = range === '*' ? rule.min : value(from);
    // `5/15` is cronie's shorthand for `5-<max>/15`.
    const hi = range === '*' ? rule.max : to !== undefined ? value(to) : stepText ? rule.max : lo;
    if (lo > hi) throw fail(`${where}: a range must go up (${lo}-${hi})`);
    for (let v = lo; v <= hi; v += step) set[v] = true;
  }
  return set;
}

/**
 * Whether no date ever matches. Only a restricted day-of-month under the AND rule can make that
 * happen (every month has a day 1, every week a Sunday, and under the AND rule a `*` field
 * starts at 1 or Sunday, which every weekday, month and year cycle reaches).
 */
function neverMatches(spec: CronSpec): boolean {
  if (spec.dayOfMonthStar || !spec.dayOfWeekStar) return false;
  for (let month = 1; month <= 12; month++) {
    if (!spec.months[month]) continue;
    for (let day = 1; day <= MONTH_MAX_DAYS[month]!; day++) if (spec.daysOfMonth[day]) return false;
  }
  return true;
}

const MINUTE = 60_000;

function dayMatches(spec: CronSpec, day: number, weekday: number): boolean {
  const dom = spec.daysOfMonth[day] === true;
  const dow = spec.daysOfWeek[weekday] === true;
  return spec.dayOfMonthStar || spec.dayOfWeekStar ? dom && dow : dom || dow;
}

/** A wall time from its fields; months and days overflow into the next ones as Date.UTC's do. */
function wall(year: number, month: number, day: number, hour = 0, minute = 0): number {
  const d = new Date(0);
  // setUTCFullYear, not Date.UTC: Date.UTC reads years 0-99 as 1900-1999.
  d.setUTCFullYear(year, month, day);
  d.setUTCHours(hour, minute, 0, 0);
  return d.getTime();
}

const firstAfter = (set: readonly boolean[], v: number) => {
  for (let i = v + 1; i < set.length; i++) if (set[i]) return i;
  return undefined;
};
const lastBefore = (set: readonly boolean[], v: number) => {
  for (let i = v - 1; i >= 0; i--) if (set[i]) return i;
  return undefined;
};

/** A wall time's fields (wall times are kept as UTC instants of the same clock reading). */
function wallParts(t: number) {
  const d = new Date(t);
  return {
    d,
    y: d.getUTCFullYear(),
    mo: d.getUTCMonth(),
    day: d.getUTCDate(),
    h: d.getUTCHours(),
    mi: d.getUTCMinutes(),
  };
}

/**
 * The first matching wall minute at or after `from`, or undefined past `until`. Skips a whole
 * month, day or hour that cannot match, so a year costs at most a few hundred steps.
 */
export function nextCronWall(spec: CronSpec, from: number, until: number): number | undefined {
  let t = Math.ceil(from / MINUTE) * MINUTE;
  while (t <= until) {
    const { d, y, mo, day, h, mi } = wallParts(t);
    if (!spec.months[mo + 1]) t = wall(y, mo + 1, 1);
    else if (!dayMatches(spec, day, d.getUTCDay())) t = wall(y, mo, day + 1);
    else if (!spec.hours[h]) {
      const next = firstAfter(spec.hours, h);
      t = next === undefined ? wall(y, mo, day + 1) : wall(y, mo, day, next);
    } else if (!spec.minutes[mi]) {
      const next = firstAfter(spec.minutes, mi);
      t = next === undefined ? wall(y, mo, day, h + 1) : wall(y, mo, day, h, next);
    } else return t;
  }
  return undefined;
}

/** The last matching wall minute at or before `from`, or undefined before `until`. Skips as above. */
export function prevCronWall(spec: CronSpec, from: number, until: number): number | undefined {
  let t = Math.floor(from / MINUTE) * MINUTE;
  while (t >= until) {
    const { d, y, mo, day, h, mi } = wallParts(t);
    if (!spec.months[mo + 1]) t = wall(y, mo, 1) - MINUTE;
    else if (!dayMatches(spec, day, d.getUTCDay())) t = wall(y, mo, day) - MINUTE;
    else if (!spec.hours[h]) {
      const prev = lastBefore(spec.hours, h);
      t = prev === undefined ? wall(y, mo, day) - MINUTE : wall(y, mo, day, prev, 59);
    } else if (!spec.minutes[mi]) {
      const prev = lastBefore(spec.minutes, mi);
      t = prev === undefined ? wall(y, mo, day, h) - MINUTE : wall(y, mo, day, h, prev);
    } else return t;
  }
  return undefined;
}
