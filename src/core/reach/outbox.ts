/**
 * The outbox: what each channel was sent, in `<configDir>/notify/<channel>/` (0700). One small
 * record a notice (`<key>.json`, written whole through a rename) says how many attempts were
 * made, when the next is due, and whether it was sent or given up. A record with `sent_at` is
 * never sent again, whichever process reads it; `health.json` holds the channel's latest success
 * and failure, for `loopx notify list` and `loopx doctor`.
 *
 * An attempt is written down before it is made (its `next_at` already set), so a sender killed
 * mid-send tries again when that attempt's retry is due: a notice may arrive twice, never not at
 * all (at least once). Passes of two senders never overlap: a pass holds the outbox's kernel lock.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { Id, lazy, Timestamp } from '../model';
import {
  ensurePrivateDir,
  readJsonFile,
  readdirStore,
  storePathExists,
  tryLock,
  writeFileAtomic,
} from '../store';
import type { ChannelHealth, NotifyChannelsDoc } from '../views';
import { NOTIFY_CHANNELS_SCHEMA } from '../views';
import type { ChannelsConfig } from './channels';
import { DESKTOP_CHANNEL, readChannels, urlOrigin } from './channels';

export const OUTBOX_DIR = 'notify';
/** A notice that left the queue keeps its records this long (a workspace unreadable for a moment does not resend). */
export const PRUNE_AFTER_MS = 10 * 60_000;
/** The longest wait between two attempts, however many came before. */
const MAX_DELAY_SECONDS = 24 * 3600;

const KEY = /^(gate|lane|quota|test)-[0-9a-f]{40}$/;

export const OutboxRecord = lazy(() =>
  z.strictObject({
    v: z.literal(1),
    key: z.string().regex(KEY),
    channel: Id,
    attempts: z.number().int().nonnegative(),
    next_at: Timestamp.optional(),
    sent_at: Timestamp.optional(),
    last_error: z.string().max(1000).optional(),
    last_error_at: Timestamp.optional(),
    failed_at: Timestamp.optional(),
    /** When a pass first found the notice gone from the queue (pruned PRUNE_AFTER_MS later). */
    gone_at: Timestamp.optional(),
  }),
);
export type OutboxRecord = z.infer<typeof OutboxRecord>;

const Health = lazy(() =>
  z.strictObject({
    v: z.literal(1),
    channel: Id,
    last_sent_at: Timestamp.optional(),
    last_error: z.string().max(1000).optional(),
    last_error_at: Timestamp.optional(),
  }),
);
type Health = z.infer<typeof Health>;

export interface RetryRule {
  first_seconds: number;
  max_attempts: number;
}

export const outboxDir = (configDir: string) => path.join(configDir, OUTBOX_DIR);
const channelDir = (configDir: string, channel: string) => path.join(outboxDir(configDir), channel);
const recordFile = (configDir: string, channel: string, key: string) =>
  path.join(channelDir(configDir, channel), `${key}.json`);
const healthFile = (configDir: string, channel: string) =>
  path.join(channelDir(configDir, channel), 'health.json');

/** Seconds to wait after failed attempt `attempt` (1-based): the first wait, doubling each time. */
export function retryDelaySeconds(attempt: number, firstSeconds: number): number {
  return Math.min(firstSeconds * 2 ** Math.max(0, attempt - 1), MAX_DELAY_SECONDS);
}

const plus = (now: Date, seconds: number) => new Date(now.getTime() + seconds * 1000).toISOString();

/** Whether a record's notice is to be sent now: never sent, not given up, its retry due. */
export function isDue(rec: OutboxRecord | undefined, now: Date): boolean {
  if (!rec) return true;
  if (rec.sent_at || rec.failed_at) return false;
  return rec.next_at === undefined || Date.parse(rec.next_at) <= now.getTime();
}

/** The record of an attempt about to be made: counted, its retry already set (a crash mid-send retries). */
export function beginAttempt(
  rec: OutboxRecord | undefined,
  o: { key: string; channel: string; now: Date; retry: RetryRule },
): OutboxRecord {
  const attempts = (rec?.attempts ?? 0) + 1;
  const { gone_at: _gone, ...kept } = rec ?? { v: 1 as const, key: o.key, channel: o.channel, attempts: 0 };
  return { ...kept, attempts, next_at: plus(o.now, retryDelaySeconds(attempts, o.retry.first_seconds)) };
}

/** The record after the attempt: sent, or failed (then given up once it was the last one allowed). */
export function endAttempt(
  rec: OutboxRecord,
  o: { now: Date; error?: string; retry: RetryRule },
): OutboxRecord {
  const at = o.now.toISOString();
  const { next_at: next, ...rest } = rec;
  if (o.error === undefined) return { ...rest, sent_at: at };
  const failed = { ...rest, last_error: o.error.slice(0, 1000), last_error_at: at };
  return rec.attempts >= o.retry.max_attempts ? { ...failed, failed_at: at } : { ...failed, next_at: next! };
}

function ensureChannelDir(configDir: string, channel: string): void {
  const root = ensurePrivateDir(outboxDir(configDir));
  fs.chmodSync(root, 0o700);
  ensurePrivateDir(channelDir(configDir, channel));
}

const write = (file: string, value: unknown) =>
  writeFileAtomic(file, `${JSON.stringify(value)}\n`, 0o600, true);

export function readRecord(configDir: string, channel: string, key: string): OutboxRecord | undefined {
  const file = recordFile(configDir, channel, key);
  if (!storePathExists(file)) return undefined;
  try {
    return readJsonFile(file, OutboxRecord);
  } catch {
    // A damaged record is rewritten by the next attempt: the notice is sent again rather than never.
    return undefined;
  }
}

export function writeRecord(configDir: string, rec: OutboxRecord): void {
  ensureChannelDir(configDir, rec.channel);
  write(recordFile(configDir, rec.channel, rec.key), rec);
}

/** Every record of a channel (damaged ones left out). */
export function channelRecords(configDir: string, channel: string): OutboxRecord[] {
  const dir = channelDir(configDir, channel);
  if (!storePathExists(dir)) return [];
  const out: OutboxRecord[] = [];
  for (const name of readdirStore(dir)) {
    const m = /^(.+)\.json$/.exec(name);
    if (!m || !KEY.test(m[1]!)) continue;
    const rec = readRecord(configDir, channel, m[1]!);
    if (rec) out.push(rec);
  }
  return out;
}

/**
 * Records of notices no longer in the queue: marked gone, then removed PRUNE_AFTER_MS later; a
 * notice back in the queue meanwhile is the same notice (not sent again).
 */
export function pruneChannel(configDir: string, channel: string, live: ReadonlySet<string>, now: Date): void {
  for (const rec of channelRecords(configDir, channel)) {
    if (live.has(rec.key)) {
      if (rec.gone_at) {
        const { gone_at: _g, ...back } = rec;
        writeRecord(configDir, back);
      }
    } else if (!rec.gone_at) writeRecord(configDir, { ...rec, gone_at: now.toISOString() });
    else if (now.getTime() - Date.parse(rec.gone_at) > PRUNE_AFTER_MS)
      fs.rmSync(recordFile(configDir, channel, rec.key), { force: true });
  }
}

/** Removes a channel's records (`loopx notify remove`): one added again later starts afresh. */
export function forgetChannel(configDir: string, channel: string): void {
  fs.rmSync(channelDir(configDir, channel), { recursive: true, force: true });
}

function readHealth(configDir: string, channel: string): Health | undefined {
  const file = healthFile(configDir, channel);
  if (!storePathExists(file)) return undefined;
  try {
    return readJsonFile(file, Health);
  } catch {
    return undefined;
  }
}

/** Notes an attempt's outcome as the channel's latest. */
export function noteOutcome(configDir: string, channel: string, now: Date, error?: string): void {
  ensureChannelDir(configDir, channel);
  const h = readHealth(configDir, channel) ?? { v: 1 as const, channel };
  const at = now.toISOString();
  write(
    healthFile(configDir, channel),
    error === undefined
      ? { ...h, last_sent_at: at }
      : { ...h, last_error: error.slice(0, 1000), last_error_at: at },
  );
}

/** One channel's health from its records. */
function healthOf(configDir: string, name: string, kind: ChannelHealth['kind'], url?: string): ChannelHealth {
  const h = readHealth(configDir, name);
  const recs = channelRecords(configDir, name);
  const failing = !!h?.last_error_at && (!h.last_sent_at || h.last_sent_at < h.last_error_at);
  return {
    name,
    kind,
    ...(url !== undefined ? { origin: urlOrigin(url) } : {}),
    status: failing ? 'failing' : 'ok',
    ...(h?.last_error !== undefined ? { last_error: h.last_error } : {}),
    ...(h?.last_error_at !== undefined ? { last_error_at: h.last_error_at } : {}),
    ...(h?.last_sent_at !== undefined ? { last_sent_at: h.last_sent_at } : {}),
    retrying: recs.filter((r) => !r.sent_at && !r.failed_at && r.attempts > 0 && !r.gone_at).length,
    gave_up: recs.filter((r) => r.failed_at && !r.gone_at).length,
  };
}

/**
 * Every configured channel and whether it is failing (its latest attempt failed, after any
 * success), with the last error and when. Throws `corrupt` when channels.json does not read.
 */
export function channelHealth(configDir: string, config?: ChannelsConfig): ChannelHealth[] {
  const c = config ?? readChannels(configDir).config;
  return [
    ...(c.desktop ? [healthOf(configDir, DESKTOP_CHANNEL, 'desktop')] : []),
    ...c.webhooks.map((w) => healthOf(configDir, w.name, w.kind, w.url)),
  ];
}

/** `loopx notify list`: the file, its settings and every channel's health. */
export function notifyChannelsDoc(configDir: string): NotifyChannelsDoc {
  const { file, exists, config } = readChannels(configDir);
  return {
    schema: NOTIFY_CHANNELS_SCHEMA,
    file,
    configured: exists,
    desktop: config.desktop,
    link_base: config.link_base,
    retry: config.retry,
    channels: channelHealth(configDir, config),
  };
}

/**
 * Takes the outbox for one pass, without waiting: its release, or undefined when another sender
 * holds it (that one sends; this one skips). A kernel lock: a sender that dies frees it at once.
 */
export function takeOutbox(configDir: string): (() => void) | undefined {
  const root = ensurePrivateDir(outboxDir(configDir));
  fs.chmodSync(root, 0o700);
  return tryLock(path.join(root, 'sender.lock'), true);
}
