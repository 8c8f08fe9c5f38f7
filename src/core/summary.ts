/** summary_all: end the open run(s), summarise their evidence, and give the goal's progress. */
import type { Actor } from './model';
import type { Store } from './store';
import { invoke } from './capabilities';
import { LoopxError } from './errors';
import { goalStatus } from './status';
import type { AttentionItem, GoalStatusDoc } from './status-doc';

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
 * Ends the open runs of the goal (only those of `opts.agent` when given: with several agents at
 * work, one agent's summary must not end another's turn), then summarises.
 */
export function summaryAll(
  store: Store,
  goalId: string,
  actor: Actor,
  opts: { agent?: string } = {},
): SummaryDoc {
  const before = store.load(goalId).state;
  const ended: SummaryDoc['ended_runs'] = [];
  for (const r of before.runs.filter(
    (x) => !x.endedAt && (opts.agent === undefined || x.agent === opts.agent),
  )) {
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
