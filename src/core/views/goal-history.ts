/**
 * A goal's history as people read it (`loopx log`, the editor's event log) and its checks
 * (`loopx verify`): every writer's events merged in replay order, each with its writer, and each
 * writer's chain checked on its own, so a broken or cut log is named with the clone that wrote it.
 */
import type { GoalState, LoopxEvent } from '../model';
import { LoopxError } from '../model';
import type { MergedEvent } from '../rules';
import { distinctEvents, mergeLogs } from '../rules';
import type { ParsedLog, Store } from '../store';
import { canonicalJson, lineEndsAt, logCut, logGone, missingGoal, readLogFile, sha256 } from '../store';
import { describeIgnored } from '../trust';
import { eventWords } from './event-sentences';
import { columns } from './people-text';

/** A digest of a goal's state: clones holding the same events (and pinning the same keys) agree on it. */
export const stateHash = (state: GoalState): string => sha256(canonicalJson(state));

export interface History {
  /** Every distinct event, in replay order, with the log (writer) it was read from. */
  events: MergedEvent[];
  /** Incomplete last lines (a write in progress or a crash), by log. */
  torn: { file: string; line: number; bytes: number }[];
}

/** The merged history of a goal (throws `corrupt` naming the file and line when a log is broken). */
export function readHistory(store: Store, goalId: string): History {
  const logs = store.readLogs(goalId);
  const events = distinctEvents(mergeLogs(logs));
  const torn = logs.flatMap((l) => (l.parsed.torn ? [{ file: l.file, ...l.parsed.torn }] : []));
  return { events, torn };
}

/** `2026-11-30 10:04:05`: an event's time in UTC, to the second. */
const atSecond = (iso: string) => {
  const t = Date.parse(iso);
  return Number.isFinite(t) ? new Date(t).toISOString().slice(0, 19).replace('T', ' ') : iso;
};

/**
 * Events as aligned lines of text: time (UTC), writer (its name when `names` has one), who and
 * through what, event type, and what happened in words (at most `width` characters).
 */
export function historyLines(
  events: readonly { ev: LoopxEvent; log: string }[],
  names: ReadonlyMap<string, string> = new Map(),
  width = 120,
): string[] {
  return columns(
    events.map(({ ev: e, log }) => [
      atSecond(e.ts),
      names.get(log) ?? log,
      `${e.actor.kind} ${e.actor.id} (${e.actor.channel})`,
      e.type,
      eventWords(e, width),
    ]),
  );
}

/** One event as a line of text (see `historyLines`, which aligns many). */
export function historyLine(
  m: { ev: LoopxEvent; log: string },
  names: ReadonlyMap<string, string> = new Map(),
  width = 120,
): string {
  return historyLines([m], names, width)[0] ?? '';
}

export interface WriterCheck {
  writer: string;
  file: string;
  ok: boolean;
  events?: number;
  torn_tail_line?: number;
  error?: string;
}

export interface GoalCheck {
  goal_id: string;
  ok: boolean;
  /** Distinct events across all writers. */
  events?: number;
  state_hash?: string;
  writers: WriterCheck[];
  ignored_decisions?: string[];
  overruled?: string[];
  error?: string;
}

/** Checks every writer's chain of a goal, then the merged replay. */
export function verifyGoal(store: Store, goalId: string): GoalCheck {
  const files = store.logFiles(goalId);
  if (files.length === 0) throw missingGoal(store.root, store.goalDir(goalId), goalId);
  const writers: WriterCheck[] = [];
  const logs: { name: string; file: string; parsed: ParsedLog }[] = [];
  // What this clone last read of each writer's log (its cached snapshot) against the log now.
  const seen = store.readSnapshot(goalId).snap?.heads ?? {};
  for (const [name, h] of Object.entries(seen)) {
    const gone = files.some((f) => f.name === name) ? undefined : logGone(name, h);
    if (gone) writers.push({ writer: name, file: '', ok: false, error: gone });
  }
  for (const f of files) {
    try {
      const parsed = readLogFile(f);
      const h = seen[f.name];
      const cut = h && logCut(f.file, h, parsed.completeBytes, (bytes, hash) => lineEndsAt(f, bytes, hash));
      writers.push({
        writer: f.name,
        file: f.file,
        ok: !cut,
        events: parsed.events.length,
        ...(parsed.torn ? { torn_tail_line: parsed.torn.line } : {}),
        ...(cut ? { error: cut } : {}),
      });
      logs.push({ ...f, parsed });
    } catch (e) {
      if (e instanceof LoopxError && e.kind === 'not_found') throw e;
      writers.push({ writer: f.name, file: f.file, ok: false, error: (e as Error).message });
    }
  }
  const broken = writers.find((w) => !w.ok);
  if (broken) return { goal_id: goalId, ok: false, writers, error: broken.error };
  try {
    const { state, revision } = store.replayGoal(goalId, logs);
    const ignored = describeIgnored(state);
    const overruled = (state.overruled ?? []).map(
      (o) =>
        `${o.type} ${o.eventId} by ${o.actor.kind} ${o.actor.id} (writer ${o.writer}) is overruled: ${o.reason}`,
    );
    return {
      goal_id: goalId,
      ok: true,
      events: revision,
      state_hash: stateHash(state),
      writers,
      ...(ignored.length ? { ignored_decisions: ignored } : {}),
      ...(overruled.length ? { overruled } : {}),
    };
  } catch (e) {
    return { goal_id: goalId, ok: false, writers, error: (e as Error).message };
  }
}
