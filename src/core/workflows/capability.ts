/**
 * `workflow.run`: a workflow capability's todos, gates and instance, in one commit. The workflow
 * is read and expanded before the commit (`prepare`, which has the store), so the caller learns
 * the ids; the plan, under the goal's lock, checks the quota and adds each todo under todo.add's
 * own rules.
 */
import { z } from 'zod';
import type { DefineCapability } from '../capabilities';
import { goalId, todoAddEvents } from '../capabilities';
import type { EventDraft } from '../model';
import { draft, Id, lazy, refused } from '../model';
import { checkWorkflowBudget } from './budget';
import type { ExpandedWorkflow } from './expand';
import { expandWorkflow } from './expand';
import { findWorkflow } from './load';
import { PARAM_NAME } from './schema';

export const WORKFLOW_RUN = 'workflow.run';

export const WorkflowRunInput = lazy(() =>
  z.object({
    goalId,
    /** The workflow's name (`loopx capabilities` lists them). */
    name: Id,
    /** Parameter values by name; checked against the workflow's declaration. */
    params: z.record(z.string().regex(PARAM_NAME), z.string().max(10000)).default({}),
  }),
);
export type WorkflowRunInput = z.input<typeof WorkflowRunInput>;

/** The input once prepared: the workflow expanded, its ids chosen. Never taken from a caller. */
export type PreparedWorkflowRun = z.infer<typeof WorkflowRunInput> & { expanded: ExpandedWorkflow };

export function defineWorkflowCapabilities(define: DefineCapability): void {
  define({
    id: WORKFLOW_RUN,
    summary:
      'Run a workflow capability: add its todos and gates in one commit, and record the instance with the quota it declares.',
    touches: ['todos', 'gates', 'workflows'],
    gates: 'requests the gates the workflow declares, and the policy gates of its actions',
    quota: 'declares a budget: refused when it is more than the goal has left',
    actors: ['user', 'agent'],
    input: WorkflowRunInput,
    prepare: (i, store) => {
      // A value a caller passed as `expanded` is dropped by the schema: only this makes it.
      const wf = findWorkflow(store, i.name);
      return { ...i, expanded: expandWorkflow(wf, i.params) } as PreparedWorkflowRun;
    },
    plan: (s, input, ctx) => {
      const x = (input as PreparedWorkflowRun).expanded;
      checkWorkflowBudget(s, x.name, x.quota, ctx.now);
      const owner = new Map(x.todos.map((t) => [t.id, t.owner]));
      if (ctx.actor.kind === 'agent') {
        // As gate.request has it: an agent's gate may not hold back a person's work.
        for (const g of x.gates)
          if (g.guards.some((id) => owner.get(id) === 'user'))
            throw refused(
              `workflow ${x.name}: gate ${g.key} guards a person's todo, so an agent cannot run this workflow: a person runs it`,
              { workflow: x.name, reason: 'gate_guards_person_work' },
            );
      }
      const events: EventDraft[] = [];
      for (const t of x.todos) {
        const added = todoAddEvents(
          s,
          {
            goalId: s.id,
            todoId: t.id,
            title: t.title,
            owner: t.owner,
            priority: t.priority,
            action: t.action,
            // The workflow's own gates are requested below, with its words; its dependencies
            // are todos of this very commit, which todo.add's lookup would not find yet.
            gate: undefined,
            dependsOn: [],
          },
          ctx,
        );
        for (const e of added) {
          if (e.type === 'todo.added') {
            e.data.todo.dependsOn = t.dependsOn;
            if (t.gate) e.data.todo.gate = t.gate;
          }
          events.push(e);
        }
      }
      for (const g of x.gates)
        events.push(
          draft('gate.requested', { gate: { id: g.id, title: g.title, reason: g.reason, guards: g.guards } }),
        );
      events.push(
        draft('workflow.started', {
          instanceId: x.instanceId,
          name: x.name,
          title: x.title,
          params: x.params,
          quota: x.quota,
          todoIds: x.todos.map((t) => t.id),
          gateIds: x.gates.map((g) => g.id),
          source: x.source,
        }),
      );
      return events;
    },
  });
}
