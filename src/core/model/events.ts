/**
 * The events: their envelope and the data of each type. The logs hold them (store/event-log.ts); the
 * state is derived from them one at a time (rules/apply-event.ts), in the order rules/merge-order.ts gives.
 */
import { z } from 'zod';
import {
  Actor,
  Budgets,
  CallKey,
  DecisionSig,
  Denial,
  Evidence,
  Gate,
  GuardedWork,
  Id,
  Line,
  Quota,
  Reward,
  Run,
  RunOutcome,
  Spend,
  Text,
  Timestamp,
  Todo,
  TokenUsage,
  WorkflowInstance,
} from './goal-state';
import { HLC_RULE, isHlc } from './hlc';
import { lazy } from './lazy';

/**
 * A decision names the last decision on the gate its person knew of (null: none), so that of two
 * made on different clones without knowing of each other, only the earlier counts. Absent in
 * decisions written before clones were merged.
 */
const DecisionBasis = lazy(() => Id.nullable().optional());

/**
 * Version 2 events carry a hybrid logical clock stamp (`hlc`) and live in per-writer logs;
 * version 1 events (no stamp) are those an older LoopX wrote to a goal's single `events.jsonl`.
 */
export const EVENT_VERSION = 2;

const data = {
  'goal.created': lazy(() =>
    z.object({
      title: Line(200),
      objective: Text(10000),
      quota: Quota,
      handoff: z.array(Line(500)).max(50),
    }),
  ),
  'goal.paused': lazy(() => z.object({ reason: Text(2000).optional() })),
  'goal.resumed': lazy(() => z.object({ reason: Text(2000).optional() })),
  'goal.closed': lazy(() => z.object({ reason: Text(2000).optional() })),
  'goal.cancelled': lazy(() => z.object({ reason: Text(2000).optional() })),
  'todo.added': lazy(() =>
    z.object({
      todo: Todo.omit({
        status: true,
        evidence: true,
        createdAt: true,
        updatedAt: true,
        claimedBy: true,
        claimedAt: true,
        addedBy: true,
        leaseUntil: true,
        doneAt: true,
        dueAt: true,
      }),
    }),
  ),
  /** `until`: the claim is a lease that lapses then unless renewed (`todo.renewed`). */
  'todo.claimed': lazy(() => z.object({ todoId: Id, by: Line(128), until: Timestamp.optional() })),
  'todo.renewed': lazy(() => z.object({ todoId: Id, by: Line(128), until: Timestamp })),
  /** A recurring todo came due again: open for the slot `due`. */
  'todo.reopened': lazy(() => z.object({ todoId: Id, due: Timestamp })),
  /** `by`: the claim released (absent in releases written before it was recorded). */
  'todo.released': lazy(() => z.object({ todoId: Id, reason: Text(2000), by: Line(128).optional() })),
  'todo.updated': lazy(() =>
    z.object({
      todoId: Id,
      title: Line(200).optional(),
      priority: Todo.shape.priority.optional(),
      note: Text(2000).optional(),
    }),
  ),
  'todo.completed': lazy(() => z.object({ todoId: Id, evidence: z.array(Id) })),
  'todo.cancelled': lazy(() => z.object({ todoId: Id, reason: Text(2000) })),
  'gate.requested': lazy(() =>
    z.object({
      gate: Gate.pick({
        id: true,
        title: true,
        reason: true,
        reasonByLoopx: true,
        guards: true,
        expiresAt: true,
      }),
    }),
  ),
  'gate.approved': lazy(() =>
    z.object({
      gateId: Id,
      note: Text(2000).optional(),
      /** The work the person approved, in full; absent in approvals written before it was recorded. */
      guarded: z.array(GuardedWork).max(500).optional(),
      basis: DecisionBasis,
    }),
  ),
  'gate.rejected': lazy(() =>
    z.object({
      gateId: Id,
      note: Text(2000).optional(),
      cancelled: z.array(Id),
      basis: DecisionBasis,
    }),
  ),
  'gate.expired': lazy(() => z.object({ gateId: Id })),
  'evidence.added': lazy(() => z.object({ evidence: Evidence.omit({ at: true, by: true }) })),
  'run.started': lazy(() => z.object({ run: Run.pick({ id: true, agent: true, contract: true }) })),
  /**
   * `usage`: where the spend came from a host's transcript (the Stop hook): its tokens by kind, and
   * the messages counted (usageKey digests), so that no message is counted twice.
   */
  'run.spend': lazy(() =>
    z.object({
      runId: Id,
      spend: Spend.partial(),
      usage: TokenUsage.extend({
        messages: z.array(z.string().regex(/^[0-9a-f]{16}$/)).max(10000),
        models: z.array(Line(100)).max(50),
      }).optional(),
    }),
  ),
  'run.ended': lazy(() =>
    z.object({
      runId: Id,
      outcome: RunOutcome,
      summary: Text(4000).optional(),
      spend: Spend.partial().optional(),
    }),
  ),
  /** A hook refused an agent's tool call (or, `enforced: false`, would have: observe mode). */
  'agent.denied': lazy(() => Denial.omit({ eventId: true, at: true })),
  'reward.added': lazy(() => z.object({ reward: Reward.omit({ by: true, at: true }) })),
  'quota.set': lazy(() => z.object({ quota: Quota })),
  'quota.granted': lazy(() => z.object({ budgets: Budgets, note: Text(2000).optional() })),
  /** A workflow capability added its todos and gates (the events before it, in the same commit). */
  'workflow.started': lazy(() => WorkflowInstance.omit({ startedBy: true, startedAt: true })),
  /** A torn tail found under the lock was moved aside; recorded so the history says so. */
  'log.quarantined': lazy(() =>
    z.object({ file: z.string().max(200), bytes: z.number().int(), sha256: z.string() }),
  ),
  /** A goal's single `events.jsonl` (an older LoopX's) became the head of this writer's log. */
  'log.migrated': lazy(() =>
    z.object({
      from: z.literal('events.jsonl'),
      events: z.number().int().nonnegative(),
      lastHash: z
        .string()
        .regex(/^[0-9a-f]{64}$/)
        .nullable(),
    }),
  ),
} as const;

export type EventType = keyof typeof data;
export const EVENT_TYPES = Object.keys(data) as EventType[];
export type EventData<T extends EventType> = z.infer<(typeof data)[T]>;

const envelope = lazy(() => ({
  v: z.union([z.literal(1), z.literal(EVENT_VERSION)]),
  /** Hybrid logical clock stamp (model/hlc.ts); on every version 2 event. */
  hlc: z
    .string()
    .refine(isHlc, { message: `not a clock stamp (${HLC_RULE})` })
    .optional(),
  seq: z.number().int().positive(),
  id: Id,
  ts: Timestamp,
  writer: Id,
  actor: Actor,
  /** sha256 (hex) of the previous line as written; null on the first event. */
  prev: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .nullable(),
  /** A person's signature, on decision events (see `trust/signed-decisions.ts`). */
  sig: DecisionSig.optional(),
  /**
   * The call that wrote it, when its caller named one (an idempotency key): a retry of that call
   * finds it and appends nothing, and replay applies one call's events once (rules/merge-order.ts).
   */
  call: CallKey.optional(),
}));

/** One type's event: envelope, type and data. Built once, when a line of that type is first read. */
const eventOfType = new Map<EventType, z.ZodObject>();
function eventSchema(type: EventType): z.ZodObject {
  let schema = eventOfType.get(type);
  if (!schema) {
    schema = z.object({ ...envelope, type: z.literal(type), data: data[type] });
    eventOfType.set(type, schema);
  }
  return schema;
}

export const LoopxEvent = lazy(() =>
  z.discriminatedUnion('type', EVENT_TYPES.map(eventSchema) as unknown as [z.ZodObject, ...z.ZodObject[]]),
);

/**
 * `LoopxEvent.safeParse`, building only the schema of the line's own type: reading a log's tail
 * must not build all 40 types (the union's issues for a known type are that type's own). A line
 * of no known type goes to the union, which says so.
 */
export function safeParseEvent(raw: unknown): ReturnType<typeof LoopxEvent.safeParse> {
  const type = (raw as { type?: unknown } | null)?.type;
  if (typeof type === 'string' && Object.hasOwn(data, type))
    return eventSchema(type as EventType).safeParse(raw) as ReturnType<typeof LoopxEvent.safeParse>;
  return LoopxEvent.safeParse(raw);
}

/** What a capability produces: the store adds the envelope. */
export type EventDraft = { [T in EventType]: { type: T; data: EventData<T> } }[EventType];
export type LoopxEvent = EventDraft & {
  v: 1 | 2;
  hlc?: string;
  seq: number;
  id: string;
  ts: string;
  writer: string;
  actor: z.infer<typeof Actor>;
  prev: string | null;
  sig?: z.infer<typeof DecisionSig>;
  call?: string;
};

export function draft<T extends EventType>(type: T, d: EventData<T>): EventDraft {
  return { type, data: d } as EventDraft;
}
