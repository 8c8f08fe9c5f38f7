/**
 * `loopx exec` and `loopx contract verify`: a command runs only if an unexpired, untampered
 * contract of an open run lists it, byte for byte, for that todo, and nothing since (policy,
 * gates, goal status, the todo itself) took the permission back.
 */
import { spawn } from 'node:child_process';
import { invoke } from '../capabilities';
import type { Actor, Contract, GoalState, Policy, Run, Todo } from '../model';
import {
  checkId,
  claimLapsed,
  effectiveStatus,
  newId,
  notFound,
  quote,
  refused,
  withoutUnsafeCharacters,
} from '../model';
import { contractActionFor, deniedBy, unapprovedGates } from '../rules';
import type { Store } from '../store';
import { approvalsProven } from './approval-proof';
import { authenticContract, contractTooLong, findContractGoal } from './issued';

export interface Verified {
  goal: GoalState;
  run: Run;
  contract: Contract;
  todo: Todo;
  command: string;
  /** The policy the command was checked under. */
  policy: Policy;
}

function firstDifference(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

/** Who checks a contract, and against what. */
export interface ContractCheck {
  now?: Date;
  /** The policy the caller already read; else it is read here. */
  policy?: Policy;
  /**
   * The caller's agent identity, when its channel gives one (MCP, LM tools, LOOPX_AGENT): then
   * only a contract issued to that agent authorises anything. Without one (a shell with no
   * LOOPX_AGENT), the contract id itself is the capability.
   */
  agent?: string;
  /**
   * The call only records the turn it belongs to (its spend, its evidence), which stays true
   * after the goal stopped being active: the turn that completes a goal's last todo, or that a
   * person paused, still reports what it spent. The run must still be open.
   */
  recordOnly?: boolean;
  /**
   * Where the goal is read from: its logs, replayed (the default: what authorises when nothing
   * else does), or its snapshot, for `verifyCommand`, which then proves the person's approvals the
   * command needs against the logs (approval-proof.ts).
   */
  source?: 'logs' | 'snapshot';
}

/**
 * A contract that still authorises work: found, untampered, the caller's own (when the caller's
 * identity is known), its run open, unexpired, goal active. With it, the policy it was checked
 * under, so that a write that follows (`invoke`, `{ policy }`) does not read it again.
 */
export function checkContract(store: Store, contractId: string, opts: ContractCheck = {}) {
  const now = opts.now ?? new Date(store.now());
  checkId(contractId, 'contract id');
  const forged = () =>
    notFound(
      `no contract ${quote(contractId)} in this workspace: it is forged, mistyped or from another workspace`,
      { contractId, reason: 'contract_not_found' },
    );
  // By default authorise on the logs, not on the snapshot: its MAC key is readable by whoever runs
  // as this user, so a forged one (a gate marked approved) must not let a command run. The goal is
  // replayed once, straight from its logs; verifyCommand reads the snapshot and proves the rest.
  const goal = findContractGoal(store, contractId, (id) => {
    const read = opts.source === 'snapshot' ? store.load(id) : store.replayGoal(id);
    store.keepForCommit(id, read);
    return read.state;
  });
  if (!goal) throw forged();
  const { run, contract } = authenticContract(store, goal, contractId, opts.agent, forged);
  const cid = contract.id;
  if (run.endedAt) {
    throw refused(
      `contract ${cid} belongs to run ${run.id}, which ended (${run.outcome}) at ${run.endedAt}: get a new contract with \`loopx quota should-run --goal-id ${goal.id}\``,
      { contractId: cid, reason: 'contract_run_ended' },
    );
  }
  if (Date.parse(contract.expiresAt) <= now.getTime()) {
    throw refused(
      `contract ${cid} expired at ${contract.expiresAt}: get a new one with \`loopx quota should-run --goal-id ${goal.id}\``,
      { contractId: cid, reason: 'contract_expired' },
    );
  }
  // Issuing caps the lifetime at the policy's TTL; checking does it again, so a contract minted
  // by hand with a long expiry (or issued under a looser policy) authorises nothing.
  const policy = opts.policy ?? store.policy();
  const tooLong = contractTooLong(contract, policy);
  if (tooLong) {
    throw refused(
      `contract ${cid} is refused: ${tooLong}. Get a new one with \`loopx quota should-run --goal-id ${goal.id}\``,
      { contractId: cid, reason: 'contract_ttl_exceeded' },
    );
  }
  const status = effectiveStatus(goal);
  if (status !== 'active' && !(opts.recordOnly && (status === 'completed' || status === 'paused')))
    throw refused(`goal ${goal.id} is ${status} now: contract ${cid} no longer authorises anything`, {
      contractId: cid,
      reason: 'goal_not_active',
    });
  return { goal, run, contract, policy };
}

/** Refuses unless `todoId` is a judgment todo of the contract `found` (a checkContract result). */
export function assertJudgment<F extends { contract: Contract }>(
  found: F,
  contractId: string,
  todoId: string,
): F {
  if (!found.contract.judgment.includes(todoId)) {
    throw refused(
      `todo ${todoId} is not a judgment todo of contract ${contractId} (it lists ${found.contract.judgment.join(', ') || 'none'})`,
      {
        contractId,
        todoId,
        reason: contractActionFor(found.contract, todoId) ? 'todo_has_command' : 'todo_not_in_contract',
      },
    );
  }
  return found;
}

/**
 * A todo without an action that the contract lets its agent finish by judgment; with `goalId`,
 * refused too when the contract is another goal's; with `agent` (the caller's identity), when it
 * is another agent's.
 */
export function checkJudgment(
  store: Store,
  contractId: string,
  todoId: string,
  goalId?: string,
  agent?: string,
) {
  checkId(todoId, 'todo id');
  const found = assertJudgment(checkContract(store, contractId, { agent }), contractId, todoId);
  if (goalId !== undefined && found.goal.id !== goalId)
    throw refused(`contract ${contractId} belongs to goal ${found.goal.id}, not ${goalId}`, {
      contractId,
      reason: 'contract_other_goal',
    });
  return found;
}

/**
 * Checks that `command` may run now for `todoId` under `contractId`. Without a todo, the command
 * must be one the contract lists for some todo; without a command, the todo's listed action.
 * `policy` is the one the caller already read, else it is read here; `q.agent` is the caller's
 * identity when known (see ContractCheck).
 */
export function verifyCommand(
  store: Store,
  q: CommandQuery,
  now = new Date(store.now()),
  policy?: Policy,
): Verified {
  if (q.todoId !== undefined) checkId(q.todoId, 'todo id');
  policy ??= store.policy();
  // From the snapshot first: when it lets the command run and the logs hold the signed approvals
  // the command needs, that is the answer the replay would give. Any refusal, or an approval not
  // proven, is decided by the replay, so its reasons and messages are the logs' own.
  let fast: Verified | undefined;
  try {
    fast = verifyOn(store, q, now, policy, 'snapshot');
  } catch {
    fast = undefined;
  }
  if (fast && approvalsProven(store, fast.goal.id, fast.todo, fast.command, policy, fast.goal.gates, now))
    return fast;
  return verifyOn(store, q, now, policy, 'logs');
}

/** What `verifyCommand` is asked: a contract, and the todo or the command (or both) it runs. */
export interface CommandQuery {
  contractId: string;
  todoId?: string;
  command?: string;
  agent?: string;
}

function verifyOn(
  store: Store,
  q: CommandQuery,
  now: Date,
  policy: Policy,
  source: 'logs' | 'snapshot',
): Verified {
  const { goal, run, contract } = checkContract(store, q.contractId, { now, policy, agent: q.agent, source });
  const cid = contract.id;
  let action: Contract['actions'][number] | undefined;
  if (q.todoId !== undefined) {
    action = contractActionFor(contract, q.todoId);
    if (!action) {
      const listed = contract.actions.map((a) => a.todoId).join(', ') || 'no command actions';
      throw refused(`todo ${q.todoId} is not in contract ${cid} (it lists ${listed})`, {
        contractId: cid,
        todoId: q.todoId,
        reason: 'todo_not_in_contract',
      });
    }
  } else if (q.command !== undefined) {
    action = contract.actions.find((a) => a.command === q.command);
    if (!action)
      throw refused(`contract ${cid} does not list the command ${quote(q.command, 200)}`, {
        contractId: cid,
        reason: 'command_not_in_contract',
      });
  } else {
    throw refused('say which todo (--todo) or which command to verify', { reason: 'nothing_to_verify' });
  }
  const command = q.command ?? action.command;
  if (command !== action.command) {
    const at = firstDifference(command, action.command);
    throw refused(
      `command differs from what contract ${cid} lists for todo ${action.todoId} (first difference at character ${at + 1}): ` +
        `listed ${quote(action.command, 200)}, got ${quote(command, 200)}`,
      { contractId: cid, todoId: action.todoId, reason: 'command_differs' },
    );
  }
  const todo = goal.todos.find((t) => t.id === action.todoId);
  if (!todo) throw notFound(`goal ${goal.id} has no todo ${action.todoId}`);
  if (todo.status === 'done' || todo.status === 'cancelled') {
    throw refused(`todo ${todo.id} is already ${todo.status}: nothing to run`, {
      todoId: todo.id,
      reason: 'todo_finished',
    });
  }
  if (todo.status === 'claimed' && todo.claimedBy !== contract.agent && !claimLapsed(todo, now)) {
    throw refused(`todo ${todo.id} is claimed by ${todo.claimedBy}, not by ${contract.agent}`, {
      todoId: todo.id,
      reason: 'claimed_by_other',
    });
  }
  const denied = deniedBy(policy, command);
  if (denied)
    throw refused(`the workspace policy denies commands matching ${quote(denied.pattern)}`, {
      pattern: denied.pattern,
      reason: 'policy_denied',
    });
  const [g] = unapprovedGates(todo, policy, goal.gates);
  if (g)
    throw refused(`todo ${todo.id} needs gate ${g.id} approved`, { gate: g.id, reason: 'gate_not_approved' });
  return { goal, run, contract, todo, command, policy };
}

// ---------------------------------------------------------------------------------------------

export interface ExecOptions {
  contractId: string;
  todoId: string;
  command: string;
  actor: Actor;
  /** The caller's agent identity when known (LOOPX_AGENT): only its own contract runs. */
  agent?: string;
  /** Streams the command's output as it comes (the CLI passes stdout/stderr through). */
  onOutput?: (chunk: Buffer, stream: 'stdout' | 'stderr') => void;
  env?: NodeJS.ProcessEnv;
  /** Bytes of output kept in the artifact (the end is kept when longer). */
  maxArtifactBytes?: number;
}

export interface ExecResult {
  exitCode: number;
  durationMs: number;
  evidenceId: string;
  todoDone: boolean;
}

function tail(text: string, lines: number, chars: number): string {
  const t = text.split('\n').slice(-lines).join('\n');
  return t.length > chars ? t.slice(-chars) : t;
}

export async function execUnderContract(store: Store, o: ExecOptions): Promise<ExecResult> {
  const v = verifyCommand(store, {
    contractId: o.contractId,
    todoId: o.todoId,
    command: o.command,
    agent: o.agent,
  });
  // The policy the checks read: both writes use it rather than read it again.
  const { policy } = v;
  const goalId = v.goal.id;
  // Where the output will be kept is checked before the command runs (a linked artifacts/ is refused).
  store.artifactsDir(goalId);
  // Under a lane's contract the claim is a lease. A lane's contract already holds its todos (its
  // driver renews them while the turn lives): exec claims only what it does not hold yet.
  if (v.todo.status === 'open' || v.todo.claimedBy !== v.contract.agent) {
    const claim = { goalId, todoId: v.todo.id, by: v.contract.agent, leaseSeconds: v.contract.lease };
    invoke(store, 'todo.claim', claim, o.actor, { policy });
  }
  const max = o.maxArtifactBytes ?? 4 * 1024 * 1024;
  const chunks: Buffer[] = [];
  let kept = 0;
  let dropped = 0;
  const started = performance.now();
  const exitCode = await new Promise<number>((resolve) => {
    const child = spawn('/bin/sh', ['-c', v.command], {
      cwd: v.contract.cwd ?? store.workspace,
      env: o.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const take = (stream: 'stdout' | 'stderr') => (chunk: Buffer) => {
      o.onOutput?.(chunk, stream);
      chunks.push(chunk);
      kept += chunk.length;
      while (kept > max && chunks.length > 1) {
        const first = chunks.shift()!;
        kept -= first.length;
        dropped += first.length;
      }
    };
    child.stdout.on('data', take('stdout'));
    child.stderr.on('data', take('stderr'));
    child.on('error', (e) => {
      chunks.push(Buffer.from(`loopx: could not start the command: ${e.message}\n`));
      resolve(127);
    });
    child.on('close', (code, signal) =>
      resolve(
        code ??
          (signal
            ? 128 + ({ SIGINT: 2, SIGKILL: 9, SIGTERM: 15 } as Record<string, number>)[signal]! || 1
            : 1),
      ),
    );
  });
  const durationMs = Math.round(performance.now() - started);
  const output = Buffer.concat(chunks);
  const header = dropped ? `[loopx: the first ${dropped} bytes of output were not kept]\n` : '';
  const evidenceArtifactId = newId('out', 8);
  const artifact = store.writeArtifact(
    goalId,
    evidenceArtifactId,
    Buffer.concat([Buffer.from(header), output]),
  );
  const text = withoutUnsafeCharacters(output.toString('utf8'), { multiLine: true });
  const summary = `exit ${exitCode} in ${(durationMs / 1000).toFixed(2)} s${text.trim() ? `\n${tail(text.trimEnd(), 15, 1500)}` : ''}`;
  const res = invoke(
    store,
    'exec.record',
    {
      goalId,
      runId: v.run.id,
      todoId: v.todo.id,
      command: v.command,
      exitCode,
      durationMs,
      summary,
      artifact,
    },
    o.actor,
    { policy },
  );
  const ev = res.events.find((e) => e.type === 'evidence.added');
  return {
    exitCode,
    durationMs,
    evidenceId: ev?.type === 'evidence.added' ? ev.data.evidence.id : '',
    todoDone: res.events.some((e) => e.type === 'todo.completed'),
  };
}
