/**
 * When a recurring todo comes due again, as stored with the todo: a fixed interval from an anchor
 * (`every`), optionally at a local wall time, or a cron expression. Only stored facts, never a
 * timer, so a due time survives restarts; the arithmetic is in rules/recurrence.ts. Loaded by the
 * webview too, so it depends on nothing but zod.
 */
import { z } from 'zod';
import { Timestamp } from './fields';
import { lazy } from './lazy';

export const SECONDS_PER_DAY = 86_400;
export const EVERY_MIN_SECONDS = 60;
export const EVERY_MAX_SECONDS = 366 * SECONDS_PER_DAY;
export const CRON_EXPR_MAX = 100;
export const TIME_ZONE_MAX = 64;
/** A 24-hour wall time, `00:00` to `23:59`. */
export const AT_PATTERN = /^([01][0-9]|2[0-3]):[0-5][0-9]$/;

/**
 * An IANA zone name by its shape only (`Europe/Paris`, `UTC`, `Etc/GMT+5`): whether this machine's
 * Intl knows it is asked when the schedule is made (rules/recurrence.ts). A file written on a
 * machine with newer zone data must still load here.
 */
export const TimeZoneName = lazy(() =>
  z
    .string()
    .min(1)
    .max(TIME_ZONE_MAX, { message: `must be at most ${TIME_ZONE_MAX} characters` })
    .regex(/^[A-Za-z][A-Za-z0-9_+\-/]*$/, { message: 'not a time zone name (e.g. Europe/Paris or UTC)' }),
);

// Edited by hand, so strict: an unknown key is a typo.
export const EveryRecurrence = lazy(() =>
  z
    .strictObject({
      kind: z.literal('every'),
      seconds: z.number().int().min(EVERY_MIN_SECONDS).max(EVERY_MAX_SECONDS),
      /** Local wall time in `tz`; the slots are then days apart, counted from the anchor's local date. */
      at: z.string().regex(AT_PATTERN, { message: 'expected a 24-hour time HH:MM, e.g. 09:00' }).optional(),
      /** Where the slots are counted from: the moment the schedule was made. */
      anchor: Timestamp,
      tz: TimeZoneName,
    })
    .superRefine((r, ctx) => {
      if (r.at !== undefined && r.seconds % SECONDS_PER_DAY !== 0)
        ctx.addIssue({ code: 'custom', path: ['at'], message: 'needs seconds to be a whole number of days' });
    }),
);

/** A standard 5-field cron expression or a macro (`@daily`), evaluated in local wall time of `tz`. */
export const CronRecurrence = lazy(() =>
  z.strictObject({
    kind: z.literal('cron'),
    expr: z
      .string()
      .min(1)
      .max(CRON_EXPR_MAX)
      .regex(/^[@A-Za-z0-9*,/\- ]+$/, { message: 'not a cron expression' }),
    tz: TimeZoneName,
  }),
);

export const Recurrence = lazy(() => z.discriminatedUnion('kind', [EveryRecurrence, CronRecurrence]));

export type EveryRecurrence = z.infer<typeof EveryRecurrence>;
export type CronRecurrence = z.infer<typeof CronRecurrence>;
export type Recurrence = z.infer<typeof Recurrence>;
