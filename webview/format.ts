/** How numbers, budgets, dates and counts read on the page. */
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
export function fmtWhen(iso: string): string {
  const t = Date.parse(iso);
  if (!Number.isFinite(t)) return iso;
  const s = Math.round((Date.now() - t) / 1000);
  if (s >= 0 && s < 60) return 'just now';
  if (s >= 0 && s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s >= 0 && s < 86400) return `${Math.round(s / 3600)} h ago`;
  return new Date(t).toLocaleDateString(undefined, { month: 'short', day: 'numeric', year: 'numeric' });
}
export function fmtDate(iso: string): string {
  const t = Date.parse(iso);
  return Number.isFinite(t)
    ? new Date(t).toLocaleString(undefined, {
        month: 'short',
        day: 'numeric',
        hour: '2-digit',
        minute: '2-digit',
      })
    : iso;
}
export const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
