/**
 * Replaying every writer's events, merged, as input rather than authority: what another clone
 * wrote never freezes, reorders or breaks the goal for this one.
 * - An event stamped further ahead of this machine's clock than clocks drift (`cutoff`) waits: it
 *   has no effect until its time comes, and new events here are stamped below it, so a stamp in
 *   the year 9999 can neither outrank every later event nor push the clock past its last value.
 * - An event that sorts before the goal's creation (a line backdated, or copied from another
 *   workspace) is overruled rather than making the goal unreadable.
 * Both are listed with the writer that wrote them, for verify and status.
 */
import type { GoalState, LoopxEvent } from '../model';
import { maxHlc } from '../model';
import type { Trust } from '../trust';
import { NO_TRUST } from '../trust';
import { applyInPlace, overruleWith } from './apply-event';
import type { MergedEvent } from './merge-order';

export interface MergedReplay {
  /** Undefined when no event created the goal. */
  state: GoalState | undefined;
  /** The highest stamp among the events applied: new events are stamped above it. */
  hlc?: string;
  /** The lowest stamp among the events that wait: the state must be replayed once it is reached. */
  heldUntil?: string;
}

/** Applies `events` (merged order, copies removed) to a new state; those stamped above `cutoff` wait. */
export function replayMerged(
  goalId: string,
  events: readonly MergedEvent[],
  trust: Trust = NO_TRUST,
  cutoff?: string,
): MergedReplay {
  let state: GoalState | undefined;
  let hlc: string | undefined;
  let heldUntil: string | undefined;
  const early: LoopxEvent[] = [];
  const held: LoopxEvent[] = [];
  for (const { ev: read, key, log } of events) {
    // An older LoopX's event names a writer it was never checked against: its log is its writer.
    const ev = read.v === 1 && read.writer !== log ? { ...read, writer: log } : read;
    if (cutoff !== undefined && key > cutoff) {
      held.push(ev);
      heldUntil ??= key;
      continue;
    }
    hlc = maxHlc(hlc, key);
    if (!state && ev.type !== 'goal.created') {
      early.push(ev);
      continue;
    }
    state = applyInPlace(state, ev, goalId, trust);
  }
  if (!state) return { state, hlc, heldUntil };
  for (const ev of early)
    overruleWith(state, ev, {
      rule: 'before_created',
      reason: `it is stamped ${ev.hlc ?? ev.ts}, before the goal was created (${state.createdAt}): a line backdated or copied from elsewhere has no effect`,
    });
  for (const ev of held)
    overruleWith(state, ev, {
      rule: 'stamped_ahead',
      reason: `it is stamped ${ev.hlc}, ahead of this machine's clock by more than clocks drift: it has no effect unless that time comes`,
    });
  return { state, hlc, heldUntil };
}
