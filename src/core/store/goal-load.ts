/**
 * A goal's state from its logs: resumed from the snapshot when that can be trusted (no log but
 * this writer's own changed since, and its new lines sort after everything the snapshot holds),
 * else replayed in full from every writer's log, merged.
 */
import * as fs from 'node:fs';
import type { GoalState } from '../model';
import { corrupt, maxHlc } from '../model';
import { applyInPlace, distinctEvents, mergeLogs, replayMerged } from '../rules';
import type { Trust } from '../trust';
import { NO_TRUST } from '../trust';
import type { ParsedLog, WriterHead } from './event-log';
import { forkWarning, lastLineMatches, parseLog, tornWarning } from './event-log';
import type { OpenLog } from './goal-logs';
import { LEGACY_LOG, writerOf } from './goal-logs';
import type { Snapshot } from './snapshot';

export interface LoadedGoal {
  state: GoalState;
  /** How many distinct events the goal has, across all writers: its revision. */
  revision: number;
  /** Each log's end, by log name (writer id, or the legacy log's name). */
  heads: Record<string, WriterHead>;
  /** The highest sort key of the events applied: new events are stamped above it. */
  hlc?: string;
  /** The lowest stamp of the events that wait (rules/merged-replay.ts): replay when it is reached. */
  heldUntil?: string;
  /** Things a person should know that did not stop the load (a torn tail, a stale snapshot). */
  warnings: string[];
  /** Events after the snapshot that was used (0 when it was current; undefined after a full replay). */
  snapshotLag?: number;
  /**
   * The cached snapshot could not be used and was left as it is: damaged, or over a log that
   * was cut since (self-repair rewrites it; a load that warns never does).
   */
  cacheStale?: boolean;
}

/** Where a log with no events yet ends. */
const NO_EVENTS: WriterHead = { seq: 0, bytes: 0, lastHash: null };

function headOf(log: ParsedLog): WriterHead {
  return {
    // The last line's seq: the next line continues it (in a forked log, not the line count).
    seq: log.events.at(-1)?.seq ?? 0,
    bytes: log.completeBytes,
    lastHash: log.hashes.at(-1) ?? null,
    key: log.keys.at(-1),
  };
}

/**
 * The fast path: the snapshot, when every log but `own` is as it was, and `own` is too or only
 * grew by events that sort after all the snapshot holds. Undefined when the logs need a full replay.
 */
export function resumeFromSnapshot(
  goalId: string,
  logs: OpenLog[],
  snap: Snapshot,
  own: string,
  trust: Trust = NO_TRUST,
  cutoff?: string,
): LoadedGoal | undefined {
  // Which decisions count depends on the keys pinned here: a snapshot made under others is stale.
  if (snap.trust !== trust.fingerprint || snap.state.id !== goalId) return undefined;
  // An event that waited for its time has reached it: it takes its place in a full replay.
  if (snap.heldUntil !== undefined && (cutoff === undefined || snap.heldUntil <= cutoff)) return undefined;
  if (Object.keys(snap.heads).some((name) => !logs.some((l) => l.name === name))) return undefined;
  let grown: OpenLog | undefined;
  for (const l of logs) {
    // This writer's log may be new since (its first write to a goal the snapshot knew).
    const h = snap.heads[l.name] ?? (l.name === own ? NO_EVENTS : undefined);
    if (!h) return undefined;
    if (l.size === h.bytes && lastLineMatches(l.fd, l.size, h.lastHash)) continue;
    if (l.name !== own || l.size < h.bytes || !lastLineMatches(l.fd, h.bytes, h.lastHash)) return undefined;
    grown = l;
  }
  if (!grown) {
    return {
      state: snap.state,
      revision: snap.revision,
      heads: snap.heads,
      hlc: snap.hlc,
      heldUntil: snap.heldUntil,
      warnings: [],
      snapshotLag: 0,
    };
  }
  const h = snap.heads[own] ?? NO_EVENTS;
  try {
    const tail = Buffer.alloc(grown.size - h.bytes);
    fs.readSync(grown.fd, tail, 0, tail.length, h.bytes);
    const parsed = parseLog(tail, grown.file, own, {
      startLine: h.seq + 1,
      prevHash: h.lastHash,
      prevKey: h.key,
      prevSeq: h.seq,
    });
    // A forked tail's lines do not sort in file order: a full replay puts them in place.
    if (parsed.forks) return undefined;
    // Lines of ours that sort before something the snapshot holds were not written by LoopX.
    const first = parsed.keys[0];
    if (first !== undefined && snap.hlc !== undefined && first <= snap.hlc) return undefined;
    const last = parsed.keys.at(-1);
    if (last !== undefined && cutoff !== undefined && last > cutoff) return undefined;
    let state = snap.state;
    for (const ev of parsed.events) state = applyInPlace(state, ev, goalId, trust);
    return {
      state,
      revision: snap.revision + parsed.events.length,
      heads: {
        ...snap.heads,
        [own]: {
          seq: parsed.events.at(-1)?.seq ?? h.seq,
          bytes: h.bytes + parsed.completeBytes,
          lastHash: parsed.hashes.at(-1) ?? h.lastHash,
          key: parsed.keys.at(-1) ?? h.key,
        },
      },
      hlc: maxHlc(snap.hlc, parsed.keys.at(-1)),
      heldUntil: snap.heldUntil,
      warnings: parsed.torn ? [tornWarning(goalId, grown.file, parsed.torn)] : [],
      snapshotLag: parsed.events.length,
    };
  } catch {
    // The tail does not continue the snapshot (log rewritten or truncated): replay it all.
    return undefined;
  }
}

/**
 * Why the logs are not a continuation of what the snapshot saw: a writer's log that lost lines, or
 * whose line the snapshot ended on changed (a reset, a force push, a hand edit). Undefined when
 * each log only grew, or new ones came (a pull), which is no problem.
 */
export function cutSince(logs: OpenLog[], snap: Snapshot): string | undefined {
  for (const [name, h] of Object.entries(snap.heads)) {
    const l = logs.find((x) => x.name === name);
    const cut = l
      ? logCut(l.file, h, l.size, (bytes, hash) => lastLineMatches(l.fd, bytes, hash))
      : logGone(name, h);
    if (cut) return cut;
  }
  return undefined;
}

/**
 * How a log (`file`, now `size` bytes of complete lines) differs from where this clone last read
 * it to (`h`): cut or rewritten; undefined when it only grew. `endsAt(bytes, hash)` says whether
 * its line that ends at `bytes` hashes to `hash`.
 */
export function logCut(
  file: string,
  h: WriterHead,
  size: number,
  endsAt: (bytes: number, hash: string | null) => boolean,
): string | undefined {
  if (size < h.bytes)
    return `${file} is shorter than this clone read before (${h.seq} events): lines were cut (a reset or a force push?)`;
  if (!endsAt(h.bytes, h.lastHash))
    return `${file}: line ${h.seq} is not the one this clone read before: the log was rewritten up to there`;
  return undefined;
}

/** Why a log this clone read before is not there now (an older LoopX's log goes once migrated). */
export function logGone(name: string, h: WriterHead): string | undefined {
  if (name === LEGACY_LOG) return undefined; // its events live on in the log of the clone that migrated it
  return `the log of writer ${name} is gone, but this clone read ${h.seq} events from it before`;
}

/** Reads and checks each open log in full. */
export function parseOpenLogs(logs: OpenLog[]): { name: string; file: string; parsed: ParsedLog }[] {
  return logs.map((l) => ({
    name: l.name,
    file: l.file,
    parsed: parseLog(fs.readFileSync(l.fd), l.file, writerOf(l)),
  }));
}

/** Full replay of a goal's parsed logs, merged (no snapshot). */
export function replayLogs(
  goalId: string,
  logs: { name: string; file: string; parsed: ParsedLog }[],
  warnings: string[] = [],
  trust: Trust = NO_TRUST,
  cutoff?: string,
): LoadedGoal {
  const merged = mergeLogs(logs);
  if (merged.length === 0) {
    const where = logs.length ? logs.map((l) => l.file).join(', ') : 'its folder';
    throw corrupt(`goal ${goalId}: ${where} has no complete event`, { goalId });
  }
  const events = distinctEvents(merged);
  const { state, hlc, heldUntil } = replayMerged(goalId, events, trust, cutoff);
  if (!state) {
    const where = logs.map((l) => l.file).join(', ');
    throw corrupt(`goal ${goalId}: no event in ${where} creates it (goal.created)`, { goalId });
  }
  const w = [...warnings];
  const heads: Record<string, WriterHead> = {};
  for (const l of logs) {
    heads[l.name] = headOf(l.parsed);
    if (l.parsed.torn) w.push(tornWarning(goalId, l.file, l.parsed.torn));
    if (l.parsed.forks) w.push(forkWarning(goalId, l.file, l.parsed.forks));
  }
  return { state, revision: events.length, heads, hlc, heldUntil, warnings: w };
}
