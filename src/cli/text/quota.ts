/** The text of `loopx quota show`: the budgets as a table, and the spend in words. */
import type { GoalStatusDoc } from '../../core/index';
import { budgetAmount, budgetLabel } from '../../core/views';
import { columns, duration, spendWords } from './format';

type QuotaOut = GoalStatusDoc['quota'];

/** `counted over the goal's life` / `counted over the last 24 h`. */
export function windowWords(window: string): string {
  const rolling = /^rolling (.+)$/.exec(window);
  return rolling ? `counted over the last ${rolling[1]}` : 'counted over the goal’s life';
}

export function quotaText(q: QuotaOut): string {
  const out = [
    `spend ${windowWords(q.window)}; cooldown between turns: ${q.cooldown_seconds ? duration(q.cooldown_seconds) : 'none'}`,
  ];
  const budgets = Object.entries(q.budgets);
  if (budgets.length === 0) out.push('no budget set');
  else
    out.push(
      '',
      ...columns(
        [
          ['budget', 'used', 'limit', 'left'],
          ...budgets.map(([k, u]) => [
            budgetLabel(k),
            budgetAmount(k, u.used),
            budgetAmount(k, u.limit),
            budgetAmount(k, u.left),
          ]),
        ],
        { align: ['left', 'right', 'right', 'right'] },
      ),
    );
  out.push('', `spent so far: ${spendWords(q.spend)}`);
  return out.join('\n');
}
