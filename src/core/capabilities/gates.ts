/** Gate capabilities: asking a person for approval, and the approval's outcome. */
import { z } from 'zod';
import { refused } from '../errors';
import { Id, Line, Text } from '../model';
import { draft } from '../events';
import type { DefineCapability } from './types';
import { goalId, AllActors, Humans, findTodo, findGate } from './shared';
import { todosGuardedBy } from '../gate-rules';

export function defineGateCapabilities(define: DefineCapability): void {
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
        throw refused(`gate ${i.gateId} of goal ${s.id} is already approved`, {
          gateId: i.gateId,
          reason: 'gate_already_approved',
        });
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
    }),
    plan: (s, i) => {
      const g = findGate(s, i.gateId);
      if (g.status !== 'pending') {
        throw refused(
          `gate ${g.id} is ${g.status}${g.decidedBy ? ` (by ${g.decidedBy.id} at ${g.decidedAt})` : ''}: only a pending gate can be approved`,
          { gateId: g.id, reason: 'gate_not_pending' },
        );
      }
      return [draft('gate.approved', { gateId: g.id, note: i.note })];
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
        throw refused(`gate ${g.id} is ${g.status}: only a pending gate can be rejected`, {
          gateId: g.id,
          reason: 'gate_not_pending',
        });
      // Everything that needed the gate: the one rule for which gates a todo needs.
      const cancelled = todosGuardedBy(g.id, s.todos, ctx.policy, s.gates)
        .filter((t) => t.status === 'open' || t.status === 'claimed')
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
      if (g.status !== 'pending')
        throw refused(`gate ${g.id} is ${g.status}, not pending`, {
          gateId: g.id,
          reason: 'gate_not_pending',
        });
      return [draft('gate.expired', { gateId: g.id })];
    },
  });
}
