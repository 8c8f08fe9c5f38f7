/**
 * What a goal's state keeps of things that had no effect: a person's decisions that were ignored
 * (unsigned, an unknown key), events overruled when clones' logs merged, and tool calls a hook
 * refused. Part of the goal model (model/goal-state.ts re-exports it).
 */
import { z } from 'zod';
import { Actor, Id, Line, Text, Timestamp } from './fields';
import { lazy } from './lazy';

export const IgnoredDecision = lazy(() =>
  z.object({
    eventId: Id,
    type: z.string().max(40),
    ts: Timestamp,
    actor: Actor,
    reason: Text(500),
  }),
);
export type IgnoredDecision = z.infer<typeof IgnoredDecision>;

/** Why an event written on one clone had no effect once merged with another's (rules/merge-rules.ts). */
export const OverruleRule = lazy(() =>
  z.enum([
    'claimed_first',
    'decided_first',
    'finished_first',
    'goal_finished',
    'run_ended_first',
    'created_first',
    'duplicate_id',
    'not_claimed',
    'unknown_ref',
    'before_created',
    'stamped_ahead',
  ]),
);
export type OverruleRule = z.infer<typeof OverruleRule>;
export const Overruled = lazy(() =>
  z.object({
    eventId: Id,
    type: z.string().max(40),
    ts: Timestamp,
    writer: Id,
    actor: Actor,
    rule: OverruleRule,
    reason: Text(500),
    todoId: Id.optional(),
    gateId: Id.optional(),
    runId: Id.optional(),
  }),
);
export type Overruled = z.infer<typeof Overruled>;

/**
 * Why a hook refused (or, in observe mode, would have refused) an agent's tool call. The first
 * four are the contract's rule, which observe mode only records; the others protect LoopX itself
 * and a person's decisions, in every mode.
 */
export const DENY_CODES = [
  'no_contract',
  'not_listed',
  'contract_refused',
  'exec_form',
  'human_only',
  'loopx_state',
  'config_folder',
  'hook_file',
  'unreadable_input',
] as const;
export const DenyCode = lazy(() => z.enum(DENY_CODES));
export type DenyCode = z.infer<typeof DenyCode>;
export const CONTRACT_DENY_CODES: readonly DenyCode[] = [
  'no_contract',
  'not_listed',
  'contract_refused',
  'exec_form',
];

/** A tool call a hook refused: what the agent tried, and why. */
export const Denial = lazy(() =>
  z.object({
    eventId: Id,
    at: Timestamp,
    agent: Line(128),
    runId: Id.optional(),
    tool: Line(100),
    command: Text(2000).optional(),
    path: Line(1000).optional(),
    code: DenyCode,
    reason: Text(1000),
    /** False in observe mode: recorded, not blocked. */
    enforced: z.boolean(),
  }),
);
export type Denial = z.infer<typeof Denial>;
