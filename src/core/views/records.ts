/**
 * The everyday read documents: one todo, gate or run in full, and the evidence and reward lists.
 * Pure functions of a goal's state (and, for histories, its merged events), so the CLI and any
 * other adapter show the same facts. Shapes are in views/records-doc.ts.
 */
import type { Actor, Evidence, Gate, GoalState, Policy, Reward, Todo } from '../model';
import { notFound, quote } from '../model';
import type { MergedEvent } from '../rules';
import { approvalCovers, gatesFor, todosGuardedBy } from '../rules';
import { describeActor, gateFacts, reasonWhose } from './gate-facts';
import type { EvidenceOut, GateDoc, HistoryEntry, RewardOut, RunDoc, RunItem, TodoDoc } from './records-doc';
import { GATE_SCHEMA, RUN_SCHEMA, TODO_SCHEMA } from './records-doc';
import { goalStatusDoc, runOut } from './status';

const who = (a: Actor) => `${a.kind}:${a.id}`;

/** The lookups the read commands share: not found names the flag and how to list what there is. */
function findOr<T extends { id: string }>(items: readonly T[], id: string, what: string, goal: GoalState): T {
  const found = items.find((x) => x.id === id);
  if (found) return found;
  const flag = `--${what}-id`;
  const list = `loopx ${what} list --goal-id ${goal.id}`;
  throw notFound(`goal ${goal.id} has no ${what} ${quote(id)} (${flag}); list them with \`${list}\``, {
    goalId: goal.id,
    field: flag,
    reason: `${what}_not_found`,
  });
}

/** Evidence recorded for the todo, or named when it was completed. */
const evidenceOfTodo = (t: Todo, e: Evidence) => e.todoId === t.id || t.evidence.includes(e.id);

export function evidenceOut(e: Evidence): EvidenceOut {
  return {
    id: e.id,
    kind: e.kind,
    summary: e.summary,
    ...(e.runId ? { run_id: e.runId } : {}),
    ...(e.todoId ? { todo_id: e.todoId } : {}),
    ...(e.command !== undefined ? { command: e.command } : {}),
    ...(e.exitCode !== undefined ? { exit_code: e.exitCode } : {}),
    ...(e.durationMs !== undefined ? { duration_ms: e.durationMs } : {}),
    ...(e.artifact ? { artifact: e.artifact.path } : {}),
    at: e.at,
    by: who(e.by),
    via: e.by.channel,
  };
}

export function rewardOut(w: Reward): RewardOut {
  return {
    id: w.id,
    run_id: w.runId,
    score: w.score,
    comment: w.comment,
    ...(w.lesson ? { lesson: w.lesson } : {}),
    at: w.at,
    by: who(w.by),
    via: w.by.channel,
  };
}

function historyEntry(m: MergedEvent, names: ReadonlyMap<string, string>): HistoryEntry {
  const name = names.get(m.ev.writer);
  return {
    event_id: m.ev.id,
    at: m.ev.ts,
    type: m.ev.type,
    by: who(m.ev.actor),
    via: m.ev.actor.channel,
    writer: m.ev.writer,
    ...(name ? { writer_name: name } : {}),
  };
}

/** Which todos, gates and runs an event is about (the ids its data names). */
function subjects(m: MergedEvent): { todos: string[]; gates: string[]; runs: string[] } {
  const d = m.ev.data as Record<string, unknown>;
  const todos: string[] = [];
  const gates: string[] = [];
  const runs: string[] = [];
  const str = (v: unknown, into: string[]) => typeof v === 'string' && into.push(v);
  str(d.todoId, todos);
  str(d.gateId, gates);
  str(d.runId, runs);
  const inner = (d.todo ?? d.gate ?? d.run ?? d.evidence ?? d.reward) as Record<string, unknown> | undefined;
  if (inner && typeof inner === 'object') {
    if (m.ev.type === 'todo.added') str(inner.id, todos);
    if (m.ev.type === 'gate.requested') {
      str(inner.id, gates);
      if (Array.isArray(inner.guards)) todos.push(...(inner.guards as string[]));
    }
    if (m.ev.type === 'run.started') str(inner.id, runs);
    str(inner.todoId, todos);
    str(inner.runId, runs);
  }
  if (Array.isArray(d.cancelled)) todos.push(...(d.cancelled as string[]));
  // An approval lists the work it covers: it is part of each todo's history.
  if (Array.isArray(d.guarded)) todos.push(...(d.guarded as { todoId: string }[]).map((w) => w.todoId));
  return { todos, gates, runs };
}

function historyOf(
  events: readonly MergedEvent[],
  names: ReadonlyMap<string, string>,
  about: (s: ReturnType<typeof subjects>) => boolean,
): HistoryEntry[] {
  return events.filter((m) => about(subjects(m))).map((m) => historyEntry(m, names));
}

export interface HistoryInput {
  events: readonly MergedEvent[];
  writerNames?: ReadonlyMap<string, string>;
}

/** `loopx todo show`: the todo as `todo list` gives it, and everything about it. */
export function todoDoc(goal: GoalState, policy: Policy, todoId: string, h: HistoryInput): TodoDoc {
  const t: Todo = findOr(goal.todos, todoId, 'todo', goal);
  const item = goalStatusDoc(goal, new Date(goal.updatedAt), 0).todos.find((x) => x.id === t.id)!;
  return {
    schema: TODO_SCHEMA,
    goal_id: goal.id,
    ...item,
    ...(t.note ? { note: t.note } : {}),
    ...(t.claimedAt ? { claimed_at: t.claimedAt } : {}),
    created_at: t.createdAt,
    updated_at: t.updatedAt,
    ...(t.addedBy ? { added_by: who(t.addedBy), added_via: t.addedBy.channel } : {}),
    gates: gatesFor(t, policy, goal.gates).map((need) => {
      const g = goal.gates.find((x) => x.id === need.id);
      return {
        id: need.id,
        status: g?.status ?? 'not requested',
        ...(g ? { title: g.title } : {}),
        ...(need.pattern !== undefined ? { policy_pattern: need.pattern } : {}),
        covers: !!g && approvalCovers(g, t),
      };
    }),
    depends: t.dependsOn.map((id) => {
      const d = goal.todos.find((x) => x.id === id);
      return d ? { id, title: d.title, status: d.status } : { id, status: 'unknown' };
    }),
    evidence_records: goal.evidence.filter((e) => evidenceOfTodo(t, e)).map(evidenceOut),
    history: historyOf(h.events, h.writerNames ?? new Map(), (s) => s.todos.includes(t.id)),
  };
}

/** `loopx gate show`: the gate as `gate list` gives it, its work whole, and the decision. */
export function gateDoc(goal: GoalState, policy: Policy, gateId: string, h: HistoryInput): GateDoc {
  const g: Gate = findOr(goal.gates, gateId, 'gate', goal);
  const item = goalStatusDoc(goal, new Date(goal.updatedAt), 0).gates.find((x) => x.id === g.id)!;
  // The same work list the decision prompt shows (and a decision signs), not a second rule for it.
  const facts = gateFacts(goal, policy, g, 'approve');
  const work = (w: { todoId: string; title: string; action?: string }) => ({
    todo_id: w.todoId,
    title: w.title,
    ...(w.action !== undefined ? { action: w.action } : {}),
  });
  return {
    schema: GATE_SCHEMA,
    goal_id: goal.id,
    ...item,
    ...(g.expiresAt ? { expires_at: g.expiresAt } : {}),
    requested_by_words: describeActor(g.requestedBy),
    reason_whose: reasonWhose(g),
    work: todosGuardedBy(g.id, goal.todos, policy, goal.gates).map((t) => ({
      id: t.id,
      title: t.title,
      status: t.status,
      ...(t.action !== undefined ? { action: t.action } : {}),
      covered: approvalCovers(g, t),
    })),
    open_work: facts.work.map(work),
    ...(g.status !== 'pending'
      ? {
          decision: {
            outcome: g.status,
            ...(g.decidedBy ? { by: who(g.decidedBy), by_words: describeActor(g.decidedBy) } : {}),
            ...(g.decidedAt ? { at: g.decidedAt } : {}),
            signed: !!g.signature,
            ...(g.note ? { note: g.note } : {}),
            ...(g.approvedFor ? { approved_for: g.approvedFor.map(work) } : {}),
          },
        }
      : {}),
    history: historyOf(h.events, h.writerNames ?? new Map(), (s) => s.gates.includes(g.id)),
  };
}

/** `loopx run list`: every run (or one agent's), newest first, as GoalStatusDoc.runs gives them. */
export function runList(goal: GoalState, opts: { agent?: string; limit?: number } = {}): RunItem[] {
  const runs = goal.runs.filter((r) => opts.agent === undefined || r.agent === opts.agent).reverse();
  return (opts.limit ? runs.slice(0, opts.limit) : runs).map((r) => runOut(goal, r));
}

/** `loopx run show`: the run as `run list` gives it, with its contract, evidence and rewards whole. */
export function runDoc(
  goal: GoalState,
  runId: string,
  writerNames: ReadonlyMap<string, string> = new Map(),
): RunDoc {
  const r = findOr(goal.runs, runId, 'run', goal);
  const name = r.writer ? writerNames.get(r.writer) : undefined;
  const c = r.contract;
  return {
    schema: RUN_SCHEMA,
    goal_id: goal.id,
    ...runOut(goal, r),
    ...(name ? { writer_name: name } : {}),
    ...(r.summary ? { summary: r.summary } : {}),
    ...(c
      ? {
          contract: {
            id: c.id,
            issued_at: c.issuedAt,
            expires_at: c.expiresAt,
            actions: c.actions.map((a) => ({ todo_id: a.todoId, command: a.command })),
            judgment: c.judgment,
          },
        }
      : {}),
    evidence: goal.evidence.filter((e) => e.runId === r.id).map(evidenceOut),
    rewards: goal.rewards.filter((w) => w.runId === r.id).map(rewardOut),
  };
}

/** `loopx evidence list`: oldest first; an unknown run or todo is not found, not an empty list. */
export function evidenceList(goal: GoalState, opts: { runId?: string; todoId?: string } = {}): EvidenceOut[] {
  if (opts.runId !== undefined) findOr(goal.runs, opts.runId, 'run', goal);
  const todo = opts.todoId !== undefined ? findOr(goal.todos, opts.todoId, 'todo', goal) : undefined;
  return goal.evidence
    .filter((e) => opts.runId === undefined || e.runId === opts.runId)
    .filter((e) => !todo || evidenceOfTodo(todo, e))
    .map(evidenceOut);
}

/** `loopx reward list`: oldest first. */
export function rewardList(goal: GoalState, opts: { runId?: string } = {}): RewardOut[] {
  if (opts.runId !== undefined) findOr(goal.runs, opts.runId, 'run', goal);
  return goal.rewards.filter((w) => opts.runId === undefined || w.runId === opts.runId).map(rewardOut);
}
