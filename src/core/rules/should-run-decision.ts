/**
 * The should-run decision: pure, state, policy, time and agent in, a decision out. The order of
 * the rules is the one docs/CONTRACT.md writes down.
 */
import { contractTooLong } from '../contract';
import type { GoalState, GoalStatus, Policy, Run, Todo } from '../model';
import { claimLapsed, effectiveStatus } from '../model';
import { ownOpenRuns } from '../trust';
import { gateTitle, plural } from '../views';
import type { BlockedWorkflow } from '../workflows';
import { blockedWorkflows, overBudgetMessage } from '../workflows';
import { contractTodoIds, deniedBy, proposedElsewhere, reviewGateId, unapprovedGates } from './gate-rules';
import type { QuotaUse } from './quota-math';
import type { DueTodo } from './recurring-todos';
import { dueTodos, nextDue, withReopened } from './recurring-todos';
import { BUDGET_LABEL, cooldownLeft, exhaustedBudget, quotaUse } from './quota-math';

/** How many actions one contract lists: enough for a turn, small enough to read. */
export const MAX_ACTIONS = 5;
export const PRIORITY_ORDER = { P0: 0, P1: 1, P2: 2, P3: 3 } as const;

export type Decision = 'run' | 'wait' | 'stop' | 'done';

/** What an agent can do: run command actions through `exec`, and finish judgment todos itself. */
export type AgentAbility = 'exec' | 'judgment';

export interface DecideInput {
  agent: string;
  abilities?: AgentAbility[];
  /**
   * This clone's writer id: runs another clone opened (seen after a pull) are its to reuse or
   * end, never this one's. Undefined: every run of the agent counts (a preview).
   */
  writer?: string;
  /** The run this very call just opened: its reason says "opened", not "resuming". */
  opened?: string;
  /** At most this many todos in a new contract (a lane of `loopx drive` takes one at a time). */
  maxTodos?: number;
}

interface BlockedGate {
  id: string;
  title: string;
  reason: string;
  status: Gate['status'] | 'missing';
  /** Set when a policy pattern requires the gate. */
  policyPattern?: string;
  /** The todos a review gate not requested yet is to guard (another clone's commands). */
  guards?: string[];
}
type Gate = GoalState['gates'][number];

export interface DecisionResult {
  decision: Decision;
  reasons: string[];
  status: GoalStatus;
  quota: QuotaUse;
  retryAfterSeconds?: number;
  /** Open run of this agent whose contract still has work: reused, never a second one. */
  reuse?: Run;
  /** New work for a new contract, in priority order. */
  actions: { todo: Todo; command: string }[];
  judgment: Todo[];
  gates: BlockedGate[];
  userTodos: Todo[];
  /** Workflow instances not started that declare more than is left: their todos are left out. */
  overBudget: BlockedWorkflow[];
  /** Why the answer is `stop` when a rule other than the goal's own state refused the turn. */
  refusal?: { reason: 'workflow_over_budget'; message: string };
  /** Recurring todos due again: the decision counts them open; the caller writes `todo.reopened`. */
  reopen: DueTodo[];
  /** Open runs of this agent to end first: expired, or with no work left in their contract. */
  toEnd: { run: Run; outcome: 'abandoned' | 'succeeded' | 'partial' | 'failed'; why: string }[];
}

export function sortTodos(todos: Todo[]): Todo[] {
  return todos
    .map((t, i) => [t, i] as const)
    .sort(([a, ia], [b, ib]) => PRIORITY_ORDER[a.priority] - PRIORITY_ORDER[b.priority] || ia - ib)
    .map(([t]) => t);
}

/** Whether a todo's contract work is still to do for this agent. */
export function stillOpenFor(todo: Todo | undefined, agent: string, now?: Date): boolean {
  return (
    !!todo &&
    (todo.status === 'open' ||
      (todo.status === 'claimed' && (todo.claimedBy === agent || (!!now && claimLapsed(todo, now)))))
  );
}

/** A run's outcome by its evidence: every command succeeded, some did, or none did. */
export function outcomeOfRun(goal: GoalState, run: Run): 'succeeded' | 'partial' | 'failed' {
  const ev = goal.evidence.filter((e) => e.runId === run.id && e.exitCode !== undefined);
  if (ev.length === 0) return 'partial';
  const failed = ev.filter((e) => e.exitCode !== 0).length;
  return failed === 0 ? 'succeeded' : failed === ev.length ? 'failed' : 'partial';
}

/** Which agent todos can run now for this agent, and what blocks the others. */
function analyse(
  goal: GoalState,
  policy: Policy,
  agent: string,
  abilities: Set<AgentAbility>,
  skip: ReadonlySet<string>,
  writer: string | undefined,
  now: Date,
) {
  const done = new Set(goal.todos.filter((t) => t.status === 'done').map((t) => t.id));
  const gates = new Map<string, BlockedGate>();
  const blockedBy: string[] = [];
  const runnable: Todo[] = [];
  for (const t of sortTodos(goal.todos.filter((x) => x.owner === 'agent' && !skip.has(x.id)))) {
    if (!stillOpenFor(t, agent, now)) {
      if (t.status === 'claimed') blockedBy.push(`${t.id} is claimed by ${t.claimedBy}`);
      continue;
    }
    const deps = t.dependsOn.filter((d) => !done.has(d));
    if (deps.length) {
      blockedBy.push(`${t.id} waits for ${deps.join(', ')}`);
      continue;
    }
    if (t.action && deniedBy(policy, t.action)) {
      blockedBy.push(`${t.id}'s action is denied by the workspace policy`);
      continue;
    }
    const missing = unapprovedGates(t, policy, goal.gates);
    const review = reviewGateId(t.id);
    const unreviewed = proposedElsewhere(t, goal.gates, writer) && !goal.gates.some((g) => g.id === review);
    if (unreviewed) {
      const reason = `todo ${t.id}'s command was written by another clone (writer ${t.actionFrom ?? 'unknown'}): a person reads it before it runs here`;
      const title = `Review the command todo ${t.id} proposes`;
      gates.set(review, { id: review, title, reason, status: 'missing', guards: [t.id] });
    }
    if (missing.length || unreviewed) {
      for (const m of missing) {
        const g = goal.gates.find((x) => x.id === m.id);
        gates.set(m.id, {
          id: m.id,
          title: g?.title ?? gateTitle(m.id, [t]),
          reason: g?.reason ?? `required by policy for actions matching ${JSON.stringify(m.pattern)}`,
          status: g ? g.status : 'missing',
          policyPattern: m.pattern,
        });
      }
      continue;
    }
    if (t.action ? !abilities.has('exec') : !abilities.has('judgment')) continue;
    runnable.push(t);
  }
  return { runnable, blockedBy, gates: [...gates.values()] };
}

export function decide(stored: GoalState, policy: Policy, now: Date, input: DecideInput): DecisionResult {
  const agent = input.agent;
  const reopen = stored.status === 'active' ? dueTodos(stored, now) : [];
  const goal = withReopened(stored, reopen);
  const abilities = new Set<AgentAbility>(input.abilities ?? ['exec', 'judgment']);
  const status = effectiveStatus(goal);
  const quota = quotaUse(goal, now);
  const overBudget = blockedWorkflows(goal, now, quota);
  const base = {
    status,
    quota,
    actions: [],
    judgment: [],
    gates: [],
    userTodos: [],
    toEnd: [],
    overBudget,
    reopen,
  } as Omit<DecisionResult, 'decision' | 'reasons'>;
  const userTodos = goal.todos.filter(
    (t) => t.owner === 'user' && (t.status === 'open' || t.status === 'claimed'),
  );
  base.userTodos = sortTodos(userTodos);

  if (status === 'closed' || status === 'cancelled') {
    return { ...base, decision: 'stop', reasons: [`the goal is ${status}: no more turns`] };
  }
  if (status === 'paused') {
    return {
      ...base,
      decision: 'stop',
      reasons: ['the goal is paused: a person resumes it with `loopx goal resume`'],
    };
  }

  // Open runs of this agent: reuse one that still has work; end the others.
  const toEnd: DecisionResult['toEnd'] = [];
  let reuse: Run | undefined;
  let reuseLeft = 0;
  for (const run of ownOpenRuns(goal, input.writer, agent)) {
    const c = run.contract;
    if (c && Date.parse(c.expiresAt) <= now.getTime()) {
      toEnd.push({ run, outcome: 'abandoned', why: `its contract ${c.id} expired at ${c.expiresAt}` });
      continue;
    }
    // A contract longer than the policy allows authorises nothing (exec refuses it): end its run.
    const tooLong = c && contractTooLong(c, policy);
    if (tooLong) {
      toEnd.push({ run, outcome: 'abandoned', why: `its contract ${c.id} is refused: ${tooLong}` });
      continue;
    }
    const todoOf = (id: string) => goal.todos.find((t) => t.id === id);
    const left = c ? contractTodoIds(c).filter((id) => stillOpenFor(todoOf(id), agent)).length : 0;
    if (left > 0 && !reuse) {
      reuse = run;
      reuseLeft = left;
    } else toEnd.push({ run, outcome: outcomeOfRun(goal, run), why: 'its contract has no work left' });
  }
  // The turn of an open run is already counted in the spend: the turns budget stops only a new
  // run, or the run just opened (and every poll of it) would answer `stop` and lose its contract.
  const exhausted = exhaustedBudget(reuse ? { ...quota, turns: undefined } : quota);
  if (exhausted) {
    const u = quota[exhausted]!;
    return {
      ...base,
      decision: 'stop',
      reasons: [
        `the ${BUDGET_LABEL[exhausted]} budget is used up (${u.used} of ${u.limit}): a person can grant more with \`loopx quota grant\``,
      ],
    };
  }
  base.toEnd = toEnd;
  const skip = new Set(overBudget.flatMap((w) => w.todoIds));
  const analysis = analyse(goal, policy, agent, abilities, skip, input.writer, now);
  base.gates = analysis.gates;
  const gateReason = base.gates.length
    ? [
        base.gates.length > 1
          ? `${base.gates.length} gates wait for a person`
          : `gate ${base.gates[0]!.id} waits for a person`,
      ]
    : [];
  if (reuse) {
    const n = reuseLeft;
    return {
      ...base,
      decision: 'run',
      reuse,
      reasons: [
        reuse.id === input.opened
          ? `opened run ${reuse.id} for ${plural(n, 'todo')}`
          : `resuming run ${reuse.id}: ${plural(n, 'todo')} of its contract still to do`,
        ...gateReason,
      ],
    };
  }

  const wait = cooldownLeft(goal, now);
  if (wait > 0) {
    return {
      ...base,
      decision: 'wait',
      retryAfterSeconds: wait,
      reasons: [`cooldown between turns: ${wait} s left of ${goal.quota.cooldownSeconds} s`],
    };
  }

  const agentTodos = goal.todos.filter((t) => t.owner === 'agent');
  if (goal.todos.length === 0 || agentTodos.length === 0) {
    return {
      ...base,
      decision: 'wait',
      retryAfterSeconds: 30,
      reasons: [
        'the goal has no agent todos yet: it waits for a plan (a person or a planning agent adds todos)',
      ],
    };
  }
  if (status === 'completed') {
    return { ...base, decision: 'done', reasons: ['every agent todo is done and no gate is pending'] };
  }

  const { runnable, blockedBy } = analysis;
  const max = Math.min(input.maxTodos ?? MAX_ACTIONS, MAX_ACTIONS);
  const withAction = runnable.filter((t) => t.action).slice(0, max);
  const judgment = runnable.filter((t) => !t.action).slice(0, max - withAction.length);
  if (runnable.length) {
    return {
      ...base,
      decision: 'run',
      actions: withAction.map((t) => ({ todo: t, command: t.action! })),
      judgment,
      reasons: [`${runnable.length} todo${runnable.length > 1 ? 's' : ''} runnable now`, ...gateReason],
    };
  }
  // The one rule of workflows/budget.ts: an instance over budget does not start. With nothing else
  // left to do, the turn is refused for it; with other work waiting, the answer waits for that.
  const overBudgetReasons = overBudget.map((w) => overBudgetMessage(goal.id, w.name, w.over, w.instanceId));
  const otherWork = agentTodos.some(
    (t) => !skip.has(t.id) && (t.status === 'open' || t.status === 'claimed'),
  );
  if (overBudget.length && !otherWork) {
    const message = overBudgetReasons.join('; ');
    return {
      ...base,
      decision: 'stop',
      reasons: overBudgetReasons,
      refusal: { reason: 'workflow_over_budget', message },
    };
  }
  const due = nextDue(goal, now);
  if (due && !otherWork && !base.gates.length) {
    const seconds = Math.max(1, Math.ceil((due.at.getTime() - now.getTime()) / 1000));
    return {
      ...base,
      decision: 'wait',
      retryAfterSeconds: seconds,
      reasons: [`recurring todo ${due.todo.id} is next due at ${due.at.toISOString()}`],
    };
  }
  const waitReasons = base.gates.length
    ? [`only gated work is left: ${base.gates.map((g) => `gate ${g.id} is ${g.status}`).join(', ')}`]
    : blockedBy.length
      ? [`nothing runnable: ${blockedBy.slice(0, 3).join('; ')}`]
      : ['nothing runnable for this agent'];
  return {
    ...base,
    decision: 'wait',
    retryAfterSeconds: 30,
    reasons: [...waitReasons, ...overBudgetReasons],
  };
}
