/**
 * One sending pass: the queue across every listed workspace (needs-you.ts), its notices
 * (notices.ts), and for each configured channel each notice not yet sent whose attempt is due,
 * sent (deliver.ts) and written down (outbox.ts). No channels.json, no pass: nothing is sent
 * anywhere the person did not set up.
 */
import { notFound, refused } from '../model';
import type { Delivery, NotifySendDoc } from '../views';
import { NOTIFY_SEND_SCHEMA } from '../views';
import type { ChannelsConfig, WebhookKind } from './channels';
import { DESKTOP_CHANNEL, readChannels } from './channels';
import type { Post, ShowDesktop } from './deliver';
import { postJson, showDesktop } from './deliver';
import { desktopMessage, noticeWhat, webhookRequest } from './formats';
import { needsYou } from './needs-you';
import type { Notice } from './notices';
import { noticesFrom, testNotice } from './notices';
import type { OutboxRecord } from './outbox';
import {
  beginAttempt,
  endAttempt,
  isDue,
  noteOutcome,
  pruneChannel,
  readRecord,
  takeOutbox,
  writeRecord,
} from './outbox';

export interface SendOptions {
  configDir: string;
  /** A fixed time for the whole pass (tests); otherwise the clock, read at each step. */
  now?: Date;
  /** Stands in for the HTTP POST (tests). */
  post?: Post;
  /** Stands in for the desktop notification (tests). */
  desktop?: ShowDesktop;
  /** Where the desktop program is looked up (PATH). */
  env?: NodeJS.ProcessEnv;
  /** Told of each delivery as it ends. */
  onDelivery?: (d: Delivery, sent: boolean) => void;
}

/** A channel as a pass sends to it. */
interface Target {
  name: string;
  kind: 'desktop' | WebhookKind;
  url?: string;
}

/** Sends at most this many notices at once: a slow receiver does not hold the others back much. */
const PARALLEL = 4;

function targets(c: ChannelsConfig, only?: string): Target[] {
  const all: Target[] = [
    ...(c.desktop ? [{ name: DESKTOP_CHANNEL, kind: 'desktop' as const }] : []),
    ...c.webhooks.map((w) => ({ name: w.name, kind: w.kind, url: w.url })),
  ];
  return only === undefined ? all : all.filter((t) => t.name === only);
}

const emptyDoc = (configured: boolean): NotifySendDoc => ({
  schema: NOTIFY_SEND_SCHEMA,
  configured,
  busy: false,
  sent: [],
  failed: [],
});

async function deliver(t: Target, n: Notice, o: SendOptions): Promise<void> {
  if (t.kind === 'desktop') {
    const m = desktopMessage(n);
    return (o.desktop ?? showDesktop(o.env ?? process.env))(m.title, m.body);
  }
  const r = webhookRequest(t.kind, t.url!, n);
  return (o.post ?? postJson)(r.url, r.body);
}

/** Runs `fn` on every item, at most `n` at a time. */
async function eachLimited<T>(items: T[], n: number, fn: (x: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, worker));
}

/**
 * One pass. Throws `corrupt` when channels.json does not read (nothing is sent then); returns
 * `busy` when another sender holds the outbox (that one sends).
 */
export async function sendDue(o: SendOptions): Promise<NotifySendDoc> {
  const clock = () => o.now ?? new Date();
  const { exists, config } = readChannels(o.configDir);
  const doc = emptyDoc(exists);
  const to = targets(config);
  if (!exists || to.length === 0) return doc;
  const release = takeOutbox(o.configDir);
  if (!release) return { ...doc, busy: true };
  try {
    const start = clock();
    const notices = noticesFrom(needsYou({ configDir: o.configDir, now: start }), {
      linkBase: config.link_base,
    });
    const live = new Set(notices.map((n) => n.key));
    const due: { t: Target; n: Notice; rec?: OutboxRecord }[] = [];
    const waits: string[] = [];
    for (const t of to) {
      pruneChannel(o.configDir, t.name, live, start);
      for (const n of notices) {
        const rec = readRecord(o.configDir, t.name, n.key);
        if (isDue(rec, start)) due.push({ t, n, ...(rec ? { rec } : {}) });
        else if (rec?.next_at && !rec.sent_at && !rec.failed_at) waits.push(rec.next_at);
      }
    }
    await eachLimited(due, PARALLEL, async ({ t, n, rec }) => {
      const started = beginAttempt(rec, { key: n.key, channel: t.name, now: clock(), retry: config.retry });
      writeRecord(o.configDir, started);
      let error: string | undefined;
      try {
        await deliver(t, n, o);
      } catch (e) {
        error = (e as Error).message;
      }
      const ended = endAttempt(started, { now: clock(), error, retry: config.retry });
      writeRecord(o.configDir, ended);
      noteOutcome(o.configDir, t.name, clock(), error);
      const d: Delivery = {
        channel: t.name,
        key: n.key,
        kind: n.kind,
        what: noticeWhat(n),
        attempts: ended.attempts,
        ...(error !== undefined ? { error } : {}),
        ...(ended.failed_at ? { gave_up: true } : {}),
        ...(ended.next_at && error !== undefined ? { next_at: ended.next_at } : {}),
      };
      if (ended.next_at && error !== undefined) waits.push(ended.next_at);
      (error === undefined ? doc.sent : doc.failed).push(d);
      o.onDelivery?.(d, error === undefined);
    });
    waits.sort();
    return waits.length ? { ...doc, next_at: waits[0] } : doc;
  } finally {
    release();
  }
}

/**
 * `loopx notify test`: a test notice to every channel (or the one named), now, whatever the
 * outbox says; the outcome counts in the channel's health. Refused when no channel is set up.
 */
export async function sendTest(
  o: SendOptions & { name?: string; where: { name: string; path: string } },
): Promise<NotifySendDoc> {
  const { exists, config, file } = readChannels(o.configDir);
  const all = targets(config);
  if (all.length === 0)
    throw refused(
      `no notification channel is set up in ${file}: add one (loopx notify add, loopx notify desktop on)`,
      {
        reason: 'no_channels',
      },
    );
  const to = targets(config, o.name);
  if (to.length === 0)
    throw notFound(`no channel named ${o.name} (loopx notify list shows them)`, {
      reason: 'channel_not_found',
    });
  const now = o.now ?? new Date();
  const n = testNotice({ linkBase: config.link_base, now, where: o.where });
  const doc = emptyDoc(exists);
  await eachLimited(to, PARALLEL, async (t) => {
    let error: string | undefined;
    try {
      await deliver(t, n, o);
    } catch (e) {
      error = (e as Error).message;
    }
    noteOutcome(o.configDir, t.name, o.now ?? new Date(), error);
    const d: Delivery = {
      channel: t.name,
      key: n.key,
      kind: 'test',
      what: 'test notice',
      attempts: 1,
      ...(error !== undefined ? { error } : {}),
    };
    (error === undefined ? doc.sent : doc.failed).push(d);
    o.onDelivery?.(d, error === undefined);
  });
  return doc;
}
