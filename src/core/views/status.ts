/**
 * The read-only status document: what the CLI's `status`, the dashboard and the status server
 * show. One goal reads that goal; all goals read the index (cost follows what is asked). Its
 * shapes are in views/status-doc.ts; summary_all is in contract/summary.ts.
 */
import type { GoalState, Run, Todo } from '../model';
import { BUDGET_NAMES, effectiveStatus, LoopxError } from '../model';
import type { QuotaUse } from '../rules';
import { describeRecurrence, nextOccurrence, quotaUse, spendOf } from '../rules';
import type { IndexEntry, Store } from '../store';
import type { PolicyView } from '../trust';
import { describeIgnored, describeUnsignedPolicy } from '../trust';
import { denialAttention, deniedRecently, latestDenials } from './denials-doc';
import { stateHash } from './goal-history';
import { invalidPolicyStatus } from './policy-advice';
import type { AttentionItem, GoalStatusDoc, HumanRewardOut, PolicyStatus, StatusDoc } from './status-doc';
import { deniedOut, GOAL_STATUS_SCHEMA, overruledOut, STATUS_SCHEMA, usageOut } from './status-doc';

/** A budget counts as nearly exhausted from this share on. */
export const QUOTA_WARNING_RATIO = 0.8;

function countBy<T>(
  items: readonly T[],
  key: (t: T) => string,
  keys: readonly string[],
): Record<string, number> {
  const out: Record<string, number> = Object.fromEntries(keys.map((k) => [k, 0]));
  for (const i of items) out[key(i)] = (out[key(i)] ?? 0) + 1;
  return out;
}

export function attentionFor(goal: GoalState, use: QuotaUse, now: Date): AttentionItem[] {
  const status = effectiveStatus(goal);
  if (status === 'closed' || status === 'cancelled') return [];
  const items: AttentionItem[] = [];
  for (const g of goal.gates.filter((x) => x.status === 'pending')) {
    items.push({
      kind: 'gate',
      goal_id: goal.id,
      id: g.id,
      title: g.title,
      detail: g.reason || 'waiting for approval',
    });
  }
  for (const t of goal.todos.filter(
    (x) => x.owner === 'user' && (x.status === 'open' || x.status === 'claimed'),
  )) {
    items.push({
      kind: 'user-todo',
      goal_id: goal.id,
      id: t.id,
      title: t.title,
      detail: `${t.priority} todo for a person`,
    });
  }
  items.push(...denialAttention(goal, now));
  for (const k of BUDGET_NAMES) {
    const u = use[k];
    if (!u || u.limit <= 0) continue;
    if (u.used >= u.limit * QUOTA_WARNING_RATIO) {
      items.push({
        kind: 'quota',
        goal_id: goal.id,
        id: k,
        title: `${k} budget ${u.used >= u.limit ? 'used up' : 'nearly used up'}`,
        detail: `${u.used} of ${u.limit} used`,
      });
    }
  }
  if (status === 'active' && !goal.todos.some((t) => t.owner === 'agent')) {
    items.push({
      kind: 'plan',
      goal_id: goal.id,
      id: 'plan',
      title: 'needs a plan',
      detail: 'add todos so an agent can start',
    });
  }
  return items;
}

/**
 * Whether `attentionFor` can change with time alone, with no new event: a rolling quota window, a
 * refusal still within the hour. Whoever caches attention re-reads such a goal as time passes.
 */
export function attentionChangesWithTime(goal: GoalState, now: Date): boolean {
  return goal.quota.window.kind === 'rolling' || deniedRecently(goal, now);
}

export function runOut(goal: GoalState, r: Run) {
  return {
    id: r.id,
    agent: r.agent,
    ...(r.writer ? { writer: r.writer } : {}),
    started_at: r.startedAt,
    ...(r.endedAt ? { ended_at: r.endedAt } : {}),
    ...(r.outcome ? { outcome: r.outcome } : {}),
    ...(r.contract ? { contract_id: r.contract.id } : {}),
    spend: r.spend,
    ...(r.usage ? { usage: usageOut(r.usage) } : {}),
    evidence: goal.evidence
      .filter((e) => e.runId === r.id)
      .map((e) => ({
        id: e.id,
        kind: e.kind,
        summary: e.summary.split('\n')[0]!.slice(0, 200),
        ...(e.exitCode !== undefined ? { exit_code: e.exitCode } : {}),
        ...(e.todoId ? { todo_id: e.todoId } : {}),
        ...(e.artifact ? { artifact: e.artifact.path } : {}),
      })),
    rewards: goal.rewards
      .filter((w) => w.runId === r.id)
      .map((w) => ({ id: w.id, score: w.score, comment: w.comment })),
    human_reward: humanReward(goal, r.id),
  };
}

/**
 * A person's latest reward on a run, or null. Rewards are decisions: replay applies only those
 * signed by a key pinned here (rules/apply-event.ts), so every one in the state is signed.
 */
function humanReward(goal: GoalState, runId: string): HumanRewardOut | null {
  const w = goal.rewards.filter((x) => x.runId === runId && x.by.kind === 'user').at(-1);
  if (!w) return null;
  return {
    score: w.score,
    comment: w.comment,
    ...(w.lesson !== undefined ? { lesson: w.lesson } : {}),
    by: `${w.by.kind}:${w.by.id}`,
    at: w.at,
    signed: true,
  };
}

/** How many runs, the newest, a goal's status lists. */
const LAST_RUNS = 10;

export function goalStatusDoc(
  goal: GoalState,
  now: Date,
  revision: number,
  warnings: string[] = [],
  writerNames: ReadonlyMap<string, string> = new Map(),
): GoalStatusDoc {
  const use = quotaUse(goal, now);
  const counted = goal.todos.filter((t) => t.status !== 'cancelled');
  let cumulative = { turns: 0, tokens: 0, costUsd: 0, wallSeconds: 0 };
  const burn = goal.runs.map((r) => {
    cumulative = spendOf([
      {
        ...r,
        spend: {
          turns: cumulative.turns + r.spend.turns,
          tokens: cumulative.tokens + r.spend.tokens,
          costUsd: cumulative.costUsd + r.spend.costUsd,
          wallSeconds: cumulative.wallSeconds + r.spend.wallSeconds,
        },
      },
    ]);
    return { at: r.endedAt ?? r.startedAt, run_id: r.id, ...cumulative };
  });
  const scores = goal.rewards.map((w) => w.score);
  return {
    schema: GOAL_STATUS_SCHEMA,
    id: goal.id,
    title: goal.title,
    objective: goal.objective,
    status: effectiveStatus(goal),
    created_at: goal.createdAt,
    updated_at: goal.updatedAt,
    revision,
    progress: { done: counted.filter((t) => t.status === 'done').length, total: counted.length },
    counts: {
      todos: countBy(goal.todos, (t) => t.status, ['open', 'claimed', 'done', 'cancelled']),
      gates: countBy(goal.gates, (g) => g.status, ['pending', 'approved', 'rejected', 'expired']),
    },
    attention: attentionFor(goal, use, now),
    quota: {
      budgets: use as Record<string, { used: number; limit: number; left: number }>,
      spend: spendOf(goal.runs),
      cooldown_seconds: goal.quota.cooldownSeconds,
      window: goal.quota.window.kind === 'life' ? 'life' : `rolling ${goal.quota.window.hours} h`,
    },
    burn,
    todos: goal.todos.map((t) => ({
      id: t.id,
      title: t.title,
      owner: t.owner,
      priority: t.priority,
      status: t.status,
      ...(t.action ? { action: t.action } : {}),
      ...(t.gate ? { gate: t.gate } : {}),
      ...(t.claimedBy ? { claimed_by: t.claimedBy } : {}),
      ...(t.status === 'claimed' && t.leaseUntil ? { lease_until: t.leaseUntil } : {}),
      ...recurrenceOut(t),
      depends_on: t.dependsOn,
      evidence: t.evidence,
    })),
    gates: [...goal.gates]
      .sort((a, b) => Number(b.status === 'pending') - Number(a.status === 'pending'))
      .map((g) => ({
        id: g.id,
        title: g.title,
        reason: g.reason,
        status: g.status,
        guards: g.guards,
        requested_by: `${g.requestedBy.kind}:${g.requestedBy.id}`,
        requested_via: g.requestedBy.channel,
        requested_at: g.requestedAt,
        ...(g.decidedBy ? { decided_by: `${g.decidedBy.kind}:${g.decidedBy.id}` } : {}),
        ...(g.decidedAt ? { decided_at: g.decidedAt } : {}),
        ...(g.note ? { note: g.note } : {}),
        signed: !!g.signature,
        ...(g.approvedFor ? { approved_for: g.approvedFor.map((w) => w.todoId) } : {}),
      })),
    runs: goal.runs
      .slice(-LAST_RUNS)
      .reverse()
      .map((r) => runOut(goal, r)),
    rewards: {
      count: scores.length,
      mean: scores.length
        ? Math.round((scores.reduce((a, b) => a + b, 0) / scores.length) * 1000) / 1000
        : null,
      trend: goal.rewards.map((w) => ({ at: w.at, run_id: w.runId, score: w.score })),
    },
    overruled: (goal.overruled ?? []).map(overruledOut),
    denied: latestDenials(goal).map(deniedOut),
    denied_total: goal.deniedTotal ?? 0,
    state_hash: stateHash(goal),
    writers: Object.fromEntries(
      [...new Set([...goal.runs.map((r) => r.writer), ...(goal.overruled ?? []).map((o) => o.writer)])]
        .filter((w): w is string => w !== undefined && writerNames.has(w))
        .map((w) => [w, writerNames.get(w)!]),
    ),
    warnings: [...warnings, ...describeIgnored(goal)],
  };
}

export function goalStatus(store: Store, goalId: string): GoalStatusDoc {
  const loaded = store.load(goalId);
  // A policy.json that does not parse stops every contract of the goal: the goal's status
  // reports it (corrupt) rather than look healthy. An unsigned edit is a warning.
  const policy = policyMessage(store.policyView());
  return goalStatusDoc(
    loaded.state,
    new Date(store.now()),
    loaded.revision,
    policy ? [...loaded.warnings, policy] : loaded.warnings,
    store.writerNames(),
  );
}

function policyMessage(v: PolicyView): string | undefined {
  return [describeUnsignedPolicy(v), ...v.ignored].filter(Boolean).join('; ') || undefined;
}

/** The policy part of `status`: never throws, so a broken policy.json is reported, not fatal. */
export function policyStatus(store: Store): PolicyStatus {
  let v: PolicyView;
  try {
    v = store.policyView();
  } catch (e) {
    if (!(e instanceof LoopxError)) throw e;
    return invalidPolicyStatus(store, e);
  }
  const message = policyMessage(v);
  return {
    state: v.state,
    ...(v.signed ? { signed_by: v.signed.signedBy, signed_at: v.signed.signedAt } : {}),
    unsigned_changes: v.unsigned,
    ...(message ? { message } : {}),
  };
}

/** All goals from the index: no goal log is read unless the index misses it. */
export function statusAll(store: Store): StatusDoc {
  const { goals, errors } = store.listGoals();
  const attention: AttentionItem[] = [];
  for (const g of goals) {
    if (g.pendingGates > 0 && g.status !== 'closed' && g.status !== 'cancelled') {
      attention.push({
        kind: 'gate',
        goal_id: g.id,
        id: g.id,
        title: g.title,
        detail: `${g.pendingGates} gate${g.pendingGates > 1 ? 's' : ''} pending`,
      });
    }
    if (g.status === 'active' && g.todosTotal === 0) {
      attention.push({
        kind: 'plan',
        goal_id: g.id,
        id: 'plan',
        title: g.title,
        detail: 'needs a plan: no todos yet',
      });
    }
  }
  return {
    schema: STATUS_SCHEMA,
    generated_at: store.now(),
    workspace: store.workspace,
    counts: countBy(goals, (g: IndexEntry) => g.status, [
      'active',
      'paused',
      'completed',
      'closed',
      'cancelled',
    ]),
    attention,
    goals: goals.map((g) => ({
      id: g.id,
      title: g.title,
      status: g.status,
      created_at: g.createdAt,
      progress: { done: g.todosDone, total: g.todosTotal },
      pending_gates: g.pendingGates,
      denied: g.denied,
    })),
    errors: errors.map((e) => ({ goal_id: e.goalId, message: e.message })),
    policy: policyStatus(store),
  };
}

/** A recurring todo's schedule and its next due time (done: the next slot; open: the slot it is for). */
function recurrenceOut(t: Todo): { recurs?: string; next_due?: string } {
  if (!t.recur) return {};
  const next =
    t.status === 'done' ? nextOccurrence(t.recur, new Date(t.doneAt ?? t.updatedAt)).toISOString() : t.dueAt;
  return { recurs: describeRecurrence(t.recur), ...(next ? { next_due: next } : {}) };
}
