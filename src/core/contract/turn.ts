/**
 * `loopx turn`: one whole agent turn in one process, for a loop that only runs what its contract
 * lists (a script, CI, an agent that does no judgment work): should-run, the contract's commands
 * through exec in the contract's order, then summary_all of the run. The same calls an agent
 * makes as three or more `loopx` processes, with the same checks (each command is verified
 * against the contract by exec itself), in one.
 */
import type { Actor } from '../model';
import type { Store } from '../store';
import type { ShouldRunOutput } from '../views';
import type { ExecOptions } from './exec';
import { execUnderContract } from './exec';
import { openTurn } from './issue';
import type { SummaryDoc } from './summary';
import { summaryAll } from './summary';

export const TURN_SCHEMA = 'loopx.turn/1';

export interface TurnStep {
  todo_id: string;
  command: string;
  exit_code: number;
  duration_ms: number;
  evidence_id: string;
  todo_done: boolean;
}

export interface TurnDoc {
  schema: typeof TURN_SCHEMA;
  goal_id: string;
  /** should-run's answer: only `run` runs anything. */
  decision: ShouldRunOutput['decision'];
  reasons: string[];
  contract_id: string | null;
  /** What ran, in order; the turn stops after the first command that fails. */
  ran: TurnStep[];
  /** What the contract listed and this turn did not run (after a failure, or past `max`). */
  not_run: { todo_id: string; command: string }[];
  /** summary_all of the turn's run; null when no run was opened. */
  summary: SummaryDoc | null;
}

export interface TurnOptions {
  /** The agent the turn is taken for (as should-run's `agent`). */
  agent: string;
  /** The caller's own identity when its channel gives one (as exec's `agent`). */
  caller?: string;
  /** Commands to run at most (default: every one the contract lists). */
  max?: number;
  ttlMinutes?: number;
  env?: NodeJS.ProcessEnv;
  onOutput?: ExecOptions['onOutput'];
}

/** Takes one turn of `goalId`; the exit code is the first failing command's, else 0. */
export async function takeTurn(
  store: Store,
  goalId: string,
  actor: Actor,
  o: TurnOptions,
): Promise<{ doc: TurnDoc; exitCode: number; shouldRun: ShouldRunOutput }> {
  // Commands only: judgment todos are an agent's, left for a turn it takes itself.
  const { out, contract } = openTurn(
    store,
    { goalId, agent: o.agent, ttlMinutes: o.ttlMinutes, abilities: ['exec'] },
    actor,
  );
  const doc: TurnDoc = {
    schema: TURN_SCHEMA,
    goal_id: goalId,
    decision: out.decision,
    reasons: out.reasons,
    contract_id: contract?.id ?? null,
    ran: [],
    not_run: [],
    summary: null,
  };
  if (out.decision !== 'run' || !contract) return { doc, exitCode: 0, shouldRun: out };
  const max = o.max ?? Infinity;
  let exitCode = 0;
  for (const a of contract.actions) {
    if (exitCode !== 0 || doc.ran.length >= max) {
      doc.not_run.push({ todo_id: a.todoId, command: a.command });
      continue;
    }
    const r = await execUnderContract(store, {
      contractId: contract.id,
      todoId: a.todoId,
      command: a.command,
      actor,
      agent: o.caller,
      env: o.env,
      onOutput: o.onOutput,
    });
    doc.ran.push({
      todo_id: a.todoId,
      command: a.command,
      exit_code: r.exitCode,
      duration_ms: Math.round(r.durationMs),
      evidence_id: r.evidenceId,
      todo_done: r.todoDone,
    });
    exitCode = r.exitCode;
  }
  doc.summary = summaryAll(store, goalId, actor, { runId: contract.runId });
  return { doc, exitCode, shouldRun: out };
}
