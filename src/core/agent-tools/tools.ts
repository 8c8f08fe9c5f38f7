/**
 * The tools agents get, defined once: VS Code's language-model tools and the MCP server both
 * serve exactly these. None can approve a gate, record a reward or grant quota; the writing ones
 * act only inside the caller's current contract, and say what to do next when they refuse.
 */
import { z } from 'zod';
import { invoke } from '../capabilities';
import { assertJudgment, checkContract, shouldRun } from '../contract';
import type { Actor } from '../model';
import {
  EvidenceKind,
  Id,
  lazy,
  lazyArray,
  Line,
  LoopxError,
  notFound,
  Owner,
  Priority,
  refused,
  Text,
  usageError,
} from '../model';
import {
  contractActionFor,
  contractCovers,
  contractTodoIds,
  SPEND_REPORT_MAX,
  SpendReportFields,
} from '../rules';
import type { Store } from '../store';
import { describeIssues } from '../store';
import { sameAgent } from '../trust';
import { goalStatus, statusAll } from '../views';

export interface AgentToolResult {
  /** Short text a model can act on. */
  text: string;
  /** The structured result (MCP `structuredContent`, tests). */
  data: unknown;
}

export interface AgentTool<S extends z.ZodObject = z.ZodObject> {
  name: string;
  title: string;
  /** What a model reads to decide when to call it: precise about what it does and refuses. */
  description: string;
  input: S;
  /** Whether it changes state (so hosts ask for confirmation and show `confirmation`). */
  writes: boolean;
  /**
   * What a writing call is about to change, for the confirmation dialog: plain text, LoopX's words
   * first, then each piece of the agent's text whole on a line of its own, as it will be written
   * (a person decides on what it shows; hosts show it literally). No side effect.
   */
  confirmation?: (input: z.infer<S>) => string;
  run: (store: Store, input: z.infer<S>, actor: Actor) => AgentToolResult;
}

const goalIdOpt = lazy(() =>
  Id.optional().describe('The goal id. Optional when the workspace has exactly one active goal.'),
);
const contractId = lazy(() =>
  Id.describe('The id of your current contract (interaction_contract.id from loopx_get_contract).'),
);

/** The goal a call is about: the one given, or the only active goal. */
function resolveGoal(store: Store, goalId: string | undefined): string {
  if (goalId) return goalId;
  const active = store.listGoals().goals.filter((g) => g.status === 'active');
  if (active.length === 1) return active[0]!.id;
  if (active.length === 0)
    throw notFound('there is no active goal: ask the person to create one (LoopX: Create Goal)');
  throw usageError(
    `goalId is needed: ${active.length} goals are active (${active
      .slice(0, 5)
      .map((g) => g.id)
      .join(', ')}${active.length > 5 ? ', …' : ''})`,
  );
}

/** A confirmation's lines, leaving out the parts a call does not have. */
function lines(...parts: (string | false | 0 | undefined)[]): string {
  return parts.filter((p): p is string => typeof p === 'string').join('\n');
}

function json(data: unknown): string {
  return JSON.stringify(data);
}

function define<S extends z.ZodObject>(t: AgentTool<S>): AgentTool {
  return t as unknown as AgentTool;
}

export const AGENT_TOOLS: AgentTool[] = lazyArray(() => [
  define({
    name: 'loopx_get_contract',
    title: 'Get the LoopX contract',
    description:
      'Ask LoopX whether you may take a turn on a goal now and exactly what you may do (quota should-run). ' +
      'Returns decision run|wait|stop|done, reasons, and interaction_contract: cli_channel.next_cli_actions are the only shell commands you may run (run each exactly as given), ' +
      'agent_channel.primary is the first thing to do, user_channel lists what waits for the person. Call it at the start of every turn and again when a contract expires. ' +
      'Calling it again while your run is open returns the same contract. ' +
      'The contract is yours: LoopX knows which agent you are from your connection (MCP session, chat session), so there is no agent parameter.',
    // No `agent`: identity comes from the channel (see callAgentTool for callers that still send one).
    input: lazy(() => z.object({ goalId: goalIdOpt })),
    writes: false,
    run: (store, i, actor) => {
      const out = shouldRun(store, { goalId: resolveGoal(store, i.goalId), agent: actor.id }, actor);
      return { text: json(out), data: out };
    },
  }),
  define({
    name: 'loopx_get_status',
    title: 'Get LoopX status',
    description:
      'Read the status of one goal (todos, gates, quota, last runs with evidence and rewards, what needs a person) or, without goalId, the list of all goals. Read-only.',
    input: lazy(() => z.object({ goalId: Id.optional().describe('One goal; omit for all goals.') })),
    writes: false,
    run: (store, i) => {
      const doc = i.goalId ? goalStatus(store, i.goalId) : statusAll(store);
      return { text: json(doc), data: doc };
    },
  }),
  define({
    name: 'loopx_add_todo',
    title: 'Add a LoopX todo',
    description:
      'Add a todo to a goal (planning). Give `action` only when the todo is done by one shell command; a command you propose for yourself waits for the person’s review gate before any contract lists it. ' +
      'Use `gate` for work that needs a person’s approval (deploys, data changes, spending). Does not run anything.',
    input: lazy(() =>
      z.object({
        goalId: goalIdOpt,
        title: Line(200).describe('What to do, in a few words.'),
        action: Line(2000).optional().describe('The exact shell command that does it, if one command does.'),
        gate: Id.optional().describe('A gate id that must be approved first, e.g. "prod".'),
        priority: Priority.optional().describe('P0 (most urgent) to P3; default P2.'),
        owner: Owner.optional().describe('agent (default) or user, for work only a person can do.'),
        dependsOn: z.array(Id).max(50).optional().describe('Todo ids that must be done first.'),
      }),
    ),
    writes: true,
    confirmation: (i) =>
      lines(
        `Add a todo to ${i.goalId ? `goal ${i.goalId}` : 'the active goal'}.`,
        `Title: ${i.title}`,
        i.action && `Command (waits for a person’s review): ${i.action}`,
        i.gate && `Gate: ${i.gate}`,
      ),
    run: (store, i, actor) => {
      const goalId = resolveGoal(store, i.goalId);
      const res = invoke(
        store,
        'todo.add',
        {
          goalId,
          title: i.title,
          action: i.action,
          gate: i.gate,
          priority: i.priority ?? 'P2',
          owner: i.owner ?? 'agent',
          dependsOn: i.dependsOn ?? [],
        },
        actor,
      );
      const todoId = res.input.todoId as string;
      const waiting = res.state.gates
        .filter((g) => g.status === 'pending' && g.guards.includes(todoId))
        .map((g) => g.id);
      return {
        text: `added todo ${todoId} to goal ${goalId}${waiting.length ? `; it waits for gate${waiting.length > 1 ? 's' : ''} ${waiting.join(', ')} (a person decides)` : ''}`,
        data: { goalId, todoId, waitingFor: waiting },
      };
    },
  }),
  define({
    name: 'loopx_claim_todo',
    title: 'Claim a LoopX todo',
    description:
      'Claim a todo that your current contract lists, so no other agent takes it. Refused for a todo outside your contract.',
    input: lazy(() => z.object({ contractId, todoId: Id })),
    writes: true,
    confirmation: (i) => `Claim todo ${i.todoId} under contract ${i.contractId}.`,
    run: (store, i, actor) => {
      const { goal, contract, policy } = checkContract(store, i.contractId, { agent: actor.id });
      if (!contractCovers(contract, i.todoId)) {
        const listed = contractTodoIds(contract);
        throw refused(
          `todo ${i.todoId} is not in contract ${contract.id} (it lists ${listed.join(', ') || 'nothing'})`,
          { contractId: contract.id, todoId: i.todoId, reason: 'todo_not_in_contract' },
        );
      }
      invoke(store, 'todo.claim', { goalId: goal.id, todoId: i.todoId, by: contract.agent }, actor, {
        policy,
      });
      return {
        text: `claimed todo ${i.todoId} of goal ${goal.id} for ${contract.agent}`,
        data: { goalId: goal.id, todoId: i.todoId },
      };
    },
  }),
  define({
    name: 'loopx_complete_todo',
    title: 'Complete a LoopX todo',
    description:
      'Mark a judgment todo (one without a command) of your current contract done, with a summary of what you did and how you checked it; the summary is kept as evidence. ' +
      'A todo with a command is completed by running that command through `loopx exec` (next_cli_actions), not by this tool.',
    input: lazy(() =>
      z.object({
        contractId,
        todoId: Id,
        summary: Text(4000)
          .refine((s) => s.trim().length > 0, 'must say what was done')
          .describe('What you did and how you know it works.'),
      }),
    ),
    writes: true,
    confirmation: (i) =>
      lines(`Mark todo ${i.todoId} done under contract ${i.contractId}.`, `Summary: ${i.summary}`),
    run: (store, i, actor) => {
      const found = checkContract(store, i.contractId, { agent: actor.id });
      if (contractActionFor(found.contract, i.todoId)) {
        throw refused(
          `todo ${i.todoId} has a command: run it with the next_cli_actions entry of contract ${i.contractId} (loopx exec) so its evidence is captured`,
          { contractId: i.contractId, todoId: i.todoId, reason: 'todo_has_command' },
        );
      }
      const { goal, run, policy } = assertJudgment(found, i.contractId, i.todoId);
      invoke(
        store,
        'todo.complete',
        { goalId: goal.id, todoId: i.todoId, summary: i.summary, runId: run.id },
        actor,
        { policy },
      );
      return {
        text: `todo ${i.todoId} of goal ${goal.id} is done; evidence recorded for run ${run.id}`,
        data: { goalId: goal.id, todoId: i.todoId, runId: run.id },
      };
    },
  }),
  define({
    name: 'loopx_record_evidence',
    title: 'Record LoopX evidence',
    description:
      'Record evidence for your current run: a test result, a note, a file you produced. Tie it to a todo of your contract when it is about one.',
    input: lazy(() =>
      z.object({
        contractId,
        todoId: Id.optional(),
        kind: EvidenceKind.optional().describe('command, test, note (default) or file.'),
        summary: Text(4000).refine((s) => s.trim().length > 0, 'must not be empty'),
        exitCode: z.number().int().optional(),
      }),
    ),
    writes: true,
    confirmation: (i) =>
      lines(
        `Record ${i.kind ?? 'note'} evidence under contract ${i.contractId}${i.todoId ? ` for todo ${i.todoId}` : ''}.`,
        `Summary: ${i.summary}`,
        i.exitCode !== undefined && `Exit code: ${i.exitCode}`,
      ),
    run: (store, i, actor) => {
      const { goal, run, contract, policy } = checkContract(store, i.contractId, {
        agent: actor.id,
        recordOnly: true,
      });
      if (i.todoId && !contractCovers(contract, i.todoId)) {
        throw refused(`todo ${i.todoId} is not in contract ${contract.id}`, {
          contractId: contract.id,
          todoId: i.todoId,
          reason: 'todo_not_in_contract',
        });
      }
      const res = invoke(
        store,
        'evidence.add',
        {
          goalId: goal.id,
          runId: run.id,
          todoId: i.todoId,
          kind: i.kind ?? 'note',
          summary: i.summary,
          exitCode: i.exitCode,
        },
        actor,
        { policy },
      );
      return {
        text: `recorded evidence ${res.input.evidenceId as string} for run ${run.id}`,
        data: { goalId: goal.id, evidenceId: res.input.evidenceId, runId: run.id },
      };
    },
  }),
  define({
    name: 'loopx_report_spend',
    title: 'Report LoopX spend',
    description:
      'Report what your current turn spent (tokens, cost in USD) so the goal’s quota stays true. Call it before your turn ends. ' +
      `One report adds at most ${SPEND_REPORT_MAX.tokens} tokens and $${SPEND_REPORT_MAX.costUsd}; a larger one is refused.`,
    // Bounds (finite, at most SPEND_REPORT_MAX) are checked by the run.spend capability, which
    // refuses with `spend_too_large`.
    input: lazy(() =>
      z.object({
        contractId,
        tokens: SpendReportFields.tokens.optional().describe('Tokens used this turn (a whole number).'),
        costUsd: SpendReportFields.costUsd.optional().describe('What this turn cost, in USD.'),
      }),
    ),
    writes: true,
    confirmation: (i) =>
      `Add ${i.tokens ?? 0} tokens and $${i.costUsd ?? 0} to the run of contract ${i.contractId}.`,
    run: (store, i, actor) => {
      const { goal, run, policy } = checkContract(store, i.contractId, { agent: actor.id, recordOnly: true });
      const res = invoke(
        store,
        'run.spend',
        { goalId: goal.id, runId: run.id, tokens: i.tokens, costUsd: i.costUsd },
        actor,
        { policy },
      );
      const spend = res.state.runs.find((r) => r.id === run.id)?.spend;
      return {
        text: `run ${run.id} has now spent ${spend?.tokens} tokens, $${spend?.costUsd}`,
        data: { goalId: goal.id, runId: run.id, spend },
      };
    },
  }),
  define({
    name: 'loopx_request_gate',
    title: 'Request a LoopX gate',
    description:
      'Ask the person to approve something before the work it guards may run (a deploy, a data change, spending). The person is notified at once; you cannot approve it yourself. Work not guarded by it goes on.',
    input: lazy(() =>
      z.object({
        goalId: goalIdOpt,
        gateId: Id.describe('A short id, e.g. "prod-deploy".'),
        reason: Text(2000)
          .refine((s) => s.trim().length > 0, 'must say why a person is needed')
          .describe('Why a person must decide, in one or two sentences.'),
        guards: z.array(Id).max(100).optional().describe('Todo ids that must wait for it.'),
      }),
    ),
    writes: true,
    confirmation: (i) =>
      lines(
        `Ask the person to approve gate ${i.gateId} of ${i.goalId ? `goal ${i.goalId}` : 'the active goal'}.`,
        `Reason: ${i.reason}`,
        i.guards?.length && `Todos that wait for it: ${i.guards.join(', ')}`,
      ),
    run: (store, i, actor) => {
      const goalId = resolveGoal(store, i.goalId);
      invoke(
        store,
        'gate.request',
        { goalId, gateId: i.gateId, reason: i.reason, guards: i.guards ?? [] },
        actor,
      );
      return {
        text: `gate ${i.gateId} of goal ${goalId} is pending: the person has been asked; do other work meanwhile`,
        data: { goalId, gateId: i.gateId },
      };
    },
  }),
]);

export const AGENT_TOOL_NAMES = lazyArray(() => AGENT_TOOLS.map((t) => t.name));

/** JSON schema of a tool's input, as `contributes.languageModelTools` and MCP publish it. */
export function toolInputJsonSchema(tool: AgentTool): Record<string, unknown> {
  const schema = z.toJSONSchema(tool.input, { io: 'input', unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
  delete schema.$schema;
  return schema;
}

/** The refusals a fresh contract answers: the one given no longer authorises anything. */
const STALE_CONTRACT = new Set([
  'contract_not_found',
  'contract_signature_invalid',
  'contract_run_ended',
  'contract_expired',
  'contract_ttl_exceeded',
]);

/** Adds what to do next to a refusal, in the tools' own words. */
export function nextStep(e: unknown): string {
  const msg = e instanceof Error ? e.message : String(e);
  if (e instanceof LoopxError && STALE_CONTRACT.has(e.reason)) {
    return `${msg.replace(/: get a new (one|contract) with `[^`]*`/, '')}. Next: call loopx_get_contract for a fresh contract.`;
  }
  if (e instanceof LoopxError && e.reason === 'contract_other_agent')
    return `${msg}. Next: call loopx_get_contract for your own contract.`;
  if (e instanceof LoopxError && e.reason === 'agent_mismatch')
    return `${msg}. Next: call the tool again without \`agent\`.`;
  if (e instanceof LoopxError && e.kind === 'usage')
    return `${msg}. Next: fix the input and call the tool again.`;
  return msg;
}

/**
 * The input without `agent`. No tool takes one any more (the caller is `actor`, from the channel);
 * a caller written for the older `loopx_get_contract {agent}` may still send it: its own identity
 * is accepted and dropped, any other name is refused (`agent_mismatch`), never acted on.
 */
function withoutAgent(rawInput: unknown, actor: Actor): unknown {
  if (
    !rawInput ||
    typeof rawInput !== 'object' ||
    Array.isArray(rawInput) ||
    !Object.hasOwn(rawInput, 'agent')
  )
    return rawInput;
  const { agent, ...rest } = rawInput as Record<string, unknown>;
  if (agent !== undefined && agent !== null)
    sameAgent(typeof agent === 'string' ? agent : JSON.stringify(agent), actor.id, '`agent`');
  return rest;
}

/** Validates the input (hosts do not) and runs the tool. Throws a LoopxError with a next step. */
export function callAgentTool(store: Store, name: string, rawInput: unknown, actor: Actor): AgentToolResult {
  const tool = AGENT_TOOLS.find((t) => t.name === name);
  if (!tool)
    throw usageError(
      `there is no LoopX tool ${JSON.stringify(name)}; the tools are ${AGENT_TOOL_NAMES.join(', ')}`,
    );
  // Every refusal (bad input, the commonest, included) gets its next step.
  try {
    const parsed = tool.input.safeParse(withoutAgent(rawInput, actor) ?? {});
    if (!parsed.success) throw usageError(`${name}: ${describeIssues(parsed.error)}`);
    return tool.run(store, parsed.data, actor);
  } catch (e) {
    if (e instanceof LoopxError) throw new LoopxError(e.kind, nextStep(e), e.details);
    throw e;
  }
}
