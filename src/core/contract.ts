/**
 * The interaction contract (`quota should-run`). `decide` is pure: state, policy, time and agent
 * in, a decision out. `shouldRun` commits what a `run` decision needs (a run with a signed
 * contract, through the `contract.issue` capability), then decides again on the new state and
 * renders the compact answer an executor reads.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { timingSafeEqual } from 'node:crypto';
import { define, deniedBy, gatesFor, gateApproved, invoke, signPayload } from './capabilities';

export { gatesFor };
import type { SignatureCheck } from './capabilities';
import { signatureChecker } from './approvals';
import { draft } from './events';
import type { EventDraft } from './events';
import { newId } from './ids';
import { canonicalJson } from './jsonfile';

export { canonicalJson };
import { Id, Line, effectiveStatus, Contract as ContractSchema } from './model';
import type { Actor, Contract, GoalState, Policy, Run, Todo, GoalStatus } from './model';
import { quotaUse, exhaustedBudget, cooldownLeft, BUDGET_LABEL } from './quota';
import type { QuotaUse } from './quota';
import type { Store } from './store';

export const SHOULD_RUN_SCHEMA = 'loopx.should-run/1';
export const DEFAULT_TTL_MINUTES = 30;
/** How many actions one contract lists: enough for a turn, small enough to read. */
export const MAX_ACTIONS = 5;
const PRIORITY_ORDER = { P0: 0, P1: 1, P2: 2, P3: 3 } as const;

export type Decision = 'run' | 'wait' | 'stop' | 'done';

/** What an agent can do: run command actions through `exec`, and finish judgment todos itself. */
export type AgentAbility = 'exec' | 'judgment';

export interface DecideInput {
  agent: string;
  abilities?: AgentAbility[];
  /** Verifies approval signatures when the policy requires them. */
  checkSignature?: SignatureCheck;
}

interface BlockedGate {
  id: string;
  title: string;
  reason: string;
  status: Gate['status'] | 'missing';
  /** Set when a policy pattern requires the gate. */
  policyPattern?: string;
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
function stillOpenFor(todo: Todo | undefined, agent: string): boolean {
  return !!todo && (todo.status === 'open' || (todo.status === 'claimed' && todo.claimedBy === agent));
}

function runOutcome(goal: GoalState, run: Run): 'succeeded' | 'partial' | 'failed' {
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
  checkSignature?: SignatureCheck,
) {
  const done = new Set(goal.todos.filter((t) => t.status === 'done').map((t) => t.id));
  const gates = new Map<string, BlockedGate>();
  const blockedBy: string[] = [];
  const runnable: Todo[] = [];
  for (const t of sortTodos(goal.todos.filter((x) => x.owner === 'agent'))) {
    if (!stillOpenFor(t, agent)) {
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
    const missing = gatesFor(t, policy, goal.gates).filter(
      (g) =>
        !gateApproved(
          goal.gates.find((x) => x.id === g.id),
          policy,
          checkSignature,
        ),
    );
    if (missing.length) {
      for (const m of missing) {
        const g = goal.gates.find((x) => x.id === m.id);
        const unsigned = g?.status === 'approved' && policy.requireSignedApprovals && !g.signature;
        gates.set(m.id, {
          id: m.id,
          title: g?.title ?? `Approve ${m.id}`,
          reason: unsigned
            ? 'approved without a signature, and the policy requires signed approvals: approve it again from VS Code'
            : (g?.reason ?? `required by policy for actions matching ${JSON.stringify(m.pattern)}`),
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

export function decide(goal: GoalState, policy: Policy, now: Date, input: DecideInput): DecisionResult {
  const agent = input.agent;
  const abilities = new Set<AgentAbility>(input.abilities ?? ['exec', 'judgment']);
  const status = effectiveStatus(goal);
  const quota = quotaUse(goal, now);
  const base = { status, quota, actions: [], judgment: [], gates: [], userTodos: [], toEnd: [] } as Omit<
    DecisionResult,
    'decision' | 'reasons'
  >;
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
  for (const run of goal.runs) {
    if (run.endedAt || run.agent !== agent) continue;
    const c = run.contract;
    if (c && Date.parse(c.expiresAt) <= now.getTime()) {
      toEnd.push({ run, outcome: 'abandoned', why: `its contract ${c.id} expired at ${c.expiresAt}` });
      continue;
    }
    const todoOf = (id: string) => goal.todos.find((t) => t.id === id);
    const left = c
      ? [...c.actions.map((a) => a.todoId), ...c.judgment].filter((id) => stillOpenFor(todoOf(id), agent))
          .length
      : 0;
    if (left > 0 && !reuse) {
      reuse = run;
      reuseLeft = left;
    } else toEnd.push({ run, outcome: runOutcome(goal, run), why: 'its contract has no work left' });
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
  const analysis = analyse(goal, policy, agent, abilities, input.checkSignature);
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
      reasons: [`run ${reuse.id}: ${n} todo${n > 1 ? 's' : ''} of its contract still to do`, ...gateReason],
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
  const withAction = runnable.filter((t) => t.action).slice(0, MAX_ACTIONS);
  const judgment = runnable.filter((t) => !t.action).slice(0, MAX_ACTIONS);
  if (runnable.length) {
    return {
      ...base,
      decision: 'run',
      actions: withAction.map((t) => ({ todo: t, command: t.action! })),
      judgment,
      reasons: [`${runnable.length} todo${runnable.length > 1 ? 's' : ''} runnable now`, ...gateReason],
    };
  }
  const reasons = base.gates.length
    ? [`only gated work is left: ${base.gates.map((g) => `gate ${g.id} is ${g.status}`).join(', ')}`]
    : blockedBy.length
      ? [`nothing runnable: ${blockedBy.slice(0, 3).join('; ')}`]
      : ['nothing runnable for this agent'];
  return { ...base, decision: 'wait', retryAfterSeconds: 30, reasons };
}

// ---------------------------------------------------------------------------------------------
// Signing

export function contractPayload(c: Omit<Contract, 'sig'> | Contract): string {
  const { sig: _sig, ...rest } = c as Contract;
  return canonicalJson(rest);
}

export function contractSignatureValid(store: Store, c: Contract): boolean {
  const expected = Buffer.from(signPayload(store, contractPayload(c)), 'hex');
  const got = Buffer.from(c.sig, 'hex');
  return expected.length === got.length && timingSafeEqual(expected, got);
}

// ---------------------------------------------------------------------------------------------
// The capability that writes what a decision needs.

define({
  id: 'contract.issue',
  summary: 'Decide the next turn (should-run); on `run`, open a run with a signed, expiring contract.',
  touches: ['runs', 'gates'],
  gates: 'lists only todos whose gates (own and policy) are approved',
  quota: 'one turn when a new run opens',
  actors: ['agent', 'user', 'system'],
  // A closed or cancelled goal answers `stop` (the first rule of the decision order) instead of
  // refusing the call; `decide` returns before anything is planned, so nothing is written.
  onFinishedGoal: true,
  input: z.object({
    goalId: Id,
    agent: Line(128),
    abilities: z.array(z.enum(['exec', 'judgment'])).optional(),
    ttlMinutes: z
      .number()
      .positive()
      .max(24 * 60)
      .optional(),
  }),
  plan: (s, i, ctx) => {
    const d = decide(s, ctx.policy, ctx.now, {
      agent: i.agent,
      abilities: i.abilities,
      checkSignature: ctx.checkSignature,
    });
    const events: EventDraft[] = d.toEnd.map((e) =>
      draft('run.ended', { runId: e.run.id, outcome: e.outcome, summary: `ended by should-run: ${e.why}` }),
    );
    // A gate the policy requires but nobody requested yet: ask the person now.
    for (const g of d.gates.filter((x) => x.status === 'missing')) {
      const guards = s.todos
        .filter((t) => gatesFor(t, ctx.policy, s.gates).some((x) => x.id === g.id))
        .map((t) => t.id);
      events.push(draft('gate.requested', { gate: { id: g.id, title: g.title, reason: g.reason, guards } }));
    }
    if (d.decision === 'run' && !d.reuse) {
      const ttl = i.ttlMinutes ?? ctx.policy.contractTtlMinutes ?? DEFAULT_TTL_MINUTES;
      const runId = newId('run', 8);
      const unsigned: Omit<Contract, 'sig'> = {
        v: 1,
        id: newId('c', 10),
        goalId: s.id,
        runId,
        agent: i.agent,
        issuedAt: ctx.now.toISOString(),
        expiresAt: new Date(ctx.now.getTime() + ttl * 60_000).toISOString(),
        actions: d.actions.map((a) => ({ todoId: a.todo.id, command: a.command })),
        judgment: d.judgment.map((t) => t.id),
      };
      const contract = { ...unsigned, sig: ctx.sign(contractPayload(unsigned)) };
      events.push(draft('run.started', { run: { id: runId, agent: i.agent, contract } }));
    }
    return events;
  },
});

// ---------------------------------------------------------------------------------------------
// The answer an executor reads. Field names are snake_case, as in the product brief.

const GateOut = z.object({
  id: Id,
  title: z.string(),
  reason: z.string(),
  status: z.string(),
  action_required: z.literal(true),
  approve: z.string(),
});
export const ShouldRunOutput = z.object({
  schema: z.literal(SHOULD_RUN_SCHEMA),
  goal_id: Id,
  decision: z.enum(['run', 'wait', 'stop', 'done']),
  status: z.string(),
  reasons: z.array(z.string()),
  run_id: Id.nullable(),
  retry_after_seconds: z.number().optional(),
  quota: z.record(z.string(), z.object({ used: z.number(), limit: z.number(), left: z.number() })),
  interaction_contract: z.object({
    id: Id.nullable(),
    issued_at: z.string().nullable(),
    expires_at: z.string().nullable(),
    sig: z.string().nullable(),
    user_channel: z.object({
      action_required: z.boolean(),
      message: z.string().optional(),
      gates: z.array(GateOut),
      todos: z.array(z.object({ id: Id, title: z.string() })),
    }),
    agent_channel: z.object({
      primary: z
        .object({
          todo_id: Id,
          title: z.string(),
          command: z.string().optional(),
          complete_with: z.string().optional(),
        })
        .nullable(),
      finish_with: z.string().optional(),
    }),
    cli_channel: z.object({ next_cli_actions: z.array(z.string()) }),
  }),
  preview: z.boolean().optional(),
});
export type ShouldRunOutput = z.infer<typeof ShouldRunOutput>;

/** Quotes a string for a POSIX shell: the executor `eval`s our commands as they are. */
export function shellQuote(s: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

export function execCommandFor(contractId: string, todoId: string, command: string): string {
  return `loopx exec --contract ${contractId} --todo ${todoId} -- ${shellQuote(command)}`;
}

export function render(
  goal: GoalState,
  d: DecisionResult,
  opts: { preview?: boolean } = {},
): ShouldRunOutput {
  const contract = d.decision === 'run' ? d.reuse?.contract : undefined;
  const todoOf = (id: string) => goal.todos.find((t) => t.id === id);
  const agent = d.reuse?.agent ?? '';
  const actions = contract ? contract.actions.filter((a) => stillOpenFor(todoOf(a.todoId), agent)) : [];
  const judgment = contract ? contract.judgment.filter((id) => stillOpenFor(todoOf(id), agent)) : [];
  const gid = goal.id;
  // The primary is the most urgent runnable todo: a judgment todo of a higher priority comes
  // before the first command action (on a tie, the command: an executor can run it as it is).
  const firstAction = contract ? todoOf(actions[0]?.todoId ?? '') : d.actions[0]?.todo;
  const firstJudgment = contract ? todoOf(judgment[0] ?? '') : d.judgment[0];
  const primaryTodo =
    firstJudgment &&
    (!firstAction || PRIORITY_ORDER[firstJudgment.priority] < PRIORITY_ORDER[firstAction.priority])
      ? firstJudgment
      : firstAction;
  const primary = primaryTodo
    ? {
        todo_id: primaryTodo.id,
        title: primaryTodo.title,
        ...(primaryTodo.action
          ? {
              command: contract
                ? execCommandFor(contract.id, primaryTodo.id, primaryTodo.action)
                : primaryTodo.action,
            }
          : contract
            ? {
                complete_with: `loopx todo done --goal-id ${gid} --todo-id ${primaryTodo.id} --contract ${contract.id} --summary "<what you did>"`,
              }
            : {}),
      }
    : null;
  const gates = d.gates.slice(0, 5).map((g) => ({
    id: g.id,
    title: g.title,
    reason: g.reason.slice(0, 200),
    status: g.status,
    action_required: true as const,
    approve: `loopx gate approve --goal-id ${gid} --gate-id ${g.id}`,
  }));
  const todos = d.userTodos.slice(0, 5).map((t) => ({ id: t.id, title: t.title }));
  const planWanted = d.decision === 'wait' && goal.todos.filter((t) => t.owner === 'agent').length === 0;
  const message = planWanted
    ? `add todos: loopx todo add --goal-id ${gid} --title "..." --action "<command>"`
    : gates.length
      ? `approve or reject ${gates.length === 1 ? 'the gate' : 'the gates'} listed here`
      : todos.length
        ? 'some todos are yours (owner user)'
        : undefined;
  const out: ShouldRunOutput = {
    schema: SHOULD_RUN_SCHEMA,
    goal_id: gid,
    decision: d.decision,
    status: d.status,
    reasons: d.reasons,
    run_id: contract?.runId ?? null,
    ...(d.retryAfterSeconds !== undefined ? { retry_after_seconds: d.retryAfterSeconds } : {}),
    quota: d.quota as ShouldRunOutput['quota'],
    interaction_contract: {
      id: contract?.id ?? null,
      issued_at: contract?.issuedAt ?? null,
      expires_at: contract?.expiresAt ?? null,
      sig: contract?.sig ?? null,
      user_channel: {
        action_required: planWanted || gates.length > 0 || todos.length > 0,
        ...(message ? { message } : {}),
        gates,
        todos,
      },
      agent_channel: {
        primary,
        ...(contract ? { finish_with: `loopx summary_all --goal-id ${gid}` } : {}),
      },
      cli_channel: {
        next_cli_actions: contract
          ? actions.map((a) => execCommandFor(contract.id, a.todoId, a.command))
          : [],
      },
    },
  };
  if (opts.preview) out.preview = true;
  return out;
}

export interface ShouldRunOptions {
  goalId: string;
  agent?: string;
  abilities?: AgentAbility[];
  preview?: boolean;
  ttlMinutes?: number;
}

/** `quota should-run`: decide, open a run when the answer is `run`, and render the contract. */
export function shouldRun(store: Store, opts: ShouldRunOptions, actor: Actor): ShouldRunOutput {
  const agent = opts.agent ?? actor.id;
  const policy = store.policy();
  const checkSignature = signatureChecker(store, opts.goalId);
  const { state } = store.load(opts.goalId);
  const first = decide(state, policy, new Date(store.now()), {
    agent,
    abilities: opts.abilities,
    checkSignature,
  });
  // Most calls are an agent polling: the same open run, a wait, a stop. They write nothing, so
  // they take no lock. Only a decision that must write goes through the capability, which
  // decides again under the goal's lock.
  const mustWrite =
    (first.decision === 'run' && !first.reuse) ||
    first.toEnd.length > 0 ||
    first.gates.some((g) => g.status === 'missing');
  if (opts.preview || !mustWrite) return render(state, first, { preview: opts.preview });
  const res = invoke(
    store,
    'contract.issue',
    { goalId: opts.goalId, agent, abilities: opts.abilities, ttlMinutes: opts.ttlMinutes },
    actor,
  );
  const d = decide(res.state, policy, new Date(store.now()), {
    agent,
    abilities: opts.abilities,
    checkSignature,
  });
  const out = render(res.state, d);
  const issued = res.events.find((e) => e.type === 'run.started');
  if (issued?.type === 'run.started' && issued.data.run.contract)
    rememberContract(store, issued.data.run.contract);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Finding a contract by id: a small pointer file in `local/`, with a scan as the fallback
// (a contract issued on another clone of the workspace).

function pointerPath(store: Store, contractId: string) {
  return path.join(store.localDir, 'contracts', `${contractId}.goal`);
}
function rememberContract(store: Store, c: Contract) {
  const file = pointerPath(store, c.id);
  store.ensureLocalDir();
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  fs.writeFileSync(file, c.goalId);
}

export function findContract(
  store: Store,
  contractId: string,
): { goal: GoalState; run: Run; contract: Contract } | undefined {
  const look = (goalId: string) => {
    const { state } = store.load(goalId);
    const run = state.runs.find((r) => r.contract?.id === contractId);
    return run ? { goal: state, run, contract: ContractSchema.parse(run.contract) } : undefined;
  };
  try {
    const hinted = fs.readFileSync(pointerPath(store, contractId), 'utf8').trim();
    const found = look(hinted);
    if (found) return found;
  } catch {
    /* no pointer: scan */
  }
  for (const id of store.goalIds()) {
    try {
      const found = look(id);
      if (found) return found;
    } catch {
      /* a broken goal cannot hold a usable contract */
    }
  }
  return undefined;
}
