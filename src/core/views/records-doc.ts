/**
 * The shapes of the everyday read documents (zod schemas, so tests and scripts can check what they
 * receive): one todo, one gate, one run in full, evidence and reward lists, and a goal's export.
 * Each one-item document starts with the fields its list gives (GoalStatusDoc's items), so a
 * script reads `.status` of `todo show` as it reads `.[0].status` of `todo list`.
 */
import { z } from 'zod';
import { lazy } from '../model';
import { GoalStatusDoc } from './status-doc';

export const TODO_SCHEMA = 'loopx.todo/1';
export const GATE_SCHEMA = 'loopx.gate/1';
export const RUN_SCHEMA = 'loopx.run/1';
export const EXPORT_SCHEMA = 'loopx.export/1';

export const TodoItem = lazy(() => GoalStatusDoc.shape.todos.element);
export const GateItem = lazy(() => GoalStatusDoc.shape.gates.element);
export const RunItem = lazy(() => GoalStatusDoc.shape.runs.element);
export type TodoItem = z.infer<typeof TodoItem>;
export type GateItem = z.infer<typeof GateItem>;
export type RunItem = z.infer<typeof RunItem>;

/** One evidence record in full: `evidence list`, and what `todo show` and `run show` list. */
export const EvidenceOut = lazy(() =>
  z.object({
    id: z.string(),
    kind: z.string(),
    summary: z.string(),
    run_id: z.string().optional(),
    todo_id: z.string().optional(),
    command: z.string().optional(),
    exit_code: z.number().optional(),
    duration_ms: z.number().optional(),
    artifact: z.string().optional(),
    at: z.string(),
    /** `kind:id` of who recorded it, and through which channel. */
    by: z.string(),
    via: z.string(),
  }),
);
export type EvidenceOut = z.infer<typeof EvidenceOut>;

/** One reward in full: `reward list`, and what `run show` lists. */
export const RewardOut = lazy(() =>
  z.object({
    id: z.string(),
    run_id: z.string(),
    score: z.number(),
    comment: z.string(),
    lesson: z.string().optional(),
    at: z.string(),
    by: z.string(),
    via: z.string(),
  }),
);
export type RewardOut = z.infer<typeof RewardOut>;

/** An event that changed a todo, gate or run, as its `history` lists it (oldest first). */
export const HistoryEntry = lazy(() =>
  z.object({
    event_id: z.string(),
    at: z.string(),
    type: z.string(),
    by: z.string(),
    via: z.string(),
    /** The clone (writer id) that wrote it, and its name where this clone knows one. */
    writer: z.string(),
    writer_name: z.string().optional(),
  }),
);
export type HistoryEntry = z.infer<typeof HistoryEntry>;

const Work = lazy(() => z.object({ todo_id: z.string(), title: z.string(), action: z.string().optional() }));

export const TodoDoc = lazy(() =>
  TodoItem.extend({
    schema: z.literal(TODO_SCHEMA),
    goal_id: z.string(),
    note: z.string().optional(),
    claimed_at: z.string().optional(),
    created_at: z.string(),
    updated_at: z.string(),
    added_by: z.string().optional(),
    added_via: z.string().optional(),
    /** Every gate it needs (its own, any that guards it, the policy's), and whether that clears it. */
    gates: z.array(
      z.object({
        id: z.string(),
        /** `not requested`: the policy needs it and nobody has asked yet. */
        status: z.string(),
        title: z.string().optional(),
        /** Required by the policy for this command (the pattern that matched). */
        policy_pattern: z.string().optional(),
        /** The gate's approval covers this todo with its command as it is now. */
        covers: z.boolean(),
      }),
    ),
    depends: z.array(z.object({ id: z.string(), title: z.string().optional(), status: z.string() })),
    evidence_records: z.array(EvidenceOut),
    history: z.array(HistoryEntry),
  }),
);
export type TodoDoc = z.infer<typeof TodoDoc>;

export const GateDoc = lazy(() =>
  GateItem.extend({
    schema: z.literal(GATE_SCHEMA),
    goal_id: z.string(),
    expires_at: z.string().optional(),
    /** Who asked, in words: `agent codex via mcp`, `person alice at the command line`. */
    requested_by_words: z.string(),
    /** Whose words `reason` is: `LoopX`, `the agent’s words`, `the requester’s words`. */
    reason_whose: z.string(),
    /** Every todo that needs this gate, whatever its status, with its command whole. */
    work: z.array(
      z.object({
        id: z.string(),
        title: z.string(),
        status: z.string(),
        action: z.string().optional(),
        covered: z.boolean(),
      }),
    ),
    /** What a decision now is about: the open work, exactly as the decision prompt lists it. */
    open_work: z.array(Work),
    decision: z
      .object({
        outcome: z.string(),
        by: z.string().optional(),
        by_words: z.string().optional(),
        at: z.string().optional(),
        signed: z.boolean(),
        note: z.string().optional(),
        /** What the approval covers, as the person saw it. */
        approved_for: z.array(Work).optional(),
      })
      .optional(),
    history: z.array(HistoryEntry),
  }),
);
export type GateDoc = z.infer<typeof GateDoc>;

export const RunDoc = lazy(() =>
  RunItem.extend({
    schema: z.literal(RUN_SCHEMA),
    goal_id: z.string(),
    writer_name: z.string().optional(),
    summary: z.string().optional(),
    contract: z
      .object({
        id: z.string(),
        issued_at: z.string(),
        expires_at: z.string(),
        actions: z.array(z.object({ todo_id: z.string(), command: z.string() })),
        judgment: z.array(z.string()),
      })
      .optional(),
    /** As in `run list`, each record in full (its whole summary, command, time and author). */
    evidence: z.array(EvidenceOut),
    rewards: z.array(RewardOut),
  }),
);
export type RunDoc = z.infer<typeof RunDoc>;

/** An event as `loopx log --json` prints it: the event, its log (writer) and the writer's name. */
export const LogEventOut = lazy(() =>
  z.object({ id: z.string(), ts: z.string(), type: z.string(), log: z.string() }).passthrough(),
);

export const ExportDoc = lazy(() =>
  z.object({
    schema: z.literal(EXPORT_SCHEMA),
    exported_at: z.string(),
    goal: GoalStatusDoc,
    /** Every gate in full, as `gate show` gives it. */
    gates: z.array(GateDoc),
    /** Every run, newest first (the goal document lists the latest only). */
    runs: z.array(RunItem),
    evidence: z.array(EvidenceOut),
    rewards: z.array(RewardOut),
    /** The whole history, as `loopx log --json` prints it. */
    events: z.array(LogEventOut),
  }),
);
export type ExportDoc = z.infer<typeof ExportDoc>;
