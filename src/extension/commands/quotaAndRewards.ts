/** Quota and reward commands: grant a goal more budget, and score one of its runs. */
import * as vscode from 'vscode';
import {
  argsOf,
  Cancelled,
  confirmIfCalledWithArguments,
  guardTrust,
  input,
  invokeSigned,
  isNode,
  pickGoal,
} from './shared';
import type { Arg, CommandDeps, CommandTable } from './shared';

export function quotaAndRewardCommands(deps: CommandDeps): CommandTable {
  return {
    'loopx.recordReward': (a) => recordReward(deps, a),
    'loopx.grantQuota': (a) => grantQuota(deps, a),
  };
}

async function recordReward(deps: CommandDeps, a: Arg): Promise<string> {
  await guardTrust();
  const args = argsOf(a);
  const ref = await pickGoal(deps.workspaces, a, (s) => s.runs.length > 0, 'goal with runs');
  let runId = isNode(a) && a.kind === 'run' ? a.run.id : args.runId;
  if (!runId) {
    const runs = [...ref.store.load(ref.goalId).state.runs].reverse();
    const pick = await vscode.window.showQuickPick(
      runs.map((r) => ({
        label: r.id,
        description: `${r.agent} · ${r.outcome ?? 'open'} · ${r.startedAt}`,
        detail: r.summary?.split('\n')[0],
        r,
      })),
      { placeHolder: 'Which run?' },
    );
    if (!pick) throw new Cancelled();
    runId = pick.r.id;
  }
  let score = args.score;
  if (score === undefined) {
    const pick = await vscode.window.showQuickPick(
      [
        ['1', 'excellent'],
        ['0.8', 'good'],
        ['0.5', 'acceptable'],
        ['0', 'no value'],
        ['-0.5', 'harmful'],
        ['-1', 'must not happen again'],
      ].map(([v, d]) => ({ label: v!, description: d })),
      { placeHolder: 'Score (-1 to 1)' },
    );
    if (!pick) throw new Cancelled();
    score = Number(pick.label);
  }
  const comment = await input({
    given: args.comment,
    prompt: 'Comment: what was good or bad',
    validateInput: (v) => (v.length > 4000 ? 'at most 4,000 characters' : undefined),
  });
  await confirmIfCalledWithArguments(a, () => ({
    message: `Record a reward of ${score} for run ${runId} of goal "${ref.goalId}"?`,
    detail: `Comment: ${comment || '(none)'}\n`,
    action: 'Record Reward',
    verb: 'record it',
  }));
  const res = await invokeSigned(deps, ref, 'reward.add', { goalId: ref.goalId, runId, score, comment });
  return res.input.rewardId as string;
}

async function grantQuota(deps: CommandDeps, a: Arg): Promise<boolean> {
  await guardTrust();
  const args = argsOf(a);
  const ref = await pickGoal(deps.workspaces, a);
  let budgets: { turns?: number; costUsd?: number; tokens?: number } = {
    turns: args.turns,
    costUsd: args.costUsd,
    tokens: args.tokens,
  };
  if (args.turns === undefined && args.costUsd === undefined && args.tokens === undefined) {
    const v = await input({
      prompt: 'Grant how many more turns?',
      value: '10',
      validateInput: (x) => (/^\d+$/.test(x) && Number(x) > 0 ? undefined : 'a whole number above 0'),
    });
    budgets = { turns: Number(v) };
  }
  await confirmIfCalledWithArguments(a, () => {
    const what = Object.entries(budgets)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${v} ${k}`)
      .join(', ');
    return {
      message: `Grant goal "${ref.goalId}" ${what} more?`,
      detail: `${args.note ? `Note: ${args.note}\n` : ''}Agents may spend it on further turns. `,
      action: 'Grant',
      verb: 'grant',
    };
  });
  await invokeSigned(deps, ref, 'quota.grant', { goalId: ref.goalId, budgets, note: args.note });
  return true;
}
