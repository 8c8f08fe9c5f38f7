/**
 * Shared bits of the text renderings: aligned columns, plurals, numbers and times, so every command
 * lines things up and counts things the same way.
 */
import type { UsageOut } from '../../core/index';

import { budgetAmount, budgetLabel, num } from '../../core/views';

export { columns, duration, listWords, num, plural, spendWords, usd } from '../../core/views';
export type { Align, ColumnsOptions } from '../../core/views';

/** `2026-11-30 10:04 UTC`: the minute is enough to find it in `loopx log`. */
export function atMinute(iso: string): string {
  const t = Date.parse(iso);
  return Number.isFinite(t) ? `${new Date(t).toISOString().slice(0, 16).replace('T', ' ')} UTC` : iso;
}

/** `tokens: 1,200 input, 300 output, 5,000 cache write, 20,000 cache read`. */
export function usageLine(u: UsageOut): string {
  return `tokens: ${num(u.input)} input, ${num(u.output)} output, ${num(u.cache_write)} cache write, ${num(u.cache_read)} cache read`;
}

/** `turns 3/10, cost $0.42/$5`, or `no budget set`: a goal's budgets on one line. */
export function quotaLine(budgets: Record<string, { used: number; limit: number; left: number }>): string {
  const parts = Object.entries(budgets).map(
    ([k, u]) => `${budgetLabel(k)} ${budgetAmount(k, u.used)}/${budgetAmount(k, u.limit)}`,
  );
  return parts.length ? parts.join(', ') : 'no budget set';
}
