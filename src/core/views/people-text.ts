/**
 * Text for people (`loopx` text output, the editor's event log): aligned columns, counts, amounts
 * and durations. The CLI's renderers reach these through src/cli/text/format.ts, the core's own
 * lines (views/goal-history.ts) directly, so both line up and count the same way.
 */

import { oneLine } from '../model';

export type Align = 'left' | 'right';

export interface ColumnsOptions {
  /** One entry a column; a missing entry is `left`. */
  align?: Align[];
  /** Put before every line (default none). */
  indent?: string;
  /** Between two columns (default two spaces). */
  gap?: string;
}

/**
 * Rows of cells as aligned lines: each column as wide as its widest cell. No line ends in spaces
 * (a last left-aligned column is not padded), so a golden file or a diff shows no noise.
 */
export function columns(rows: readonly (readonly string[])[], opts: ColumnsOptions = {}): string[] {
  const gap = opts.gap ?? '  ';
  const indent = opts.indent ?? '';
  const width: number[] = [];
  for (const row of rows)
    row.forEach((cell, i) => {
      width[i] = Math.max(width[i] ?? 0, textWidth(cell));
    });
  return rows.map((row) => {
    const cells = row.map((cell, i) => {
      const pad = ' '.repeat((width[i] ?? 0) - textWidth(cell));
      if ((opts.align?.[i] ?? 'left') === 'right') return pad + cell;
      return i === row.length - 1 ? cell : cell + pad;
    });
    return (indent + cells.join(gap)).trimEnd();
  });
}

/** Characters as a terminal counts them, near enough: code points, not UTF-16 units. */
function textWidth(s: string): number {
  return [...s].length;
}

/** `plural(1, 'todo')` is `1 todo`, `plural(3, 'todo')` is `3 todos`; `plural(2, 'entry', 'entries')`. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${num(n)} ${n === 1 ? one : many}`;
}

/** `12400` as `12,400`: digits grouped the same way whatever the machine's locale. */
export function num(n: number): string {
  return decimal(n, 0, 4);
}

/**
 * `n` as en-US's `toLocaleString` writes it with these fraction digits (grouped thousands, halves
 * rounded away from zero), without Intl: its first use costs a `loopx` call about 10 ms, which is
 * 15% of Node's start-up.
 */
function decimal(n: number, minFraction: number, maxFraction: number): string {
  const text = String(Math.abs(n));
  if (!Number.isFinite(n) || text.includes('e'))
    // Exponents and infinities only: rare enough to pay for Intl here
    return n.toLocaleString('en-US', {
      minimumFractionDigits: minFraction,
      maximumFractionDigits: maxFraction,
    });
  const [whole = '0', fraction = ''] = text.split('.');
  let digits = whole + fraction.slice(0, maxFraction).padEnd(maxFraction, '0');
  if ((fraction[maxFraction] ?? '0') >= '5') digits = increment(digits);
  const cut = digits.length - maxFraction;
  const int = digits.slice(0, cut).replace(/^0+(?=\d)/, '');
  let frac = digits.slice(cut).replace(/0+$/, '');
  frac = frac.padEnd(minFraction, '0');
  const sign = n < 0 || Object.is(n, -0) ? '-' : '';
  return `${sign}${int.replace(/\B(?=(\d{3})+$)/g, ',')}${frac ? `.${frac}` : ''}`;
}

/** A string of decimal digits plus one in its last place (`'0999'` gives `'1000'`). */
function increment(digits: string): string {
  const d = digits.split('');
  let i = d.length - 1;
  for (; i >= 0 && d[i] === '9'; i--) d[i] = '0';
  if (i < 0) return `1${d.join('')}`;
  d[i] = String(Number(d[i]) + 1);
  return d.join('');
}

/** `0.42 s`, `12 s`, `1 min 20 s`, `2 h 5 min`: a duration as a person reads it. */
export function duration(seconds: number): string {
  // Under 10 s the hundredths matter (a command's run); above, whole seconds.
  if (seconds < 10) return `${Number(seconds.toFixed(2))} s`;
  const s = Math.round(seconds);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min${s % 60 ? ` ${s % 60} s` : ''}`;
  const m = Math.floor((s % 3600) / 60);
  return `${Math.floor(s / 3600)} h${m ? ` ${m} min` : ''}`;
}

/** `a, b and c`. */
export function listWords(items: readonly string[]): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

/** `3 turns, 12,400 tokens, $0.42, 1 min 20 s`: a spend (or budgets) in words; zeros left out unless all are. */
export function spendWords(s: {
  turns?: number;
  tokens?: number;
  costUsd?: number;
  wallSeconds?: number;
}): string {
  const parts = [
    s.turns ? plural(s.turns, 'turn') : '',
    s.tokens ? plural(s.tokens, 'token') : '',
    s.costUsd ? usd(s.costUsd) : '',
    s.wallSeconds ? duration(s.wallSeconds) : '',
  ].filter(Boolean);
  return parts.length ? parts.join(', ') : 'nothing';
}

/** `$0.42`, `$5`, `$0.0031`: dollars with the cents a budget needs, more only for tiny amounts. */
export function usd(n: number): string {
  if (Number.isInteger(n)) return `$${num(n)}`;
  return n >= 0.01 ? `$${decimal(n, 2, 2)}` : `$${n.toPrecision(2)}`;
}

/** What each budget is called in text, and how its amounts read. */
export const BUDGET_WORDS: Record<string, { label: string; amount: (n: number) => string }> = {
  turns: { label: 'turns', amount: num },
  tokens: { label: 'tokens', amount: num },
  costUsd: { label: 'cost', amount: usd },
  wallSeconds: { label: 'wall time', amount: duration },
};

/** A budget's amount as text (`$0.42`, `1 min 20 s`, `12,400`); a budget not known shows the number. */
export function budgetAmount(name: string, n: number): string {
  return (BUDGET_WORDS[name]?.amount ?? num)(n);
}

/** A budget's name as text: `cost` for costUsd, `wall time` for wallSeconds. */
export function budgetLabel(name: string): string {
  return BUDGET_WORDS[name]?.label ?? name;
}

/**
 * The title LoopX gives a gate nobody titled: what it guards, `Gate staging (guards: Deploy to
 * staging)`, so a person asked to approve sees the work, not only an id. At most 200 characters
 * (a gate title's limit).
 */
export function gateTitle(gateId: string, guarded: readonly { title: string }[]): string {
  if (guarded.length === 0) return `Gate ${gateId}`;
  const names = guarded.slice(0, 2).map((t) => oneLine(t.title, 60));
  if (guarded.length > 2) names.push(`${guarded.length - 2} more`);
  return oneLine(`Gate ${gateId} (guards: ${listWords(names)})`, 200);
}
