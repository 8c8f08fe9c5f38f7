/** Quota arithmetic. Spend is always computed from the runs, never stored twice. */
import { BUDGET_NAMES } from './model';
import type { BudgetName, GoalState, Run, Spend } from './model';

export interface BudgetUse {
  used: number;
  limit: number;
  left: number;
}
export type QuotaUse = Partial<Record<BudgetName, BudgetUse>>;

/** Runs that count against the quota now: all of them, or those started within the rolling window. */
export function runsInWindow(goal: GoalState, now: Date): Run[] {
  const w = goal.quota.window;
  if (w.kind === 'life') return goal.runs;
  const since = now.getTime() - w.hours * 3600_000;
  return goal.runs.filter((r) => Date.parse(r.startedAt) >= since);
}

export function spendOf(runs: readonly Run[]): Spend {
  const total: Spend = { turns: 0, tokens: 0, costUsd: 0, wallSeconds: 0 };
  for (const r of runs) for (const k of BUDGET_NAMES) total[k] += r.spend[k];
  total.costUsd = Math.round(total.costUsd * 1e6) / 1e6;
  total.wallSeconds = Math.round(total.wallSeconds * 1000) / 1000;
  return total;
}

/** Use of each budget that is set: limit = budget + grants. */
export function quotaUse(goal: GoalState, now: Date): QuotaUse {
  const spent = spendOf(runsInWindow(goal, now));
  const out: QuotaUse = {};
  for (const k of BUDGET_NAMES) {
    const budget = goal.quota.budgets[k];
    if (budget === undefined) continue;
    const limit = budget + (goal.granted[k] ?? 0);
    out[k] = { used: spent[k], limit, left: Math.max(0, Math.round((limit - spent[k]) * 1e6) / 1e6) };
  }
  return out;
}

export const BUDGET_LABEL: Record<BudgetName, string> = {
  turns: 'turns',
  tokens: 'tokens',
  costUsd: 'cost (USD)',
  wallSeconds: 'wall time (s)',
};

/** The first budget that is used up, if any. */
export function exhaustedBudget(use: QuotaUse): BudgetName | undefined {
  return BUDGET_NAMES.find((k) => {
    const u = use[k];
    return u !== undefined && u.used >= u.limit;
  });
}

/** Seconds left of the cooldown since the last turn, or 0. */
export function cooldownLeft(goal: GoalState, now: Date): number {
  const cd = goal.quota.cooldownSeconds;
  if (!cd || goal.runs.length === 0) return 0;
  const last = Math.max(...goal.runs.map((r) => Date.parse(r.endedAt ?? r.startedAt)));
  const left = cd - (now.getTime() - last) / 1000;
  return left > 0 ? Math.ceil(left) : 0;
}
