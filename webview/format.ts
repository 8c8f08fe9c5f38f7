/** How numbers, budgets, dates and counts read on the page. */
import { localDateTime, relativeTime } from '../src/core/views/browser';

export const BUDGET_LABEL: Record<string, string> = {
  turns: 'Turns',
  tokens: 'Tokens',
  costUsd: 'Cost (USD)',
  wallSeconds: 'Wall time (s)',
};

export function fmtNum(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  const a = Math.abs(n);
  if (a >= 1e6) return `${(n / 1e6).toFixed(a >= 1e7 ? 0 : 1)}M`;
  if (a >= 1e4) return `${(n / 1e3).toFixed(0)}k`;
  if (a >= 1e3) return `${(n / 1e3).toFixed(1)}k`;
  return Number.isInteger(n) ? String(n) : n.toFixed(a < 1 ? 2 : 1);
}
export function fmtBudget(k: string, n: number): string {
  return k === 'costUsd' ? `$${n.toFixed(n >= 100 ? 0 : 2)}` : fmtNum(n);
}
/** `5 min ago`, or the date once it is older than a week: core/views/when-text.ts's rule, on this clock. */
export const fmtWhen = (iso: string): string => relativeTime(iso, Date.now());
/** `Dec 5, 14:03`: the local date and time, by the same rule. */
export const fmtDate = (iso: string): string => localDateTime(iso, Date.now());
export const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
