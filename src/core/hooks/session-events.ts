/**
 * `loopx hook <event>`: the agent-host hooks (VS Code agent hooks in `.github/hooks/`, Claude
 * Code in `.claude/settings.local.json`). Both send the event as JSON on stdin and read the same
 * `hookSpecificOutput` answer. PreToolUse (hooks/pre-tool-use.ts) only narrows what the host
 * allows, and each refusal is recorded on the goal (`agent.denied`); SessionStart gives the agent
 * its contract; Stop counts what the session's model used (its transcript) and ends its run.
 * Hosts call them through a shim (hooks/shim.ts) that blocks when LoopX cannot answer;
 * hooks/install.ts writes the hosts' settings.
 */
import { invoke } from '../capabilities';
import { shouldRun, summaryAll } from '../contract';
import type { Actor } from '../model';
import { withoutUnsafeCharacters } from '../model';
import { uncounted } from '../rules';
import type { Store } from '../store';
import { DEFAULT_AGENT, ownOpenRuns } from '../trust';
import type { DeniedCall, HookAnswer } from './answer';
import { openRunsByGoal } from './open-runs';
import { transcriptUsage } from './transcript';

export * from './answer';
export * from './install';
export { deny, preToolUse } from './pre-tool-use';
export type { PreToolUseOptions } from './pre-tool-use';
export * from './shim';
export { transcriptUsage, usageKey } from './transcript';

const SYSTEM_HOOK: Actor = { kind: 'system', id: 'loopx-hook', channel: 'hook' };

/** The goal a session works on: LOOPX_GOAL, or the only active goal. */
function sessionGoal(store: Store, goalId: string | undefined): string | undefined {
  if (goalId) return goalId;
  const active = store.listGoals().goals.filter((g) => g.status === 'active');
  return active.length === 1 ? active[0]!.id : undefined;
}

/**
 * SessionStart: the session's contract as context. With the agent's identity known (LOOPX_AGENT,
 * or the host's session), it opens the session's run, which its MCP calls, shell commands and
 * Stop then share. Without one, it opens nothing (a run opened under a name no other channel of
 * the session uses would end as an empty turn): the context is a preview and says how to start.
 */
export function sessionStart(
  store: Store,
  opts: { goalId?: string; agent: string | undefined },
  actor: Actor,
): HookAnswer {
  const goalId = sessionGoal(store, opts.goalId);
  let context: string;
  if (!goalId)
    context =
      'LoopX governs this workspace, but no single active goal is set (set LOOPX_GOAL). Call `loopx status` and `loopx quota should-run --goal-id <id>` before running anything.';
  else if (opts.agent === undefined)
    context = `LoopX governs this workspace. What an agent may do now on goal ${goalId} (a preview: start your turn with loopx_get_contract or \`loopx quota should-run --goal-id ${goalId}\`, then run only its cli_channel.next_cli_actions, exactly as given):\n${JSON.stringify(shouldRun(store, { goalId, agent: DEFAULT_AGENT, preview: true }, actor))}`;
  else
    context = `LoopX governs this workspace. Your contract for goal ${goalId} (run only cli_channel.next_cli_actions, exactly as given; finish the turn with agent_channel.finish_with):\n${JSON.stringify(shouldRun(store, { goalId, agent: opts.agent }, actor))}`;
  return {
    output: { hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: context } },
    exitCode: 0,
  };
}

/**
 * Stop: counts the model usage of the session's transcript that no run counts yet on the run of
 * this session (each message once, by session and message id), notes that the session stopped,
 * and ends the session's runs with their summary. Usage of a turn that ran with no run of its own
 * (the agent never asked for a contract, or was told to stop) is counted on a run opened for it,
 * so a budget binds whatever channel the agent used.
 */
export function stop(
  store: Store,
  opts: { goalId?: string; agent: string; sessionId?: string; transcriptPath?: string },
  actor: Actor,
): HookAnswer {
  const notes: string[] = [];
  let messages: ReturnType<typeof transcriptUsage> = [];
  if (opts.transcriptPath && opts.sessionId) {
    try {
      messages = transcriptUsage(opts.transcriptPath, opts.sessionId);
    } catch (e) {
      notes.push(`the spend of this session was not counted: ${(e as Error).message.slice(0, 300)}`);
    }
  }
  const answer = (said: string[]) => {
    const message = [...said, ...notes].join('; ');
    return { output: message ? { systemMessage: `LoopX: ${message}` } : {}, exitCode: 0 as const };
  };
  const session = opts.sessionId ? ` ${opts.sessionId.slice(0, 100)}` : '';
  const withRuns = openRunsByGoal(store, opts.agent);
  const goalId = withRuns[0]?.goalId ?? sessionGoal(store, opts.goalId);
  // Nothing of this session to count or end: nothing to say either.
  const nothing = { output: {}, exitCode: 0 as const };
  if (!goalId) return nothing;
  const state = withRuns[0]?.state ?? store.load(goalId).state;
  // The session goal may be paused: its runs still end here.
  const open = withRuns[0]?.runs ?? ownOpenRuns(state, store.writerId(), opts.agent);
  const fresh = uncounted(state, messages);
  if (open.length === 0) {
    if (fresh.length === 0 || state.status !== 'active') return nothing;
    const { input } = invoke<{ runId: string }>(store, 'run.start', { goalId, agent: opts.agent }, actor);
    invoke(store, 'run.capture', { goalId, runId: input.runId, messages: fresh }, actor);
    const summary = `agent session${session} used the model with no contract: its spend is counted on this run`;
    invoke(store, 'run.end', { goalId, runId: input.runId, outcome: 'abandoned', summary }, actor);
    return answer([`counted the spend of a turn with no contract on run ${input.runId} of goal ${goalId}`]);
  }
  if (fresh.length) invoke(store, 'run.capture', { goalId, runId: open.at(-1)!.id, messages: fresh }, actor);
  for (const r of open) {
    invoke(
      store,
      'evidence.add',
      {
        goalId,
        runId: r.id,
        kind: 'note',
        summary: `agent session${session} stopped`,
      },
      actor,
    );
  }
  const summary = summaryAll(store, goalId, actor, { agent: opts.agent });
  return answer([
    `ended ${summary.ended_runs.length} run(s) of goal ${goalId}; ${summary.progress.done}/${summary.progress.total} todos done`,
  ]);
}

/**
 * Records a PreToolUse refusal on the goal it concerns: the one where this clone has the agent's
 * latest open run, else the session's goal (LOOPX_GOAL, or the only active one). With neither, it
 * is not recorded (nothing says which goal it belongs to); the refusal stands either way.
 */
export function recordDenial(
  store: Store,
  denied: DeniedCall,
  opts: { agent: string | undefined; goalId?: string },
): { goalId: string; runId?: string } | undefined {
  const agent = opts.agent ?? DEFAULT_AGENT;
  const withRun = openRunsByGoal(store, agent)[0];
  const goalId = withRun?.goalId ?? sessionGoal(store, opts.goalId);
  if (!goalId) return undefined;
  const runId = withRun?.runs.at(-1)?.id;
  const clean = (s: string | undefined, max: number) =>
    s === undefined ? undefined : withoutUnsafeCharacters(s, { multiLine: true }).slice(0, max);
  invoke(
    store,
    'agent.deny',
    {
      goalId,
      agent,
      runId,
      tool: withoutUnsafeCharacters(denied.tool).slice(0, 100) || 'unknown',
      command: clean(denied.command, 2000),
      path:
        denied.path === undefined
          ? undefined
          : withoutUnsafeCharacters(denied.path).slice(0, 1000) || undefined,
      code: denied.code,
      reason: clean(denied.reason, 1000)!,
      enforced: denied.enforced,
    },
    SYSTEM_HOOK,
  );
  return { goalId, runId };
}
