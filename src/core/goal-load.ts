/** A goal's state from its log: resumed from the snapshot when that can be trusted, else replayed in full. */
import * as fs from 'node:fs';
import { corrupt } from './errors';
import type { GoalState } from './model';
import { applyInPlace } from './events';
import { parseLog, lastLineMatches, tornWarning } from './event-log';
import type { ParsedLog } from './event-log';
import type { Snapshot } from './snapshot';
import { NO_TRUST } from './trust/decisions';
import type { Trust } from './trust/decisions';

export interface LoadedGoal {
  state: GoalState;
  /** Seq of the last event: the goal's revision. */
  revision: number;
  lastHash: string | null;
  logBytes: number;
  /** Things a person should know that did not stop the load (a torn tail, a stale snapshot). */
  warnings: string[];
  /** Events in the log after the snapshot that was used (0 after a full replay or when current). */
  snapshotLag?: number;
}

/**
 * The fast path: the snapshot, when it covers the whole log `file` (open as `fd`, `size` bytes)
 * with the same byte length, or the snapshot plus the few lines appended after it. Undefined when
 * the snapshot does not fit the log, which then needs a full replay.
 */
export function resumeFromSnapshot(
  goalId: string,
  file: string,
  fd: number,
  size: number,
  snap: Snapshot,
  trust: Trust = NO_TRUST,
): LoadedGoal | undefined {
  // Which decisions count depends on the keys pinned here: a snapshot made under others is stale.
  if (snap.trust !== trust.fingerprint) return undefined;
  if (snap.logBytes === size && snap.state.id === goalId && lastLineMatches(fd, size, snap.lastHash)) {
    return {
      state: snap.state,
      revision: snap.revision,
      lastHash: snap.lastHash,
      logBytes: size,
      warnings: [],
      snapshotLag: 0,
    };
  }
  if (snap.logBytes < size && snap.state.id === goalId && lastLineMatches(fd, snap.logBytes, snap.lastHash)) {
    try {
      const tail = Buffer.alloc(size - snap.logBytes);
      fs.readSync(fd, tail, 0, tail.length, snap.logBytes);
      const parsed = parseLog(tail, file, snap.revision + 1, snap.lastHash);
      let state = snap.state;
      for (const ev of parsed.events) state = applyInPlace(state, ev, goalId, trust);
      return {
        state,
        revision: snap.revision + parsed.events.length,
        lastHash: parsed.hashes.at(-1) ?? snap.lastHash,
        logBytes: snap.logBytes + parsed.completeBytes,
        warnings: parsed.torn ? [tornWarning(goalId, file, parsed.torn)] : [],
        snapshotLag: parsed.events.length,
      };
    } catch {
      // The tail does not continue the snapshot (log rewritten or truncated): replay it all.
    }
  }
  return undefined;
}

/** Full replay of a parsed log `file` (no snapshot). */
export function replayLog(
  goalId: string,
  file: string,
  log: ParsedLog,
  warnings: string[] = [],
  trust: Trust = NO_TRUST,
): LoadedGoal {
  if (log.events.length === 0) throw corrupt(`goal ${goalId}: ${file} has no complete event`, { goalId });
  let state: GoalState | undefined;
  log.events.forEach((ev, i) => {
    try {
      state = applyInPlace(state, ev, goalId, trust);
    } catch (e) {
      throw corrupt(`${file}:${i + 1}: ${(e as Error).message}`, {
        goalId,
        line: i + 1,
      });
    }
  });
  const w = [...warnings];
  if (log.torn) w.push(tornWarning(goalId, file, log.torn));
  return {
    state: state!,
    revision: log.events.length,
    lastHash: log.hashes.at(-1) ?? null,
    logBytes: log.completeBytes,
    warnings: w,
  };
}
