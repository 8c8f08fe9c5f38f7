/**
 * What a lane does next: pure, its state, its contract's answer and the time in, one step out. The
 * driver (drive/driver.ts) does the step; this says which, and why in a person's words.
 */
import type { GoalState } from '../model';
import { nextDue } from '../rules';
import type { ShouldRunOutput } from '../views';
import type { LaneState } from './lanes';

/** Turns in a row that may fail before the lane stops and asks a person. */
export const MAX_FAILURES = 5;
/** The first backoff after a failed turn; it doubles with each failure after it, up to BACKOFF_MAX_S. */
const BACKOFF_FIRST_S = 10;
const BACKOFF_MAX_S = 600;

export type LaneStep =
  /** Start one turn of the runtime under the contract just issued. */
  | { kind: 'turn' }
  /**
   * Sleep until `until` (undefined: until something changes), woken sooner by a change that can
   * alter the answer. `needsPerson`: only a person can move it on.
   */
  | {
      kind: 'sleep';
      status: 'asleep' | 'waiting_person' | 'stopped';
      until?: Date;
      why: string;
      needsPerson: boolean;
    };

/** Seconds to wait after `failures` failed turns in a row. */
export function backoffSeconds(failures: number): number {
  if (failures <= 0) return 0;
  return Math.min(BACKOFF_FIRST_S * 2 ** (failures - 1), BACKOFF_MAX_S);
}

/**
 * Before asking for a contract: a lane that failed too often stays stopped until a person resumes
 * it; one backing off sleeps first. Undefined: ask.
 */
export function beforeAsking(state: LaneState, now: Date): LaneStep | undefined {
  if (state.failures >= MAX_FAILURES)
    return {
      kind: 'sleep',
      status: 'stopped',
      why: `${state.failures} turns in a row failed (the last: ${state.last?.summary ?? state.last?.outcome ?? 'unknown'}): look at its log, then \`loopx lane resume\``,
      needsPerson: true,
    };
  const last = state.last ? Date.parse(state.last.endedAt) : 0;
  const until = last + backoffSeconds(state.failures) * 1000;
  if (state.failures > 0 && until > now.getTime())
    return {
      kind: 'sleep',
      status: 'asleep',
      until: new Date(until),
      why: `backing off after ${state.failures} failed turn${state.failures > 1 ? 's' : ''}`,
      needsPerson: false,
    };
  return undefined;
}

/** The step the contract's answer calls for. */
export function afterAsking(answer: ShouldRunOutput, now: Date): LaneStep {
  const why = answer.reasons.join('; ') || answer.decision;
  const person = answer.interaction_contract.user_channel;
  switch (answer.decision) {
    case 'run':
      return { kind: 'turn' };
    case 'wait': {
      // A wait on gates or a plan is a person's to end; the retry is only a safety net, as the
      // file watcher wakes the lane the moment the decision lands.
      const needsPerson = person.action_required;
      const seconds = person.gates.length ? undefined : answer.retry_after_seconds;
      return {
        kind: 'sleep',
        status: needsPerson ? 'waiting_person' : 'asleep',
        until: seconds === undefined ? undefined : new Date(now.getTime() + seconds * 1000),
        why,
        needsPerson,
      };
    }
    case 'stop':
      // A completed goal has nothing left for a person to grant a budget for: the lane is done.
      // (the budget is checked before the todos: a spent one says `stop` on a completed goal).
      if (answer.status === 'completed')
        return {
          kind: 'sleep',
          status: 'stopped',
          why: 'every agent todo is done and no gate is pending',
          needsPerson: false,
        };
      // Paused, over budget, closed: a person resumes, grants or reopens; the lane wakes then.
      return { kind: 'sleep', status: 'waiting_person', why, needsPerson: true };
    case 'done':
      return { kind: 'sleep', status: 'stopped', why, needsPerson: false };
  }
}

/**
 * A sleep ends by the goal's next recurring slot at the latest: a wait with no timer of its own (a
 * gate waiting for a person) must not let a recurring todo's slots pass unnoticed. A stopped lane
 * stays stopped.
 */
export function byNextSlot(step: LaneStep, goal: GoalState, now: Date): LaneStep {
  if (step.kind !== 'sleep' || step.status === 'stopped') return step;
  const due = nextDue(goal, now)?.at;
  if (!due || (step.until && step.until <= due)) return step;
  return { ...step, until: due };
}

export type TurnEnd =
  | { kind: 'exited'; exitCode: number; outcome: string }
  | { kind: 'timed_out' }
  | { kind: 'failed_to_start'; message: string };

/** Whether a turn counts as failed for backoff: the runtime failed, ran out of time, or its commands all failed. */
export function turnFailed(end: TurnEnd): boolean {
  if (end.kind !== 'exited') return true;
  return end.exitCode !== 0 || end.outcome === 'failed';
}
