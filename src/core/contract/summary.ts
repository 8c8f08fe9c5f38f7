/** summary_all: end the caller's open run(s), summarise their evidence, and give the goal's progress. */
import { invoke } from '../capabilities';
import type { Actor } from '../model';
import { checkId, LoopxError, notFound, quote } from '../model';
import type { Store } from '../store';
import { ownOpenRuns } from '../trust';
import type { AttentionItem, GoalStatusDoc } from '../views';
import { goalStatus } from '../views';
import { authenticContract } from './issued';

export const SUMMARY_SCHEMA = 'loopx.summary/1';
export interface SummaryDoc {
  schema: typeof SUMMARY_SCHEMA;
  goal_id: string;
  status: string;
  ended_runs: {
    id: string;
    outcome: string;
    evidence: { todo_id?: string; exit_code?: number; summary: string }[];
  }[];
  progress: { done: number; total: number };
  todos: Record<string, number>;
  gates: Record<string, number>;
  quota: GoalStatusDoc['quota']['budgets'];
  rewards: { count: number; mean: number | null };
  attention: AttentionItem[];
}

/**
 * The run of goal `goalId` that contract `contractId` opened, for ending it (`summary_all
 * --contract`, a contract's `finish_with`): the contract found in the goal, untampered, of this
 * goal, and the caller's own when the caller's identity (`caller`) is known; without one, the
 * contract id is the capability. Its expiry does not matter: a turn that ran past its contract
 * still ends, and a run already ended is simply not ended again.
 *
 * Read as every write reads the goal (its snapshot and the logs' tail), not replayed whole as
 * `exec` does: ending a run needs no person's decision, and what a forged snapshot could claim
 * here (a run, a contract) an agent could as well append to its own log.
 */
export function runOfContract(store: Store, goalId: string, contractId: string, caller?: string): string {
  checkId(contractId, 'contract id');
  const goal = store.load(goalId).state;
  const missing = () =>
    notFound(
      `goal ${goal.id} has no contract ${quote(contractId)}: it is forged, mistyped or another goal's`,
      {
        contractId,
        goalId: goal.id,
        reason: 'contract_not_found',
      },
    );
  const { run } = authenticContract(store, goal, contractId, caller, missing);
  return run.id;
}

/**
 * Ends open runs, then summarises the whole goal. Which runs: the one of `opts.runId` (see
 * runOfContract), else those of `opts.agent`. With several agents at work, one agent's summary
 * must not end another's turn: every caller that acts for someone (the CLI's `summary_all`, the
 * Stop hook) passes one of them. With neither, every open run ends (tests, and a person's own
 * tooling through the core).
 */
export function summaryAll(
  store: Store,
  goalId: string,
  actor: Actor,
  opts: { agent?: string; runId?: string } = {},
): SummaryDoc {
  const loaded = store.load(goalId);
  const before = loaded.state;
  const ended: SummaryDoc['ended_runs'] = [];
  // A contract's run was checked to be this clone's (runOfContract); by agent, only this clone's.
  const open =
    opts.runId !== undefined
      ? before.runs.filter((x) => !x.endedAt && x.id === opts.runId)
      : ownOpenRuns(before, store.writerId(), opts.agent);
  // Each run.end plans against the goal just read: its commits resume from it.
  if (open.length) store.keepForCommit(goalId, loaded);
  for (const r of open) {
    const ev = before.evidence.filter((e) => e.runId === r.id);
    const withCode = ev.filter((e) => e.exitCode !== undefined);
    const failed = withCode.filter((e) => e.exitCode !== 0).length;
    const outcome =
      withCode.length === 0
        ? ev.length
          ? 'succeeded'
          : 'partial'
        : failed === 0
          ? 'succeeded'
          : failed === withCode.length
            ? 'failed'
            : 'partial';
    const lines = ev.map((e) =>
      `${e.todoId ?? '-'}: ${e.exitCode !== undefined ? `exit ${e.exitCode}` : e.kind} ${e.summary.split('\n')[0]}`.slice(
        0,
        200,
      ),
    );
    const summary = `${ev.length} evidence record${ev.length === 1 ? '' : 's'}, ${failed} failed${lines.length ? `\n${lines.slice(0, 10).join('\n')}` : ''}`;
    try {
      invoke(store, 'run.end', { goalId, runId: r.id, outcome, summary }, actor);
      ended.push({
        id: r.id,
        outcome,
        evidence: ev.map((e) => ({
          todo_id: e.todoId,
          exit_code: e.exitCode,
          summary: e.summary.split('\n')[0]!.slice(0, 200),
        })),
      });
    } catch (e) {
      // Someone else ended it between our read and our write: nothing to do.
      if (!(e instanceof LoopxError && e.reason === 'run_ended')) throw e;
    }
  }
  const doc = goalStatus(store, goalId);
  return {
    schema: SUMMARY_SCHEMA,
    goal_id: goalId,
    status: doc.status,
    ended_runs: ended,
    progress: doc.progress,
    todos: doc.counts.todos,
    gates: doc.counts.gates,
    quota: doc.quota.budgets,
    rewards: { count: doc.rewards.count, mean: doc.rewards.mean },
    attention: doc.attention,
  };
}
