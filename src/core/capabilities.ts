/**
 * Every state change is one capability: a declaration (what it touches, which gates it needs,
 * what quota it consumes, who may call it, its input schema) and a `plan` that looks at the
 * current state and returns the events to append, or throws to refuse. The CLI, LM tools, MCP
 * tools and extension commands all go through `invoke`.
 */
import { z } from 'zod';
import { refused, notFound, usageError, quote } from './errors';
import { goalIdFromTitle, newId } from './ids';
import { describeIssues } from './jsonfile';
import {
  Budgets,
  Id,
  Line,
  Text,
  Priority,
  Owner,
  Quota,
  RunOutcome,
  EvidenceKind,
  Artifact,
  ApprovalSignature,
  Contract,
  HUMAN_CHANNELS,
  effectiveStatus,
  BUDGET_NAMES,
} from './model';
import type { Actor, GoalState, GoalStatus, Policy, Todo, Gate } from './model';
import { draft } from './events';
import type { EventDraft } from './events';
import { matchesGlob } from './glob';
import { createHmac } from 'node:crypto';
import { signatureChecker } from './approvals';
import type { Store, CommitResult } from './store';

export interface CapabilityContext {
  actor: Actor;
  now: Date;
  policy: Policy;
  /** HMAC over a canonical payload with this workspace's contract key. */
  sign: (payload: string) => string;
  /** Verifies approval signatures (used when the policy requires signed approvals). */
  checkSignature: SignatureCheck;
}

export interface CapabilityDeclaration {
  id: string;
  summary: string;
  /** Parts of the goal state it changes. */
  touches: string[];
  /** Gates it needs, in words (a gate id is data, so this names the rule). */
  gates: string;
  /** What quota it consumes. */
  quota: string;
  /** Who may call it. Human-only capabilities also require a human channel. */
  actors: Actor['kind'][];
  humanOnly: boolean;
  /** JSON schema of the input, generated from the zod schema. */
  input: unknown;
}

interface Capability<S extends z.ZodType = z.ZodType> extends Omit<
  CapabilityDeclaration,
  'humanOnly' | 'input'
> {
  humanOnly?: boolean;
  input: S;
  /** 'create' makes a new goal; the others need an existing one. */
  goal?: 'create' | 'existing';
  /** Fills generated ids so the caller learns them. */
  prepare?: (input: z.infer<S>) => z.infer<S>;
  plan: (state: GoalState, input: z.infer<S>, ctx: CapabilityContext) => EventDraft[];
  /** Allowed on closed or cancelled goals (human feedback after the fact). */
  onFinishedGoal?: boolean;
}

const goalId = Id;
const reason = Text(2000).optional();

// -------------------------------------------------------------------------------------------
// Goal lifecycle: a state machine with its transitions written down.

export type GoalTransition = 'pause' | 'resume' | 'close' | 'cancel';
export const GOAL_TRANSITIONS: Record<GoalStatus, Partial<Record<GoalTransition, GoalStatus>>> = {
  active: { pause: 'paused', close: 'closed', cancel: 'cancelled' },
  paused: { resume: 'active', close: 'closed', cancel: 'cancelled' },
  completed: { close: 'closed', cancel: 'cancelled' },
  closed: {},
  cancelled: {},
};

function transition(state: GoalState, t: GoalTransition): GoalStatus {
  const from = effectiveStatus(state);
  const to = GOAL_TRANSITIONS[from][t];
  if (!to) {
    const allowed = Object.keys(GOAL_TRANSITIONS[from]);
    throw refused(
      `cannot ${t} goal ${state.id}: it is ${from}, and ${/^[aeiou]/.test(from) ? 'an' : 'a'} ${from} goal can ` +
        (allowed.length
          ? `only ${allowed.join(' or ')}`
          : 'not change any more (closed and cancelled are final)'),
      { goalId: state.id, from, transition: t },
    );
  }
  return to;
}

// -------------------------------------------------------------------------------------------
// Lookups that refuse clearly.

export function findTodo(state: GoalState, todoId: string): Todo {
  const t = state.todos.find((x) => x.id === todoId);
  if (!t) throw notFound(`goal ${state.id} has no todo ${quote(todoId)}`, { goalId: state.id, todoId });
  return t;
}
export function findGate(state: GoalState, gateId: string): Gate {
  const g = state.gates.find((x) => x.id === gateId);
  if (!g) throw notFound(`goal ${state.id} has no gate ${quote(gateId)}`, { goalId: state.id, gateId });
  return g;
}
function findRun(state: GoalState, runId: string) {
  const r = state.runs.find((x) => x.id === runId);
  if (!r) throw notFound(`goal ${state.id} has no run ${quote(runId)}`, { goalId: state.id, runId });
  return r;
}
function openRun(state: GoalState, runId: string) {
  const r = findRun(state, runId);
  if (r.endedAt)
    throw refused(`run ${runId} of goal ${state.id} already ended (${r.outcome}) at ${r.endedAt}`, { runId });
  return r;
}

/** The policy rule that denies a command, if any. */
export function deniedBy(policy: Policy, command: string) {
  return policy.deniedActions?.find((r) => matchesGlob(r.pattern, command));
}
/** The gate the policy requires for a command, if any. */
export function policyGateFor(policy: Policy, command: string) {
  return policy.gatedActions?.find((r) => matchesGlob(r.pattern, command));
}

/**
 * The gates a todo needs: its own, any gate requested to guard it, and the one the policy
 * requires for its action.
 */
export function gatesFor(
  todo: Todo,
  policy: Policy,
  gates: readonly Gate[] = [],
): { id: string; pattern?: string }[] {
  const out: { id: string; pattern?: string }[] = [];
  if (todo.gate) out.push({ id: todo.gate });
  for (const g of gates)
    if (g.guards.includes(todo.id) && !out.some((x) => x.id === g.id)) out.push({ id: g.id });
  if (todo.action) {
    const rule = policyGateFor(policy, todo.action);
    if (rule && !out.some((x) => x.id === rule.gate)) out.push({ id: rule.gate, pattern: rule.pattern });
  }
  return out;
}

/** Checks an approval's signature (see approvals.ts). */
export type SignatureCheck = (gate: Gate) => boolean;

/**
 * A gate counts as approved only if approved, and, when the policy requires signed approvals,
 * carrying a signature that `checkSignature` verifies (no checker: nothing verifies).
 */
export function gateApproved(
  gate: Gate | undefined,
  policy: Policy,
  checkSignature?: SignatureCheck,
): boolean {
  if (!gate || gate.status !== 'approved') return false;
  if (!policy.requireSignedApprovals) return true;
  return gate.signature !== undefined && !!checkSignature?.(gate);
}

/** The review gate a command proposed by an agent needs (see `reviewAgentActions`), if any. */
function reviewGateFor(
  ctx: CapabilityContext,
  todoId: string,
  action: string | undefined,
): string | undefined {
  if (!action || ctx.actor.kind !== 'agent') return undefined;
  const mode = ctx.policy.reviewAgentActions ?? 'tools';
  const fromTool =
    ctx.actor.channel === 'lm-tool' || ctx.actor.channel === 'mcp' || ctx.actor.channel === 'hook';
  if (mode === 'none' || (mode === 'tools' && !fromTool)) return undefined;
  return `review-${todoId}`.slice(0, 64);
}

// -------------------------------------------------------------------------------------------
// The capabilities.

const AllActors: Actor['kind'][] = ['user', 'agent', 'system'];
const Humans: Actor['kind'][] = ['user'];

const registry = new Map<string, Capability>();
/** Registers a capability. Modules that add capabilities (contract, exec) call it at load. */
export function define<S extends z.ZodType>(c: Capability<S>) {
  if (registry.has(c.id)) throw new Error(`capability ${c.id} defined twice`);
  registry.set(c.id, c as unknown as Capability);
}

define({
  id: 'goal.create',
  summary: 'Create a durable goal with an objective and a quota.',
  touches: ['goal'],
  gates: 'none',
  quota: 'none',
  actors: AllActors,
  goal: 'create',
  input: z.object({
    goalId: goalId.optional(),
    title: Line(200),
    objective: Text(10000).default(''),
    quota: Quota.optional(),
    handoff: z.array(Line(500)).max(50).default([]),
  }),
  prepare: (i) => ({ ...i, goalId: i.goalId ?? goalIdFromTitle(i.title) }),
  plan: (_s, i, ctx) => [
    draft('goal.created', {
      title: i.title,
      objective: i.objective,
      quota: i.quota ??
        ctx.policy.defaultQuota ?? { budgets: { turns: 200 }, window: { kind: 'life' }, cooldownSeconds: 0 },
      handoff: i.handoff,
    }),
  ],
});

for (const t of ['pause', 'resume', 'close', 'cancel'] as const) {
  const type = (
    { pause: 'goal.paused', resume: 'goal.resumed', close: 'goal.closed', cancel: 'goal.cancelled' } as const
  )[t];
  define({
    id: `goal.${t}`,
    summary: `${t[0]!.toUpperCase()}${t.slice(1)} the goal (state machine: ${Object.entries(GOAL_TRANSITIONS)
      .filter(([, v]) => v[t])
      .map(([k]) => k)
      .join('/')} -> ${Object.values(GOAL_TRANSITIONS).find((v) => v[t])![t]}).`,
    touches: ['goal.status'],
    gates: 'none',
    quota: 'none',
    actors: AllActors,
    input: z.object({ goalId, reason }),
    plan: (s, i) => {
      transition(s, t);
      return [draft(type, { reason: i.reason })];
    },
  });
}

define({
  id: 'todo.add',
  summary: 'Add a todo; a gate it names that does not exist yet is requested at once.',
  touches: ['todos', 'gates'],
  gates: 'requests the todo gate, and the policy gate of its action, when not approved',
  quota: 'none',
  actors: AllActors,
  input: z.object({
    goalId,
    todoId: Id.optional(),
    title: Line(200),
    owner: Owner.default('agent'),
    priority: Priority.default('P2'),
    action: Line(2000).optional(),
    gate: Id.optional(),
    dependsOn: z.array(Id).max(50).default([]),
  }),
  prepare: (i) => ({ ...i, todoId: i.todoId ?? newId('t', 6) }),
  plan: (s, i, ctx) => {
    const todoId = i.todoId!;
    if (s.todos.some((t) => t.id === todoId))
      throw refused(`goal ${s.id} already has a todo ${todoId}`, { todoId });
    for (const d of i.dependsOn) findTodo(s, d);
    let gate = i.gate;
    let policyGate: string | undefined;
    if (i.action) {
      const denied = deniedBy(ctx.policy, i.action);
      if (denied) {
        throw refused(
          `the workspace policy denies actions matching ${quote(denied.pattern)}${denied.reason ? ` (${denied.reason})` : ''}: ${quote(i.action)} cannot be a todo action`,
          { pattern: denied.pattern },
        );
      }
      policyGate = policyGateFor(ctx.policy, i.action)?.gate;
      gate ??= policyGate;
    }
    const events = [
      draft('todo.added', {
        todo: {
          id: todoId,
          title: i.title,
          owner: i.owner,
          priority: i.priority,
          action: i.action,
          gate,
          dependsOn: i.dependsOn,
        },
      }),
    ];
    const review = reviewGateFor(ctx, todoId, i.action);
    if (review) {
      events.push(
        draft('gate.requested', {
          gate: {
            id: review,
            title: `Review the command ${todoId} proposes`,
            reason:
              `an agent (${ctx.actor.id} via ${ctx.actor.channel}) proposed the command: ${i.action}`.slice(
                0,
                2000,
              ),
            guards: [todoId],
          },
        }),
      );
    }
    // The todo's own gate and, when it names another one, the gate the policy puts on its action:
    // completion needs both (gatesFor), so both are asked for now, while other work goes on.
    for (const need of new Set([gate, policyGate].filter((x): x is string => x !== undefined))) {
      const existing = s.gates.find((g) => g.id === need);
      if (existing?.status === 'rejected') {
        throw refused(
          `gate ${need} of goal ${s.id} was rejected: request it again (gate request) before adding work that needs it`,
          { gate: need },
        );
      }
      if (!existing || existing.status !== 'approved') {
        events.push(
          draft('gate.requested', {
            gate: {
              id: need,
              title: existing?.title ?? `Approve ${need}`,
              reason: `needed by todo ${todoId}: ${i.title}`.slice(0, 2000),
              guards: [todoId],
            },
          }),
        );
      }
    }
    return events;
  },
});

define({
  id: 'todo.claim',
  summary: 'Claim an open todo for an agent or a person, so no one else takes it.',
  touches: ['todos'],
  gates: 'none',
  quota: 'none',
  actors: AllActors,
  input: z.object({ goalId, todoId: Id, by: Line(128).optional() }),
  plan: (s, i, ctx) => {
    const t = findTodo(s, i.todoId);
    const by = i.by ?? ctx.actor.id;
    if (t.status === 'claimed' && t.claimedBy === by) return [];
    if (t.status !== 'open') {
      throw refused(
        `todo ${t.id} is ${t.status}${t.claimedBy ? ` by ${t.claimedBy} since ${t.claimedAt}` : ''}: only an open todo can be claimed`,
        { todoId: t.id },
      );
    }
    return [draft('todo.claimed', { todoId: t.id, by })];
  },
});

define({
  id: 'todo.release',
  summary: 'Give a claimed todo back (its holder stopped, or self-repair found the claim abandoned).',
  touches: ['todos'],
  gates: 'none',
  quota: 'none',
  actors: AllActors,
  input: z.object({ goalId, todoId: Id, reason: Text(2000).default('released') }),
  plan: (s, i) => {
    const t = findTodo(s, i.todoId);
    if (t.status !== 'claimed') throw refused(`todo ${t.id} is ${t.status}, not claimed`, { todoId: t.id });
    return [draft('todo.released', { todoId: t.id, reason: i.reason })];
  },
});

define({
  id: 'todo.update',
  summary: 'Change a todo’s title, priority or note.',
  touches: ['todos'],
  gates: 'none',
  quota: 'none',
  actors: AllActors,
  input: z.object({
    goalId,
    todoId: Id,
    title: Line(200).optional(),
    priority: Priority.optional(),
    note: Text(2000).optional(),
  }),
  plan: (s, i) => {
    findTodo(s, i.todoId);
    if (i.title === undefined && i.priority === undefined && i.note === undefined)
      throw usageError('nothing to update: give a title, a priority or a note');
    return [draft('todo.updated', { todoId: i.todoId, title: i.title, priority: i.priority, note: i.note })];
  },
});

define({
  id: 'todo.complete',
  summary: 'Mark a todo done, with the evidence that shows it.',
  touches: ['todos', 'evidence'],
  gates: 'the todo gate must be approved',
  quota: 'none',
  actors: AllActors,
  input: z.object({
    goalId,
    todoId: Id,
    evidence: z.array(Id).max(100).default([]),
    summary: Text(4000).optional(),
    runId: Id.optional(),
  }),
  plan: (s, i, ctx) => {
    const t = findTodo(s, i.todoId);
    if (t.status === 'done' || t.status === 'cancelled')
      throw refused(`todo ${t.id} is already ${t.status}`, { todoId: t.id });
    if (t.owner === 'user' && ctx.actor.kind !== 'user') {
      throw refused(`todo ${t.id} belongs to a person (owner user): an agent cannot complete it`, {
        todoId: t.id,
      });
    }
    for (const need of gatesFor(t, ctx.policy, s.gates)) {
      if (
        !gateApproved(
          s.gates.find((g) => g.id === need.id),
          ctx.policy,
          ctx.checkSignature,
        )
      ) {
        throw refused(`todo ${t.id} needs gate ${need.id} approved first`, { todoId: t.id, gate: need.id });
      }
    }
    for (const e of i.evidence)
      if (!s.evidence.some((x) => x.id === e)) throw notFound(`goal ${s.id} has no evidence ${quote(e)}`);
    if (i.runId) openRun(s, i.runId);
    const events: EventDraft[] = [];
    const evidence = [...i.evidence];
    if (i.summary) {
      const id = newId('ev', 8);
      evidence.push(id);
      events.push(
        draft('evidence.added', {
          evidence: { id, runId: i.runId, todoId: t.id, kind: 'note', summary: i.summary },
        }),
      );
    }
    events.push(draft('todo.completed', { todoId: t.id, evidence }));
    return events;
  },
});

define({
  id: 'todo.cancel',
  summary: 'Cancel a todo that is no longer needed.',
  touches: ['todos'],
  gates: 'none',
  quota: 'none',
  actors: AllActors,
  input: z.object({ goalId, todoId: Id, reason: Text(2000).default('cancelled') }),
  plan: (s, i) => {
    const t = findTodo(s, i.todoId);
    if (t.status === 'done' || t.status === 'cancelled')
      throw refused(`todo ${t.id} is already ${t.status}`, { todoId: t.id });
    return [draft('todo.cancelled', { todoId: t.id, reason: i.reason })];
  },
});

define({
  id: 'gate.request',
  summary: 'Ask a person to approve something before the work it guards may run.',
  touches: ['gates'],
  gates: 'none',
  quota: 'none',
  actors: AllActors,
  input: z.object({
    goalId,
    gateId: Id,
    title: Line(200).optional(),
    reason: Text(2000).default(''),
    guards: z.array(Id).max(100).default([]),
  }),
  plan: (s, i) => {
    for (const t of i.guards) findTodo(s, t);
    const existing = s.gates.find((g) => g.id === i.gateId);
    if (existing?.status === 'pending' && i.guards.every((t) => existing.guards.includes(t))) return [];
    if (existing?.status === 'approved')
      throw refused(`gate ${i.gateId} of goal ${s.id} is already approved`, { gateId: i.gateId });
    return [
      draft('gate.requested', {
        gate: {
          id: i.gateId,
          title: i.title ?? existing?.title ?? `Approve ${i.gateId}`,
          reason: i.reason,
          guards: i.guards,
        },
      }),
    ];
  },
});

define({
  id: 'gate.approve',
  summary: 'Approve a pending gate (a person only).',
  touches: ['gates'],
  gates: 'the gate must be pending',
  quota: 'none',
  actors: Humans,
  humanOnly: true,
  input: z.object({
    goalId,
    gateId: Id,
    note: Text(2000).optional(),
    signature: ApprovalSignature.optional(),
  }),
  plan: (s, i, ctx) => {
    const g = findGate(s, i.gateId);
    if (g.status !== 'pending') {
      throw refused(
        `gate ${g.id} is ${g.status}${g.decidedBy ? ` (by ${g.decidedBy.id} at ${g.decidedAt})` : ''}: only a pending gate can be approved`,
        { gateId: g.id },
      );
    }
    if (
      i.signature &&
      !ctx.checkSignature({ ...g, status: 'approved', note: i.note, signature: i.signature })
    ) {
      throw refused(
        `the approval signature for gate ${g.id} does not verify against a key in .loopx/approvers/`,
        { gateId: g.id },
      );
    }
    return [draft('gate.approved', { gateId: g.id, note: i.note, signature: i.signature })];
  },
});

define({
  id: 'gate.reject',
  summary: 'Reject a pending gate (a person only); the open todos it guards are cancelled.',
  touches: ['gates', 'todos'],
  gates: 'the gate must be pending',
  quota: 'none',
  actors: Humans,
  humanOnly: true,
  input: z.object({ goalId, gateId: Id, note: Text(2000).optional() }),
  plan: (s, i, ctx) => {
    const g = findGate(s, i.gateId);
    if (g.status !== 'pending')
      throw refused(`gate ${g.id} is ${g.status}: only a pending gate can be rejected`, { gateId: g.id });
    // Everything that needed the gate: its own todos, what it was requested for, and todos whose
    // action the policy gates behind it.
    const needs = (t: Todo) =>
      t.gate === g.id ||
      g.guards.includes(t.id) ||
      (!!t.action && policyGateFor(ctx.policy, t.action)?.gate === g.id);
    const cancelled = s.todos
      .filter((t) => needs(t) && (t.status === 'open' || t.status === 'claimed'))
      .map((t) => t.id);
    return [draft('gate.rejected', { gateId: g.id, note: i.note, cancelled })];
  },
});

define({
  id: 'gate.expire',
  summary: 'Expire a gate left pending past the policy’s gate expiry (self-repair).',
  touches: ['gates'],
  gates: 'none',
  quota: 'none',
  actors: ['system', 'user'],
  input: z.object({ goalId, gateId: Id }),
  plan: (s, i) => {
    const g = findGate(s, i.gateId);
    if (g.status !== 'pending') throw refused(`gate ${g.id} is ${g.status}, not pending`, { gateId: g.id });
    return [draft('gate.expired', { gateId: g.id })];
  },
});

define({
  id: 'evidence.add',
  summary: 'Record evidence (a command’s result, a test, a note, a file) for a run or a todo.',
  touches: ['evidence'],
  gates: 'none',
  quota: 'none',
  actors: AllActors,
  input: z.object({
    goalId,
    evidenceId: Id.optional(),
    runId: Id.optional(),
    todoId: Id.optional(),
    kind: EvidenceKind.default('note'),
    summary: Text(4000),
    command: Line(2000).optional(),
    exitCode: z.number().int().optional(),
    durationMs: z.number().nonnegative().optional(),
    artifact: Artifact.optional(),
  }),
  prepare: (i) => ({ ...i, evidenceId: i.evidenceId ?? newId('ev', 8) }),
  plan: (s, i) => {
    if (s.evidence.some((e) => e.id === i.evidenceId))
      throw refused(`goal ${s.id} already has evidence ${i.evidenceId}`);
    if (i.runId) findRun(s, i.runId);
    if (i.todoId) findTodo(s, i.todoId);
    const { goalId: _g, evidenceId, ...rest } = i;
    return [draft('evidence.added', { evidence: { id: evidenceId!, ...rest } })];
  },
});

define({
  id: 'run.start',
  summary: 'Open a run (one agent turn), with the contract it runs under.',
  touches: ['runs'],
  gates: 'none',
  quota: 'one turn',
  actors: AllActors,
  input: z.object({ goalId, runId: Id.optional(), agent: Line(128), contract: Contract.optional() }),
  prepare: (i) => ({ ...i, runId: i.runId ?? newId('run', 8) }),
  plan: (s, i) => {
    if (s.runs.some((r) => r.id === i.runId)) throw refused(`goal ${s.id} already has a run ${i.runId}`);
    if (s.status !== 'active') throw refused(`goal ${s.id} is ${s.status}: no run can start`);
    return [draft('run.started', { run: { id: i.runId!, agent: i.agent, contract: i.contract } })];
  },
});

const SpendInput = z.object({
  tokens: z.number().int().nonnegative().optional(),
  costUsd: z.number().nonnegative().finite().optional(),
  wallSeconds: z.number().nonnegative().finite().optional(),
});

define({
  id: 'run.spend',
  summary: 'Report what an open run spent (tokens, cost, wall time).',
  touches: ['runs'],
  gates: 'none',
  quota: 'the spend reported',
  actors: AllActors,
  input: z.object({ goalId, runId: Id }).merge(SpendInput),
  plan: (s, i) => {
    openRun(s, i.runId);
    return [
      draft('run.spend', {
        runId: i.runId,
        spend: { tokens: i.tokens, costUsd: i.costUsd, wallSeconds: i.wallSeconds },
      }),
    ];
  },
});

define({
  id: 'run.end',
  summary: 'End an open run with its outcome, summary and final spend.',
  touches: ['runs'],
  gates: 'none',
  quota: 'the spend reported',
  actors: AllActors,
  // Closing a goal does not end its runs: their summary still belongs in the record.
  onFinishedGoal: true,
  input: z
    .object({ goalId, runId: Id, outcome: RunOutcome, summary: Text(4000).optional() })
    .merge(SpendInput),
  plan: (s, i) => {
    openRun(s, i.runId);
    const spend = { tokens: i.tokens, costUsd: i.costUsd, wallSeconds: i.wallSeconds };
    return [draft('run.ended', { runId: i.runId, outcome: i.outcome, summary: i.summary, spend })];
  },
});

define({
  id: 'reward.add',
  summary: 'Record a person’s structured feedback on one run: a score and a comment (a person only).',
  touches: ['rewards'],
  gates: 'none',
  quota: 'none',
  actors: Humans,
  humanOnly: true,
  onFinishedGoal: true,
  input: z.object({
    goalId,
    runId: Id,
    rewardId: Id.optional(),
    score: z.number().min(-1).max(1),
    comment: Text(4000).default(''),
    lesson: Text(4000).optional(),
  }),
  prepare: (i) => ({ ...i, rewardId: i.rewardId ?? newId('rw', 8) }),
  plan: (s, i) => {
    findRun(s, i.runId);
    return [
      draft('reward.added', {
        reward: { id: i.rewardId!, runId: i.runId, score: i.score, comment: i.comment, lesson: i.lesson },
      }),
    ];
  },
});

define({
  id: 'quota.set',
  summary: 'Set the goal’s quota. An agent may only tighten it; raising a budget is a person’s grant.',
  touches: ['quota'],
  gates: 'none',
  quota: 'none',
  actors: AllActors,
  input: z.object({ goalId, quota: Quota }),
  plan: (s, i, ctx) => {
    if (ctx.actor.kind !== 'user') {
      const old = s.quota;
      const loosened = BUDGET_NAMES.filter((k) => {
        const now = i.quota.budgets[k];
        const was = old.budgets[k];
        return now === undefined ? was !== undefined : was !== undefined && now > was;
      }).map(String);
      if (i.quota.cooldownSeconds < old.cooldownSeconds) loosened.push('cooldownSeconds');
      if (JSON.stringify(i.quota.window) !== JSON.stringify(old.window)) loosened.push('window');
      if (loosened.length) {
        throw refused(
          `${ctx.actor.kind === 'agent' ? 'an agent' : 'the system'} may only tighten a quota; ${loosened.join(', ')} would loosen it: ask a person to grant more`,
          { loosened },
        );
      }
    }
    return [draft('quota.set', { quota: i.quota })];
  },
});

define({
  id: 'quota.grant',
  summary: 'Grant more budget to a goal (a person only).',
  touches: ['quota'],
  gates: 'none',
  quota: 'adds budget',
  actors: Humans,
  humanOnly: true,
  input: z.object({ goalId, budgets: Budgets, note: Text(2000).optional() }),
  plan: (_s, i) => {
    if (!BUDGET_NAMES.some((k) => (i.budgets[k] ?? 0) > 0))
      throw usageError('a grant needs at least one positive amount (turns, tokens, costUsd or wallSeconds)');
    return [draft('quota.granted', { budgets: i.budgets, note: i.note })];
  },
});

// -------------------------------------------------------------------------------------------

export function listCapabilities(): CapabilityDeclaration[] {
  return [...registry.values()].map((c) => ({
    id: c.id,
    summary: c.summary,
    touches: c.touches,
    gates: c.gates,
    quota: c.quota,
    actors: c.actors,
    humanOnly: c.humanOnly ?? false,
    input: z.toJSONSchema(c.input, { io: 'input', unrepresentable: 'any' }),
  }));
}

export function capabilityIds(): string[] {
  return [...registry.keys()];
}

/** Why an actor may not call a capability, or undefined when it may. */
export function whyNotAllowed(capId: string, actor: Actor): string | undefined {
  const c = registry.get(capId);
  if (!c) return `there is no capability ${quote(capId)}`;
  const who = `${actor.kind} ${actor.id} via ${actor.channel}`;
  if (c.humanOnly && (actor.kind !== 'user' || !HUMAN_CHANNELS.includes(actor.channel))) {
    return (
      `${capId} is human-only: a person makes it from VS Code (LoopX commands) or from an interactive terminal ` +
      `(\`loopx ...\` with a TTY); this call came from ${who}`
    );
  }
  if (!c.actors.includes(actor.kind))
    return `${capId} may be called by ${c.actors.join(' or ')}, not by ${who}`;
  return undefined;
}

/** HMAC-SHA256 with the workspace's contract key (created on first use in `.loopx/local/`, 0600). */
export function signPayload(store: Store, payload: string): string {
  return createHmac('sha256', store.localSecret('contract-key')).update(payload).digest('hex');
}

export interface InvokeResult<I = Record<string, unknown>> extends CommitResult {
  goalId: string;
  /** The input as applied, with generated ids filled in. */
  input: I;
}

/** Validates, checks who is calling, and commits the capability's events. */
export function invoke<I extends Record<string, unknown> = Record<string, unknown>>(
  store: Store,
  capId: string,
  rawInput: unknown,
  actor: Actor,
  opts: { expectRevision?: number } = {},
): InvokeResult<I> {
  const c = registry.get(capId);
  if (!c) throw usageError(`there is no capability ${quote(capId)}; \`loopx capabilities\` lists them`);
  const denied = whyNotAllowed(capId, actor);
  if (denied) throw refused(denied, { capability: capId });
  const parsed = c.input.safeParse(rawInput);
  if (!parsed.success) throw usageError(`${capId}: ${describeIssues(parsed.error)}`, { capability: capId });
  const input = (c.prepare ? c.prepare(parsed.data) : parsed.data) as Record<string, unknown>;
  const gid = input.goalId as string;
  const policy = store.policy();
  const result = store.commit(
    gid,
    (state) => {
      const ctx: CapabilityContext = {
        actor,
        now: new Date(store.now()),
        policy,
        sign: (p) => signPayload(store, p),
        checkSignature: signatureChecker(store, gid),
      };
      if (c.goal === 'create') return c.plan(undefined as unknown as GoalState, input, ctx);
      const status = effectiveStatus(state!);
      if ((status === 'closed' || status === 'cancelled') && !c.onFinishedGoal) {
        throw refused(`goal ${gid} is ${status}: a ${status} goal is read-only (${capId} refused)`, {
          goalId: gid,
          capability: capId,
        });
      }
      return c.plan(state!, input, ctx);
    },
    { actor, expectRevision: opts.expectRevision, create: c.goal === 'create' },
  );
  return { ...result, goalId: gid, input: input as I };
}
