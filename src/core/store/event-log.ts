/**
 * One writer's log of a goal (`events/<writer>.jsonl`, or an older LoopX's single `events.jsonl`):
 * append-only, one event per line, each line linked to the one before by its sha256, each event's
 * clock stamp above the one before. Parsing and checking a log (a forked one too), sealing drafts
 * into new lines, and the torn tail a crash mid-write leaves behind; the append itself is
 * store/log-append.ts.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Actor, EventDraft, GoalState, LoopxEvent } from '../model';
import { corrupt, EVENT_VERSION, newId, nextHlc, safeParseEvent, usageError } from '../model';
import { applyInPlace } from '../rules';
import type { Signer, Trust } from '../trust';
import { acceptDecisionSig, isDecision, NO_TRUST, signDecision } from '../trust';
import type { ExactEvent } from './prepared-event';
import { describeIssues, sha256 } from './json-file';
import { openStoreFile, readStoreFile, writeStoreFile } from './safe-path';

export interface ParsedLog {
  events: LoopxEvent[];
  /** Sha256 of each complete line, in order. */
  hashes: string[];
  /**
   * Where each event sorts among all writers' events: its clock stamp, or for a version 1 event
   * (which has none) one made from its time the way a clock would have stamped it.
   */
  keys: string[];
  /** Bytes after the last newline: a write in progress or a crash mid-write. */
  torn?: { line: number; offset: number; bytes: number };
  /** Byte length of the complete lines. */
  completeBytes: number;
  /**
   * Lines that continue an earlier line rather than the one before them (`continues`: its line
   * number, 0 for the log's start): the log forked (parentOf says how, and why they are kept).
   */
  forks?: { line: number; continues: number }[];
}

/** Where one writer's log ends. */
export interface WriterHead {
  seq: number;
  bytes: number;
  lastHash: string | null;
  /** Sort key of its last event (ParsedLog.keys). */
  key?: string;
}

/** Where a parse starts: after line `startLine - 1`, whose hash and sort key are given. */
export interface LogCursor {
  startLine: number;
  prevHash: string | null;
  /**
   * The sort key of line `startLine - 1`. A cursor is taken only within this version's own log,
   * so a version 1 event (an older LoopX's) cannot follow it.
   */
  prevKey?: string;
  /** The seq of line `startLine - 1` (in a forked log it is not its line number). */
  prevSeq?: number;
}

/**
 * Parses a log's bytes into events, checking each line's schema, seq, hash link and clock stamp.
 * `writer`: the writer whose log it is (every version 2 event must name it), or undefined for an
 * older LoopX's `events.jsonl`, which holds version 1 events only.
 */
export function parseLog(
  buf: Buffer,
  file: string,
  writer: string | undefined,
  from: LogCursor = { startLine: 1, prevHash: null },
): ParsedLog {
  const events: LoopxEvent[] = [];
  const hashes: string[] = [];
  const keys: string[] = [];
  let offset = 0;
  let lineNo = from.startLine;
  let prev = from.prevHash;
  let key = from.prevKey;
  let lastSeq = from.prevSeq ?? from.startLine - 1;
  const forks: NonNullable<ParsedLog['forks']> = [];
  // Only fork lines are recorded: every other line continues the one before it.
  const forkParents = new Map<number, number>();
  let v2 = from.prevKey !== undefined;
  while (offset < buf.length) {
    const nl = buf.indexOf(10, offset);
    if (nl === -1) {
      return {
        events,
        hashes,
        keys,
        completeBytes: offset,
        torn: { line: lineNo, offset, bytes: buf.length - offset },
        ...(forks.length ? { forks } : {}),
      };
    }
    const line = buf.toString('utf8', offset, nl);
    const where = `${file}:${lineNo}`;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch (e) {
      throw corrupt(`${where}: not valid JSON: ${(e as Error).message}`, { file, line: lineNo });
    }
    const parsed = safeParseEvent(raw);
    if (!parsed.success) throw corrupt(`${where}: ${describeIssues(parsed.error)}`, { file, line: lineNo });
    const ev = parsed.data as LoopxEvent;
    // The common case, checked without a call: the line continues the one before it.
    let parentKey = key;
    if (ev.prev !== prev || ev.seq !== lastSeq + 1) {
      const parent = parentOf(ev, { hashes, events, keys, forkParents }, from);
      if (!parent) {
        const what =
          ev.seq !== lastSeq + 1
            ? `field seq: is ${ev.seq}, expected ${lastSeq + 1} (a line was removed, inserted or moved)`
            : `field prev: does not match the sha256 of line ${lineNo - 1} (the log was edited before this line)`;
        throw corrupt(`${where}: ${what}`, { file, line: lineNo });
      }
      forks.push({ line: lineNo, continues: from.startLine + parent.at });
      parentKey = parent.key;
      forkParents.set(hashes.length, parent.at);
    }
    key = sortKey(ev, { key: parentKey, v2 }, writer, where, { file, line: lineNo });
    v2 ||= ev.v === 2;
    lastSeq = ev.seq;
    prev = sha256(line);
    hashes.push(prev);
    keys.push(key);
    events.push(ev);
    offset = nl + 1;
    lineNo++;
  }
  return { events, hashes, keys, completeBytes: offset, ...(forks.length ? { forks } : {}) };
}

/**
 * The earlier line `ev` continues when it does not continue the one before it, in a forked log: two writers that held the goal at once (an older
 * LoopX's lock, or the exclusive-file stand-in fooled) both appended after one head, so every
 * line between that head and this one descends from it. Such a line is kept: its events apply
 * once like any other's, so the goal stays readable and writable on every clone. A line put into
 * the middle of a log is still an edit: the line after it continues a line it does not descend
 * from. Undefined when `ev` continues no line it may continue (an edit). `forkParents`: the line
 * each fork line continues, by index (-1: the log's start); any other line continues the one before.
 */
function parentOf(
  ev: LoopxEvent,
  read: { hashes: string[]; events: LoopxEvent[]; keys: string[]; forkParents: Map<number, number> },
  from: LogCursor,
): { key?: string; at: number } | undefined {
  const { hashes, events, keys, forkParents } = read;
  // Only lines this parse has read can be checked (a parse from a cursor fails and reads it all).
  let at: number;
  if (ev.prev === null) {
    if (from.startLine !== 1 || ev.seq !== 1) return undefined;
    at = -1;
  } else {
    at = hashes.lastIndexOf(ev.prev);
    if (at === -1 || ev.seq !== events[at]!.seq + 1) return undefined;
  }
  for (let i = at + 1; i < hashes.length; i++) {
    let up = i;
    while (up > at) up = forkParents.get(up) ?? up - 1;
    if (up !== at) return undefined;
  }
  return { key: at === -1 ? undefined : keys[at], at };
}

/** The sort key of `ev`, the event after the one keyed `before` in the log of `writer`. */
function sortKey(
  ev: LoopxEvent,
  before: { key?: string; v2: boolean },
  writer: string | undefined,
  where: string,
  details: { file: string; line: number },
): string {
  const bad = (msg: string) => corrupt(`${where}: ${msg}`, details);
  if (ev.v === 1) {
    if (before.v2) throw bad('a version 1 event after version 2 ones (only an older LoopX writes them)');
    return nextHlc(before.key, new Date(ev.ts));
  }
  if (writer === undefined) throw bad("a version 2 event in an older LoopX's events.jsonl");
  if (ev.writer !== writer)
    throw bad(`field writer: is ${ev.writer}, but this is the log of writer ${writer}`);
  if (ev.hlc === undefined) throw bad('field hlc: a version 2 event must have a clock stamp');
  if (before.key !== undefined && ev.hlc <= before.key)
    throw bad(`field hlc: ${ev.hlc} is not after the line before it (${before.key})`);
  return ev.hlc;
}

/**
 * Whether the last complete line of the log open as `fd` (ending at `end`) hashes to `lastHash`: a
 * cheap guard against same-length edits.
 */
export function lastLineMatches(fd: number, end: number, lastHash: string | null): boolean {
  if (end === 0) return lastHash === null;
  // Read backwards in small steps: a line is usually well under 4 KB.
  let len = Math.min(end, 4096);
  for (;;) {
    const buf = Buffer.alloc(len);
    fs.readSync(fd, buf, 0, len, end - len);
    if (buf[len - 1] !== 10) return false;
    const nl = buf.lastIndexOf(10, len - 2);
    if (nl !== -1 || len === end) return sha256(buf.subarray(nl + 1, len - 1)) === lastHash;
    if (len >= 1024 * 1024) return false;
    len = Math.min(end, len * 4);
  }
}

export function tornWarning(goalId: string, file: string, torn: NonNullable<ParsedLog['torn']>): string {
  return (
    `goal ${goalId}: ${file}:${torn.line} is an incomplete line (${torn.bytes} bytes without a newline): ` +
    'a write in progress or one cut short by a crash; it is not part of the state. `loopx self-repair` moves it aside.'
  );
}

export function forkWarning(goalId: string, file: string, forks: NonNullable<ParsedLog['forks']>): string {
  const shown = forks
    .slice(0, 3)
    .map((f) => `line ${f.line} continues line ${f.continues}`)
    .join(', ');
  return (
    `goal ${goalId}: ${file} forked (${shown}${forks.length > 3 ? ', ...' : ''}): two processes appended ` +
    'after the same line at once; every line is kept and each event counts once'
  );
}

/**
 * Under the goal lock an incomplete last line cannot be a write in progress: it is a crashed
 * write, never acknowledged. Move it to a quarantine file in `goalDir` (never delete) and cut the
 * log back to its last complete line, so the next append starts on a fresh line.
 */
export function quarantineTornTail(file: string, goalDir: string, now: () => string): EventDraft | undefined {
  // Every commit checks, so look at the last byte before reading the whole log.
  const fd = openStoreFile(file, 'r');
  try {
    const size = fs.fstatSync(fd).size;
    const last = Buffer.alloc(1);
    if (size === 0 || (fs.readSync(fd, last, 0, 1, size - 1) === 1 && last[0] === 10)) return undefined;
  } finally {
    fs.closeSync(fd);
  }
  const buf = readStoreFile(file);
  if (buf.length === 0 || buf[buf.length - 1] === 10) return undefined;
  const cut = buf.lastIndexOf(10) + 1;
  const torn = buf.subarray(cut);
  const name = `events.torn-${now().replace(/[:.]/g, '-')}-${newId('q', 4)}.jsonl`;
  writeStoreFile(path.join(goalDir, name), torn, { flag: 'wx' });
  const wfd = openStoreFile(file, 'r+');
  try {
    fs.ftruncateSync(wfd, cut);
  } finally {
    fs.closeSync(wfd);
  }
  return { type: 'log.quarantined', data: { file: name, bytes: torn.length, sha256: sha256(torn) } };
}

/**
 * Where this writer's log ends (its last seq and line hash) and the merged state after it, with
 * the highest clock stamp among all the goal's events: new events are stamped above it.
 */
export interface LogHead {
  state: GoalState | undefined;
  seq: number;
  prev: string | null;
  hlc: string | undefined;
}

/** Whether `ev` is a command a person adds with their key at hand (a todo with an action). */
function signsCommand(ev: LoopxEvent, stamp: { actor: Actor; signer?: Signer }): boolean {
  return (
    ev.type === 'todo.added' &&
    ev.data.todo.action !== undefined &&
    stamp.actor.kind === 'user' &&
    !!stamp.signer
  );
}

/**
 * Seals drafts into the lines that follow `head`: each event gets its seq, id and hash link, is
 * checked against the schema and applied to the state, so an invalid one refuses the whole write.
 */
export function chainEvents(
  goalId: string,
  drafts: EventDraft[],
  head: LogHead,
  stamp: { now: Date; writer: string; actor: Actor; signer?: Signer; call?: string; exact?: ExactEvent },
  trust: Trust = NO_TRUST,
): LogHead & { events: LoopxEvent[]; chunk: Buffer } {
  let { state, seq, prev, hlc } = head;
  const ts = stamp.now.toISOString();
  const events: LoopxEvent[] = [];
  const lines: string[] = [];
  const { exact } = stamp;
  // store/commit.ts checked the head it was prepared on: its stamp is above every one there.
  if (exact && (drafts.length !== 1 || (hlc !== undefined && exact.hlc <= hlc)))
    throw usageError('a prepared decision is written alone, stamped above the goal', { goalId });
  for (const d of drafts) {
    hlc = exact?.hlc ?? nextHlc(hlc, stamp.now);
    const candidate = {
      v: EVENT_VERSION,
      hlc,
      seq: ++seq,
      id: exact?.id ?? newId('ev', 10),
      ts,
      writer: stamp.writer,
      actor: stamp.actor,
      prev,
      type: d.type,
      data: d.data,
      ...(stamp.call === undefined ? {} : { call: stamp.call }),
    };
    const checked = safeParseEvent(candidate);
    if (!checked.success) {
      throw usageError(`refused to write an invalid ${d.type} event: ${describeIssues(checked.error)}`, {
        goalId,
      });
    }
    const ev = checked.data as LoopxEvent;
    if (exact) ev.sig = acceptDecisionSig(goalId, ev, exact.sig, trust);
    else if (isDecision(state, ev)) ev.sig = signDecision(goalId, ev, stamp.signer, trust);
    // A person who adds a command with their key signs it: other clones run it without review.
    else if (signsCommand(ev, stamp)) ev.sig = signDecision(goalId, ev, stamp.signer, trust);
    const overruledBefore = state?.overruled?.length ?? 0;
    try {
      state = applyInPlace(state, ev, goalId, trust);
    } catch (e) {
      throw usageError(`refused to write ${d.type}: ${(e as Error).message}`, { goalId });
    }
    // The capabilities check what they write against the current state, so an event of ours the
    // merge rules would overrule at once is a bug: refuse it rather than log a no-op.
    const overruled = state.overruled?.[overruledBefore];
    if (overruled) throw usageError(`refused to write ${d.type}: ${overruled.reason}`, { goalId });
    const line = JSON.stringify(ev);
    lines.push(line);
    prev = sha256(line);
    events.push(ev);
  }
  const chunk = Buffer.from(lines.join('\n') + '\n', 'utf8');
  return { state, seq, prev, hlc, events, chunk };
}
