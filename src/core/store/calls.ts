/**
 * Calls named with an idempotency key (CommitOptions.call): the key each commit of a process gets,
 * and the events a call already wrote, found in the tail of this writer's log.
 */
import * as fs from 'node:fs';
import type { LoopxEvent } from '../model';
import { safeParseEvent } from '../model';
import { openStoreFile } from './safe-path';

/**
 * Commits made under each idempotency key in this process: a command may open the store more than
 * once, and its n-th commit is `<key>#<n>` whichever store made it.
 */
const callsMade = new Map<string, number>();

/** The call of the next commit made under `key` in this process. */
export function nextCall(key: string): string {
  const n = (callsMade.get(key) ?? 0) + 1;
  callsMade.set(key, n);
  return `${key}#${n}`;
}

/** How far back in a writer's log a retried call is looked for: thousands of events. */
const CALL_LOOKBACK_BYTES = 1024 * 1024;

/**
 * The events call `call` wrote, if this writer's log holds them within its last
 * CALL_LOOKBACK_BYTES (a retry comes soon after the failure it retries); the first copy only.
 */
export function eventsOfCall(file: string, call: string): LoopxEvent[] | undefined {
  let fd: number;
  try {
    fd = openStoreFile(file, 'r');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  let tail: Buffer;
  try {
    const size = fs.fstatSync(fd).size;
    const start = Math.max(0, size - CALL_LOOKBACK_BYTES);
    tail = Buffer.alloc(size - start);
    fs.readSync(fd, tail, 0, tail.length, start);
  } finally {
    fs.closeSync(fd);
  }
  const needle = Buffer.from(`"call":${JSON.stringify(call)}`);
  const found: LoopxEvent[] = [];
  let lastSeq: number | undefined;
  for (let at = tail.indexOf(needle); at !== -1; at = tail.indexOf(needle, at + 1)) {
    const start = tail.lastIndexOf(10, at) + 1;
    const end = tail.indexOf(10, at);
    if (end === -1) break; // an incomplete line: never acknowledged
    let raw: unknown;
    try {
      raw = JSON.parse(tail.toString('utf8', start, end));
    } catch {
      continue; // a damaged line is no call's: load reports it
    }
    const parsed = safeParseEvent(raw);
    if (!parsed.success) continue;
    const ev = parsed.data as LoopxEvent;
    if (ev.call !== call) continue;
    // One copy: its events are consecutive lines of one append.
    if (lastSeq !== undefined && ev.seq !== lastSeq + 1) break;
    found.push(ev);
    lastSeq = ev.seq;
    at = end;
  }
  return found.length > 0 ? found : undefined;
}
