/**
 * The person's notification channels: `<configDir>/channels.json`. It lives in the user's config
 * folder, never in a workspace, so an agent that edits the workspace cannot add a destination for
 * what needs the person, nor silence one. No file means no channel: nothing is sent anywhere.
 */
import * as path from 'node:path';
import { z } from 'zod';
import { Id, lazy, notFound, refused, textProblem, usageError } from '../model';
import { ensurePrivateDir, readJsonFile, storePathExists, withLock, writeFileAtomic } from '../store';

export const CHANNELS_FILE = 'channels.json';
/** The status server's default address: where the decide and all-workspaces pages are. */
export const DEFAULT_LINK_BASE = 'http://localhost:8080';
/** The desktop channel's name in the outbox and in `doctor`; no webhook may take it. */
export const DESKTOP_CHANNEL = 'desktop';

export const WEBHOOK_KINDS = ['generic', 'slack', 'ntfy'] as const;
export type WebhookKind = (typeof WEBHOOK_KINDS)[number];

/** ntfy's own rule for a topic name. */
const NTFY_TOPIC = /^[-_A-Za-z0-9]{1,64}$/;

/** Why `url` is not an address LoopX posts to, or undefined. */
export function urlProblem(url: string): string | undefined {
  const text = textProblem(url);
  if (text) return text;
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return 'is not a URL';
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return `must be http or https, not ${u.protocol}`;
  return undefined;
}

const HttpUrl = () =>
  z
    .string()
    .max(2048, { message: 'must be at most 2048 characters' })
    .superRefine((s, ctx) => {
      const problem = urlProblem(s);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    });

/** An ntfy topic URL split into the server's root (JSON publishing posts there) and the topic. */
export function ntfyTarget(url: string): { root: string; topic: string } | undefined {
  const u = new URL(url);
  const parts = u.pathname.split('/');
  const topic = parts.pop() ?? '';
  if (!NTFY_TOPIC.test(topic) || u.search || u.hash) return undefined;
  u.pathname = `${parts.join('/')}/`;
  return { root: u.href, topic };
}

export const Webhook = lazy(() =>
  z.strictObject({ name: Id, kind: z.enum(WEBHOOK_KINDS), url: HttpUrl() }).superRefine((w, ctx) => {
    if (w.name === DESKTOP_CHANNEL)
      ctx.addIssue({
        code: 'custom',
        path: ['name'],
        message: `${DESKTOP_CHANNEL} is the desktop channel's name`,
      });
    if (w.kind === 'ntfy' && !urlProblem(w.url) && !ntfyTarget(w.url))
      ctx.addIssue({
        code: 'custom',
        path: ['url'],
        message:
          'an ntfy channel is its topic URL, like http://host:port/mytopic (the topic: letters, digits, - and _)',
      });
  }),
);
export type Webhook = z.infer<typeof Webhook>;

export const ChannelsConfig = lazy(() =>
  z.strictObject({
    v: z.literal(1),
    desktop: z.boolean().default(false),
    webhooks: z
      .array(Webhook)
      .max(20, { message: 'at most 20 webhooks' })
      .default([])
      .superRefine((list, ctx) => {
        const seen = new Set<string>();
        list.forEach((w, i) => {
          if (seen.has(w.name))
            ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `a second webhook named ${w.name}` });
          seen.add(w.name);
        });
      }),
    link_base: HttpUrl().default(DEFAULT_LINK_BASE),
    retry: z
      .strictObject({
        first_seconds: z.number().int().min(1).max(86_400).default(30),
        max_attempts: z.number().int().min(1).max(20).default(6),
      })
      .default({ first_seconds: 30, max_attempts: 6 }),
  }),
);
export type ChannelsConfig = z.infer<typeof ChannelsConfig>;

export const channelsFile = (configDir: string) => path.join(configDir, CHANNELS_FILE);

export interface Channels {
  file: string;
  /** Whether the file is there: without it nothing is ever sent. */
  exists: boolean;
  config: ChannelsConfig;
}

/**
 * The channels as the file says, defaults filled in. A file that does not parse or validate is an
 * error naming the file and the field (`corrupt`): it is never rewritten or guessed around.
 */
export function readChannels(configDir: string): Channels {
  const file = channelsFile(configDir);
  if (!storePathExists(file)) return { file, exists: false, config: ChannelsConfig.parse({ v: 1 }) };
  return { file, exists: true, config: readJsonFile(file, ChannelsConfig) };
}

/** The channels a pass sends to, by name: the desktop one (when on) and every webhook. */
export function channelNames(config: ChannelsConfig): string[] {
  return [...(config.desktop ? [DESKTOP_CHANNEL] : []), ...config.webhooks.map((w) => w.name)];
}

function writeChannels(configDir: string, config: ChannelsConfig): void {
  ensurePrivateDir(configDir);
  writeFileAtomic(channelsFile(configDir), `${JSON.stringify(config, null, 2)}\n`, 0o600, true);
}

/**
 * Reads, changes and writes the file under a lock, so two `loopx notify` calls at once both
 * count. A file that does not read stops the change: nothing the person wrote by hand is lost.
 */
export function updateChannels(
  configDir: string,
  change: (c: ChannelsConfig) => ChannelsConfig,
): ChannelsConfig {
  const lock = path.join(ensurePrivateDir(path.join(configDir, 'notify')), 'channels.lock');
  return withLock(lock, () => {
    const next = ChannelsConfig.parse(change(structuredClone(readChannels(configDir).config)));
    writeChannels(configDir, next);
    return next;
  });
}

/** Checks a webhook given on the command line, naming the flag that is wrong. */
export function checkWebhook(w: { name: string; kind: string; url: string }): Webhook {
  const r = Webhook.safeParse(w);
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  const flag = `--${String(issue.path[0] ?? 'url')}`;
  throw usageError(
    `${flag} ${JSON.stringify(String((w as Record<string, unknown>)[flag.slice(2)]))}: ${issue.message}`,
    {
      field: flag,
      reason: 'bad_channel',
    },
  );
}

export function addWebhook(c: ChannelsConfig, w: Webhook): ChannelsConfig {
  if (c.webhooks.some((x) => x.name === w.name))
    throw refused(
      `there is already a channel named ${w.name}: remove it first (loopx notify remove --name ${w.name})`,
      {
        reason: 'channel_exists',
      },
    );
  return { ...c, webhooks: [...c.webhooks, w] };
}

export function removeWebhook(c: ChannelsConfig, name: string): ChannelsConfig {
  if (!c.webhooks.some((x) => x.name === name))
    throw notFound(`no webhook named ${name} (loopx notify list shows them)`, {
      reason: 'channel_not_found',
    });
  return { ...c, webhooks: c.webhooks.filter((x) => x.name !== name) };
}

/** `https://hooks.example.com`: enough to tell channels apart, never the path or query, which often are the secret. */
export function urlOrigin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '(not a URL)';
  }
}
