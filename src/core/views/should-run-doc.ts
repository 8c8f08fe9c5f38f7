/**
 * The answer an executor reads. Field names are snake_case, as in the product brief.
 */
import { z } from 'zod';
import type { GoalState } from '../model';
import { Id, lazy } from '../model';
import type { DecisionResult } from '../rules';
import { PRIORITY_ORDER, stillOpenFor } from '../rules';
import { shellQuote } from '../shell';
import { gateDecisionCommand } from './next-commands';
import { OverruledOut } from './status-doc';

export const SHOULD_RUN_SCHEMA = 'loopx.should-run/1';

const GateOut = lazy(() =>
  z.object({
    id: Id,
    title: z.string(),
    reason: z.string(),
    status: z.string(),
    action_required: z.literal(true),
    approve: z.string(),
  }),
);
export const ShouldRunOutput = lazy(() =>
  z.object({
    schema: z.literal(SHOULD_RUN_SCHEMA),
    goal_id: Id,
    decision: z.enum(['run', 'wait', 'stop', 'done']),
    status: z.string(),
    reasons: z.array(z.string()),
    run_id: Id.nullable(),
    retry_after_seconds: z.number().optional(),
    quota: z.record(z.string(), z.object({ used: z.number(), limit: z.number(), left: z.number() })),
    interaction_contract: z.object({
      id: Id.nullable(),
      issued_at: z.string().nullable(),
      expires_at: z.string().nullable(),
      sig: z.string().nullable(),
      user_channel: z.object({
        action_required: z.boolean(),
        message: z.string().optional(),
        gates: z.array(GateOut),
        todos: z.array(z.object({ id: Id, title: z.string() })),
      }),
      agent_channel: z.object({
        primary: z
          .object({
            todo_id: Id,
            title: z.string(),
            command: z.string().optional(),
            complete_with: z.string().optional(),
          })
          .nullable(),
        finish_with: z.string().optional(),
      }),
      cli_channel: z.object({ next_cli_actions: z.array(z.string()) }),
    }),
    preview: z.boolean().optional(),
    /** What the caller asked for and did not get (a --ttl-minutes above the policy's, capped). */
    warnings: z.array(z.string()).optional(),
    /**
     * What this agent did that another clone's earlier work overruled once the logs were merged (a
     * claim made second, say), newest first: so the agent learns of it at its next turn.
     */
    overruled: z.array(OverruledOut).optional(),
    /** Workflow instances not started that declare more than the goal has left: their todos are left out. */
    over_budget_workflows: z
      .array(
        z.object({
          instance_id: Id,
          name: Id,
          todo_ids: z.array(Id),
          over: z.array(z.object({ budget: z.string(), declared: z.number(), left: z.number() })),
        }),
      )
      .optional(),
    /** Why a `stop` was a refusal of the turn (reason code and message), when a workflow rule refused it. */
    refusal: z.object({ reason: z.literal('workflow_over_budget'), message: z.string() }).optional(),
  }),
);
export type ShouldRunOutput = z.infer<typeof ShouldRunOutput>;

export function execCommandFor(contractId: string, todoId: string, command: string): string {
  return `loopx exec --contract ${contractId} --todo ${todoId} -- ${shellQuote(command)}`;
}

export function render(
  goal: GoalState,
  d: DecisionResult,
  opts: { preview?: boolean } = {},
): ShouldRunOutput {
  const contract = d.decision === 'run' ? d.reuse?.contract : undefined;
  const todoOf = (id: string) => goal.todos.find((t) => t.id === id);
  const agent = d.reuse?.agent ?? '';
  const actions = contract ? contract.actions.filter((a) => stillOpenFor(todoOf(a.todoId), agent)) : [];
  const judgment = contract ? contract.judgment.filter((id) => stillOpenFor(todoOf(id), agent)) : [];
  const gid = goal.id;
  // The primary is the most urgent runnable todo: a judgment todo of a higher priority comes
  // before the first command action (on a tie, the command: an executor can run it as it is).
  const firstAction = contract ? todoOf(actions[0]?.todoId ?? '') : d.actions[0]?.todo;
  const firstJudgment = contract ? todoOf(judgment[0] ?? '') : d.judgment[0];
  const primaryTodo =
    firstJudgment &&
    (!firstAction || PRIORITY_ORDER[firstJudgment.priority] < PRIORITY_ORDER[firstAction.priority])
      ? firstJudgment
      : firstAction;
  const primary = primaryTodo
    ? {
        todo_id: primaryTodo.id,
        title: primaryTodo.title,
        ...(primaryTodo.action
          ? {
              command: contract
                ? execCommandFor(contract.id, primaryTodo.id, primaryTodo.action)
                : primaryTodo.action,
            }
          : contract
            ? {
                complete_with: `loopx todo done --goal-id ${gid} --todo-id ${primaryTodo.id} --contract ${contract.id} --summary "<what you did>"`,
              }
            : {}),
      }
    : null;
  const gates = d.gates.slice(0, 5).map((g) => ({
    id: g.id,
    title: g.title,
    reason: g.reason.slice(0, 200),
    status: g.status,
    action_required: true as const,
    approve: gateDecisionCommand('approve', gid, g.id),
  }));
  const todos = d.userTodos.slice(0, 5).map((t) => ({ id: t.id, title: t.title }));
  const planWanted = d.decision === 'wait' && goal.todos.filter((t) => t.owner === 'agent').length === 0;
  const message = planWanted
    ? `add todos: loopx todo add --goal-id ${gid} --title "..." --action "<command>"`
    : gates.length
      ? `approve or reject ${gates.length === 1 ? 'the gate' : 'the gates'} listed here`
      : todos.length
        ? 'some todos are yours (owner user)'
        : undefined;
  const out: ShouldRunOutput = {
    schema: SHOULD_RUN_SCHEMA,
    goal_id: gid,
    decision: d.decision,
    status: d.status,
    reasons: d.reasons,
    run_id: contract?.runId ?? null,
    ...(d.retryAfterSeconds !== undefined ? { retry_after_seconds: d.retryAfterSeconds } : {}),
    quota: d.quota as ShouldRunOutput['quota'],
    interaction_contract: {
      id: contract?.id ?? null,
      issued_at: contract?.issuedAt ?? null,
      expires_at: contract?.expiresAt ?? null,
      sig: contract?.sig ?? null,
      user_channel: {
        action_required: planWanted || gates.length > 0 || todos.length > 0,
        ...(message ? { message } : {}),
        gates,
        todos,
      },
      agent_channel: {
        primary,
        // Names the contract, so that it ends this run (and only it) from any channel: a shell
        // ends an MCP or chat session's turn too, and never another agent's (contract/summary.ts).
        ...(contract ? { finish_with: `loopx summary_all --goal-id ${gid} --contract ${contract.id}` } : {}),
      },
      cli_channel: {
        next_cli_actions: contract
          ? actions.map((a) => execCommandFor(contract.id, a.todoId, a.command))
          : [],
      },
    },
  };
  if (opts.preview) out.preview = true;
  if (d.overBudget.length)
    out.over_budget_workflows = d.overBudget.map((w) => ({
      instance_id: w.instanceId,
      name: w.name,
      todo_ids: w.todoIds,
      over: w.over,
    }));
  if (d.refusal) out.refusal = d.refusal;
  return out;
}
