/** Quota capabilities: setting a goal's quota and granting it more budget. */
import { z } from 'zod';
import { refused, usageError } from '../errors';
import { Budgets, Text, Quota, BUDGET_NAMES } from '../model';
import { draft } from '../events';
import type { DefineCapability } from './types';
import { loosenedBy } from '../trust/decisions';
import { goalId, AllActors, Humans } from './shared';

export function defineQuotaCapabilities(define: DefineCapability): void {
  define({
    id: 'quota.set',
    summary: 'Set the goal’s quota. An agent may only tighten it; raising a budget is a person’s grant.',
    touches: ['quota'],
    gates: 'none',
    quota: 'none',
    actors: AllActors,
    input: z.object({ goalId, quota: Quota }),
    plan: (s, i, ctx) => {
      if (ctx.actor.kind !== 'user') {
        const loosened = loosenedBy(s.quota, i.quota);
        if (loosened.length) {
          throw refused(
            `${ctx.actor.kind === 'agent' ? 'an agent' : 'the system'} may only tighten a quota; ${loosened.join(', ')} would loosen it: ask a person to grant more`,
            { loosened, reason: 'quota_loosened' },
          );
        }
      }
      return [draft('quota.set', { quota: i.quota })];
    },
  });

  define({
    id: 'quota.grant',
    // Replay gives a grant room above what is spent when it is granted (quota.ts, grantedAfter):
    // granting 20 turns to a goal that overspent, or whose spend saturated, still allows 20 turns.
    summary: 'Grant more budget to a goal (a person only), above what is already spent.',
    touches: ['quota'],
    gates: 'none',
    quota: 'adds budget',
    actors: Humans,
    humanOnly: true,
    input: z.object({ goalId, budgets: Budgets, note: Text(2000).optional() }),
    plan: (_s, i) => {
      if (!BUDGET_NAMES.some((k) => (i.budgets[k] ?? 0) > 0))
        throw usageError(
          'a grant needs at least one positive amount (turns, tokens, costUsd or wallSeconds)',
        );
      return [draft('quota.granted', { budgets: i.budgets, note: i.note })];
    },
  });
}
