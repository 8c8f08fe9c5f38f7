/**
 * The goal model as zod schemas with inferred types. This module is imported by the webview too,
 * so it depends on nothing but zod.
 */
import { z } from 'zod';
import { Actor, Id, Line, Text, Timestamp } from './fields';
import { lazy } from './lazy';
import { Denial, IgnoredDecision, Overruled } from './outcomes';
import { Recurrence } from './recurrence';

export * from './fields';
export * from './outcomes';

export const Priority = lazy(() => z.enum(['P0', 'P1', 'P2', 'P3']));
export const Owner = lazy(() => z.enum(['agent', 'user']));
export const TodoStatus = lazy(() => z.enum(['open', 'claimed', 'done', 'cancelled']));
export const GateStatus = lazy(() => z.enum(['pending', 'approved', 'rejected', 'expired']));
/** What the log stores. `completed` is never stored: it is derived (see `effectiveStatus`). */
export const StoredGoalStatus = lazy(() => z.enum(['active', 'paused', 'closed', 'cancelled']));
export const GoalStatus = lazy(() => z.enum(['active', 'paused', 'completed', 'closed', 'cancelled']));

export const Budgets = lazy(() =>
  z.object({
    turns: z.number().int().nonnegative().optional(),
    tokens: z.number().int().nonnegative().optional(),
    costUsd: z.number().nonnegative().finite().optional(),
    wallSeconds: z.number().nonnegative().finite().optional(),
  }),
);
export const BUDGET_NAMES = ['turns', 'tokens', 'costUsd', 'wallSeconds'] as const;
export type BudgetName = (typeof BUDGET_NAMES)[number];

export const QuotaWindow = lazy(() =>
  z.discriminatedUnion('kind', [
    z.object({ kind: z.literal('life') }),
    z.object({
      kind: z.literal('rolling'),
      hours: z
        .number()
        .positive()
        .max(24 * 365),
    }),
  ]),
);
export const Quota = lazy(() =>
  z.object({
    budgets: Budgets,
    window: QuotaWindow,
    cooldownSeconds: z
      .number()
      .nonnegative()
      .max(7 * 24 * 3600),
  }),
);
export const DEFAULT_QUOTA: Quota = {
  budgets: { turns: 200 },
  window: { kind: 'life' },
  cooldownSeconds: 0,
};

export const Spend = lazy(() =>
  z.object({
    turns: z.number().int().nonnegative(),
    tokens: z.number().int().nonnegative(),
    costUsd: z.number().nonnegative().finite(),
    wallSeconds: z.number().nonnegative().finite(),
  }),
);

export const Todo = lazy(() =>
  z.object({
    id: Id,
    title: Line(200),
    owner: Owner,
    priority: Priority,
    status: TodoStatus,
    action: Line(2000).optional(),
    gate: Id.optional(),
    dependsOn: z.array(Id).max(50),
    claimedBy: Line(128).optional(),
    claimedAt: Timestamp.optional(),
    /**
     * When the claim lapses unless its holder renews it (a lane's claims are leases): after it,
     * another agent may take the todo. Absent: the claim lasts until released.
     */
    leaseUntil: Timestamp.optional(),
    /** A recurring todo reopens when its next slot is due (rules/recurrence.ts). */
    recur: Recurrence.optional(),
    /** When it was last completed: a recurring todo's next slot counts from it. */
    doneAt: Timestamp.optional(),
    /** The slot it was last reopened for. */
    dueAt: Timestamp.optional(),
    evidence: z.array(Id),
    note: Text(2000).optional(),
    /** Who added it (set by replay from the event): an agent may ask a gate only for an agent's todo. */
    addedBy: Actor.optional(),
    /**
     * The writer (clone) whose log gave it its command (set by replay): a command from another
     * clone is a proposal on this one until a person's signed approval covers it.
     */
    actionFrom: Id.optional(),
    /** The pinned key of the person who signed its command when adding it: no clone reviews it again. */
    actionSignedBy: z.string().max(64).optional(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  }),
);

/**
 * One piece of work a gate guards, as the person saw it when deciding: the approval's signed
 * statement holds the list, so an approval covers exactly these todos with exactly these commands.
 */
export const GuardedWork = lazy(() =>
  z.object({ todoId: Id, title: Line(200), action: Line(2000).optional() }),
);
export type GuardedWork = z.infer<typeof GuardedWork>;

/** A person's signature on a decision event (see `trust/signed-decisions.ts`). */
export const DecisionSig = lazy(() =>
  z.object({
    /** sha256 of the signer's Ed25519 public key (SPKI DER). */
    keyId: z.string().regex(/^[0-9a-f]{64}$/),
    /**
     * base64 signature: Ed25519 over the decision's canonical statement, or a passkey's WebAuthn
     * assertion signature (ES256 DER, EdDSA or RS256 up to 4096 bits) over `webauthn`'s bytes.
     */
    sig: z.string().max(1024),
    /**
     * The workspace the signer was in, as the statement names it: lets a copy in another
     * workspace be named as one (absent on decisions signed by an older LoopX).
     */
    ws: z.string().max(64).optional(),
    /**
     * A passkey's assertion (trust/passkey.ts): what the authenticator and the browser signed,
     * base64url, whose challenge is the statement's sha256. Absent on an Ed25519 signature.
     */
    webauthn: z
      .object({
        authenticatorData: z
          .string()
          .max(2048)
          .regex(/^[A-Za-z0-9_-]+$/),
        clientDataJSON: z
          .string()
          .max(4096)
          .regex(/^[A-Za-z0-9_-]+$/),
      })
      .optional(),
  }),
);
export type DecisionSig = z.infer<typeof DecisionSig>;

export const Gate = lazy(() =>
  z.object({
    id: Id,
    title: Line(200),
    reason: Text(2000),
    /** The reason is LoopX's own words (a gate todo.add asked for), not the requester's. */
    reasonByLoopx: z.literal(true).optional(),
    /** Ids of the todos this gate guards. */
    guards: z.array(Id),
    status: GateStatus,
    requestedBy: Actor,
    requestedAt: Timestamp,
    expiresAt: Timestamp.optional(),
    decidedBy: Actor.optional(),
    decidedAt: Timestamp.optional(),
    note: Text(2000).optional(),
    /** The signature of the decision that approved it. */
    signature: DecisionSig.optional(),
    /** What the approval covers (see GuardedWork); work not listed needs a new approval. */
    approvedFor: z.array(GuardedWork).optional(),
    /** The event id of the decision that counts now: a later one must name it (rules/merge-rules.ts). */
    lastDecision: Id.optional(),
  }),
);

export const EvidenceKind = lazy(() => z.enum(['command', 'test', 'note', 'file']));
export const Artifact = lazy(() =>
  z.object({
    /** Relative to the goal's folder, e.g. `artifacts/ev-1234.log`. */
    path: z.string().regex(/^artifacts\/[A-Za-z0-9_.-]+$/),
    sha256: z.string().regex(/^[0-9a-f]{64}$/),
    bytes: z.number().int().nonnegative(),
  }),
);
export const Evidence = lazy(() =>
  z.object({
    id: Id,
    runId: Id.optional(),
    todoId: Id.optional(),
    kind: EvidenceKind,
    summary: Text(4000),
    command: Line(2000).optional(),
    exitCode: z.number().int().optional(),
    durationMs: z.number().nonnegative().optional(),
    artifact: Artifact.optional(),
    at: Timestamp,
    by: Actor,
  }),
);

export const ContractAction = lazy(() => z.object({ todoId: Id, command: Line(2000) }));
/** The signed part of an interaction contract. The signature covers every field but `sig`. */
export const Contract = lazy(() =>
  z.object({
    v: z.literal(1),
    id: Id,
    goalId: Id,
    runId: Id,
    agent: Line(128),
    issuedAt: Timestamp,
    expiresAt: Timestamp,
    /** The todos this turn may work on, in priority order; `command` is the raw action. */
    actions: z.array(ContractAction),
    /** Todos without an action that the agent may complete by its own judgment this turn. */
    judgment: z.array(Id),
    /** The clone (writer id) that issued it: it authorises work there only. Absent in older ones. */
    writer: Id.optional(),
    /** The lane of `loopx drive` it was issued to: its claims are leases of `lease` seconds. */
    lane: Id.optional(),
    lease: z
      .number()
      .int()
      .positive()
      .max(24 * 3600)
      .optional(),
    /** Where its commands run: the lane's own worktree (absent: the workspace). */
    cwd: z.string().min(1).max(4096).optional(),
    sig: z.string().regex(/^[0-9a-f]{64}$/),
  }),
);

/** Model tokens by kind, as hosts report them (Claude Code's transcript, the Responses API). */
export const TokenUsage = lazy(() =>
  z.object({
    input: z.number().int().nonnegative(),
    output: z.number().int().nonnegative(),
    cacheWrite: z.number().int().nonnegative(),
    cacheRead: z.number().int().nonnegative(),
  }),
);

/** `timed_out`: past its runtime's turn limit; `interrupted`: its driver died mid-turn. */
export const RunOutcome = lazy(() =>
  z.enum(['succeeded', 'failed', 'partial', 'abandoned', 'timed_out', 'interrupted']),
);
export const Run = lazy(() =>
  z.object({
    id: Id,
    agent: Line(128),
    /** The clone (writer id) that opened it. */
    writer: Id.optional(),
    contract: Contract.optional(),
    startedAt: Timestamp,
    endedAt: Timestamp.optional(),
    outcome: RunOutcome.optional(),
    spend: Spend,
    /** The tokens of `spend.tokens` by kind, where they came from a host's transcript (Stop hook). */
    usage: TokenUsage.optional(),
    summary: Text(4000).optional(),
  }),
);

export const Reward = lazy(() =>
  z.object({
    id: Id,
    runId: Id,
    score: z.number().min(-1).max(1),
    comment: Text(4000),
    lesson: Text(4000).optional(),
    by: Actor,
    at: Timestamp,
  }),
);

/** What a workflow declares it will spend (a subset of the goal's budgets). */
export const WorkflowQuotaDecl = lazy(() =>
  z.object({
    turns: z.number().int().nonnegative().optional(),
    tokens: z.number().int().nonnegative().optional(),
    costUsd: z.number().nonnegative().finite().optional(),
  }),
);
/** One run of a workflow capability: the todos and gates it added, and what it declared it spends. */
export const WorkflowInstance = lazy(() =>
  z.object({
    instanceId: Id,
    name: Id,
    title: Line(200),
    params: z.record(z.string().max(32), Line(200)),
    quota: WorkflowQuotaDecl,
    todoIds: z.array(Id).max(50),
    gateIds: z.array(Id).max(20),
    source: z.enum(['builtin', 'workspace', 'workspace-override']),
    startedBy: Actor,
    startedAt: Timestamp,
  }),
);
export type WorkflowInstance = z.infer<typeof WorkflowInstance>;

export const GoalState = lazy(() =>
  z.object({
    id: Id,
    title: Line(200),
    objective: Text(10000),
    status: StoredGoalStatus,
    quota: Quota,
    granted: Budgets,
    handoff: z.array(Line(500)),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    todos: z.array(Todo),
    gates: z.array(Gate),
    evidence: z.array(Evidence),
    runs: z.array(Run),
    rewards: z.array(Reward),
    /** Ids of the decision events that took effect (a copied decision line takes none). */
    decisionIds: z.array(Id).optional(),
    /** A person's decisions in the log that have no effect here, and why (unsigned, unknown key). */
    ignored: z.array(IgnoredDecision).optional(),
    /** Events that lost to an earlier one written on another clone, and the rule that decided. */
    overruled: z.array(Overruled).optional(),
    /** The latest tool calls hooks refused (at most MAX_DENIALS_KEPT; the log has them all)... */
    denied: z.array(Denial).optional(),
    /** ...and how many there were in all. */
    deniedTotal: z.number().int().nonnegative().optional(),
    /** The workflows started on this goal (`capability run`), oldest first. */
    workflows: z.array(WorkflowInstance).optional(),
    /** Transcript messages whose usage is counted, as usageKey digests: each counts once. */
    counted: z.array(z.string().regex(/^[0-9a-f]{16}$/)).optional(),
  }),
);
/** How many denials a goal's state keeps (the tree, status and the dashboard show the latest). */
export const MAX_DENIALS_KEPT = 100;

export type Priority = z.infer<typeof Priority>;
export type Owner = z.infer<typeof Owner>;
export type TodoStatus = z.infer<typeof TodoStatus>;
export type GateStatus = z.infer<typeof GateStatus>;
export type StoredGoalStatus = z.infer<typeof StoredGoalStatus>;
export type GoalStatus = z.infer<typeof GoalStatus>;
export type Budgets = z.infer<typeof Budgets>;
export type Quota = z.infer<typeof Quota>;
export type Spend = z.infer<typeof Spend>;
export type Todo = z.infer<typeof Todo>;
export type Gate = z.infer<typeof Gate>;
export type Evidence = z.infer<typeof Evidence>;
export type Artifact = z.infer<typeof Artifact>;
export type Contract = z.infer<typeof Contract>;
export type ContractAction = z.infer<typeof ContractAction>;
export type Run = z.infer<typeof Run>;
export type TokenUsage = z.infer<typeof TokenUsage>;
export type RunOutcome = z.infer<typeof RunOutcome>;
export type Reward = z.infer<typeof Reward>;
export type GoalState = z.infer<typeof GoalState>;

/**
 * `completed` is derived, never stored: an active goal whose agent todos (there is at least one)
 * are all done or cancelled, with at least one done, and with no gate pending. A goal with no
 * todos is waiting for a plan, not complete.
 */
/** Whether `todo`'s claim is a lease that lapsed by `now`: anyone may take the todo again. */
export function claimLapsed(todo: Pick<Todo, 'status' | 'leaseUntil'>, now: Date): boolean {
  return todo.status === 'claimed' && !!todo.leaseUntil && Date.parse(todo.leaseUntil) <= now.getTime();
}

export function effectiveStatus(goal: GoalState): GoalStatus {
  if (goal.status !== 'active') return goal.status;
  const agentTodos = goal.todos.filter((t) => t.owner === 'agent');
  // A goal that keeps watch (a recurring todo) is never finished: its todo comes back when due.
  if (agentTodos.length === 0 || agentTodos.some((t) => t.recur && t.status !== 'cancelled')) return 'active';
  const finished = agentTodos.every((t) => t.status === 'done' || t.status === 'cancelled');
  const anyDone = agentTodos.some((t) => t.status === 'done');
  const gatePending = goal.gates.some((g) => g.status === 'pending');
  return finished && anyDone && !gatePending ? 'completed' : 'active';
}
