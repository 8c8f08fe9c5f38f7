/** `loopx notify list|send|test` for a person at a terminal. */
import type { NotifyChannelsDoc, NotifySendDoc } from '../../core/index';
import { columns, forLogLine } from '../../core/index';

export function notifyChannelsText(d: NotifyChannelsDoc): string {
  if (!d.configured)
    return [
      `no channels set up (${d.file} does not exist): nothing is sent outside the editor.`,
      'Add one: loopx notify add --name N --kind generic|slack|ntfy --url U, or loopx notify desktop on',
    ].join('\n');
  const head = `${d.file}: links to ${d.link_base}; a failed notice is tried again after ${d.retry.first_seconds} s, doubling, ${d.retry.max_attempts} attempts at most`;
  if (d.channels.length === 0)
    return `${head}\nno channels: loopx notify add ..., or loopx notify desktop on`;
  const rows = d.channels.map((c) => [
    c.name,
    c.kind,
    c.status,
    c.origin ?? '',
    c.status === 'failing'
      ? `${forLogLine(c.last_error ?? '', 300)} (at ${c.last_error_at ?? '?'})`
      : c.last_sent_at
        ? `last sent at ${c.last_sent_at}`
        : 'nothing sent yet',
    [c.retrying ? `${c.retrying} retrying` : '', c.gave_up ? `${c.gave_up} given up` : '']
      .filter(Boolean)
      .join(', '),
  ]);
  return [head, ...columns(rows)].join('\n');
}

export function notifySendText(d: NotifySendDoc): string {
  if (!d.configured) return 'no channels set up: nothing sent (loopx notify list says how to add one)';
  if (d.busy) return 'another LoopX sender holds the outbox: it sends; nothing sent here';
  const lines = [
    ...d.sent.map((s) => `sent ${forLogLine(s.what)} to ${s.channel}`),
    ...d.failed.map(
      (f) =>
        `could not send ${forLogLine(f.what)} to ${f.channel} (attempt ${f.attempts}): ${forLogLine(f.error ?? '', 300)}${
          f.gave_up ? '; gave up' : f.next_at ? `; next attempt at ${f.next_at}` : ''
        }`,
    ),
  ];
  if (lines.length === 0) lines.push('nothing to send');
  if (d.next_at) lines.push(`next retry due at ${d.next_at}`);
  return lines.join('\n');
}
