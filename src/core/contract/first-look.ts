/**
 * What a should-run call reads and decides before it writes anything, shared by `shouldRun`
 * (contract/issue.ts), which may then open a run, and `previewContract` (contract/preview.ts),
 * which never does: one decision, so a preview says what a call would answer.
 */
import type { Actor, GoalState, Policy } from '../model';
import { policyTtlMinutes } from '../model';
import type { AgentAbility, DecisionResult } from '../rules';
import { decide } from '../rules';
import type { LoadedGoal, Store } from '../store';
import type { ShouldRunOutput } from '../views';
import { overruledOut } from '../views';

export interface ShouldRunOptions {
  goalId: string;
  agent?: string;
  abilities?: AgentAbility[];
  preview?: boolean;
  ttlMinutes?: number;
  /** `loopx drive`'s lane asking: its contract names the lane, leases its claims, runs in `cwd`. */
  lane?: { name: string; leaseSeconds: number; cwd?: string; todosPerTurn?: number };
}

/** Says so when the lifetime asked for is longer than the policy allows (the contract is capped). */
export function withTtlWarning(
  out: ShouldRunOutput,
  asked: number | undefined,
  policy: Policy,
): ShouldRunOutput {
  const limit = policyTtlMinutes(policy);
  if (asked === undefined || asked <= limit) return out;
  return {
    ...out,
    warnings: [
      ...(out.warnings ?? []),
      `--ttl-minutes ${asked} is longer than the policy allows: contracts last at most ${limit} minutes (contractTtlMinutes in .loopx/policy.json)`,
    ],
  };
}

/** How many of an agent's overruled events a should-run answer lists. */
const OVERRULED_SHOWN = 5;

/** Tells `agent` what of theirs was overruled when clones merged (a claim another made first). */
export function withOverruled(out: ShouldRunOutput, state: GoalState, agent: string): ShouldRunOutput {
  const mine = (state.overruled ?? [])
    .filter((o) => o.actor.id === agent)
    .slice(-OVERRULED_SHOWN)
    .reverse()
    .map(overruledOut);
  return mine.length ? { ...out, overruled: mine } : out;
}

/** What a should-run call reads and decides before it writes anything (its first look). */
export interface FirstLook {
  agent: string;
  policy: Policy;
  loaded: LoadedGoal;
  decision: DecisionResult;
  /**
   * Whether the answer needs a write: a run to open (one turn of the budget), runs of the agent
   * to end first, or gates the policy needs that nobody has asked for yet.
   */
  mustWrite: boolean;
}

/**
 * Reads the goal and decides, writing nothing. `writer`: this clone's writer id, which says which
 * open runs are this clone's and which commands another clone proposed.
 */
export function firstLook(store: Store, opts: ShouldRunOptions, actor: Actor, writer: string): FirstLook {
  const agent = opts.agent ?? actor.id;
  const policy = store.policy();
  const loaded = store.load(opts.goalId);
  const decision = decide(loaded.state, policy, new Date(store.now()), {
    agent,
    abilities: opts.abilities,
    writer,
    maxTodos: opts.lane?.todosPerTurn,
  });
  const mustWrite =
    (decision.decision === 'run' && !decision.reuse) ||
    decision.toEnd.length > 0 ||
    decision.reopen.length > 0 ||
    decision.gates.some((g) => g.status === 'missing');
  return { agent, policy, loaded, decision, mustWrite };
}
