/**
 * The quota reasoning workflows make possible: a workflow declares what it will spend, so one
 * that has not started yet and declares more than the goal has left may not start. The one rule,
 * used by `capability run` (refused up front) and by should-run (its todos left out).
 */
import type { GoalState, WorkflowInstance } from '../model';
import { refused } from '../model';
import type { QuotaUse } from '../rules';
import { quotaUse } from '../rules';
import { budgetAmount, budgetLabel, quotaGrantCommand } from '../views';

export const WORKFLOW_BUDGETS = ['turns', 'tokens', 'costUsd'] as const;
export type WorkflowBudget = (typeof WORKFLOW_BUDGETS)[number];

export interface BudgetShortfall {
  budget: WorkflowBudget;
  declared: number;
  left: number;
}

/** The budgets a declaration exceeds, given what is left; budgets the goal does not set are no limit. */
export function overBudget(
  declared: Partial<Record<WorkflowBudget, number>>,
  use: QuotaUse,
): BudgetShortfall[] {
  const out: BudgetShortfall[] = [];
  for (const k of WORKFLOW_BUDGETS) {
    const d = declared[k];
    const u = use[k];
    if (d !== undefined && u !== undefined && d > u.left) out.push({ budget: k, declared: d, left: u.left });
  }
  return out;
}

/** Whether an instance has started: one of its todos is claimed or done. */
export function instanceStarted(goal: GoalState, w: Pick<WorkflowInstance, 'todoIds'>): boolean {
  return goal.todos.some((t) => w.todoIds.includes(t.id) && (t.status === 'claimed' || t.status === 'done'));
}

export interface BlockedWorkflow {
  instanceId: string;
  name: string;
  todoIds: string[];
  over: BudgetShortfall[];
}

/** The goal's workflow instances that may not start now, with what they exceed. */
export function blockedWorkflows(
  goal: GoalState,
  now: Date,
  use: QuotaUse = quotaUse(goal, now),
): BlockedWorkflow[] {
  const out: BlockedWorkflow[] = [];
  for (const w of goal.workflows ?? []) {
    if (instanceStarted(goal, w)) continue;
    const over = overBudget(w.quota, use);
    if (over.length) out.push({ instanceId: w.instanceId, name: w.name, todoIds: w.todoIds, over });
  }
  return out;
}

/** `turns 12 declared, 3 left` for each budget exceeded. */
export function shortfallWords(over: readonly BudgetShortfall[]): string {
  return over
    .map(
      (o) =>
        `${budgetLabel(o.budget)}: ${budgetAmount(o.budget, o.declared)} declared, ${budgetAmount(o.budget, o.left)} left`,
    )
    .join('; ');
}

/** The grant that would make room, as a command a person runs. */
export function grantCommand(goalId: string, over: readonly BudgetShortfall[]): string {
  return quotaGrantCommand(
    goalId,
    over.map((o) => {
      const need = o.declared - o.left;
      return [o.budget, o.budget === 'costUsd' ? Math.ceil(need * 100) / 100 : Math.ceil(need)];
    }),
  );
}

/** The message of the refusal, for `capability run` and should-run alike. */
export function overBudgetMessage(
  goalId: string,
  name: string,
  over: readonly BudgetShortfall[],
  instanceId?: string,
): string {
  return (
    `workflow ${name}${instanceId ? ` (${instanceId})` : ''} declares more than goal ${goalId} has left (${shortfallWords(over)}): ` +
    `a person can grant more with \`${grantCommand(goalId, over)}\`, or run a smaller workflow`
  );
}

/** Refuses (`workflow_over_budget`) to start a workflow declaring more than the goal has left. */
export function checkWorkflowBudget(
  goal: GoalState,
  name: string,
  declared: Partial<Record<WorkflowBudget, number>>,
  now: Date,
): void {
  const over = overBudget(declared, quotaUse(goal, now));
  if (over.length)
    throw refused(overBudgetMessage(goal.id, name, over), {
      goalId: goal.id,
      workflow: name,
      over,
      reason: 'workflow_over_budget',
    });
}
