/**
 * The shapes of the documents the CLI prints after a change (zod schemas; OUTPUT_SCHEMAS in
 * output-schemas.ts lists every document): a todo, gate or run as the goal now stores it, the id of
 * new evidence or a new reward, and what a workflow run added.
 */
import { z } from 'zod';
import { Gate, Id, Run, Todo, lazy } from '../model';
import { WorkflowQuota } from '../workflows';

/** `todo add|claim|done|cancel|update`: the todo as stored after the change (camelCase, the goal model's). */
export const TodoChangeOutput = lazy(() =>
  z.strictObject({
    schema: z.literal('loopx.todo-change/1'),
    goal_id: Id,
    /** The goal's revision after the change (its event count). */
    revision: z.number().int().positive(),
    todo: Todo,
  }),
);
export type TodoChangeOutput = z.infer<typeof TodoChangeOutput>;

/** `gate request|approve|reject`: the gate as stored after the change. */
export const GateChangeOutput = lazy(() =>
  z.strictObject({
    schema: z.literal('loopx.gate-change/1'),
    goal_id: Id,
    revision: z.number().int().positive(),
    gate: Gate,
  }),
);
export type GateChangeOutput = z.infer<typeof GateChangeOutput>;

/** `run spend`: the run as stored after the change. */
export const RunChangeOutput = lazy(() =>
  z.strictObject({
    schema: z.literal('loopx.run-change/1'),
    goal_id: Id,
    run: Run,
  }),
);
export type RunChangeOutput = z.infer<typeof RunChangeOutput>;

/** `evidence add`: the id of the new record. */
export const EvidenceChangeOutput = lazy(() =>
  z.strictObject({
    schema: z.literal('loopx.evidence-change/1'),
    goal_id: Id,
    revision: z.number().int().positive(),
    evidence_id: Id,
  }),
);
export type EvidenceChangeOutput = z.infer<typeof EvidenceChangeOutput>;

/** `reward add`: the id of the new reward. */
export const RewardChangeOutput = lazy(() =>
  z.strictObject({
    schema: z.literal('loopx.reward-change/1'),
    goal_id: Id,
    reward_id: Id,
    revision: z.number().int().positive(),
  }),
);
export type RewardChangeOutput = z.infer<typeof RewardChangeOutput>;

/** `capability run <name>`: the workflow instance started, with the todos and gates it added. */
export const WorkflowRunOutput = lazy(() =>
  z.strictObject({
    schema: z.literal('loopx.workflow-run/1'),
    goal_id: Id,
    revision: z.number().int().positive(),
    instance_id: Id,
    name: Id,
    source: z.enum(['builtin', 'workspace', 'workspace-override']),
    params: z.record(z.string(), z.string()),
    todo_ids: z.array(Id),
    gate_ids: z.array(Id),
    todos: z.array(
      z.strictObject({
        id: Id,
        /** The todo's key in the workflow file. */
        key: z.string(),
        title: z.string(),
        action: z.string().optional(),
        gate: Id.optional(),
      }),
    ),
    /** The gates that guard its todos (new ones, and any the policy's gated actions name). */
    gates: z.array(
      z.strictObject({
        id: Id,
        /** The gate's key in the workflow file, or its id for a gate the workflow does not declare. */
        key: z.string(),
        title: z.string(),
        status: z.string(),
        guards: z.array(Id),
      }),
    ),
    /** What the workflow declares it will spend. */
    declared_quota: WorkflowQuota,
  }),
);
export type WorkflowRunOutput = z.infer<typeof WorkflowRunOutput>;
