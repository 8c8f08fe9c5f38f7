/**
 * The state is derived from the events by `applyInPlace`, one at a time in merged order (`replay`
 * for a whole list). It depends on nothing but the events (their own timestamps included), so
 * clones holding the same events compute the same state. What two clones did without knowing of
 * each other is settled by rules/merge-rules.ts.
 */
import type { Gate, GoalState as GoalStateT, LoopxEvent, Run, Spend } from '../model';
import { BUDGET_NAMES, MAX_DENIALS_KEPT } from '../model';
import type { Trust } from '../trust';
import { isDecision, NO_TRUST } from '../trust';
import { approvalCovers, guardedWork } from './gate-rules';
import type { Overrule } from './merge-rules';
import { overruleOf } from './merge-rules';
import { addCapped, grantedAfter, runsInWindow, spendOf, tightestQuota } from './quota-math';

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
/** Adds to a run's spend, saturating (rules/quota-math.ts): a huge value in the log cannot make it Infinity. */
function addSpend(run: Run, s: Partial<Spend> | undefined) {
  if (!s) return;
  for (const k of BUDGET_NAMES) run.spend[k] = addCapped(run.spend[k], s[k] ?? 0);
}

/** The set view of a state's counted messages, built once per array (replay pushes into the same one). */
const countedSets = new WeakMap<string[], Set<string>>();
export function countedSet(counted: string[]): Set<string> {
  let set = countedSets.get(counted);
  if (!set || set.size !== counted.length) {
    set = new Set(counted);
    countedSets.set(counted, set);
  }
  return set;
}

/**
 * The messages of `messages` that `state` counts no usage of yet, each once: the one rule both the
 * Stop hook (is there anything to count?) and `run.capture` (what to count, under the lock) use.
 */
export function uncounted<M extends { key: string }>(state: GoalStateT, messages: readonly M[]): M[] {
  const seen = countedSet(state.counted ?? []);
  const taken = new Set<string>();
  return messages.filter((m) => !seen.has(m.key) && !taken.has(m.key) && taken.add(m.key));
}

/**
 * Whether a person's decision is theirs: signed by a pinned key, and not a copy of one that
 * already took effect. One that is not stays in the log and is listed in `ignored`, and the gate
 * it meant to decide stays decidable.
 */
function decisionSigned(g: GoalStateT, ev: LoopxEvent, goalId: string, trust: Trust): boolean {
  const why = g.decisionIds?.includes(ev.id)
    ? `it repeats decision ${ev.id}, which already took effect`
    : trust.rejects({ goalId, ...ev }, ev.sig);
  if (!why) return true;
  (g.ignored ??= []).push({ eventId: ev.id, type: ev.type, ts: ev.ts, actor: ev.actor, reason: why });
  return false;
}

/** Records a person's decision `ev` on `gate`: what it decided, who, when, and that it is the last. */
function decided(
  gate: Gate,
  ev: LoopxEvent,
  status: 'approved' | 'rejected',
  note: string | undefined,
): Gate {
  gate.status = status;
  gate.lastDecision = ev.id;
  gate.decidedBy = ev.actor;
  gate.decidedAt = ev.ts;
  if (note !== undefined) gate.note = note;
  return gate;
}

/** Lists `ev` as overruled by rule `o`. */
export function overruleWith(g: GoalStateT, ev: LoopxEvent, o: Overrule): void {
  (g.overruled ??= []).push({
    eventId: ev.id,
    type: ev.type,
    ts: ev.ts,
    writer: ev.writer,
    actor: ev.actor,
    ...o,
    reason: o.reason.slice(0, 500),
  });
}

/** Whether a merge rule overrules `ev`; a run ended twice still counts the spend the later end reports. */
function overrule(g: GoalStateT, ev: LoopxEvent): boolean {
  const o = overruleOf(g, ev);
  if (!o) return false;
  overruleWith(g, ev, o);
  if (ev.type === 'run.ended' && o.rule === 'run_ended_first')
    addSpend(runIn(g, ev.data.runId), ev.data.spend);
  return true;
}

/**
 * Applies one event to a goal state and returns the new state. `g` is changed in place: replay
 * owns its working state, so it need not clone per event. An event that cannot apply (merge-rules)
 * is listed as overruled; only a log that does not start with its goal's creation throws, a plain
 * Error that the store turns into a `corrupt` report naming the line.
 */
export function applyInPlace(
  g: GoalStateT | undefined,
  ev: LoopxEvent,
  goalId: string,
  trust: Trust = NO_TRUST,
): GoalStateT {
  if (ev.type === 'goal.created' && !g) {
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
  const decision = isDecision(g, ev);
  if (decision && !decisionSigned(g, ev, goalId, trust)) return g;
  // Overruled, another creation still binds the budget: backdating one must not raise it.
  if (ev.type === 'goal.created') g.quota = tightestQuota(g.quota, ev.data.quota);
  if (overrule(g, ev)) return g;
  if (decision) (g.decisionIds ??= []).push(ev.id);
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
      g.todos.push({
        ...ev.data.todo,
        status: 'open',
        evidence: [],
        addedBy: ev.actor,
        ...(ev.data.todo.action !== undefined ? { actionFrom: ev.writer } : {}),
        ...(ev.sig && !trust.rejects({ goalId, ...ev }, ev.sig) ? { actionSignedBy: ev.sig.keyId } : {}),
        createdAt: ev.ts,
        updatedAt: ev.ts,
      });
      break;
    case 'todo.claimed': {
      const t = todoIn(g, ev.data.todoId);
      t.status = 'claimed';
      t.claimedBy = ev.data.by;
      t.claimedAt = ev.ts;
      if (ev.data.until) t.leaseUntil = ev.data.until;
      else delete t.leaseUntil;
      t.updatedAt = ev.ts;
      break;
    }
    case 'todo.renewed': {
      // Only the holder renews, and a lease only grows: a late renewal from a lane whose claim
      // another took over changes nothing.
      const t = todoIn(g, ev.data.todoId);
      if (t.status !== 'claimed' || t.claimedBy !== ev.data.by) break;
      if (!t.leaseUntil || t.leaseUntil < ev.data.until) t.leaseUntil = ev.data.until;
      break;
    }
    case 'todo.released': {
      const t = todoIn(g, ev.data.todoId);
      t.status = 'open';
      delete t.claimedBy;
      delete t.claimedAt;
      delete t.leaseUntil;
      t.updatedAt = ev.ts;
      break;
    }
    case 'todo.reopened': {
      const t = todoIn(g, ev.data.todoId);
      if (t.status !== 'done' || (t.dueAt && t.dueAt >= ev.data.due)) break;
      t.status = 'open';
      t.dueAt = ev.data.due;
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
      // Completed on two clones: one completion (the first), the evidence of both.
      const t = todoIn(g, ev.data.todoId);
      for (const e of ev.data.evidence) if (!t.evidence.includes(e)) t.evidence.push(e);
      if (t.status === 'done') break;
      t.status = 'done';
      t.doneAt = ev.ts;
      delete t.leaseUntil;
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
      const gate = decided(gateIn(g, ev.data.gateId), ev, 'approved', ev.data.note);
      if (ev.sig) gate.signature = ev.sig;
      else delete gate.signature;
      // An approval from before the list was recorded covers the work the goal had then.
      gate.approvedFor = ev.data.guarded ?? g.todos.map(guardedWork);
      break;
    }
    case 'gate.rejected': {
      const gate = decided(gateIn(g, ev.data.gateId), ev, 'rejected', ev.data.note);
      for (const id of ev.data.cancelled) {
        const t = todoIn(g, id);
        // Done on another clone before the rejection was merged: finished stays finished.
        if (t.status === 'done') continue;
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
        writer: ev.writer,
        startedAt: ev.ts,
        spend: { turns: 1, tokens: 0, costUsd: 0, wallSeconds: 0 },
      });
      break;
    case 'run.spend': {
      const r = runIn(g, ev.data.runId);
      const u = ev.data.usage;
      if (u) {
        // Each transcript message counts once: a copy of a capture that already counted adds nothing.
        const counted = (g.counted ??= []);
        const seen = countedSet(counted);
        if (u.messages.length && u.messages.every((m) => seen.has(m))) break;
        for (const m of u.messages)
          if (!seen.has(m)) {
            seen.add(m);
            counted.push(m);
          }
        const was = r.usage ?? { input: 0, output: 0, cacheWrite: 0, cacheRead: 0 };
        r.usage = {
          input: addCapped(was.input, u.input),
          output: addCapped(was.output, u.output),
          cacheWrite: addCapped(was.cacheWrite, u.cacheWrite),
          cacheRead: addCapped(was.cacheRead, u.cacheRead),
        };
      }
      addSpend(r, ev.data.spend);
      break;
    }
    case 'agent.denied': {
      const denied = (g.denied ??= []);
      denied.push({ ...ev.data, eventId: ev.id, at: ev.ts });
      if (denied.length > MAX_DENIALS_KEPT) denied.splice(0, denied.length - MAX_DENIALS_KEPT);
      g.deniedTotal = (g.deniedTotal ?? 0) + 1;
      break;
    }
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
      // Room above what is spent when the person grants it (rules/quota-math.ts, grantedAfter).
      const spent = spendOf(runsInWindow(g, new Date(ev.ts)));
      for (const k of BUDGET_NAMES) {
        const add = ev.data.budgets[k];
        if (add !== undefined) g.granted[k] = grantedAfter(g, k, add, spent[k]);
      }
      break;
    }
    case 'workflow.started':
      (g.workflows ??= []).push({ ...ev.data, startedBy: ev.actor, startedAt: ev.ts });
      break;
    case 'log.quarantined':
    case 'log.migrated':
      break;
  }
  return g;
}

/** Replays events in merged order. The goal id comes from the folder, not from the events. */
export function replay(
  goalId: string,
  events: readonly LoopxEvent[],
  trust: Trust = NO_TRUST,
): GoalStateT | undefined {
  let state: GoalStateT | undefined;
  for (const ev of events) state = applyInPlace(state, ev, goalId, trust);
  return state;
}
