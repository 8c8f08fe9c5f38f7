/**
 * Every JSON document LoopX prints, by its `schema` id (`loopx.<name>/<version>`): OUTPUT_SCHEMAS.
 * The CLI's `--json` output, the MCP server's tool results and resources and the status server's
 * answers are these documents; `npm run docs` writes their JSON Schemas into schemas/
 * (scripts/docs/output-schemas.ts), and the CLI tests check every document they read against them.
 *
 * The read documents' schemas live beside their builders (status-doc.ts, records-doc.ts,
 * should-run-doc.ts, setup/doctor.ts); the rest are here and in output-schemas-changes.ts and
 * output-schemas-setup.ts, which this module re-exports. A new document needs its entry in
 * OUTPUT_SCHEMAS (test/unit/core/views/output-schemas.test.ts fails until it has one).
 */
import { z } from 'zod';
import type { SummaryDoc, TurnDoc } from '../contract';
import { lazy } from '../model';
import { DoctorDoc } from '../setup';
import { WorkflowFile } from '../workflows';
import type { GoalCheck } from './goal-history';
import {
  EvidenceChangeOutput,
  GateChangeOutput,
  RewardChangeOutput,
  RunChangeOutput,
  TodoChangeOutput,
  WorkflowRunOutput,
} from './output-schemas-changes';
import {
  HooksInstallOutput,
  InitOutput,
  InstallCommandOutput,
  KeyOutput,
  LoginLinkOutput,
  PasskeyLinkOutput,
  PolicyOutput,
  RepairOutput,
  StatusServerOutput,
  StatusTokenOutput,
} from './output-schemas-setup';
import { ExportDoc, GateDoc, RunDoc, TodoDoc } from './records-doc';
import { DriveStatus } from './drive-status-doc';
import { NeedsYouDoc, WorkspaceForgetOutput, WorkspacesDoc } from './needs-you-doc';
import { NoticeBody, NotifyChannelsDoc, NotifySendDoc } from './notify-doc';
import { ShouldRunOutput } from './should-run-doc';
import { AttentionItem, GoalStatusDoc, PolicyStatus, StatusDoc } from './status-doc';

// Every document's schema is importable from here.
export * from './output-schemas-changes';
export * from './output-schemas-setup';

/** `summary_all`: the runs it ended with their evidence, and the goal's progress. */
export const SummaryOutput = lazy(
  () =>
    z.strictObject({
      schema: z.literal('loopx.summary/1'),
      goal_id: z.string(),
      status: z.string(),
      ended_runs: z.array(
        z.strictObject({
          id: z.string(),
          outcome: z.string(),
          evidence: z.array(
            z.strictObject({
              todo_id: z.string().optional(),
              exit_code: z.number().optional(),
              /** Its first line, at most 200 characters. */
              summary: z.string(),
            }),
          ),
        }),
      ),
      progress: z.strictObject({ done: z.number(), total: z.number() }),
      /** Todos and gates by status. */
      todos: z.record(z.string(), z.number()),
      gates: z.record(z.string(), z.number()),
      quota: GoalStatusDoc.shape.quota.shape.budgets,
      rewards: z.strictObject({ count: z.number(), mean: z.number().nullable() }),
      attention: z.array(AttentionItem),
    }) satisfies z.ZodType<SummaryDoc>,
);
export type SummaryOutput = z.infer<typeof SummaryOutput>;

/** `turn`: should-run's answer, what ran under the contract, and summary_all of the run. */
export const TurnOutput = lazy(
  () =>
    z.strictObject({
      schema: z.literal('loopx.turn/1'),
      goal_id: z.string(),
      /** should-run's answer: only `run` runs anything. */
      decision: z.enum(['run', 'wait', 'stop', 'done']),
      reasons: z.array(z.string()),
      contract_id: z.string().nullable(),
      /** What ran, in order; the turn stops after the first command that fails. */
      ran: z.array(
        z.strictObject({
          todo_id: z.string(),
          command: z.string(),
          exit_code: z.number().int(),
          duration_ms: z.number(),
          evidence_id: z.string(),
          todo_done: z.boolean(),
        }),
      ),
      /** What the contract listed and this turn did not run (after a failure, or past `--max`). */
      not_run: z.array(ListedCommand),
      /** summary_all of the turn's run; null when no run was opened. */
      summary: SummaryOutput.nullable(),
    }) satisfies z.ZodType<TurnDoc>,
);
export type TurnOutput = z.infer<typeof TurnOutput>;

/** A command a contract lists, as the documents print it. */
const ListedCommand = lazy(() => z.strictObject({ todo_id: z.string(), command: z.string() }));

/** What both answers of `contract verify` say of the contract. */
const verifiedContract = () => ({
  schema: z.literal('loopx.contract-verify/1'),
  valid: z.literal(true),
  contract_id: z.string(),
  goal_id: z.string(),
  run_id: z.string(),
  expires_at: z.string(),
});

/** `contract verify --contract C`: the contract alone, with what it lets the agent do. */
export const ContractCheckOutput = lazy(() =>
  z.strictObject({
    ...verifiedContract(),
    actions: z.array(ListedCommand),
    /** The todos it lets the agent complete by its own judgment. */
    judgment: z.array(z.string()),
  }),
);
export type ContractCheckOutput = z.infer<typeof ContractCheckOutput>;

/** `contract verify --contract C [--todo T] [-- COMMAND]`: one todo's command, as the contract lists it. */
export const CommandCheckOutput = lazy(() =>
  z.strictObject({ ...verifiedContract(), todo_id: z.string(), command: z.string() }),
);
export type CommandCheckOutput = z.infer<typeof CommandCheckOutput>;

/** `contract verify`, either answer. Only a valid contract prints a document: anything else is an error. */
export const ContractVerifyOutput = lazy(() => z.union([ContractCheckOutput, CommandCheckOutput]));
export type ContractVerifyOutput = z.infer<typeof ContractVerifyOutput>;

/** `verify`: each goal's writers' hash chains and its merged state, and which policy applies. */
export const VerifyOutput = lazy(() =>
  z.strictObject({
    schema: z.literal('loopx.verify/2'),
    ok: z.boolean(),
    goals: z.array(
      z.strictObject({
        goal_id: z.string(),
        ok: z.boolean(),
        /** The merged history's length, when it replays. */
        events: z.number().optional(),
        state_hash: z
          .string()
          .regex(/^[0-9a-f]{64}$/)
          .optional(),
        writers: z.array(
          z.strictObject({
            writer: z.string(),
            file: z.string(),
            ok: z.boolean(),
            events: z.number().optional(),
            torn_tail_line: z.number().optional(),
            error: z.string().optional(),
          }),
        ),
        error: z.string().optional(),
        ignored_decisions: z.array(z.string()).optional(),
        overruled: z.array(z.string()).optional(),
      }) satisfies z.ZodType<GoalCheck>,
    ),
    policy: PolicyStatus,
    /** The workspace identity signatures here must name, and why it is not the committed one if it is not. */
    workspace: z.strictObject({ id: z.string().optional(), problem: z.string().optional() }),
  }),
);
export type VerifyOutput = z.infer<typeof VerifyOutput>;

/** `quota show|set|grant`: the goal's budgets, spend, cooldown and window (as `quota` of its status). */
export const QuotaOutput = lazy(() =>
  GoalStatusDoc.shape.quota.extend({
    schema: z.literal('loopx.quota/1'),
    goal_id: z.string(),
  }),
);
export type QuotaOutput = z.infer<typeof QuotaOutput>;

/** `capability show <name>`: a workflow as its file declares it (defaults filled in), and where it comes from. */
export const WorkflowShowOutput = lazy(() =>
  z.strictObject({
    schema: z.literal('loopx.workflow/1'),
    ...WorkflowFile.omit({ $schema: true }).shape,
    source: z.enum(['builtin', 'workspace', 'workspace-override']),
    /** The file it was read from, relative to the workspace, or `builtin:<name>`. */
    file: z.string(),
  }),
);
export type WorkflowShowOutput = z.infer<typeof WorkflowShowOutput>;

/** `export --output FILE`: where the export went. */
export const ExportFileOutput = lazy(() =>
  z.strictObject({
    schema: z.literal('loopx.export-file/1'),
    goal_id: z.string(),
    file: z.string(),
    /** `json` with --json (a loopx.export/1 document), else the Markdown report. */
    format: z.enum(['json', 'markdown']),
    bytes: z.number().int().nonnegative(),
    /** The events of the goal's history it holds. */
    events: z.number().int().nonnegative(),
  }),
);
export type ExportFileOutput = z.infer<typeof ExportFileOutput>;

/**
 * Every document by its `schema` id. Each entry is a stand-in (model/lazy.ts) so that loading this
 * module builds nothing and touches no other module's schema: the modules it names may load after it.
 */
export const OUTPUT_SCHEMAS: Readonly<Record<string, z.ZodType>> = {
  // Reading goals
  'loopx.status/1': lazy(() => StatusDoc),
  'loopx.goal-status/1': lazy(() => GoalStatusDoc),
  'loopx.todo/1': lazy(() => TodoDoc),
  'loopx.gate/1': lazy(() => GateDoc),
  'loopx.run/1': lazy(() => RunDoc),
  'loopx.export/1': lazy(() => ExportDoc),
  'loopx.export-file/1': lazy(() => ExportFileOutput),
  'loopx.drive-status/1': lazy(() => DriveStatus),
  'loopx.needs-you/1': lazy(() => NeedsYouDoc),
  'loopx.workspaces/1': lazy(() => WorkspacesDoc),
  'loopx.workspace-forget/1': lazy(() => WorkspaceForgetOutput),
  'loopx.quota/1': lazy(() => QuotaOutput),
  'loopx.verify/2': lazy(() => VerifyOutput),
  // The interaction contract
  'loopx.should-run/1': lazy(() => ShouldRunOutput),
  'loopx.contract-verify/1': lazy(() => ContractVerifyOutput),
  'loopx.summary/1': lazy(() => SummaryOutput),
  'loopx.turn/1': lazy(() => TurnOutput),
  // Changes
  'loopx.todo-change/1': lazy(() => TodoChangeOutput),
  'loopx.gate-change/1': lazy(() => GateChangeOutput),
  'loopx.run-change/1': lazy(() => RunChangeOutput),
  'loopx.evidence-change/1': lazy(() => EvidenceChangeOutput),
  'loopx.reward-change/1': lazy(() => RewardChangeOutput),
  'loopx.workflow-run/1': lazy(() => WorkflowRunOutput),
  'loopx.workflow/1': lazy(() => WorkflowShowOutput),
  // The workspace and this machine
  'loopx.init/1': lazy(() => InitOutput),
  'loopx.doctor/1': lazy(() => DoctorDoc),
  'loopx.repair/1': lazy(() => RepairOutput),
  'loopx.policy/1': lazy(() => PolicyOutput),
  'loopx.key/1': lazy(() => KeyOutput),
  'loopx.install-command/1': lazy(() => InstallCommandOutput),
  'loopx.hooks-install/1': lazy(() => HooksInstallOutput),
  'loopx.status-server/1': lazy(() => StatusServerOutput),
  'loopx.status-token/1': lazy(() => StatusTokenOutput),
  'loopx.login-link/1': lazy(() => LoginLinkOutput),
  'loopx.passkey-link/1': lazy(() => PasskeyLinkOutput),
  // Telling the person outside the editor
  'loopx.notify-channels/1': lazy(() => NotifyChannelsDoc),
  'loopx.notify-send/1': lazy(() => NotifySendDoc),
  'loopx.notice/1': lazy(() => NoticeBody),
};

/** What prints each document (for schemas/README.md and each JSON Schema's description). */
export const OUTPUT_PRINTED_BY: Readonly<Record<string, string>> = {
  'loopx.status/1':
    '`loopx status`; the MCP resource `loopx://status` and tool `loopx_get_status` (no goal); the status server’s `/status`',
  'loopx.goal-status/1':
    '`loopx status --goal-id`, `goal show`, `goal create|pause|resume|close|cancel`, `project_prompt create|close`; the MCP resource `loopx://goals/<id>` and tool `loopx_get_status`; the status server’s `/goals/<id>`',
  'loopx.todo/1': '`loopx todo show`',
  'loopx.gate/1': '`loopx gate show`',
  'loopx.run/1': '`loopx run show`',
  'loopx.export/1': '`loopx export --json` (to stdout, or the file `--output` names)',
  'loopx.export-file/1': '`loopx export --output FILE`',
  'loopx.drive-status/1': '`loopx drive status`',
  'loopx.needs-you/1': '`loopx status --all`, `loopx gate list --all`; the status server’s `/all`',
  'loopx.workspaces/1': '`loopx workspaces`',
  'loopx.workspace-forget/1': '`loopx workspaces forget`',
  'loopx.quota/1': '`loopx quota show|set|grant`',
  'loopx.verify/2': '`loopx verify`',
  'loopx.should-run/1': '`loopx quota should-run`; the MCP tool `loopx_get_contract`',
  'loopx.contract-verify/1': '`loopx contract verify`',
  'loopx.summary/1': '`loopx summary_all`',
  'loopx.turn/1': '`loopx turn`',
  'loopx.todo-change/1': '`loopx todo add|claim|done|cancel|update`',
  'loopx.gate-change/1': '`loopx gate request|approve|reject`',
  'loopx.run-change/1': '`loopx run spend`',
  'loopx.evidence-change/1': '`loopx evidence add`',
  'loopx.reward-change/1': '`loopx reward add`',
  'loopx.workflow-run/1': '`loopx capability run`',
  'loopx.workflow/1': '`loopx capability show`',
  'loopx.init/1': '`loopx init`',
  'loopx.doctor/1': '`loopx doctor`',
  'loopx.repair/1': '`loopx self-repair`',
  'loopx.policy/1': '`loopx policy show|sign|allow`',
  'loopx.key/1': '`loopx key create`, `loopx approvers trust`',
  'loopx.install-command/1': '`loopx install-command`',
  'loopx.hooks-install/1': '`loopx hooks install`',
  'loopx.status-server/1': '`loopx status-server` (when it starts)',
  'loopx.status-token/1': '`loopx status-server --print-token`',
  'loopx.login-link/1': '`loopx status-server --login-link`',
  'loopx.passkey-link/1': '`loopx key passkey add`',
  'loopx.notify-channels/1': '`loopx notify list|add|remove|desktop|link-base`',
  'loopx.notify-send/1': '`loopx notify send|test`; each pass of `loopx notify watch --json` (one a line)',
  'loopx.notice/1': 'LoopX to a `generic` webhook channel (the body it posts; docs/NOTIFICATIONS.md)',
};
