/** Quota capabilities: setting a goal's quota and granting it more budget. */
import { z } from 'zod';
import type { BudgetName, GoalState } from '../model';
import { BUDGET_NAMES, Budgets, draft, lazy, Quota, refused, ShownText, usageError } from '../model';
import { loosenedBy } from '../trust';
import { BUDGET_FLAG, budgetAmount, budgetLabel, duration, quotaGrantCommand } from '../views';
import { AllActors, goalId, Humans } from './shared';
import type { DefineCapability } from './types';

const windowWords = (w: Quota['window']) => (w.kind === 'life' ? 'the goal’s life' : `the last ${w.hours} h`);

/**
 * Why a quota change is refused, change by change, and what a person can do instead: more budget
 * is their grant (`loopx quota grant`); a shorter cooldown or another window is their signed
 * `loopx quota set`.
 */
function loosenedMessage(who: string, s: GoalState, next: Quota, loosened: string[]): string {
  const changes: string[] = [];
  const budgets = loosened.filter((k): k is BudgetName => k in BUDGET_FLAG);
  for (const k of budgets) {
    const was = s.quota.budgets[k as keyof typeof s.quota.budgets]!;
    const now = next.budgets[k as keyof typeof next.budgets];
    changes.push(
      now === undefined
        ? `drop the ${budgetLabel(k)} budget (${budgetAmount(k, was)})`
        : `raise the ${budgetLabel(k)} budget from ${budgetAmount(k, was)} to ${budgetAmount(k, now)}`,
    );
  }
  if (loosened.includes('cooldownSeconds'))
    changes.push(
      `shorten the cooldown from ${duration(s.quota.cooldownSeconds)} to ${duration(next.cooldownSeconds)}`,
    );
  if (loosened.includes('window'))
    changes.push(`count spend over ${windowWords(next.window)} instead of ${windowWords(s.quota.window)}`);
  const steps: string[] = [];
  if (budgets.length)
    steps.push(
      `more budget is a person's grant, at a terminal: \`${quotaGrantCommand(
        s.id,
        budgets.map((k) => [k, 'N']),
      )}\``,
    );
  if (loosened.includes('cooldownSeconds') || loosened.includes('window'))
    steps.push(
      'a shorter cooldown or another window is a person’s change: they run this `loopx quota set` at a terminal, where it asks for their key’s passphrase',
    );
  return `${who} may only tighten a quota, and this would ${changes.join(', ')}; ${steps.join('; ')}`;
}

export function defineQuotaCapabilities(define: DefineCapability): void {
  define({
    id: 'quota.set',
    summary: 'Set the goal’s quota. An agent may only tighten it; raising a budget is a person’s grant.',
    touches: ['quota'],
    gates: 'none',
    quota: 'none',
    actors: AllActors,
    input: lazy(() => z.object({ goalId, quota: Quota })),
    plan: (s, i, ctx) => {
      if (ctx.actor.kind !== 'user') {
        const loosened = loosenedBy(s.quota, i.quota);
        if (loosened.length) {
          throw refused(
            loosenedMessage(ctx.actor.kind === 'agent' ? 'an agent' : 'the system', s, i.quota, loosened),
            {
              loosened,
              reason: 'quota_loosened',
            },
          );
        }
      }
      return [draft('quota.set', { quota: i.quota })];
    },
  });

  define({
    id: 'quota.grant',
    // Replay gives a grant room above what is spent when it is granted (rules/quota-math.ts, grantedAfter):
    // granting 20 turns to a goal that overspent, or whose spend saturated, still allows 20 turns.
    summary: 'Grant more budget to a goal (a person only), above what is already spent.',
    touches: ['quota'],
    gates: 'none',
    quota: 'adds budget',
    actors: Humans,
    humanOnly: true,
    input: lazy(() => z.object({ goalId, budgets: Budgets, note: ShownText(2000).optional() })),
    plan: (_s, i) => {
      if (!BUDGET_NAMES.some((k) => (i.budgets[k] ?? 0) > 0))
        throw usageError(
          'a grant needs at least one positive amount (turns, tokens, costUsd or wallSeconds)',
        );
      return [draft('quota.granted', { budgets: i.budgets, note: i.note })];
    },
  });
}
