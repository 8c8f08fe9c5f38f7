/**
 * A notice as each channel receives it: the generic JSON body, a Slack-compatible message, ntfy's
 * JSON publishing and a desktop notification. Everything that came from the store (titles,
 * reasons, commands, who asked, the workspace's name) is data: cleaned by the project's one text
 * rule (model/text-rules.ts `withoutUnsafeCharacters`), and where the receiver reads markup, put
 * where no markup of it can start: a link, a mention, a format.
 */
import { oneLine, withoutUnsafeCharacters } from '../model';
import type { NoticeBody } from '../views';
import { NOTICE_SCHEMA } from '../views';
import type { WebhookKind } from './channels';
import { ntfyTarget } from './channels';
import type { Notice } from './notices';

/** Store text on one line: line breaks become spaces, control and invisible characters go. */
const line = (s: string, max = 500) => withoutUnsafeCharacters(oneLine(s, max));
/** Store text that may span lines (a reason, a command): line breaks and tabs kept. */
const block = (s: string) => withoutUnsafeCharacters(s, { multiLine: true });

/** LoopX's words for a notice: its headline. Ids follow the id rule, so they are safe anywhere. */
export function headline(n: Pick<Notice, 'kind' | 'id' | 'title'>): string {
  switch (n.kind) {
    case 'gate':
      return `gate ${n.id} needs your decision`;
    case 'lane':
      return `lane ${n.id} needs you`;
    case 'quota':
      return `${n.id} budget used up`;
    default:
      return 'test notice';
  }
}

/** What the channel's log and documents call a notice: `gate prod in shop`. */
export function noticeWhat(n: Notice): string {
  return `${n.kind} ${n.id} in ${line(n.workspace.name, 80)}`;
}

/** The `generic` body: every fact as a field. */
export function genericBody(n: Notice): NoticeBody {
  return {
    schema: NOTICE_SCHEMA,
    kind: n.kind,
    workspace: { name: line(n.workspace.name), path: line(n.workspace.path, 4096) },
    goal: { id: n.goal.id, title: line(n.goal.title) },
    id: n.id,
    title: line(n.title),
    detail: block(n.detail),
    ...(n.requested_by !== undefined ? { requested_by: line(n.requested_by) } : {}),
    ...(n.commands !== undefined ? { commands: n.commands.map(block) } : {}),
    link: n.link,
    at: n.at,
  };
}

/** The facts as plain lines, for receivers that show text as it is (ntfy, the desktop). */
export function plainLines(n: Notice): string[] {
  const out = [
    `Workspace: ${line(n.workspace.name)} (${line(n.workspace.path, 4096)})`,
    `Goal: ${line(n.goal.title)} (${n.goal.id})`,
  ];
  if (n.kind === 'gate') out.push(`Gate: ${line(n.title)}`);
  if (n.requested_by !== undefined) out.push(`Asked by: ${line(n.requested_by)}`);
  out.push(`${n.kind === 'gate' ? 'Why' : 'What'}: ${block(n.detail)}`);
  const commands = n.commands ?? [];
  if (commands.length) {
    out.push(`It lets ${commands.length === 1 ? 'this command' : `these ${commands.length} commands`} run:`);
    for (const c of commands) out.push(`$ ${block(c)}`);
  } else if (n.kind === 'gate') out.push('It guards no command (a decision only).');
  return out;
}

// ---------------------------------------------------------------------------------------------
// Slack

/**
 * Slack reads `&`, `<` and `>` as its control characters (`<!channel>`, `<https://x|label>`,
 * `<@U123>`): escaped as Slack says, no store text can make a link or a mention.
 */
export const slackEscape = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * Store text inside Slack code formatting, where nothing is a link, a mention or a format and a
 * client links no bare URL. A backtick would end the code early, so each is shown as U+02CB
 * (MODIFIER LETTER GRAVE ACCENT), which looks the same and ends nothing.
 */
const slackCodeText = (s: string) => slackEscape(s).replace(/`/g, '\u02cb');
const slackCode = (s: string) => `\`${slackCodeText(line(s)) || ' '}\``;
/** Slack refuses a section text over 3000 characters: a long command takes several blocks. */
const SLACK_CHUNK = 2800;
const SLACK_MAX_BLOCKS = 48;

function slackCodeBlocks(s: string): string[] {
  const text = slackCodeText(block(s));
  const chars = Array.from(text);
  const out: string[] = [];
  for (let i = 0; i < chars.length || i === 0; i += SLACK_CHUNK)
    out.push(`\`\`\`\n${chars.slice(i, i + SLACK_CHUNK).join('') || ' '}\n\`\`\``);
  return out;
}

const section = (text: string) => ({ type: 'section', text: { type: 'mrkdwn', text } });

export function slackBody(n: Notice): { text: string; blocks: unknown[] } {
  const title = `LoopX: ${headline(n)} in ${line(n.workspace.name, 80)}`;
  const blocks: unknown[] = [
    { type: 'header', text: { type: 'plain_text', text: `LoopX: ${headline(n)}`.slice(0, 150) } },
    section(
      [
        `*Workspace* ${slackCode(n.workspace.name)} ${slackCode(n.workspace.path)}`,
        `*Goal* ${slackCode(n.goal.title)} (${n.goal.id})`,
        ...(n.kind === 'gate' ? [`*Gate* ${slackCode(n.title)}`] : []),
        ...(n.requested_by !== undefined ? [`*Asked by* ${slackCode(n.requested_by)}`] : []),
      ].join('\n'),
    ),
    section(`*${n.kind === 'gate' ? 'Why' : 'What'}*`),
    ...slackCodeBlocks(n.detail).map(section),
  ];
  const commands = n.commands ?? [];
  if (commands.length) {
    blocks.push(
      section(
        `*It lets ${commands.length === 1 ? 'this command' : `these ${commands.length} commands`} run*`,
      ),
    );
    for (const c of commands) blocks.push(...slackCodeBlocks(c).map(section));
  }
  const link = slackEscape(n.link).replace(/\|/g, '%7C');
  const linkBlock = section(`<${link}|${n.kind === 'gate' ? 'Decide in LoopX' : 'Open LoopX'}>`);
  if (blocks.length >= SLACK_MAX_BLOCKS) {
    blocks.length = SLACK_MAX_BLOCKS - 2;
    blocks.push(section('_More than Slack shows in one message: every command is on the page below._'));
  }
  blocks.push(linkBlock);
  return { text: slackEscape(title), blocks };
}

// ---------------------------------------------------------------------------------------------
// ntfy and the desktop

/** ntfy's JSON publishing: posted to the server's root, the topic in the body. */
export function ntfyRequest(n: Notice, topicUrl: string): { url: string; body: Record<string, unknown> } {
  const target = ntfyTarget(topicUrl);
  if (!target) throw new Error(`not an ntfy topic URL`);
  return {
    url: target.root,
    body: {
      topic: target.topic,
      title: `LoopX: ${headline(n)}`,
      message: plainLines(n).join('\n'),
      click: n.link,
      tags: ['loopx', n.kind],
    },
  };
}

/**
 * A desktop notification's title and body. Notification servers that read markup in the body
 * (the freedesktop spec's `body-markup`) would make `<a href>` a link: `&`, `<` and `>` are
 * written as entities, as the spec asks of text.
 */
export function desktopMessage(n: Notice): { title: string; body: string } {
  const xml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  return {
    title: `LoopX: ${headline(n)}`,
    body: xml([...plainLines(n), n.link].join('\n')),
  };
}

/** The request a webhook of `kind` at `url` receives for `n`. */
export function webhookRequest(kind: WebhookKind, url: string, n: Notice): { url: string; body: string } {
  if (kind === 'ntfy') {
    const r = ntfyRequest(n, url);
    return { url: r.url, body: JSON.stringify(r.body) };
  }
  return { url, body: JSON.stringify(kind === 'slack' ? slackBody(n) : genericBody(n)) };
}
