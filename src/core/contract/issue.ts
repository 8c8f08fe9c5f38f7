/**
 * The interaction contract (`quota should-run`). `decide` is pure: state, policy, time and agent
 * in, a decision out. `shouldRun` commits what a `run` decision needs (a run with a signed
 * contract, through the `contract.issue` capability), then decides again on the new state and
 * renders the compact answer an executor reads. The decision lives in rules/should-run-decision.ts, the answer in
 * views/should-run-doc.ts, the signature and the lookup by id in contract/issued.ts, and the
 * preview that writes nothing (`--preview`, the editor's Preview Contract) in contract/preview.ts.
 */
import { invoke } from '../capabilities';
import type { Actor, Contract, GoalState } from '../model';
import { decide } from '../rules';
import type { Store } from '../store';
import type { ShouldRunOutput } from '../views';
import { render } from '../views';
import type { ShouldRunOptions } from './first-look';
import { firstLook, withOverruled, withTtlWarning } from './first-look';
import { rememberContract } from './issued';
import { previewContract } from './preview';

export type { ShouldRunOptions } from './first-look';

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
  if (opts.preview) return { out: previewContract(store, opts, actor).answer };
  const writer = store.writerId();
  const { agent, policy, loaded, decision: first, mustWrite } = firstLook(store, opts, actor, writer);
  const { state } = loaded;
  // Most calls are an agent polling: the same open run, a wait, a stop. They write nothing, so
  // they take no lock. Only a decision that must write goes through the capability, which
  // decides again under the goal's lock.
  if (!mustWrite) {
    const out = withOverruled(withTtlWarning(render(state, first), opts.ttlMinutes, policy), state, agent);
    return { out, contract: contractNamed(state, out) };
  }
  // The capability plans against the state just read: its commit resumes from it.
  store.keepForCommit(opts.goalId, loaded);
  const res = invoke(
    store,
    'contract.issue',
    { goalId: opts.goalId, agent, abilities: opts.abilities, ttlMinutes: opts.ttlMinutes, lane: opts.lane },
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
