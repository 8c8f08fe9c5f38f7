/**
 * The `loopx` command lines LoopX tells a person (or an agent) to run next: approving or
 * rejecting a gate, granting budget. One spelling for the contract's user channel, the CLI's
 * text, refusals and the browser dashboard's copy buttons. No node imports: the webview bundles it.
 */
import type { BudgetName } from '../model';
import { shellQuote } from '../shell';

/** The `quota grant` / `quota set` flag of each budget. */
export const BUDGET_FLAG: Record<BudgetName, string> = {
  turns: '--turns',
  tokens: '--tokens',
  costUsd: '--cost',
  wallSeconds: '--wall-seconds',
};

/** `--workspace DIR ` when a workspace folder must be named (several folders), else nothing. */
const workspaceOption = (workspace?: string) => (workspace ? ` --workspace ${shellQuote(workspace)}` : '');

/** `loopx gate approve --goal-id G --gate-id X` (or `reject`). */
export function gateDecisionCommand(
  verb: 'approve' | 'reject',
  goalId: string,
  gateId: string,
  workspace?: string,
): string {
  return `loopx${workspaceOption(workspace)} gate ${verb} --goal-id ${shellQuote(goalId)} --gate-id ${shellQuote(gateId)}`;
}

/** `loopx quota grant --goal-id G --turns 10 --cost 2.5`: each budget with its amount (or a placeholder such as `N`). */
export function quotaGrantCommand(goalId: string, amounts: readonly [BudgetName, number | string][]): string {
  return `loopx quota grant --goal-id ${shellQuote(goalId)} ${amounts.map(([k, n]) => `${BUDGET_FLAG[k]} ${n}`).join(' ')}`;
}
