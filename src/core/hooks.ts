/**
 * `loopx hook <event>`: the agent-host hooks (VS Code agent hooks in `.github/hooks/`, Claude
 * Code in `.claude/settings.local.json`). Both send the event as JSON on stdin and read the same
 * `hookSpecificOutput` answer. PreToolUse (hooks/pre-tool-use.ts) only narrows what the host
 * allows; SessionStart gives the agent its contract; Stop ends its run. Hosts call them through a
 * shim (hooks/shim.ts) that blocks when LoopX cannot answer; hooks/install.ts writes the hosts'
 * settings.
 */
import { shouldRun } from './contract';
import { summaryAll } from './summary';
import { invoke } from './capabilities';
import type { Actor } from './model';
import type { Store } from './store';
import type { HookAnswer } from './hooks/answer';
import { ownOpenRuns } from './identity';

export * from './hooks/answer';
export { preToolUse, deny } from './hooks/pre-tool-use';
export type { PreToolUseOptions } from './hooks/pre-tool-use';
export * from './hooks/shim';
export * from './hooks/install';

/** The goal a session works on: LOOPX_GOAL, or the only active goal. */
function sessionGoal(store: Store, goalId: string | undefined): string | undefined {
  if (goalId) return goalId;
  const active = store.listGoals().goals.filter((g) => g.status === 'active');
  return active.length === 1 ? active[0]!.id : undefined;
}

export function sessionStart(
  store: Store,
  opts: { goalId?: string; agent: string },
  actor: Actor,
): HookAnswer {
  const goalId = sessionGoal(store, opts.goalId);
  const context = goalId
    ? `LoopX governs this workspace. Your contract for goal ${goalId} (run only cli_channel.next_cli_actions, exactly as given; finish the turn with agent_channel.finish_with):\n${JSON.stringify(shouldRun(store, { goalId, agent: opts.agent }, actor))}`
    : 'LoopX governs this workspace, but no single active goal is set (set LOOPX_GOAL). Call `loopx status` and `loopx quota should-run --goal-id <id>` before running anything.';
  return {
    output: { hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: context } },
    exitCode: 0,
  };
}

export function stop(
  store: Store,
  opts: { goalId?: string; agent: string; sessionId?: string },
  actor: Actor,
): HookAnswer {
  const goalId = sessionGoal(store, opts.goalId);
  if (!goalId) return { output: {}, exitCode: 0 };
  const state = store.load(goalId).state;
  const open = ownOpenRuns(state, store.writerId(), opts.agent);
  for (const r of open) {
    invoke(
      store,
      'evidence.add',
      {
        goalId,
        runId: r.id,
        kind: 'note',
        summary: `agent session${opts.sessionId ? ` ${opts.sessionId.slice(0, 100)}` : ''} stopped`,
      },
      actor,
    );
  }
  const summary = open.length ? summaryAll(store, goalId, actor, { agent: opts.agent }) : undefined;
  return {
    output: summary
      ? {
          systemMessage: `LoopX: ended ${summary.ended_runs.length} run(s) of goal ${goalId}; ${summary.progress.done}/${summary.progress.total} todos done`,
        }
      : {},
    exitCode: 0,
  };
}
