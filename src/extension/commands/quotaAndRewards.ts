/**
 * Quota and reward commands: grant a goal more budget, and score one of its runs. Both are a
 * person's decisions (signed with their key), so both end in a modal that states the exact facts,
 * whether the person started from the tree or the palette or other code called the command with
 * arguments (which then only choose the goal and run and fill in the values).
 */
import * as vscode from 'vscode';
import type { BudgetName, GoalState } from '../../core/index';
import {
  BUDGET_NAMES,
  notFound,
  plainText,
  quotaUse,
  quotaUseAfterGrant,
  usageError,
} from '../../core/index';
import { confirmDecision, whole } from './decisionModal';
import type { Arg, CommandDeps, CommandTable } from './shared';
import { argsOf, Cancelled, guardTrust, input, invokeSigned, isNode, pickGoal } from './shared';

export function quotaAndRewardCommands(deps: CommandDeps): CommandTable {
  return {
    'loopx.recordReward': (a) => recordReward(deps, a),
    'loopx.grantQuota': (a) => grantQuota(deps, a),
  };
}

const SCORES: [number, string][] = [
  [1, 'excellent'],
  [0.8, 'good'],
  [0.5, 'acceptable'],
  [0, 'no value'],
  [-0.5, 'harmful'],
  [-1, 'must not happen again'],
];

async function recordReward(deps: CommandDeps, a: Arg): Promise<string> {
  await guardTrust();
  const args = argsOf(a);
  const ref = await pickGoal(deps.workspaces, a, (s) => s.runs.length > 0, 'goal with runs');
  const state = ref.store.load(ref.goalId).state;
  let runId = isNode(a) && a.kind === 'run' ? a.run.id : args.runId;
  if (!runId) {
    const runs = [...state.runs].reverse();
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
  const run = state.runs.find((r) => r.id === runId);
  if (!run) throw notFound(`goal ${ref.goalId} has no run ${JSON.stringify(String(runId))}`);
  let score = args.score;
  if (score === undefined) {
    const pick = await vscode.window.showQuickPick(
      SCORES.map(([v, d]) => ({ label: String(v), description: d })),
      { placeHolder: 'Score (-1 to 1)' },
    );
    if (!pick) throw new Cancelled();
    score = Number(pick.label);
  }
  if (typeof score !== 'number' || !Number.isFinite(score) || score < -1 || score > 1)
    throw usageError('the score is a number from -1 to 1');
  const comment = await input({
    given: args.comment,
    prompt: 'Comment: what was good or bad',
    validateInput: (v) => (v.length > 4000 ? 'at most 4,000 characters' : undefined),
  });
  const label = SCORES.find(([v]) => v === score)?.[1];
  await confirmDecision(a, () => ({
    message: `Record a reward of ${score} for run ${plainText(run.id)} of goal "${plainText(state.title)}"?`,
    detail:
      `Goal: ${whole(state.title)} (${ref.goalId})\n` +
      `Run: ${run.id} by ${whole(run.agent)}, ${run.outcome ?? 'still open'}, started ${run.startedAt}\n` +
      `Score: ${score}${label ? ` (${label})` : ''}\n` +
      `Comment: ${comment ? whole(comment, { multiLine: true }) : '(none)'}\n` +
      'It is recorded as your feedback, signed with your key.\n',
    action: 'Record Reward',
    verb: 'record it',
  }));
  const res = await invokeSigned(deps, ref, 'reward.add', { goalId: ref.goalId, runId, score, comment });
  return res.input.rewardId as string;
}

type Grant = Partial<Record<BudgetName, number>>;

/** "5 turns", "$2", "1000 tokens", "60 s of wall time". */
function amount(k: BudgetName, v: number): string {
  return k === 'costUsd' ? `$${v}` : k === 'wallSeconds' ? `${v} s of wall time` : `${v} ${k}`;
}

/** What the grant does to each limit it raises, from the goal's state now. */
function grantEffect(state: GoalState, grant: Grant): string {
  const now = new Date();
  const use = quotaUse(state, now);
  const after = quotaUseAfterGrant(state, grant, now);
  return BUDGET_NAMES.filter((k) => grant[k] !== undefined)
    .map((k) => {
      const v = grant[k]!;
      const u = use[k];
      const a = after[k];
      if (!u || !a) return `${amount(k, v)}: the goal has no ${k} budget, so this changes no limit\n`;
      return `${amount(k, v)}: limit ${u.limit} → ${a.limit}, left ${u.left} → ${a.left}\n`;
    })
    .join('');
}

async function grantQuota(deps: CommandDeps, a: Arg): Promise<boolean> {
  await guardTrust();
  const args = argsOf(a);
  const ref = await pickGoal(deps.workspaces, a);
  const state = ref.store.load(ref.goalId).state;
  let grant: Grant = { turns: args.turns, costUsd: args.costUsd, tokens: args.tokens };
  if (args.turns === undefined && args.costUsd === undefined && args.tokens === undefined) {
    const v = await input({
      prompt: `Grant goal "${plainText(state.title)}" how many more turns?`,
      value: '10',
      validateInput: (x) => (/^\d+$/.test(x) && Number(x) > 0 ? undefined : 'a whole number above 0'),
    });
    grant = { turns: Number(v) };
  }
  grant = Object.fromEntries(Object.entries(grant).filter(([, v]) => v !== undefined));
  for (const [k, v] of Object.entries(grant)) {
    const integer = k === 'turns' || k === 'tokens';
    if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0 || (integer && !Number.isInteger(v)))
      throw usageError(`${k} must be a ${integer ? 'whole number' : 'number'} above 0`);
  }
  const note = args.note;
  await confirmDecision(a, () => ({
    message: `Grant goal "${plainText(state.title)}" ${BUDGET_NAMES.filter((k) => grant[k] !== undefined)
      .map((k) => amount(k, grant[k]!))
      .join(', ')} more?`,
    detail:
      `Goal: ${whole(state.title)} (${ref.goalId})\n` +
      grantEffect(state, grant) +
      (note ? `Note: ${whole(String(note), { multiLine: true })}\n` : '') +
      'Agents may spend it on further turns.\n',
    action: 'Grant',
    verb: 'grant',
  }));
  await invokeSigned(deps, ref, 'quota.grant', { goalId: ref.goalId, budgets: grant, note });
  return true;
}
