/** The contract capability: what a should-run decision writes (the run and its signed contract). */
import { z } from 'zod';
import { contractPayload } from '../contract';
import type { Contract, EventDraft } from '../model';
import { draft, Id, lazy, Line, newId, policyTtlMinutes } from '../model';
import { decide, todosGuardedBy } from '../rules';
import type { DefineCapability } from './types';

export function defineContractCapabilities(define: DefineCapability) {
  define({
    id: 'contract.issue',
    summary: 'Decide the next turn (should-run); on `run`, open a run with a signed, expiring contract.',
    touches: ['runs', 'gates'],
    gates: 'lists only todos whose gates (own and policy) are approved',
    quota: 'one turn when a new run opens',
    actors: ['agent', 'user', 'system'],
    // A closed or cancelled goal answers `stop` (the first rule of the decision order) instead of
    // refusing the call; `decide` returns before anything is planned, so nothing is written.
    onFinishedGoal: true,
    input: lazy(() =>
      z.object({
        goalId: Id,
        agent: Line(128),
        abilities: z.array(z.enum(['exec', 'judgment'])).optional(),
        ttlMinutes: z
          .number()
          .positive()
          .max(24 * 60)
          .optional(),
        /** Set by `loopx drive` only: the lane the contract is for (its claims are leases). */
        lane: z
          .object({
            name: Id,
            leaseSeconds: z
              .number()
              .int()
              .positive()
              .max(24 * 3600),
            cwd: z.string().min(1).max(4096).optional(),
            todosPerTurn: z.number().int().min(1).max(5).optional(),
          })
          .optional(),
      }),
    ),
    plan: (s, i, ctx) => {
      const d = decide(s, ctx.policy, ctx.now, {
        agent: i.agent,
        abilities: i.abilities,
        writer: ctx.writer,
        maxTodos: i.lane?.todosPerTurn,
      });
      const events: EventDraft[] = d.reopen.map((r) =>
        draft('todo.reopened', { todoId: r.todo.id, due: r.due.toISOString() }),
      );
      for (const e of d.toEnd)
        events.push(
          draft('run.ended', {
            runId: e.run.id,
            outcome: e.outcome,
            summary: `ended by should-run: ${e.why}`,
          }),
        );
      // A gate the policy requires, or the review of another clone's command, that nobody
      // requested yet: ask the person now.
      for (const g of d.gates.filter((x) => x.status === 'missing')) {
        const guards = g.guards ?? todosGuardedBy(g.id, s.todos, ctx.policy, s.gates).map((t) => t.id);
        const gate = { id: g.id, title: g.title, reason: g.reason, guards };
        // A review gate's reason is LoopX's own: the command is shown whole, from the todo.
        events.push(draft('gate.requested', { gate: g.guards ? { ...gate, reasonByLoopx: true } : gate }));
      }
      if (d.decision === 'run' && !d.reuse) {
        // Never longer than the policy allows: a longer --ttl-minutes is capped (shouldRun says so).
        const limit = policyTtlMinutes(ctx.policy);
        const ttl = Math.min(i.ttlMinutes ?? limit, limit);
        const runId = newId('run', 8);
        const unsigned: Omit<Contract, 'sig'> = {
          v: 1,
          id: newId('c', 10),
          goalId: s.id,
          runId,
          agent: i.agent,
          issuedAt: ctx.now.toISOString(),
          expiresAt: new Date(ctx.now.getTime() + ttl * 60_000).toISOString(),
          actions: d.actions.map((a) => ({ todoId: a.todo.id, command: a.command })),
          judgment: d.judgment.map((t) => t.id),
          writer: ctx.writer,
          ...(i.lane ? { lane: i.lane.name, lease: i.lane.leaseSeconds } : {}),
          ...(i.lane?.cwd ? { cwd: i.lane.cwd } : {}),
        };
        const contract = { ...unsigned, sig: ctx.sign(contractPayload(unsigned)) };
        events.push(draft('run.started', { run: { id: runId, agent: i.agent, contract } }));
        // A lane claims its contract's todos as it gets them, so that another lane on the goal
        // is given other work; the claims are leases its driver renews while the turn lives.
        if (i.lane) {
          const until = new Date(ctx.now.getTime() + i.lane.leaseSeconds * 1000).toISOString();
          for (const todoId of [...unsigned.actions.map((a) => a.todoId), ...unsigned.judgment])
            events.push(draft('todo.claimed', { todoId, by: i.agent, until }));
        }
      }
      return events;
    },
  });
}
