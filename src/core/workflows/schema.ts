/**
 * A workflow capability: a team's own sequence of todos and gates, declared in a file
 * (`.loopx/capabilities/<name>.json`) or shipped with LoopX (builtin/), with the quota the whole
 * workflow declares it will spend. The schema is strict: a misspelt field is an error, not a
 * field silently ignored.
 */
import { z } from 'zod';
import { Id, lazy, Line, Owner, Priority, Text } from '../model';

/** A parameter name, as `{name}` placeholders use it. */
export const PARAM_NAME = /^[A-Za-z][A-Za-z0-9_]{0,31}$/;
/** A todo or gate key: the id rule, short enough that `<key>-<suffix>` is still an id. */
const Key = lazy(() => Id.refine((s) => s.length <= 40, { message: 'must be at most 40 characters' }));

export const WorkflowParam = lazy(() =>
  z.strictObject({
    description: Line(500),
    required: z.boolean().optional(),
    default: Line(200).optional(),
    /** A regular expression the whole value must match (it is anchored). */
    pattern: z.string().min(1).max(200).optional(),
  }),
);

export const WorkflowTodo = lazy(() =>
  z.strictObject({
    key: Key,
    title: Line(200),
    /** The shell command, with `{param}` placeholders outside quotes (LoopX quotes the values). */
    action: Line(2000).optional(),
    owner: Owner.default('agent'),
    priority: Priority.default('P2'),
    dependsOn: z.array(Key).max(50).default([]),
    /** The key of the gate it needs. */
    gate: Key.optional(),
  }),
);

export const WorkflowGate = lazy(() =>
  z.strictObject({
    key: Key,
    title: Line(200),
    reason: Text(2000),
    /** Keys of the todos it guards (besides those that name it as their `gate`). */
    guards: z.array(Key).max(50).default([]),
  }),
);

/** What the whole workflow declares it will spend; budgets it does not name are not declared. */
export const WorkflowQuota = lazy(() =>
  z.strictObject({
    turns: z.number().int().nonnegative().optional(),
    tokens: z.number().int().nonnegative().optional(),
    costUsd: z.number().nonnegative().finite().optional(),
  }),
);

export const WorkflowFile = lazy(() =>
  z.strictObject({
    /** Editors' schema link; ignored by LoopX. */
    $schema: z.string().max(500).optional(),
    name: Id,
    title: Line(200),
    summary: Line(500),
    description: Text(4000).optional(),
    params: z
      .record(
        z
          .string()
          .regex(PARAM_NAME, 'not a parameter name (a letter, then letters, digits or _; at most 32)'),
        WorkflowParam,
      )
      .default({}),
    todos: z.array(WorkflowTodo).min(1).max(50),
    gates: z.array(WorkflowGate).max(20).default([]),
    quota: WorkflowQuota.default({}),
  }),
);

export type WorkflowFile = z.infer<typeof WorkflowFile>;
export type WorkflowParam = z.infer<typeof WorkflowParam>;
export type WorkflowQuota = z.infer<typeof WorkflowQuota>;

/** Where a workflow came from: shipped with LoopX, a workspace file, or a workspace file that replaces a built-in. */
export type WorkflowSource = 'builtin' | 'workspace' | 'workspace-override';

export interface WorkflowEntry {
  name: string;
  title: string;
  summary: string;
  description?: string;
  params: Record<string, WorkflowParam>;
  quota: WorkflowQuota;
  source: WorkflowSource;
  /** The file it was read from, relative to the workspace (`.loopx/capabilities/x.json`), or `builtin:x`. */
  file: string;
  /** The whole declaration, validated. */
  workflow: WorkflowFile;
}

export interface WorkflowProblem {
  /** Relative to the workspace, e.g. `.loopx/capabilities/x.json`. */
  file: string;
  line?: number;
  column?: number;
  /** The field path, e.g. `todos.1.dependsOn.0`. */
  field?: string;
  message: string;
}

/** The JSON schema editors use for workflow files, generated from the zod schema. */
export function workflowJsonSchema(): Record<string, unknown> {
  return {
    title: 'LoopX workflow capability (.loopx/capabilities/<name>.json)',
    ...(z.toJSONSchema(WorkflowFile, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>),
  };
}
