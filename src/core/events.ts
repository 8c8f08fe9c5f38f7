/**
 * The event log is the truth; everything else is derived by `applyInPlace`, one event at a time
 * (`replay` for a whole log). Replay depends on nothing but the events (their own timestamps
 * included), so logs written on different machines replay the same everywhere.
 */
import { z } from 'zod';
import {
  Actor,
  DecisionSig,
  Budgets,
  Evidence,
  Gate,
  GoalState,
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
  BUDGET_NAMES,
} from './model';
import type { GoalState as GoalStateT } from './model';
import { NO_TRUST, isDecision } from './trust/decisions';
import { addCapped, grantedAfter, runsInWindow, spendOf } from './quota';
import { approvalCovers, guardedWork } from './gate-rules';
import type { Trust } from './trust/decisions';

export const EVENT_VERSION = 1;

const data = {
  'goal.created': z.object({
    title: Line(200),
    objective: Text(10000),
    quota: Quota,
    handoff: z.array(Line(500)).max(50),
  }),
  'goal.paused': z.object({ reason: Text(2000).optional() }),
  'goal.resumed': z.object({ reason: Text(2000).optional() }),
  'goal.closed': z.object({ reason: Text(2000).optional() }),
  'goal.cancelled': z.object({ reason: Text(2000).optional() }),
  'todo.added': z.object({
    todo: Todo.omit({
      status: true,
      evidence: true,
      createdAt: true,
      updatedAt: true,
      claimedBy: true,
      claimedAt: true,
      addedBy: true,
    }),
  }),
  'todo.claimed': z.object({ todoId: Id, by: Line(128) }),
  'todo.released': z.object({ todoId: Id, reason: Text(2000) }),
  'todo.updated': z.object({
    todoId: Id,
    title: Line(200).optional(),
    priority: Todo.shape.priority.optional(),
    note: Text(2000).optional(),
  }),
  'todo.completed': z.object({ todoId: Id, evidence: z.array(Id) }),
  'todo.cancelled': z.object({ todoId: Id, reason: Text(2000) }),
  'gate.requested': z.object({
    gate: Gate.pick({
      id: true,
      title: true,
      reason: true,
      reasonByLoopx: true,
      guards: true,
      expiresAt: true,
    }),
  }),
  'gate.approved': z.object({
    gateId: Id,
    note: Text(2000).optional(),
    /** The work the person approved, in full; absent in approvals written before it was recorded. */
    guarded: z.array(GuardedWork).max(500).optional(),
  }),
  'gate.rejected': z.object({ gateId: Id, note: Text(2000).optional(), cancelled: z.array(Id) }),
  'gate.expired': z.object({ gateId: Id }),
  'evidence.added': z.object({ evidence: Evidence.omit({ at: true, by: true }) }),
  'run.started': z.object({ run: Run.pick({ id: true, agent: true, contract: true }) }),
  'run.spend': z.object({ runId: Id, spend: Spend.partial() }),
  'run.ended': z.object({
    runId: Id,
    outcome: RunOutcome,
    summary: Text(4000).optional(),
    spend: Spend.partial().optional(),
  }),
  'reward.added': z.object({ reward: Reward.omit({ by: true, at: true }) }),
  'quota.set': z.object({ quota: Quota }),
  'quota.granted': z.object({ budgets: Budgets, note: Text(2000).optional() }),
  /** A torn tail found under the lock was moved aside; recorded so the history says so. */
  'log.quarantined': z.object({ file: z.string().max(200), bytes: z.number().int(), sha256: z.string() }),
} as const;

export type EventType = keyof typeof data;
export const EVENT_TYPES = Object.keys(data) as EventType[];
export type EventData<T extends EventType> = z.infer<(typeof data)[T]>;

const envelope = {
  v: z.literal(EVENT_VERSION),
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
  /** A person's signature, on decision events (see `trust/decisions.ts`). */
  sig: DecisionSig.optional(),
};

export const LoopxEvent = z.discriminatedUnion(
  'type',
  EVENT_TYPES.map((type) =>
    z.object({ ...envelope, type: z.literal(type), data: data[type] }),
  ) as unknown as [z.ZodObject, ...z.ZodObject[]],
);

/** What a capability produces: the store adds the envelope. */
export type EventDraft = { [T in EventType]: { type: T; data: EventData<T> } }[EventType];
export type LoopxEvent = EventDraft & {
  v: 1;
  seq: number;
  id: string;
  ts: string;
  writer: string;
  actor: z.infer<typeof Actor>;
  prev: string | null;
  sig?: z.infer<typeof DecisionSig>;
};

export function draft<T extends EventType>(type: T, d: EventData<T>): EventDraft {
  return { type, data: d } as EventDraft;
}

// ---------------------------------------------------------------------------------------------

function todoIn(goal: GoalStateT, id: string) {
  const t = goal.todos.find((x) => x.id === id);
  if (!t) throw new Error(`event refers to unknown todo ${id}`);
  return t;
}
function gateIn(goal: GoalStateT, id: string) {
  const g = goal.gates.find((x) => x.id === id);
  if (!g) throw new Error(`event refers to unknown gate ${id}`);
  return g;
}
function runIn(goal: GoalStateT, id: string) {
  const r = goal.runs.find((x) => x.id === id);
  if (!r) throw new Error(`event refers to unknown run ${id}`);
  return r;
}
/** Adds to a run's spend, saturating (quota.ts): a huge value in the log cannot make it Infinity. */
function addSpend(run: z.infer<typeof Run>, s: Partial<z.infer<typeof Spend>> | undefined) {
  if (!s) return;
  for (const k of BUDGET_NAMES) run.spend[k] = addCapped(run.spend[k], s[k] ?? 0);
}

/**
 * Whether a person's decision takes effect: signed by a pinned key, and not a copy of one that
 * already did. One that does not stays in the log and is listed in `ignored`, and the gate it
 * meant to decide stays decidable.
 */
function decisionCounts(g: GoalStateT, ev: LoopxEvent, goalId: string, trust: Trust): boolean {
  const why = g.decisionIds?.includes(ev.id)
    ? `it repeats decision ${ev.id}, which already took effect`
    : trust.rejects({ goalId, ...ev }, ev.sig);
  if (why) {
    (g.ignored ??= []).push({ eventId: ev.id, type: ev.type, ts: ev.ts, actor: ev.actor, reason: why });
    return false;
  }
  (g.decisionIds ??= []).push(ev.id);
  return true;
}

/**
 * Applies one event to a goal state and returns the new state. `g` is changed in place: replay
 * owns its working state, so it need not clone per event. An event that cannot apply is a broken
 * log, not a user error, so this throws a plain Error that the store turns into a `corrupt` report
 * naming the line.
 */
export function applyInPlace(
  g: GoalStateT | undefined,
  ev: LoopxEvent,
  goalId: string,
  trust: Trust = NO_TRUST,
): GoalStateT {
  if (ev.type === 'goal.created') {
    if (g) throw new Error('goal.created on a goal that already exists');
    return {
      id: goalId,
      title: ev.data.title,
      objective: ev.data.objective,
      status: 'active',
      quota: ev.data.quota,
      granted: {},
      handoff: ev.data.handoff,
      createdAt: ev.ts,
      updatedAt: ev.ts,
      todos: [],
      gates: [],
      evidence: [],
      runs: [],
      rewards: [],
    };
  }
  if (!g) throw new Error(`${ev.type} before goal.created`);
  if (isDecision(g, ev) && !decisionCounts(g, ev, goalId, trust)) return g;
  g.updatedAt = ev.ts;
  switch (ev.type) {
    case 'goal.paused':
      g.status = 'paused';
      break;
    case 'goal.resumed':
      g.status = 'active';
      break;
    case 'goal.closed':
      g.status = 'closed';
      break;
    case 'goal.cancelled':
      g.status = 'cancelled';
      break;
    case 'todo.added':
      if (g.todos.some((t) => t.id === ev.data.todo.id))
        throw new Error(`todo ${ev.data.todo.id} added twice`);
      g.todos.push({
        ...ev.data.todo,
        status: 'open',
        evidence: [],
        addedBy: ev.actor,
        createdAt: ev.ts,
        updatedAt: ev.ts,
      });
      break;
    case 'todo.claimed': {
      const t = todoIn(g, ev.data.todoId);
      t.status = 'claimed';
      t.claimedBy = ev.data.by;
      t.claimedAt = ev.ts;
      t.updatedAt = ev.ts;
      break;
    }
    case 'todo.released': {
      const t = todoIn(g, ev.data.todoId);
      t.status = 'open';
      delete t.claimedBy;
      delete t.claimedAt;
      t.updatedAt = ev.ts;
      break;
    }
    case 'todo.updated': {
      const t = todoIn(g, ev.data.todoId);
      if (ev.data.title !== undefined) t.title = ev.data.title;
      if (ev.data.priority !== undefined) t.priority = ev.data.priority;
      if (ev.data.note !== undefined) t.note = ev.data.note;
      t.updatedAt = ev.ts;
      break;
    }
    case 'todo.completed': {
      const t = todoIn(g, ev.data.todoId);
      t.status = 'done';
      for (const e of ev.data.evidence) if (!t.evidence.includes(e)) t.evidence.push(e);
      t.updatedAt = ev.ts;
      break;
    }
    case 'todo.cancelled': {
      const t = todoIn(g, ev.data.todoId);
      t.status = 'cancelled';
      t.note = ev.data.reason;
      t.updatedAt = ev.ts;
      break;
    }
    case 'gate.requested': {
      const existing = g.gates.find((x) => x.id === ev.data.gate.id);
      if (existing) {
        // A second request for the same gate (another todo needs it) adds what it guards.
        for (const id of ev.data.gate.guards) if (!existing.guards.includes(id)) existing.guards.push(id);
        // Asked again after it lapsed or was refused, or for work its approval does not cover:
        // a new decision is needed.
        const covered = (id: string) => approvalCovers(existing, todoIn(g, id));
        const uncovered = existing.status === 'approved' && !ev.data.gate.guards.every(covered);
        if (existing.status === 'expired' || existing.status === 'rejected' || uncovered) {
          existing.status = 'pending';
          existing.requestedAt = ev.ts;
          existing.requestedBy = ev.actor;
          existing.reason = ev.data.gate.reason;
          if (ev.data.gate.reasonByLoopx) existing.reasonByLoopx = true;
          else delete existing.reasonByLoopx;
          delete existing.decidedBy;
          delete existing.decidedAt;
          delete existing.signature;
          delete existing.approvedFor;
        }
      } else {
        g.gates.push({ ...ev.data.gate, status: 'pending', requestedBy: ev.actor, requestedAt: ev.ts });
      }
      break;
    }
    case 'gate.approved': {
      const gate = gateIn(g, ev.data.gateId);
      gate.status = 'approved';
      gate.decidedBy = ev.actor;
      gate.decidedAt = ev.ts;
      if (ev.data.note !== undefined) gate.note = ev.data.note;
      if (ev.sig) gate.signature = ev.sig;
      else delete gate.signature;
      // An approval from before the list was recorded covers the work the goal had then.
      gate.approvedFor = ev.data.guarded ?? g.todos.map(guardedWork);
      break;
    }
    case 'gate.rejected': {
      const gate = gateIn(g, ev.data.gateId);
      gate.status = 'rejected';
      gate.decidedBy = ev.actor;
      gate.decidedAt = ev.ts;
      if (ev.data.note !== undefined) gate.note = ev.data.note;
      for (const id of ev.data.cancelled) {
        const t = todoIn(g, id);
        t.status = 'cancelled';
        t.note = `cancelled: gate ${gate.id} was rejected${ev.data.note ? ` (${ev.data.note})` : ''}`.slice(
          0,
          2000,
        );
        t.updatedAt = ev.ts;
      }
      break;
    }
    case 'gate.expired': {
      const gate = gateIn(g, ev.data.gateId);
      gate.status = 'expired';
      gate.decidedAt = ev.ts;
      break;
    }
    case 'evidence.added': {
      g.evidence.push({ ...ev.data.evidence, at: ev.ts, by: ev.actor });
      if (ev.data.evidence.todoId) {
        const t = todoIn(g, ev.data.evidence.todoId);
        if (!t.evidence.includes(ev.data.evidence.id)) t.evidence.push(ev.data.evidence.id);
      }
      break;
    }
    case 'run.started':
      g.runs.push({
        ...ev.data.run,
        startedAt: ev.ts,
        spend: { turns: 1, tokens: 0, costUsd: 0, wallSeconds: 0 },
      });
      break;
    case 'run.spend':
      addSpend(runIn(g, ev.data.runId), ev.data.spend);
      break;
    case 'run.ended': {
      const r = runIn(g, ev.data.runId);
      r.endedAt = ev.ts;
      r.outcome = ev.data.outcome;
      if (ev.data.summary !== undefined) r.summary = ev.data.summary;
      addSpend(r, ev.data.spend);
      break;
    }
    case 'reward.added':
      g.rewards.push({ ...ev.data.reward, by: ev.actor, at: ev.ts });
      break;
    case 'quota.set':
      g.quota = ev.data.quota;
      break;
    case 'quota.granted': {
      // Room above what is spent when the person grants it (quota.ts, grantedAfter).
      const spent = spendOf(runsInWindow(g, new Date(ev.ts)));
      for (const k of BUDGET_NAMES) {
        const add = ev.data.budgets[k];
        if (add !== undefined) g.granted[k] = grantedAfter(g, k, add, spent[k]);
      }
      break;
    }
    case 'log.quarantined':
      break;
  }
  return g;
}

/** Replays a whole log. The goal id comes from the folder, not from the events. */
export function replay(
  goalId: string,
  events: readonly LoopxEvent[],
  trust: Trust = NO_TRUST,
): GoalStateT | undefined {
  let state: GoalStateT | undefined;
  for (const ev of events) state = applyInPlace(state, ev, goalId, trust);
  return state;
}

export { GoalState };
