/**
 * All writers' logs of a goal as one history: events ordered by (clock stamp, writer, seq), so the
 * order, and the state replayed from it, depends only on the set of events, never on the order
 * files were read or pulled in. The same event held by two logs (two clones that each migrated one
 * older `events.jsonl`) counts once.
 */
import type { LoopxEvent } from '../model';
import type { ParsedLog } from '../store';
import { canonicalJson } from '../store';

export interface MergedEvent {
  ev: LoopxEvent;
  /** Its sort key (ParsedLog.keys). */
  key: string;
  /** The log it was read from: a writer id, or the legacy log's name. */
  log: string;
}

/** The merged order: by clock stamp, then writer, then place in the writer's log. */
export function byMergeOrder(a: MergedEvent, b: MergedEvent): number {
  if (a.key !== b.key) return a.key < b.key ? -1 : 1;
  if (a.log !== b.log) return a.log < b.log ? -1 : 1;
  return a.ev.seq - b.ev.seq;
}

/** Every event of `logs` (by log name) in merged order, copies included (see `sameEvent`). */
export function mergeLogs(logs: { name: string; parsed: ParsedLog }[]): MergedEvent[] {
  const all: MergedEvent[] = [];
  for (const { name, parsed } of logs)
    parsed.events.forEach((ev, i) => all.push({ ev, key: parsed.keys[i]!, log: name }));
  return all.sort(byMergeOrder);
}

/**
 * The merged events without copies: the same event held by two logs (two clones that migrated
 * one older events.jsonl) is kept once. One that only shares its id with another stays: replay
 * applies it like any line, as the snapshot path does.
 */
export function distinctEvents(merged: MergedEvent[]): MergedEvent[] {
  const seen = new Map<string, LoopxEvent>();
  return merged.filter(({ ev }) => {
    const prior = seen.get(ev.id);
    if (prior && sameEvent(prior, ev)) return false;
    seen.set(ev.id, ev);
    return true;
  });
}

/** Whether two events with one id are the same event: equal in all but their place in a log. */
export function sameEvent(a: LoopxEvent, b: LoopxEvent): boolean {
  const { seq: _sa, prev: _pa, ...ra } = a;
  const { seq: _sb, prev: _pb, ...rb } = b;
  return canonicalJson(ra) === canonicalJson(rb);
}
