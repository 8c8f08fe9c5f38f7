/**
 * The rules that settle what two clones did without knowing of each other. Replay applies events
 * in one order on every clone (rules/merge-order.ts); an event whose premise an earlier one removed (a
 * todo someone else claimed first, a gate already decided, a goal already closed) has no effect
 * and is listed as overruled, naming the rule. The same rules keep a hand-made event that points
 * at nothing from breaking the goal: it is overruled, not applied.
 */
import type { Gate, GoalState, LoopxEvent, OverruleRule, Todo } from '../model';

export interface Overrule {
  rule: OverruleRule;
  reason: string;
  todoId?: string;
  gateId?: string;
  runId?: string;
}

const finished = (t: Todo) => t.status === 'done' || t.status === 'cancelled';
const who = (a: { kind: string; id: string }) => `${a.kind} ${a.id}`;

function unknown(kind: string, id: string, ids: Pick<Overrule, 'todoId' | 'gateId' | 'runId'>): Overrule {
  return { rule: 'unknown_ref', reason: `it refers to ${kind} ${id}, which this goal does not have`, ...ids };
}

function finishedFirst(t: Todo): Overrule {
  return {
    rule: 'finished_first',
    reason: `todo ${t.id} was already ${t.status} (at ${t.updatedAt})`,
    todoId: t.id,
  };
}

/** Why decision `ev` on gate `g` does not count: another decision on it came first. */
function decidedFirst(g: Gate, basis: string | null | undefined): Overrule | undefined {
  // Decisions from before clones were merged name no basis, and count as they always did.
  if (basis === undefined || basis === (g.lastDecision ?? null)) return undefined;
  return {
    rule: 'decided_first',
    reason:
      `gate ${g.id} was already ${g.status}${g.decidedBy ? ` by ${who(g.decidedBy)}` : ''}` +
      `${g.decidedAt ? ` at ${g.decidedAt}` : ''}, a decision this one was made without knowing of: the earlier decision stands`,
    gateId: g.id,
  };
}

/**
 * Why `ev` has no effect on the goal `g` as merged so far, or undefined when it applies. A todo
 * completed twice is not overruled: the completion is idempotent and both evidence records stay.
 */
export function overruleOf(g: GoalState, ev: LoopxEvent): Overrule | undefined {
  const todo = (id: string) => g.todos.find((t) => t.id === id);
  const gate = (id: string) => g.gates.find((x) => x.id === id);
  const run = (id: string) => g.runs.find((r) => r.id === id);
  const goalOver = g.status === 'closed' || g.status === 'cancelled';
  switch (ev.type) {
    case 'goal.created':
      return {
        rule: 'created_first',
        reason: `goal ${g.id} was already created at ${g.createdAt} ("${g.title}"): the earlier creation stands`,
      };
    case 'goal.paused':
    case 'goal.resumed':
    case 'goal.closed':
    case 'goal.cancelled':
      return goalOver
        ? {
            rule: 'goal_finished',
            reason: `goal ${g.id} was already ${g.status}: closed and cancelled are final`,
          }
        : undefined;
    case 'todo.added':
      return todo(ev.data.todo.id)
        ? { rule: 'duplicate_id', reason: `todo ${ev.data.todo.id} already exists`, todoId: ev.data.todo.id }
        : undefined;
    case 'todo.claimed': {
      const t = todo(ev.data.todoId);
      if (!t) return unknown('todo', ev.data.todoId, { todoId: ev.data.todoId });
      if (finished(t)) return finishedFirst(t);
      // A lease that lapsed before this claim was made no longer holds the todo.
      const lapsed = !!t.leaseUntil && Date.parse(t.leaseUntil) <= Date.parse(ev.ts);
      if (t.status === 'claimed' && t.claimedBy !== ev.data.by && !lapsed) {
        return {
          rule: 'claimed_first',
          reason: `todo ${t.id} was claimed first by ${t.claimedBy} at ${t.claimedAt}: the earlier claim holds`,
          todoId: t.id,
        };
      }
      return undefined;
    }
    case 'todo.released': {
      const t = todo(ev.data.todoId);
      if (!t) return unknown('todo', ev.data.todoId, { todoId: ev.data.todoId });
      if (t.status !== 'claimed' || (ev.data.by !== undefined && t.claimedBy !== ev.data.by)) {
        return {
          rule: 'not_claimed',
          reason: `todo ${t.id} is ${t.status === 'claimed' ? `claimed by ${t.claimedBy}` : t.status}, not by ${ev.data.by ?? 'the releaser'}: nothing to release`,
          todoId: t.id,
        };
      }
      return undefined;
    }
    case 'todo.renewed':
    case 'todo.reopened':
    case 'todo.updated':
      return todo(ev.data.todoId) ? undefined : unknown('todo', ev.data.todoId, { todoId: ev.data.todoId });
    case 'todo.completed':
    case 'todo.cancelled': {
      const t = todo(ev.data.todoId);
      if (!t) return unknown('todo', ev.data.todoId, { todoId: ev.data.todoId });
      if (t.status === 'cancelled' || (t.status === 'done' && ev.type === 'todo.cancelled'))
        return finishedFirst(t);
      return undefined;
    }
    case 'gate.requested': {
      const missing = ev.data.gate.guards.find((id) => !todo(id));
      return missing ? unknown('todo', missing, { todoId: missing, gateId: ev.data.gate.id }) : undefined;
    }
    case 'gate.approved':
    case 'gate.rejected': {
      const gt = gate(ev.data.gateId);
      if (!gt) return unknown('gate', ev.data.gateId, { gateId: ev.data.gateId });
      if (ev.type === 'gate.rejected') {
        const missing = ev.data.cancelled.find((id) => !todo(id));
        if (missing) return unknown('todo', missing, { todoId: missing, gateId: gt.id });
      }
      return decidedFirst(gt, ev.data.basis);
    }
    case 'gate.expired': {
      const gt = gate(ev.data.gateId);
      if (!gt) return unknown('gate', ev.data.gateId, { gateId: ev.data.gateId });
      return gt.status === 'pending'
        ? undefined
        : { rule: 'decided_first', reason: `gate ${gt.id} was already ${gt.status}`, gateId: gt.id };
    }
    case 'evidence.added': {
      const e = ev.data.evidence;
      if (g.evidence.some((x) => x.id === e.id))
        return { rule: 'duplicate_id', reason: `evidence ${e.id} already exists`, todoId: e.todoId };
      return e.todoId && !todo(e.todoId) ? unknown('todo', e.todoId, { todoId: e.todoId }) : undefined;
    }
    case 'run.started':
      return run(ev.data.run.id)
        ? { rule: 'duplicate_id', reason: `run ${ev.data.run.id} already exists`, runId: ev.data.run.id }
        : undefined;
    case 'run.spend':
      return run(ev.data.runId) ? undefined : unknown('run', ev.data.runId, { runId: ev.data.runId });
    case 'run.ended': {
      const r = run(ev.data.runId);
      if (!r) return unknown('run', ev.data.runId, { runId: ev.data.runId });
      return r.endedAt
        ? {
            rule: 'run_ended_first',
            reason: `run ${r.id} had already ended (${r.outcome} at ${r.endedAt}); the spend this event reports is counted`,
            runId: r.id,
          }
        : undefined;
    }
    case 'reward.added':
      return g.rewards.some((x) => x.id === ev.data.reward.id)
        ? {
            rule: 'duplicate_id',
            reason: `reward ${ev.data.reward.id} already exists`,
            runId: ev.data.reward.runId,
          }
        : undefined;
    case 'workflow.started': {
      // Append-only: a copy of an instance already started (same id) adds nothing.
      const d = ev.data;
      if (g.workflows?.some((w) => w.instanceId === d.instanceId))
        return { rule: 'duplicate_id', reason: `workflow instance ${d.instanceId} already exists` };
      const missing = d.todoIds.find((id) => !todo(id));
      return missing ? unknown('todo', missing, { todoId: missing }) : undefined;
    }
    default:
      return undefined;
  }
}
