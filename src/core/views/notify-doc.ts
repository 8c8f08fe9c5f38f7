/**
 * The shapes of what the notification channels print and send (reach/): the generic webhook's
 * body, `loopx notify list` (the channels and their health) and one sending pass
 * (`loopx notify send|test|watch`). docs/NOTIFICATIONS.md describes them.
 */
import { z } from 'zod';
import { lazy } from '../model';

export const NOTICE_SCHEMA = 'loopx.notice/1';
export const NOTIFY_CHANNELS_SCHEMA = 'loopx.notify-channels/1';
export const NOTIFY_SEND_SCHEMA = 'loopx.notify-send/1';

const NoticeKind = () => z.enum(['gate', 'lane', 'quota', 'test']);

/** The body a `generic` webhook receives: the facts, whole; the store's text cleaned of control and bidi characters. */
export const NoticeBody = lazy(() =>
  z.strictObject({
    schema: z.literal(NOTICE_SCHEMA),
    kind: NoticeKind(),
    workspace: z.strictObject({ name: z.string(), path: z.string() }),
    goal: z.strictObject({ id: z.string(), title: z.string() }),
    /** The gate's id, the lane's name or the budget's name. */
    id: z.string(),
    title: z.string(),
    detail: z.string(),
    /** Gates: who asked, in words. */
    requested_by: z.string().optional(),
    /** Gates: every command the gate lets run, whole. */
    commands: z.array(z.string()).optional(),
    /** The gate's decide page, or every workspace's queue, on the status server. */
    link: z.string(),
    at: z.string(),
  }),
);
export type NoticeBody = z.infer<typeof NoticeBody>;

/** One channel and how its sending goes. */
export const ChannelHealth = lazy(() =>
  z.strictObject({
    name: z.string(),
    kind: z.enum(['desktop', 'generic', 'slack', 'ntfy']),
    /** The webhook's scheme and host only: its path and query are often the secret. */
    origin: z.string().optional(),
    /** `failing`: its latest attempt failed, after any success. */
    status: z.enum(['ok', 'failing']),
    last_error: z.string().optional(),
    last_error_at: z.string().optional(),
    last_sent_at: z.string().optional(),
    /** Notices waiting for another attempt. */
    retrying: z.number().int().nonnegative(),
    /** Notices it gave up on after the last attempt. */
    gave_up: z.number().int().nonnegative(),
  }),
);
export type ChannelHealth = z.infer<typeof ChannelHealth>;

/** `loopx notify list|add|remove|desktop|link-base`: the channels file and every channel's health. */
export const NotifyChannelsDoc = lazy(() =>
  z.strictObject({
    schema: z.literal(NOTIFY_CHANNELS_SCHEMA),
    file: z.string(),
    /** Whether the file exists: without it nothing is sent. */
    configured: z.boolean(),
    desktop: z.boolean(),
    link_base: z.string(),
    retry: z.strictObject({ first_seconds: z.number(), max_attempts: z.number() }),
    channels: z.array(ChannelHealth),
  }),
);
export type NotifyChannelsDoc = z.infer<typeof NotifyChannelsDoc>;

/** One notice's delivery to one channel in a pass. */
export const Delivery = lazy(() =>
  z.strictObject({
    channel: z.string(),
    key: z.string(),
    kind: NoticeKind(),
    /** LoopX's words for it (`gate prod in shop`). */
    what: z.string(),
    /** Attempts so far, this one included. */
    attempts: z.number().int().positive(),
    error: z.string().optional(),
    /** The last attempt failed: no more are made. */
    gave_up: z.boolean().optional(),
    /** When the next attempt is due, after a failure. */
    next_at: z.string().optional(),
  }),
);
export type Delivery = z.infer<typeof Delivery>;

/** `loopx notify send|test`, and each pass of `loopx notify watch --json`: what was sent, what failed. */
export const NotifySendDoc = lazy(() =>
  z.strictObject({
    schema: z.literal(NOTIFY_SEND_SCHEMA),
    /** Whether channels.json exists (without it nothing is sent). */
    configured: z.boolean(),
    /** Another sender held the outbox: this pass sent nothing. */
    busy: z.boolean(),
    sent: z.array(Delivery),
    failed: z.array(Delivery),
    /** When the earliest retry is due. */
    next_at: z.string().optional(),
  }),
);
export type NotifySendDoc = z.infer<typeof NotifySendDoc>;
