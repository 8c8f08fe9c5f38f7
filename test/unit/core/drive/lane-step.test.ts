/** What a lane of `loopx drive` does next (core/drive/lane-step.ts): failures, backoff, answers. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  afterAsking,
  backoffSeconds,
  beforeAsking,
  MAX_FAILURES,
  turnFailed,
} from '../../../../src/core/drive/lane-step';
import type { LaneState } from '../../../../src/core/drive/lanes';
import type { ShouldRunOutput } from '../../../../src/core/views';

const T0 = new Date('2026-03-01T12:00:00.000Z');
const at = (s: number) => new Date(T0.getTime() + s * 1000);

/** A lane whose last turn ended at T0, `failures` turns in a row failed. */
function lane(failures: number, summary = 'the runtime exited with code 1'): LaneState {
  return {
    v: 1,
    status: 'asleep',
    failures,
    last: { runId: 'run-1', outcome: 'failed', exitCode: 1, endedAt: T0.toISOString(), summary },
    updatedAt: T0.toISOString(),
  };
}

/** A should-run answer with what afterAsking reads. */
function answer(o: {
  decision: ShouldRunOutput['decision'];
  status?: string;
  reasons?: string[];
  retry?: number;
  gates?: number;
  actionRequired?: boolean;
}): ShouldRunOutput {
  return {
    decision: o.decision,
    status: o.status ?? 'active',
    reasons: o.reasons ?? [],
    ...(o.retry !== undefined ? { retry_after_seconds: o.retry } : {}),
    interaction_contract: {
      user_channel: {
        action_required: o.actionRequired ?? false,
        gates: Array.from({ length: o.gates ?? 0 }, (_, i) => ({ id: `g${i}` })),
        todos: [],
      },
    },
  } as unknown as ShouldRunOutput;
}

describe('lane steps: failed turns', () => {
  it('MAX_FAILURES is 5, and the backoff doubles from 10 s up to 600 s', () => {
    assert.equal(MAX_FAILURES, 5);
    assert.deepEqual(
      [0, 1, 2, 3, 4, 5, 6, 7, 8, 20].map(backoffSeconds),
      [0, 10, 20, 40, 80, 160, 320, 600, 600, 600],
    );
  });

  it('a lane with no failure asks at once', () => {
    assert.equal(beforeAsking({ ...lane(0), last: undefined }, T0), undefined);
    assert.equal(beforeAsking(lane(0), T0), undefined);
  });

  it('backs off after a failure until the last turn ended + the backoff, then asks', () => {
    assert.deepEqual(beforeAsking(lane(1), at(9.999)), {
      kind: 'sleep',
      status: 'asleep',
      until: at(10),
      why: 'backing off after 1 failed turn',
      needsPerson: false,
    });
    assert.equal(beforeAsking(lane(1), at(10)), undefined);
    assert.deepEqual(beforeAsking(lane(2), at(10)), {
      kind: 'sleep',
      status: 'asleep',
      until: at(20),
      why: 'backing off after 2 failed turns',
      needsPerson: false,
    });
    assert.equal(beforeAsking(lane(2), at(20)), undefined);
  });

  it('4 failures still back off (80 s) and then ask again: the lane is not stopped', () => {
    const step = beforeAsking(lane(4), at(1));
    assert.deepEqual(step, {
      kind: 'sleep',
      status: 'asleep',
      until: at(80),
      why: 'backing off after 4 failed turns',
      needsPerson: false,
    });
    assert.equal(beforeAsking(lane(4), at(80)), undefined);
  });

  it('5 failures stop the lane for a person, with no timer, however long ago the last one was', () => {
    for (const now of [at(1), at(160), at(86_400)]) {
      const step = beforeAsking(lane(5, 'the runtime exited with code 3'), now);
      assert.deepEqual(step, {
        kind: 'sleep',
        status: 'stopped',
        why: '5 turns in a row failed (the last: the runtime exited with code 3): look at its log, then `loopx lane resume`',
        needsPerson: true,
      });
    }
    // More than MAX_FAILURES (a hand-edited state): stopped all the same.
    assert.equal((beforeAsking(lane(7), at(1)) as { status?: string } | undefined)?.status, 'stopped');
    // What `loopx lane resume` leaves: no failure, so it asks at once.
    assert.equal(beforeAsking({ ...lane(5), failures: 0 }, at(1)), undefined);
  });

  it('a turn fails when the runtime failed, timed out, could not start, or its commands all failed', () => {
    assert.equal(turnFailed({ kind: 'exited', exitCode: 0, outcome: 'succeeded' }), false);
    assert.equal(turnFailed({ kind: 'exited', exitCode: 0, outcome: 'partial' }), false);
    assert.equal(turnFailed({ kind: 'exited', exitCode: 0, outcome: 'failed' }), true);
    assert.equal(turnFailed({ kind: 'exited', exitCode: 1, outcome: 'succeeded' }), true);
    assert.equal(turnFailed({ kind: 'timed_out' }), true);
    assert.equal(turnFailed({ kind: 'failed_to_start', message: 'ENOENT' }), true);
  });
});

describe('lane steps: the contract answer', () => {
  it('run starts a turn; done stops the lane without a person', () => {
    assert.deepEqual(afterAsking(answer({ decision: 'run' }), T0), { kind: 'turn' });
    assert.deepEqual(
      afterAsking(
        answer({ decision: 'done', status: 'completed', reasons: ['every agent todo is done'] }),
        T0,
      ),
      { kind: 'sleep', status: 'stopped', why: 'every agent todo is done', needsPerson: false },
    );
  });

  it('a wait at a gate waits for a person with no timer; a cooldown sleeps until its retry', () => {
    assert.deepEqual(
      afterAsking(
        answer({ decision: 'wait', reasons: ['gate prod waits'], gates: 1, actionRequired: true, retry: 30 }),
        T0,
      ),
      {
        kind: 'sleep',
        status: 'waiting_person',
        until: undefined,
        why: 'gate prod waits',
        needsPerson: true,
      },
    );
    assert.deepEqual(afterAsking(answer({ decision: 'wait', reasons: ['cooldown'], retry: 30 }), T0), {
      kind: 'sleep',
      status: 'asleep',
      until: at(30),
      why: 'cooldown',
      needsPerson: false,
    });
  });

  it('a spent budget waits for a person, unless the goal is completed: then the lane is done', () => {
    const spent = ['the turns budget is used up (4 of 4): a person can grant more with `loopx quota grant`'];
    assert.deepEqual(afterAsking(answer({ decision: 'stop', reasons: spent }), T0), {
      kind: 'sleep',
      status: 'waiting_person',
      why: spent[0],
      needsPerson: true,
    });
    assert.deepEqual(afterAsking(answer({ decision: 'stop', status: 'completed', reasons: spent }), T0), {
      kind: 'sleep',
      status: 'stopped',
      why: 'every agent todo is done and no gate is pending',
      needsPerson: false,
    });
    assert.deepEqual(afterAsking(answer({ decision: 'stop', status: 'paused', reasons: ['paused'] }), T0), {
      kind: 'sleep',
      status: 'waiting_person',
      why: 'paused',
      needsPerson: true,
    });
  });
});
