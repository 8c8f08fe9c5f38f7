/**
 * The contract as a preview: what `quota should-run` would answer an agent now, and what that
 * call would write, computed from the same first look (contract/first-look.ts) and written
 * nowhere. No run is opened, no turn spent, no gate requested, no contract minted, and no writer
 * id made for a clone that has none: `loopx quota should-run --preview`, the session-start
 * context of agent hooks, and the editor's Preview Contract all read it. An agent still calls
 * should-run itself to start a turn: nothing here authorises a command.
 */
import type { Actor } from '../model';
import { stillOpenFor } from '../rules';
import type { Store } from '../store';
import { peekWriterId } from '../store';
import type { ShouldRunOutput } from '../views';
import { render } from '../views';
import type { ShouldRunOptions } from './first-look';
import { firstLook, withOverruled, withTtlWarning } from './first-look';

export interface ContractPreview {
  /**
   * The answer should-run gives now, marked `preview`. It names the agent's open run and its
   * contract when it has one to resume; for a new run it lists no contract and no exec line.
   */
  answer: ShouldRunOutput;
  /** The agent it answers for. */
  agent: string;
  /** What the call would write before answering (the preview writes none of it). */
  wouldWrite: {
    /** A new run with a signed contract: it counts one turn of the goal's budget. */
    openRun: boolean;
    /** Open runs of the agent it would end first, and why. */
    endRuns: { runId: string; outcome: string; why: string }[];
    /** Gates the policy needs that nobody asked for: it would request them. */
    requestGates: string[];
  };
  /** The commands the agent may run in this turn (its open run's contract's, or a new one's). */
  commands: { todoId: string; title: string; command: string }[];
  /** Todos without a command the agent would finish by its own judgment. */
  judgment: { todoId: string; title: string }[];
}

/**
 * Stands for the writer id of a clone that has none yet: should-run would make a fresh one, which
 * matches no run and no proposing writer; this string (not a valid id) matches none either.
 */
const NO_WRITER_YET = '(no writer yet)';

/** What should-run would answer `opts.agent` (default: the actor) on this goal now; writes nothing. */
export function previewContract(store: Store, opts: ShouldRunOptions, actor: Actor): ContractPreview {
  const writer = peekWriterId(store.localDir) ?? NO_WRITER_YET;
  const { agent, policy, loaded, decision: d, mustWrite } = firstLook(store, opts, actor, writer);
  const { state } = loaded;
  const answer = withOverruled(
    withTtlWarning(render(state, d, { preview: true }), opts.ttlMinutes, policy),
    state,
    agent,
  );
  // An open run's contract lists what is left of it (as render reads it); a new one lists the
  // decision's todos.
  const contract = d.reuse?.contract;
  const todoOf = (id: string) => state.todos.find((t) => t.id === id);
  const commands = contract
    ? contract.actions
        .filter((a) => stillOpenFor(todoOf(a.todoId), agent))
        .map((a) => ({ todoId: a.todoId, title: todoOf(a.todoId)?.title ?? '', command: a.command }))
    : d.actions.map((a) => ({ todoId: a.todo.id, title: a.todo.title, command: a.command }));
  const judgment = (contract ? contract.judgment.map(todoOf) : d.judgment)
    .filter((t) => t !== undefined && (!contract || stillOpenFor(t, agent)))
    .map((t) => ({ todoId: t!.id, title: t!.title }));
  return {
    answer,
    agent,
    wouldWrite: {
      openRun: mustWrite && d.decision === 'run' && !d.reuse,
      endRuns: d.toEnd.map((e) => ({ runId: e.run.id, outcome: e.outcome, why: e.why })),
      requestGates: d.gates.filter((g) => g.status === 'missing').map((g) => g.id),
    },
    commands,
    judgment,
  };
}
