/**
 * Every state change is one capability: a declaration (what it touches, which gates it needs,
 * what quota it consumes, who may call it, its input schema) and a `plan` that looks at the
 * current state and returns the events to append, or throws to refuse. The CLI, LM tools, MCP
 * tools and extension commands all go through `invoke`.
 */
import { createHmac } from 'node:crypto';
import { z } from 'zod';
import type { Actor, GoalState, LoopxEvent, Policy } from '../model';
import { effectiveStatus, HUMAN_CHANNELS, quote, refused, usageError } from '../model';
import type { CommitResult, PreparedEvent, Store } from '../store';
import { describeIssues, exactEvent, prepareEvent, withFolderChecksShared } from '../store';
import type { DecisionSig } from '../model';
import type { Signer } from '../trust';
import { allCapabilities } from './list';
import type { Capability, CapabilityContext, CapabilityDeclaration } from './types';

let built: Map<string, Capability> | undefined;
/** The registry, built on first use from the one list of capabilities (list.ts). */
function registry(): Map<string, Capability> {
  if (built) return built;
  const map = new Map<string, Capability>();
  for (const c of allCapabilities()) {
    if (map.has(c.id)) throw new Error(`capability ${c.id} defined twice`);
    map.set(c.id, c);
  }
  return (built = map);
}

// -------------------------------------------------------------------------------------------

export function listCapabilities(): (CapabilityDeclaration & { kind: 'core' })[] {
  return [...registry().values()].map((c) => ({
    kind: 'core' as const,
    id: c.id,
    summary: c.summary,
    touches: c.touches,
    gates: c.gates,
    quota: c.quota,
    actors: c.actors,
    humanOnly: c.humanOnly ?? false,
    input: z.toJSONSchema(c.input, { io: 'input', unrepresentable: 'any' }),
  }));
}

export function capabilityIds(): string[] {
  return [...registry().keys()];
}

/** Why an actor may not call a capability (the message and its reason code), or undefined when it may. */
function notAllowed(capId: string, actor: Actor): { message: string; reason: string } | undefined {
  const c = registry().get(capId);
  if (!c) return { message: `there is no capability ${quote(capId)}`, reason: 'no_capability' };
  const who = `${actor.kind} ${actor.id} via ${actor.channel}`;
  if (c.humanOnly && (actor.kind !== 'user' || !HUMAN_CHANNELS.includes(actor.channel))) {
    return {
      message:
        `${capId} is human-only: a person does it at a terminal with \`loopx ${capId.replace('.', ' ')}\` ` +
        `(signed with their key: \`loopx key create\` once) or in VS Code with the LoopX commands; this call came from ${who}`,
      reason: 'human_only',
    };
  }
  if (!c.actors.includes(actor.kind))
    return {
      message: `${capId} may be called by ${c.actors.join(' or ')}, not by ${who}`,
      reason: 'actor_not_allowed',
    };
  return undefined;
}

/** Why an actor may not call a capability, or undefined when it may. */
export function whyNotAllowed(capId: string, actor: Actor): string | undefined {
  return notAllowed(capId, actor)?.message;
}

/** HMAC-SHA256 with the workspace's contract key (made on first use in the user's config folder, 0600; never in the workspace). */
export function signPayload(store: Store, payload: string): string {
  return createHmac('sha256', store.secret('contract-key')).update(payload).digest('hex');
}

export interface InvokeResult<I = Record<string, unknown>> extends CommitResult {
  goalId: string;
  /** The input as applied, with generated ids filled in. */
  input: I;
}

export interface InvokeOptions {
  expectRevision?: number;
  signer?: Signer;
  /** The policy the caller already read for this command (read here when not given). */
  policy?: Policy;
  /**
   * Commit in this process even when another holds the goal's lock, so `state` is the goal exactly
   * as this call left it (contract.issue decides on it). Otherwise a call made while another
   * process writes to the goal may be committed by that process (group commit, store/group-commit.ts),
   * and `state` is then read when first asked for.
   */
  alone?: boolean;
}

/**
 * The input of a call that was written before (a retry with the same idempotency key): the ids
 * `prepare` generated are those of the events written then, not the new ones it made this time.
 */
function replayedInput(input: Record<string, unknown>, events: LoopxEvent[]): Record<string, unknown> {
  const out = { ...input };
  for (const ev of events) {
    if (ev.type === 'todo.added' && 'todoId' in out) out.todoId = ev.data.todo.id;
    else if (ev.type === 'run.started' && 'runId' in out) out.runId = ev.data.run.id;
    else if (ev.type === 'reward.added' && 'rewardId' in out) out.rewardId = ev.data.reward.id;
    else if (ev.type === 'evidence.added' && 'evidenceId' in out) out.evidenceId = ev.data.evidence.id;
  }
  return out;
}

/** A call checked and ready to commit: the capability, its input as applied, and its plan. */
interface Call {
  c: Capability;
  input: Record<string, unknown>;
  goalId: string;
  /** The policy, read on first use: a call queued for another process never reads it. */
  policy: () => Policy;
  plan: (state: GoalState | undefined) => ReturnType<Capability['plan']>;
}

/** Checks a call (capability, caller, input) and makes its plan: the same for a call queued by another process. */
function callOf(store: Store, capId: string, rawInput: unknown, actor: Actor, given?: Policy): Call {
  const c = registry().get(capId);
  if (!c) throw usageError(`there is no capability ${quote(capId)}; \`loopx capabilities\` lists them`);
  const denied = notAllowed(capId, actor);
  if (denied) throw refused(denied.message, { capability: capId, reason: denied.reason });
  const parsed = c.input.safeParse(rawInput);
  if (!parsed.success) throw usageError(`${capId}: ${describeIssues(parsed.error)}`, { capability: capId });
  const input = (c.prepare ? c.prepare(parsed.data, store) : parsed.data) as Record<string, unknown>;
  const gid = input.goalId as string;
  let read = given;
  const policy = () => (read ??= store.policy());
  const plan = (state: GoalState | undefined) => {
    const ctx: CapabilityContext = {
      actor,
      now: new Date(store.now()),
      policy: policy(),
      sign: (p) => signPayload(store, p),
      writer: store.writerId(),
    };
    if (c.goal === 'create') return c.plan(undefined as unknown as GoalState, input, ctx);
    const status = effectiveStatus(state!);
    if ((status === 'closed' || status === 'cancelled') && !c.onFinishedGoal) {
      throw refused(`goal ${gid} is ${status}: a ${status} goal is read-only (${capId} refused)`, {
        goalId: gid,
        capability: capId,
        reason: 'goal_finished',
      });
    }
    return c.plan(state!, input, ctx);
  };
  return { c, input, goalId: gid, policy, plan };
}

/** Validates, checks who is calling, and commits the capability's events. */
export function invoke<I extends Record<string, unknown> = Record<string, unknown>>(
  store: Store,
  capId: string,
  rawInput: unknown,
  actor: Actor,
  opts: InvokeOptions = {},
): InvokeResult<I> {
  return withFolderChecksShared(() => invokeChecked(store, capId, rawInput, actor, opts));
}

function invokeChecked<I extends Record<string, unknown>>(
  store: Store,
  capId: string,
  rawInput: unknown,
  actor: Actor,
  opts: InvokeOptions,
): InvokeResult<I> {
  const call = callOf(store, capId, rawInput, actor, opts.policy);
  const { goalId, input } = call;
  const create = call.c.goal === 'create';
  // A person's decision is signed in the caller's process, with the caller's key: never queued.
  const group =
    opts.signer || opts.alone || create
      ? undefined
      : store.groupFor(
          goalId,
          { capability: capId, input, actor, expectRevision: opts.expectRevision },
          (req, who) => {
            // Checked again here: the queue is a file anyone who can write the workspace can write.
            const queued = callOf(store, req.capability, req.input, who, call.policy());
            if (queued.goalId !== goalId || queued.c.goal === 'create')
              throw refused(`a call queued for goal ${goalId} is for ${quote(queued.goalId)}`, {
                reason: 'queued_call_invalid',
              });
            return queued.plan;
          },
        );
  const result = store.commit(goalId, call.plan, {
    actor,
    expectRevision: opts.expectRevision,
    create,
    signer: opts.signer,
    group,
  });
  // Assigned, not spread: a queued call's `state` is read when first asked for.
  return Object.assign(result, {
    goalId,
    input: (result.replayed ? replayedInput(input, result.events) : input) as I,
  });
}

/** A person's decision fixed before it is signed elsewhere (a passkey, in a browser): store/prepared-event.ts. */
export interface PreparedCall extends PreparedEvent {
  capability: string;
  /** The input as applied (generated ids filled in), given again when it is written. */
  input: Record<string, unknown>;
}

/** Checks a call as `invoke` does and fixes the one decision it makes, writing nothing. */
export function prepareCall(store: Store, capId: string, rawInput: unknown, actor: Actor): PreparedCall {
  return withFolderChecksShared(() => {
    const call = callOf(store, capId, rawInput, actor);
    if (call.c.goal === 'create') throw usageError(`${capId} cannot be signed in a browser`);
    return { ...prepareEvent(store, call.goalId, call.plan, actor), capability: capId, input: call.input };
  });
}

/**
 * Writes a prepared decision with the signature made over its statement: checked as `invoke`
 * checks the call, and refused (`decision_stale`) unless the goal and the plan are as prepared.
 */
export function commitPreparedCall(store: Store, p: PreparedCall, sig: DecisionSig): InvokeResult {
  return withFolderChecksShared(() => {
    const call = callOf(store, p.capability, p.input, p.facts.actor);
    const result = store.commit(call.goalId, call.plan, { actor: p.facts.actor, exact: exactEvent(p, sig) });
    return Object.assign(result, { goalId: call.goalId, input: call.input });
  });
}
