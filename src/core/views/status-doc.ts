/**
 * The shapes of the status documents (zod schemas, so the dashboard and tests can check what
 * they receive): one goal's status and the list of all goals.
 */
import { z } from 'zod';
import type { Denial, Overruled, TokenUsage } from '../model';
import { DenyCode, GoalStatus, Id, lazy, OverruleRule } from '../model';

export const GOAL_STATUS_SCHEMA = 'loopx.goal-status/1';
export const STATUS_SCHEMA = 'loopx.status/1';

export const AttentionItem = lazy(() =>
  z.object({
    /** `denied`: an agent the hooks keep refusing, or one that tried a person's decision (views/denials-doc.ts). */
    kind: z.enum(['gate', 'user-todo', 'denied', 'quota', 'plan']),
    goal_id: Id,
    id: z.string(),
    title: z.string(),
    detail: z.string(),
  }),
);
export type AttentionItem = z.infer<typeof AttentionItem>;

const BudgetUse = lazy(() => z.object({ used: z.number(), limit: z.number(), left: z.number() }));
const SpendOut = lazy(() =>
  z.object({
    turns: z.number(),
    tokens: z.number(),
    costUsd: z.number(),
    wallSeconds: z.number(),
  }),
);

/** An overruled event as status documents show it (model/goal-state.ts Overruled, by rules/merge-rules.ts). */
export const OverruledOut = lazy(() =>
  z.object({
    event_id: Id,
    type: z.string(),
    at: z.string(),
    writer: z.string(),
    /** `kind:id` of who wrote it. */
    by: z.string(),
    rule: OverruleRule,
    reason: z.string(),
  }),
);
export type OverruledOut = z.infer<typeof OverruledOut>;

/** An overruled event of the state (model/goal-state.ts Overruled) as documents show it. */
export function overruledOut(o: Overruled): OverruledOut {
  return {
    event_id: o.eventId,
    type: o.type,
    at: o.ts,
    writer: o.writer,
    by: `${o.actor.kind}:${o.actor.id}`,
    rule: o.rule,
    reason: o.reason,
  };
}

/** A tool call a hook refused an agent (model/goal-state.ts Denial) as status documents show it. */
export const DeniedOut = lazy(() =>
  z.object({
    event_id: Id,
    at: z.string(),
    agent: z.string(),
    /** The agent's open run on this clone when it tried, if it had one. */
    run_id: z.string().optional(),
    tool: z.string(),
    command: z.string().optional(),
    path: z.string().optional(),
    code: DenyCode,
    reason: z.string(),
    /** False in observe mode: let through and recorded only ("would have been refused"). */
    enforced: z.boolean(),
  }),
);
export type DeniedOut = z.infer<typeof DeniedOut>;

/** A refusal of the state (model/goal-state.ts Denial) as documents show it. */
export function deniedOut(d: Denial): DeniedOut {
  return {
    event_id: d.eventId,
    at: d.at,
    agent: d.agent,
    ...(d.runId ? { run_id: d.runId } : {}),
    tool: d.tool,
    ...(d.command !== undefined ? { command: d.command } : {}),
    ...(d.path !== undefined ? { path: d.path } : {}),
    code: d.code,
    reason: d.reason,
    enforced: d.enforced,
  };
}

/** A run's tokens by kind (model/goal-state.ts TokenUsage), where a host's transcript gave them. */
export const UsageOut = lazy(() =>
  z.object({
    input: z.number(),
    output: z.number(),
    cache_write: z.number(),
    cache_read: z.number(),
  }),
);
export type UsageOut = z.infer<typeof UsageOut>;

export function usageOut(u: TokenUsage): UsageOut {
  return { input: u.input, output: u.output, cache_write: u.cacheWrite, cache_read: u.cacheRead };
}

/** A person's structured feedback on a run (model/goal-state.ts Reward), as status documents show it. */
export const HumanRewardOut = lazy(() =>
  z.object({
    score: z.number(),
    comment: z.string(),
    lesson: z.string().optional(),
    /** `kind:id` of the person. */
    by: z.string(),
    at: z.string(),
    signed: z.boolean(),
  }),
);
export type HumanRewardOut = z.infer<typeof HumanRewardOut>;

export const GoalStatusDoc = lazy(() =>
  z.object({
    schema: z.literal(GOAL_STATUS_SCHEMA),
    id: Id,
    title: z.string(),
    objective: z.string(),
    status: GoalStatus,
    created_at: z.string(),
    updated_at: z.string(),
    revision: z.number(),
    progress: z.object({ done: z.number(), total: z.number() }),
    counts: z.object({
      todos: z.record(z.string(), z.number()),
      gates: z.record(z.string(), z.number()),
    }),
    attention: z.array(AttentionItem),
    quota: z.object({
      budgets: z.record(z.string(), BudgetUse),
      spend: SpendOut,
      cooldown_seconds: z.number(),
      window: z.string(),
    }),
    /** Cumulative spend after each run, oldest first: the quota burn chart. */
    burn: z.array(
      z.object({
        at: z.string(),
        run_id: Id,
        turns: z.number(),
        tokens: z.number(),
        costUsd: z.number(),
        wallSeconds: z.number(),
      }),
    ),
    todos: z.array(
      z.object({
        id: Id,
        title: z.string(),
        owner: z.string(),
        priority: z.string(),
        status: z.string(),
        action: z.string().optional(),
        gate: z.string().optional(),
        claimed_by: z.string().optional(),
        /** When the claim lapses unless its holder renews it (a lane's lease). */
        lease_until: z.string().optional(),
        /** A recurring todo's schedule in words, and when it is next due (or was reopened for). */
        recurs: z.string().optional(),
        next_due: z.string().optional(),
        depends_on: z.array(z.string()),
        evidence: z.array(z.string()),
      }),
    ),
    gates: z.array(
      z.object({
        id: Id,
        title: z.string(),
        reason: z.string(),
        status: z.string(),
        guards: z.array(z.string()),
        requested_by: z.string(),
        /** The channel of the request: cli, vscode, mcp, lm-tool, hook... */
        requested_via: z.string(),
        requested_at: z.string(),
        decided_by: z.string().optional(),
        decided_at: z.string().optional(),
        note: z.string().optional(),
        signed: z.boolean(),
        /** The todos the approval covers, with the commands the person saw. */
        approved_for: z.array(z.string()).optional(),
      }),
    ),
    runs: z.array(
      z.object({
        id: Id,
        agent: z.string(),
        /** The clone (writer id) that opened it. */
        writer: z.string().optional(),
        started_at: z.string(),
        ended_at: z.string().optional(),
        outcome: z.string().optional(),
        contract_id: z.string().optional(),
        spend: SpendOut,
        /** `spend.tokens` by kind, where a host's transcript gave them (the Stop hook). */
        usage: UsageOut.optional(),
        evidence: z.array(
          z.object({
            id: Id,
            kind: z.string(),
            summary: z.string(),
            exit_code: z.number().optional(),
            todo_id: z.string().optional(),
            artifact: z.string().optional(),
          }),
        ),
        rewards: z.array(z.object({ id: Id, score: z.number(), comment: z.string() })),
        /** The latest of `rewards` a person gave, with its lesson; null when there is none. */
        human_reward: HumanRewardOut.nullable(),
      }),
    ),
    rewards: z.object({
      count: z.number(),
      mean: z.number().nullable(),
      trend: z.array(z.object({ at: z.string(), run_id: Id, score: z.number() })),
    }),
    /**
     * Events written on one clone that lost to an earlier one from another once merged (a todo
     * claimed first elsewhere, a gate already decided), with the rule that decided.
     */
    overruled: z.array(OverruledOut),
    /**
     * Tool calls the hooks refused an agent (or, not enforced, would have: observe mode): the
     * latest, newest first, at most DENIALS_SHOWN (views/denials-doc.ts)...
     */
    denied: z.array(DeniedOut),
    /** ...and how many there were in all. */
    denied_total: z.number(),
    /** sha256 of the state: clones holding the same events (and pinning the same keys) agree on it. */
    state_hash: z.string(),
    /** The names of the clones (writer ids) the goal's runs and overruled events came from. */
    writers: z.record(z.string(), z.string()),
    warnings: z.array(z.string()),
  }),
);
export type GoalStatusDoc = z.infer<typeof GoalStatusDoc>;

/** Which policy applies (trust/policy-signature.ts); `invalid` when policy.json does not parse. */
export const PolicyStatus = lazy(() =>
  z.object({
    state: z.enum(['signed', 'unsigned_changes', 'not_signed', 'invalid']),
    signed_by: z.string().optional(),
    signed_at: z.string().optional(),
    /** Fields of policy.json with no effect until a person signs them. */
    unsigned_changes: z.array(z.string()),
    /** What a person should know, when there is something: an unsigned edit, an ignored signature. */
    message: z.string().optional(),
    /** Why policy.json is `invalid`: the error as `--json` reports errors (model/errors.ts errorReport). */
    error: z
      .object({
        kind: z.string(),
        reason: z.string(),
        message: z.string(),
        file: z.string().optional(),
        line: z.number().optional(),
        field: z.string().optional(),
      })
      .optional(),
    /** What to do about it, when `invalid`. */
    fix: z.string().optional(),
  }),
);
export type PolicyStatus = z.infer<typeof PolicyStatus>;

export const StatusDoc = lazy(() =>
  z.object({
    schema: z.literal(STATUS_SCHEMA),
    generated_at: z.string(),
    workspace: z.string(),
    counts: z.record(z.string(), z.number()),
    attention: z.array(AttentionItem),
    goals: z.array(
      z.object({
        id: Id,
        title: z.string(),
        status: GoalStatus,
        created_at: z.string(),
        progress: z.object({ done: z.number(), total: z.number() }),
        pending_gates: z.number(),
        /** Tool calls the hooks refused an agent on this goal, in all. */
        denied: z.number(),
      }),
    ),
    errors: z.array(z.object({ goal_id: z.string(), message: z.string() })),
    policy: PolicyStatus,
  }),
);
export type StatusDoc = z.infer<typeof StatusDoc>;
