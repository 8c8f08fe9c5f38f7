/** Todo capabilities: adding work (and the gates it needs), claiming, updating and finishing it. */
import { z } from 'zod';
import type { EventDraft, GoalState } from '../model';
import {
  claimLapsed,
  confusableProblem,
  draft,
  Id,
  lazy,
  Line,
  newId,
  notFound,
  Owner,
  Priority,
  quote,
  Recurrence,
  refused,
  ShownText,
  usageError,
} from '../model';
import { deniedBy, policyGatesFor, reviewGateId, unapprovedGates } from '../rules';
import { gateTitle } from '../views';
import { AllActors, findTodo, goalId, openRun } from './shared';
import type { CapabilityContext, DefineCapability } from './types';

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
  return reviewGateId(todoId);
}

const TodoAddInput = lazy(() =>
  z.object({
    goalId,
    todoId: Id.optional(),
    title: Line(200),
    owner: Owner.default('agent'),
    priority: Priority.default('P2'),
    action: Line(2000).optional(),
    gate: Id.optional(),
    dependsOn: z.array(Id).max(50).default([]),
    /** It reopens when due (a monitor todo): parsed by rules/recurrence.ts's parseRecurrence. */
    recur: Recurrence.optional(),
  }),
);

/**
 * The events that add a todo, under every rule todo.add has (policy denials and gates, the
 * review gate of an agent's command, a rejected gate): workflow.run adds its todos through it.
 */
export function todoAddEvents(
  s: GoalState,
  i: z.infer<typeof TodoAddInput>,
  ctx: CapabilityContext,
): EventDraft[] {
  const todoId = i.todoId!;
  if (s.todos.some((t) => t.id === todoId))
    throw refused(`goal ${s.id} already has a todo ${todoId}`, { todoId, reason: 'todo_exists' });
  for (const d of i.dependsOn) findTodo(s, d);
  let gate = i.gate;
  let byPolicy: ReturnType<typeof policyGatesFor> = [];
  if (i.action) {
    // A person reads the command letter by letter: a lookalike must not pass for what it shows.
    const lookalike = confusableProblem(i.action);
    if (lookalike) throw usageError(`the action ${lookalike}`, { reason: 'confusable_text' });
    const denied = deniedBy(ctx.policy, i.action);
    if (denied) {
      throw refused(
        `the workspace policy denies actions matching ${quote(denied.pattern)}${denied.reason ? ` (${denied.reason})` : ''}: ${quote(i.action)} cannot be a todo action`,
        { pattern: denied.pattern, reason: 'policy_denied' },
      );
    }
    byPolicy = policyGatesFor(ctx.policy, i.action);
    gate ??= byPolicy[0]?.gate;
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
        ...(i.recur ? { recur: i.recur } : {}),
      },
    }),
  ];
  const review = reviewGateFor(ctx, todoId, i.action);
  if (review) {
    events.push(
      draft('gate.requested', {
        gate: {
          id: review,
          title: `Review the command todo ${todoId} proposes`,
          // LoopX's words: the command itself is shown whole, from the todo, where a person decides.
          reason: `an agent (${ctx.actor.id} via ${ctx.actor.channel}) proposed a command for todo ${todoId}; read it in full before approving`,
          guards: [todoId],
          reasonByLoopx: true,
        },
      }),
    );
  }
  // The todo's own gate and, when it names another one, the gate the policy puts on its action:
  // completion needs both (gatesFor), so both are asked for now, while other work goes on. An
  // approved gate is asked again: its approval lists the work the person saw, not this todo.
  for (const need of new Set([gate, ...byPolicy.map((r) => r.gate)].filter((x) => x !== undefined))) {
    const existing = s.gates.find((g) => g.id === need);
    if (existing?.status === 'rejected') {
      throw refused(
        `gate ${need} of goal ${s.id} was rejected: request it again (gate request) before adding work that needs it`,
        { gate: need, reason: 'gate_rejected' },
      );
    }
    const rule = need === i.gate ? undefined : byPolicy.find((r) => r.gate === need);
    events.push(
      draft('gate.requested', {
        gate: {
          id: need,
          title: existing?.title ?? gateTitle(need, [{ title: i.title }]),
          reason: rule
            ? `the workspace policy requires gate ${need} for commands matching ${quote(rule.pattern)} (todo ${todoId})`
            : `todo ${todoId} names gate ${need}`,
          guards: [todoId],
          reasonByLoopx: true,
        },
      }),
    );
  }
  return events;
}

export function defineTodoCapabilities(define: DefineCapability): void {
  define({
    id: 'todo.add',
    summary: 'Add a todo; a gate it names that does not exist yet is requested at once.',
    touches: ['todos', 'gates'],
    gates: 'requests the todo gate, and the policy gate of its action, when not approved',
    quota: 'none',
    actors: AllActors,
    input: TodoAddInput,
    prepare: (i) => ({ ...i, todoId: i.todoId ?? newId('t', 6) }),
    plan: todoAddEvents,
  });

  define({
    id: 'todo.claim',
    summary: 'Claim an open todo for an agent or a person, so no one else takes it.',
    touches: ['todos'],
    gates: 'none',
    quota: 'none',
    actors: AllActors,
    input: lazy(() =>
      z.object({
        goalId,
        todoId: Id,
        by: Line(128).optional(),
        /** The claim is a lease that lapses after this many seconds unless renewed (`todo.renew`). */
        leaseSeconds: z
          .number()
          .int()
          .positive()
          .max(24 * 3600)
          .optional(),
      }),
    ),
    plan: (s, i, ctx) => {
      const t = findTodo(s, i.todoId);
      const by = i.by ?? ctx.actor.id;
      const until =
        i.leaseSeconds === undefined
          ? undefined
          : new Date(ctx.now.getTime() + i.leaseSeconds * 1000).toISOString();
      if (t.status === 'claimed' && t.claimedBy === by)
        return until ? [draft('todo.renewed', { todoId: t.id, by, until })] : [];
      // A lapsed lease holds nothing: its holder's turn is gone, another may take the work.
      if (t.status !== 'open' && !claimLapsed(t, ctx.now)) {
        throw refused(
          `todo ${t.id} is ${t.status}${t.claimedBy ? ` by ${t.claimedBy} since ${t.claimedAt}` : ''}: only an open todo can be claimed`,
          { todoId: t.id, reason: t.status === 'claimed' ? 'claimed_by_other' : 'todo_finished' },
        );
      }
      return [draft('todo.claimed', { todoId: t.id, by, ...(until ? { until } : {}) })];
    },
  });

  define({
    id: 'todo.renew',
    summary: 'Extend the lease on a claimed todo while its holder’s turn is alive (`loopx drive`).',
    touches: ['todos'],
    gates: 'none',
    quota: 'none',
    actors: ['agent', 'system'],
    input: lazy(() =>
      z.object({
        goalId,
        todoId: Id,
        by: Line(128),
        leaseSeconds: z
          .number()
          .int()
          .positive()
          .max(24 * 3600),
      }),
    ),
    plan: (s, i, ctx) => {
      const t = findTodo(s, i.todoId);
      if (t.status !== 'claimed' || t.claimedBy !== i.by)
        throw refused(`todo ${t.id} is not claimed by ${i.by}: there is no lease to renew`, {
          todoId: t.id,
          reason: 'todo_not_claimed',
        });
      const until = new Date(ctx.now.getTime() + i.leaseSeconds * 1000).toISOString();
      return [draft('todo.renewed', { todoId: t.id, by: i.by, until })];
    },
  });

  define({
    id: 'todo.release',
    summary: 'Give a claimed todo back (its holder stopped, or self-repair found the claim abandoned).',
    touches: ['todos'],
    gates: 'none',
    quota: 'none',
    actors: AllActors,
    input: lazy(() => z.object({ goalId, todoId: Id, reason: ShownText(2000).default('released') })),
    plan: (s, i) => {
      const t = findTodo(s, i.todoId);
      if (t.status !== 'claimed')
        throw refused(`todo ${t.id} is ${t.status}, not claimed`, {
          todoId: t.id,
          reason: 'todo_not_claimed',
        });
      return [draft('todo.released', { todoId: t.id, reason: i.reason, by: t.claimedBy })];
    },
  });

  define({
    id: 'todo.update',
    summary: 'Change a todo’s title, priority or note.',
    touches: ['todos'],
    gates: 'none',
    quota: 'none',
    actors: AllActors,
    input: lazy(() =>
      z.object({
        goalId,
        todoId: Id,
        title: Line(200).optional(),
        priority: Priority.optional(),
        note: ShownText(2000).optional(),
      }),
    ),
    plan: (s, i) => {
      findTodo(s, i.todoId);
      if (i.title === undefined && i.priority === undefined && i.note === undefined)
        throw usageError('nothing to update: give a title, a priority or a note');
      return [
        draft('todo.updated', { todoId: i.todoId, title: i.title, priority: i.priority, note: i.note }),
      ];
    },
  });

  define({
    id: 'todo.complete',
    summary: 'Mark a todo done, with the evidence that shows it.',
    touches: ['todos', 'evidence'],
    gates: 'the todo gate must be approved',
    quota: 'none',
    actors: AllActors,
    input: lazy(() =>
      z.object({
        goalId,
        todoId: Id,
        evidence: z.array(Id).max(100).default([]),
        summary: ShownText(4000).optional(),
        runId: Id.optional(),
      }),
    ),
    plan: (s, i, ctx) => {
      const t = findTodo(s, i.todoId);
      if (t.status === 'done' || t.status === 'cancelled')
        throw refused(`todo ${t.id} is already ${t.status}`, { todoId: t.id, reason: 'todo_finished' });
      if (t.owner === 'user' && ctx.actor.kind !== 'user') {
        throw refused(`todo ${t.id} belongs to a person (owner user): an agent cannot complete it`, {
          todoId: t.id,
          reason: 'todo_owned_by_person',
        });
      }
      const [need] = unapprovedGates(t, ctx.policy, s.gates);
      if (need) {
        throw refused(`todo ${t.id} needs gate ${need.id} approved first`, {
          todoId: t.id,
          gate: need.id,
          reason: 'gate_not_approved',
        });
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
    input: lazy(() => z.object({ goalId, todoId: Id, reason: ShownText(2000).default('cancelled') })),
    plan: (s, i) => {
      const t = findTodo(s, i.todoId);
      if (t.status === 'done' || t.status === 'cancelled')
        throw refused(`todo ${t.id} is already ${t.status}`, { todoId: t.id, reason: 'todo_finished' });
      return [draft('todo.cancelled', { todoId: t.id, reason: i.reason })];
    },
  });
}
