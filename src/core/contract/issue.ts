/**
 * The interaction contract (`quota should-run`). `decide` is pure: state, policy, time and agent
 * in, a decision out. `shouldRun` commits what a `run` decision needs (a run with a signed
 * contract, through the `contract.issue` capability), then decides again on the new state and
 * renders the compact answer an executor reads. The decision lives in rules/should-run-decision.ts, the answer in
 * views/should-run-doc.ts, the signature and the lookup by id in contract/issued.ts.
 */
import { invoke } from '../capabilities';
import type { Actor, Contract, GoalState, Policy } from '../model';
import { policyTtlMinutes } from '../model';
import type { AgentAbility } from '../rules';
import { decide } from '../rules';
import type { Store } from '../store';
import type { ShouldRunOutput } from '../views';
import { overruledOut, render } from '../views';
import { rememberContract } from './issued';

// ---------------------------------------------------------------------------------------------
// The capability that writes what a decision needs.

export interface ShouldRunOptions {
  goalId: string;
  agent?: string;
  abilities?: AgentAbility[];
  preview?: boolean;
  ttlMinutes?: number;
}

/** Says so when the lifetime asked for is longer than the policy allows (the contract is capped). */
function withTtlWarning(out: ShouldRunOutput, asked: number | undefined, policy: Policy): ShouldRunOutput {
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
function withOverruled(out: ShouldRunOutput, state: GoalState, agent: string): ShouldRunOutput {
  const mine = (state.overruled ?? [])
    .filter((o) => o.actor.id === agent)
    .slice(-OVERRULED_SHOWN)
    .reverse()
    .map(overruledOut);
  return mine.length ? { ...out, overruled: mine } : out;
}

/** `quota should-run`: decide, open a run when the answer is `run`, and render the contract. */
export function shouldRun(store: Store, opts: ShouldRunOptions, actor: Actor): ShouldRunOutput {
  return openTurn(store, opts, actor).out;
}

/** The contract `out` (a should-run answer read from `state`) names, if any. */
const contractNamed = (state: GoalState, out: ShouldRunOutput) =>
  out.interaction_contract.id === null
    ? undefined
    : state.runs.find((r) => r.contract?.id === out.interaction_contract.id)?.contract;

/** shouldRun, with the contract its answer names (for a caller that works under it: contract/turn.ts). */
export function openTurn(
  store: Store,
  opts: ShouldRunOptions,
  actor: Actor,
): { out: ShouldRunOutput; contract?: Contract } {
  const agent = opts.agent ?? actor.id;
  const policy = store.policy();
  const loaded = store.load(opts.goalId);
  const { state } = loaded;
  const writer = store.writerId();
  const first = decide(state, policy, new Date(store.now()), {
    agent,
    abilities: opts.abilities,
    writer,
  });
  // Most calls are an agent polling: the same open run, a wait, a stop. They write nothing, so
  // they take no lock. Only a decision that must write goes through the capability, which
  // decides again under the goal's lock.
  const mustWrite =
    (first.decision === 'run' && !first.reuse) ||
    first.toEnd.length > 0 ||
    first.gates.some((g) => g.status === 'missing');
  if (opts.preview || !mustWrite) {
    const rendered = render(state, first, { preview: opts.preview });
    const out = withOverruled(withTtlWarning(rendered, opts.ttlMinutes, policy), state, agent);
    return { out, contract: opts.preview ? undefined : contractNamed(state, out) };
  }
  // The capability plans against the state just read: its commit resumes from it.
  store.keepForCommit(opts.goalId, loaded);
  const res = invoke(
    store,
    'contract.issue',
    { goalId: opts.goalId, agent, abilities: opts.abilities, ttlMinutes: opts.ttlMinutes },
    actor,
    { policy, alone: true },
  );
  const issued = res.events.find((e) => e.type === 'run.started');
  const d = decide(res.state, policy, new Date(store.now()), {
    agent,
    abilities: opts.abilities,
    writer,
    opened: issued?.type === 'run.started' ? issued.data.run.id : undefined,
  });
  const out = withOverruled(withTtlWarning(render(res.state, d), opts.ttlMinutes, policy), res.state, agent);
  if (issued?.type === 'run.started' && issued.data.run.contract)
    rememberContract(store, issued.data.run.contract);
  return { out, contract: contractNamed(res.state, out) };
}
