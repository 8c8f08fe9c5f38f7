/**
 * Quota arithmetic. Spend is always computed from the runs, never stored twice. Every number here
 * stays finite: one report is bounded (`SPEND_REPORT_MAX`), and sums saturate at a ceiling
 * (`SPEND_TOTAL_MAX`, `GRANT_TOTAL_MAX`) instead of overflowing to `Infinity`, which no limit can
 * be above and JSON prints as `null`. A log edited by hand with huge values still replays finite.
 */
import { z } from 'zod';
import type { BudgetName, GoalState, Quota, Run, Spend } from '../model';
import { BUDGET_NAMES, lazy, refused } from '../model';

/**
 * The most one spend report may add (`loopx run spend`, loopx_report_spend, `run.end`): far above
 * any real turn (a billion tokens, $100,000, eleven and a half days), far below where sums lose
 * precision. A larger or non-finite report is refused (`spend_too_large`).
 */
export const SPEND_REPORT_MAX = { tokens: 1e9, costUsd: 1e5, wallSeconds: 1e6 } as const;
/** Where a run's and a goal's spend saturate; below 2^53, so whole counts stay whole. */
export const SPEND_TOTAL_MAX = 1e15;
/**
 * Where the budget granted to a goal saturates: above SPEND_TOTAL_MAX, so that a grant leaves
 * room even over a spend that reached the ceiling.
 */
export const GRANT_TOTAL_MAX = 2 * SPEND_TOTAL_MAX;

const SPEND_UNIT: Record<keyof typeof SPEND_REPORT_MAX, string> = {
  tokens: 'tokens',
  costUsd: 'USD',
  wallSeconds: 'seconds',
};

/**
 * The fields of one spend report as inputs take them: not negative, tokens whole. Their size is
 * checked by `checkSpendReport` (a refusal, `spend_too_large`, rather than bad input).
 */
export const SpendReportFields = lazy(() => ({
  tokens: z.number().nonnegative().refine(Number.isInteger, 'expected a whole number'),
  costUsd: z.number().nonnegative(),
  wallSeconds: z.number().nonnegative(),
}));

/** Refuses a spend report with a value that is not finite or above SPEND_REPORT_MAX. */
export function checkSpendReport(s: { tokens?: number; costUsd?: number; wallSeconds?: number }): void {
  for (const k of Object.keys(SPEND_REPORT_MAX) as (keyof typeof SPEND_REPORT_MAX)[]) {
    const v = s[k];
    if (v === undefined) continue;
    const max = SPEND_REPORT_MAX[k];
    if (!Number.isFinite(v) || v > max)
      throw refused(
        `${k} ${String(v)} is too large: one spend report adds at most ${max} ${SPEND_UNIT[k]}; report what this turn spent`,
        { field: k, limit: max, reason: 'spend_too_large' },
      );
  }
}

/** `a + b`, saturating at `max` (and never below 0). */
export function addCapped(a: number, b: number, max = SPEND_TOTAL_MAX): number {
  const sum = a + b;
  return sum >= max || Number.isNaN(sum) ? max : Math.max(0, sum);
}

/** Rounds to a millionth where that is meaningful (and cannot overflow). */
export const round6 = (x: number) => (Math.abs(x) < 1e9 ? Math.round(x * 1e6) / 1e6 : x);

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
  for (const r of runs) for (const k of BUDGET_NAMES) total[k] = addCapped(total[k], r.spend[k]);
  total.costUsd = round6(total.costUsd);
  if (total.wallSeconds < 1e9) total.wallSeconds = Math.round(total.wallSeconds * 1000) / 1000;
  return total;
}

/**
 * The budget granted for `k` once a grant of `add` applies, given what is `spent` in the window
 * when it is granted: a grant gives room above what is spent, so over a budget already used up
 * (overspent, or spend saturated at the ceiling) it starts from the spend, not from the old limit.
 */
export function grantedAfter(goal: GoalState, k: BudgetName, add: number, spent: number): number {
  const before = goal.granted[k] ?? 0;
  const budget = goal.quota.budgets[k];
  const over = budget === undefined ? 0 : spent - (budget + before);
  return addCapped(before + Math.max(0, over), add, GRANT_TOTAL_MAX);
}

/** Use of each budget that is set: limit = budget + grants. */
export function quotaUse(goal: GoalState, now: Date): QuotaUse {
  const spent = spendOf(runsInWindow(goal, now));
  const out: QuotaUse = {};
  for (const k of BUDGET_NAMES) {
    const budget = goal.quota.budgets[k];
    if (budget === undefined) continue;
    const limit = budget + (goal.granted[k] ?? 0);
    out[k] = { used: spent[k], limit, left: Math.max(0, round6(limit - spent[k])) };
  }
  return out;
}

/**
 * The use of each budget a grant names as it will be once granted: the same rule replay applies
 * (`grantedAfter`), so what a person is shown before granting is what the grant does. Budgets the
 * goal does not set are left out.
 */
export function quotaUseAfterGrant(
  goal: GoalState,
  grant: Partial<Record<BudgetName, number>>,
  now: Date,
): QuotaUse {
  const use = quotaUse(goal, now);
  const out: QuotaUse = {};
  for (const k of BUDGET_NAMES) {
    const u = use[k];
    const add = grant[k];
    if (!u || add === undefined) continue;
    const limit = round6(goal.quota.budgets[k]! + grantedAfter(goal, k, add, u.used));
    out[k] = { used: u.used, limit, left: Math.max(0, round6(limit - u.used)) };
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

/**
 * The quota that holds to both `a` and `b`: each budget the smaller (a missing budget is no
 * limit), the longer cooldown, and the window that resets less often (`life` never does). What
 * two creations of one goal by different writers give it, whichever the merge orders first: an
 * unsigned creation can tighten a budget, never loosen one.
 */
export function tightestQuota(a: Quota, b: Quota): Quota {
  const budgets: Quota['budgets'] = {};
  for (const k of BUDGET_NAMES) {
    const x = a.budgets[k];
    const y = b.budgets[k];
    const v = x === undefined ? y : y === undefined ? x : Math.min(x, y);
    if (v !== undefined) budgets[k] = v;
  }
  const window: Quota['window'] =
    a.window.kind === 'life' || b.window.kind === 'life'
      ? { kind: 'life' }
      : { kind: 'rolling', hours: Math.max(a.window.hours, b.window.hours) };
  return { budgets, window, cooldownSeconds: Math.max(a.cooldownSeconds, b.cooldownSeconds) };
}
