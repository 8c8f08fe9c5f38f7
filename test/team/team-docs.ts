/**
 * The CLI documents the team test reads, as zod schemas: only the fields it uses are checked, the
 * rest is kept as it is (documents are also compared whole).
 */
import { z } from 'zod';
import { OverruledOut } from '../../src/core/views/status-doc';

export const ShouldRun = z.looseObject({
  schema: z.literal('loopx.should-run/1'),
  decision: z.enum(['run', 'wait', 'stop', 'done']),
  reasons: z.array(z.string()),
  run_id: z.string().nullable(),
  interaction_contract: z.looseObject({
    id: z.string().nullable(),
    cli_channel: z.looseObject({ next_cli_actions: z.array(z.string()) }),
  }),
});

/** As the core documents it. */
export const Overruled = OverruledOut;
export const Use = z.looseObject({ used: z.number(), limit: z.number(), left: z.number() });
export const GoalStatus = z.looseObject({
  schema: z.literal('loopx.goal-status/1'),
  id: z.string(),
  status: z.string(),
  counts: z.looseObject({ todos: z.record(z.string(), z.number()) }),
  todos: z.array(
    z.looseObject({
      id: z.string(),
      status: z.string(),
      claimed_by: z.string().optional(),
      evidence: z.array(z.string()),
    }),
  ),
  gates: z.array(
    z.looseObject({
      id: z.string(),
      status: z.string(),
      decided_by: z.string().optional(),
      signed: z.boolean(),
    }),
  ),
  quota: z.looseObject({
    budgets: z.record(z.string(), Use),
    spend: z.looseObject({ turns: z.number(), tokens: z.number() }),
    window: z.string(),
  }),
  overruled: z.array(Overruled),
  state_hash: z.string().regex(/^[0-9a-f]{64}$/),
});
export type GoalStatus = z.infer<typeof GoalStatus>;

export const Verify = z.looseObject({
  schema: z.literal('loopx.verify/2'),
  ok: z.boolean(),
  goals: z.array(
    z.looseObject({
      goal_id: z.string(),
      ok: z.boolean(),
      events: z.number(),
      state_hash: z.string(),
      writers: z.array(
        z.looseObject({ writer: z.string(), file: z.string(), ok: z.boolean(), events: z.number() }),
      ),
    }),
  ),
});
export const Log = z.array(
  z.looseObject({
    id: z.string(),
    type: z.string(),
    hlc: z.string(),
    log: z.string(),
    actor: z.looseObject({ kind: z.string(), id: z.string() }),
    data: z.record(z.string(), z.unknown()),
  }),
);
export type LogEvent = z.infer<typeof Log>[number];
export const AllStatus = z.looseObject({
  schema: z.literal('loopx.status/1'),
  generated_at: z.string(),
  workspace: z.string(),
});
