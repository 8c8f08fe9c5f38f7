/** Gate capabilities: asking a person for approval, and the approval's outcome. */
import { z } from 'zod';
import type { Actor, Gate, GoalState, Policy, Todo } from '../model';
import { draft, GuardedWork, Id, lazy, Line, refused, ShownText } from '../model';
import { approvalCovers, awaitsGiven, guardedWork, notAwaitingDecision, openWorkGuardedBy } from '../rules';
import { canonicalJson } from '../store';
import { gateTitle } from '../views';
import { AllActors, findGate, findTodo, goalId, Humans } from './shared';
import type { DefineCapability } from './types';

/**
 * An agent may hold back only agents' work: a gate it asks to guard a person's todo would let its
 * reason steer the person into cancelling their own work by rejecting it.
 */
function checkGuardable(actor: Actor, todo: Todo): void {
  if (actor.kind !== 'agent') return;
  if (todo.owner !== 'agent' || todo.addedBy?.kind !== 'agent') {
    throw refused(
      `todo ${todo.id} is a person's work (${todo.owner === 'user' ? 'owned by a person' : 'added by a person'}): an agent's gate may guard only work an agent added`,
      { todoId: todo.id, reason: 'gate_guards_person_work' },
    );
  }
}

/**
 * The work a decision on `g` is about (`verb`: approved or rejected), its open guarded work read
 * once. Refused unless the gate waits for a person (pending, or approved without covering all
 * its open work), and unless the work is what the person was shown (`shown`): if an agent added
 * or changed guarded work in between, the person decided on something else.
 */
function decidedWork(
  g: Gate,
  s: GoalState,
  policy: Policy,
  shown: GuardedWork[] | undefined,
  verb: string,
): GuardedWork[] {
  const open = openWorkGuardedBy(g.id, s.todos, policy, s.gates);
  if (!awaitsGiven(g, open)) throw notAwaitingDecision(g, verb);
  const work = open.map(guardedWork);
  if (shown && canonicalJson(shown) !== canonicalJson(work)) {
    throw refused(
      `the work gate ${g.id} guards changed since it was shown (${work.length} todo${work.length === 1 ? '' : 's'} now): look again, then decide`,
      { gateId: g.id, reason: 'gate_work_changed' },
    );
  }
  return work;
}

/**
 * A person's decision on a gate: approve or reject, with a note, and the guarded work as the person
 * was shown it (refused if it changed since).
 */
const GateDecisionInput = lazy(() =>
  z.object({
    goalId,
    gateId: Id,
    note: ShownText(2000).optional(),
    shown: z.array(GuardedWork).max(500).optional(),
  }),
);

export function defineGateCapabilities(define: DefineCapability): void {
  define({
    id: 'gate.request',
    summary: 'Ask a person to approve something before the work it guards may run.',
    touches: ['gates'],
    gates: 'none',
    quota: 'none',
    actors: AllActors,
    input: lazy(() =>
      z.object({
        goalId,
        gateId: Id,
        title: Line(200).optional(),
        reason: ShownText(2000).default(''),
        guards: z.array(Id).max(100).default([]),
      }),
    ),
    plan: (s, i, ctx) => {
      for (const t of i.guards) checkGuardable(ctx.actor, findTodo(s, t));
      const existing = s.gates.find((g) => g.id === i.gateId);
      if (existing?.status === 'pending' && i.guards.every((t) => existing.guards.includes(t))) return [];
      if (existing?.status === 'approved') {
        // Asking again for work the approval covers changes nothing; for other work it asks anew.
        if (i.guards.every((id) => approvalCovers(existing, findTodo(s, id))))
          throw refused(`gate ${i.gateId} of goal ${s.id} is already approved`, {
            gateId: i.gateId,
            reason: 'gate_already_approved',
          });
      }
      return [
        draft('gate.requested', {
          gate: {
            id: i.gateId,
            title:
              i.title ??
              existing?.title ??
              gateTitle(
                i.gateId,
                i.guards.map((t) => findTodo(s, t)),
              ),
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
    input: GateDecisionInput,
    plan: (s, i, ctx) => {
      const g = findGate(s, i.gateId);
      const guarded = decidedWork(g, s, ctx.policy, i.shown, 'approved');
      return [draft('gate.approved', { gateId: g.id, note: i.note, guarded, basis: g.lastDecision ?? null })];
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
    input: GateDecisionInput,
    plan: (s, i, ctx) => {
      const g = findGate(s, i.gateId);
      // Everything that needed the gate: the one rule for which gates a todo needs.
      const cancelled = decidedWork(g, s, ctx.policy, i.shown, 'rejected').map((w) => w.todoId);
      return [
        draft('gate.rejected', { gateId: g.id, note: i.note, cancelled, basis: g.lastDecision ?? null }),
      ];
    },
  });

  define({
    id: 'gate.expire',
    summary: 'Expire a gate left pending past the policy’s gate expiry (self-repair).',
    touches: ['gates'],
    gates: 'none',
    quota: 'none',
    actors: ['system', 'user'],
    input: lazy(() => z.object({ goalId, gateId: Id })),
    plan: (s, i) => {
      const g = findGate(s, i.gateId);
      if (g.status !== 'pending')
        throw refused(`gate ${g.id} is ${g.status}, not pending`, {
          gateId: g.id,
          reason: 'gate_not_pending',
        });
      return [draft('gate.expired', { gateId: g.id })];
    },
  });
}
