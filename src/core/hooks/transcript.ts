/**
 * Model usage from the transcript an agent host names in its hook payload (`transcript_path`):
 * Claude Code writes one JSON line per content block, and each assistant line carries the API's
 * `message.id`, `message.model` and `message.usage`. A message split over several lines repeats
 * its id: it is one message, and its usage is the largest each count reached.
 *
 * The file is the host's, outside the workspace; it is read, never written, and only as a plain
 * file (no link, no device) of bounded size, line by line.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { TokenUsage } from '../model';
import { withoutUnsafeCharacters } from '../model';

/** Larger transcripts are read only up to this many bytes (a week-long session stays far below). */
export const MAX_TRANSCRIPT_BYTES = 512 * 1024 * 1024;

export interface MessageUsage {
  /** usageKey(session, message id): what the store keeps to count each message once. */
  key: string;
  model: string;
  usage: TokenUsage;
}

/** The digest a message's usage is counted under (the store keeps these, not the ids). */
export function usageKey(session: string, messageId: string): string {
  return createHash('sha256').update(`${session}\0${messageId}`).digest('hex').slice(0, 16);
}

const count = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0);

function usageOf(u: Record<string, unknown>): TokenUsage {
  return {
    input: count(u.input_tokens),
    output: count(u.output_tokens),
    cacheWrite: count(u.cache_creation_input_tokens),
    cacheRead: count(u.cache_read_input_tokens),
  };
}

/** Calls `line` for each line of a file, reading it in chunks (a transcript can be large). */
function eachLine(fd: number, limit: number, line: (text: string) => void) {
  const chunk = Buffer.alloc(1 << 20);
  let carry = '';
  let read = 0;
  while (read < limit) {
    const n = fs.readSync(fd, chunk, 0, Math.min(chunk.length, limit - read), null);
    if (n === 0) break;
    read += n;
    const parts = (carry + chunk.toString('utf8', 0, n)).split('\n');
    carry = parts.pop()!;
    for (const p of parts) line(p);
  }
  if (carry) line(carry);
}

/**
 * The usage of every assistant message in the transcript, by message, in the order first seen.
 * Throws (with the reason) when the file is not an absolute path to a plain, readable file.
 */
export function transcriptUsage(file: string, session: string): MessageUsage[] {
  if (!path.isAbsolute(file)) throw new Error(`the transcript path ${JSON.stringify(file)} is not absolute`);
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new Error(`the transcript ${file} does not exist`);
    if (code === 'ELOOP')
      throw new Error(`the transcript ${file} is a symbolic link, which LoopX does not follow`);
    throw new Error(`cannot read the transcript ${file} (${code ?? (e as Error).message})`);
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw new Error(`the transcript ${file} is not a plain file`);
    const byId = new Map<string, MessageUsage>();
    eachLine(fd, MAX_TRANSCRIPT_BYTES, (text) => {
      // Most lines are not an assistant's; skip them before parsing.
      if (!text.includes('"usage"') || !text.includes('"assistant"')) return;
      let entry: { type?: unknown; message?: { id?: unknown; model?: unknown; usage?: unknown } };
      try {
        entry = JSON.parse(text);
      } catch {
        return; // a line being written as we read, or not JSON: not a message
      }
      const m = entry?.message;
      if (entry?.type !== 'assistant' || !m || typeof m.id !== 'string' || !m.id) return;
      if (!m.usage || typeof m.usage !== 'object') return;
      const usage = usageOf(m.usage as Record<string, unknown>);
      const seen = byId.get(m.id);
      if (seen) {
        for (const k of Object.keys(usage) as (keyof TokenUsage)[])
          seen.usage[k] = Math.max(seen.usage[k], usage[k]);
        return;
      }
      // The model's name goes into the store: the store's rule for characters applies.
      const name = typeof m.model === 'string' ? withoutUnsafeCharacters(m.model).trim().slice(0, 100) : '';
      const model = name || 'unknown';
      byId.set(m.id, { key: usageKey(session, m.id), model, usage });
    });
    return [...byId.values()].filter((x) => Object.values(x.usage).some((v) => v > 0));
  } finally {
    fs.closeSync(fd);
  }
}
