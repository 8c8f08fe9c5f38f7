/** Run capabilities: opening a run, reporting its spend, ending it, and a person's reward for it. */
import { z } from 'zod';
import { Contract, draft, Id, lazy, Line, newId, refused, RunOutcome, ShownText, TokenUsage } from '../model';
import {
  checkSpendReport,
  costOf,
  priceOf,
  round6,
  SpendReportFields,
  totalTokens,
  uncounted,
} from '../rules';
import { AllActors, findRun, goalId, Humans, openRun } from './shared';
import type { DefineCapability } from './types';

/**
 * What one report adds. Bounds are checked in `plan` (rules/quota-math.ts, checkSpendReport), so that a value
 * too large is refused as `spend_too_large`, whichever field it is in.
 */
const SpendInput = lazy(() =>
  z.object({
    tokens: SpendReportFields.tokens.optional(),
    costUsd: SpendReportFields.costUsd.optional(),
    wallSeconds: SpendReportFields.wallSeconds.optional(),
  }),
);

export function defineRunCapabilities(define: DefineCapability): void {
  define({
    id: 'run.start',
    summary: 'Open a run (one agent turn), with the contract it runs under.',
    touches: ['runs'],
    gates: 'none',
    quota: 'one turn',
    actors: AllActors,
    input: lazy(() =>
      z.object({ goalId, runId: Id.optional(), agent: Line(128), contract: Contract.optional() }),
    ),
    prepare: (i) => ({ ...i, runId: i.runId ?? newId('run', 8) }),
    plan: (s, i) => {
      if (s.runs.some((r) => r.id === i.runId))
        throw refused(`goal ${s.id} already has a run ${i.runId}`, { reason: 'run_exists' });
      if (s.status !== 'active')
        throw refused(`goal ${s.id} is ${s.status}: no run can start`, { reason: 'goal_not_active' });
      return [draft('run.started', { run: { id: i.runId!, agent: i.agent, contract: i.contract } })];
    },
  });

  define({
    id: 'run.spend',
    summary: 'Report what an open run spent (tokens, cost, wall time).',
    touches: ['runs'],
    gates: 'none',
    quota: 'the spend reported',
    actors: AllActors,
    input: lazy(() => z.object({ goalId, runId: Id }).merge(SpendInput)),
    plan: (s, i) => {
      openRun(s, i.runId);
      checkSpendReport(i);
      return [
        draft('run.spend', {
          runId: i.runId,
          spend: { tokens: i.tokens, costUsd: i.costUsd, wallSeconds: i.wallSeconds },
        }),
      ];
    },
  });

  define({
    id: 'run.end',
    summary: 'End an open run with its outcome, summary and final spend.',
    touches: ['runs'],
    gates: 'none',
    quota: 'the spend reported',
    actors: AllActors,
    // Closing a goal does not end its runs: their summary still belongs in the record.
    onFinishedGoal: true,
    input: lazy(() =>
      z
        .object({ goalId, runId: Id, outcome: RunOutcome, summary: ShownText(4000).optional() })
        .merge(SpendInput),
    ),
    plan: (s, i) => {
      openRun(s, i.runId);
      checkSpendReport(i);
      const spend = { tokens: i.tokens, costUsd: i.costUsd, wallSeconds: i.wallSeconds };
      return [draft('run.ended', { runId: i.runId, outcome: i.outcome, summary: i.summary, spend })];
    },
  });

  define({
    id: 'run.capture',
    summary:
      'Count the model usage an agent host recorded for a session (its transcript) on an open run, each message once.',
    touches: ['runs'],
    gates: 'none',
    quota: 'the tokens and cost the transcript shows',
    actors: ['agent', 'system'],
    input: lazy(() =>
      z.object({
        goalId,
        runId: Id,
        messages: z
          .array(
            z.object({
              key: z.string().regex(/^[0-9a-f]{16}$/),
              model: Line(100),
              usage: TokenUsage,
            }),
          )
          .max(10000),
      }),
    ),
    plan: (s, i, ctx) => {
      openRun(s, i.runId);
      const fresh = uncounted(s, i.messages);
      if (fresh.length === 0) return [];
      const usage = { input: 0, output: 0, cacheWrite: 0, cacheRead: 0 };
      let costUsd = 0;
      for (const m of fresh) {
        for (const k of Object.keys(usage) as (keyof typeof usage)[]) usage[k] += m.usage[k];
        costUsd += costOf(m.usage, priceOf(m.model, ctx.policy).price);
      }
      const spend = { tokens: totalTokens(usage), costUsd: round6(costUsd) };
      checkSpendReport(spend);
      const models = [...new Set(fresh.map((m) => m.model))].slice(0, 50);
      return [
        draft('run.spend', {
          runId: i.runId,
          spend,
          usage: { ...usage, messages: fresh.map((m) => m.key), models },
        }),
      ];
    },
  });

  define({
    id: 'reward.add',
    summary: 'Record a person’s structured feedback on one run: a score and a comment (a person only).',
    touches: ['rewards'],
    gates: 'none',
    quota: 'none',
    actors: Humans,
    humanOnly: true,
    onFinishedGoal: true,
    input: lazy(() =>
      z.object({
        goalId,
        runId: Id,
        rewardId: Id.optional(),
        score: z.number().min(-1).max(1),
        comment: ShownText(4000).default(''),
        lesson: ShownText(4000).optional(),
      }),
    ),
    prepare: (i) => ({ ...i, rewardId: i.rewardId ?? newId('rw', 8) }),
    plan: (s, i) => {
      findRun(s, i.runId);
      return [
        draft('reward.added', {
          reward: { id: i.rewardId!, runId: i.runId, score: i.score, comment: i.comment, lesson: i.lesson },
        }),
      ];
    },
  });
}

// `run.end` refuses on a closed or cancelled goal (read-only), so a run whose contract expired
// after its goal was closed would stay open forever. Ending it is bookkeeping, not new work (its
// contract authorises nothing on a finished goal), so this capability allows it there too, and
// only for a run past its contract's expiry. Self-repair (setup/repair.ts) calls it.
export function defineRunRepairCapabilities(define: DefineCapability) {
  define({
    id: 'run.abandon',
    summary:
      'Close a run left open past its contract’s expiry as abandoned (self-repair), also on a closed or cancelled goal.',
    touches: ['runs'],
    gates: 'none',
    quota: 'none',
    actors: ['system', 'user'],
    onFinishedGoal: true,
    input: lazy(() => z.object({ goalId: Id, runId: Id, summary: ShownText(4000).optional() })),
    plan: (s, i, ctx) => {
      const r = openRun(s, i.runId);
      if (!r.contract || Date.parse(r.contract.expiresAt) > ctx.now.getTime()) {
        throw refused(
          `run ${r.id} has no expired contract: only a run past its contract's expiry can be abandoned`,
          { runId: r.id, reason: 'contract_not_expired' },
        );
      }
      return [draft('run.ended', { runId: r.id, outcome: 'abandoned', summary: i.summary })];
    },
  });
}
