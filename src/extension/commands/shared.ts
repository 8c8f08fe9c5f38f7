/**
 * What every command uses: the arguments it may be given, its dependencies, the person acting,
 * the trust guard, and the pickers and input boxes that fill in what the arguments leave out.
 */
import * as os from 'node:os';
import * as vscode from 'vscode';
import type { Actor, ContractPreview, GoalState, InvokeResult } from '../../core/index';
import { effectiveStatus, invoke, LoopxError, refused, signFirstPolicy, textProblem } from '../../core/index';
import type { Approver } from '../trust/approver';
import type { EventLogProvider } from '../views/eventLog';
import type { Node } from '../views/tree';
import type { GoalRef, LoopxWorkspaces } from '../workspace/workspaces';

/** What a command may be given: a tree node, or plain arguments (notifications, tests, links). */
export interface CommandArgs {
  folder?: string;
  goalId?: string;
  todoId?: string;
  gateId?: string;
  runId?: string;
  title?: string;
  objective?: string;
  action?: string;
  gate?: string;
  owner?: 'agent' | 'user';
  priority?: 'P0' | 'P1' | 'P2' | 'P3';
  note?: string;
  score?: number;
  comment?: string;
  turns?: number;
  costUsd?: number;
  tokens?: number;
  summary?: string;
  /** Run Workflow...: the workflow's name and its parameter values. */
  workflow?: string;
  params?: Record<string, string>;
}

export type Arg = Node | CommandArgs | undefined;

/** Command ids and what each runs, as one domain's file hands them to the manager. */
export type CommandTable = Record<string, (a: Arg) => Promise<unknown>>;

export interface CommandDeps {
  workspaces: LoopxWorkspaces;
  approver: Approver;
  log: vscode.LogOutputChannel;
  eventLog: EventLogProvider;
  /** Opens a gate's reason whole, read-only (the decision modal shows it bounded). */
  showGateReason: (ref: GoalRef, gateId: string) => Promise<void>;
  /** Preview Contract's read-only document (views/contractPreview.ts). */
  showContractPreview: (ref: GoalRef) => Promise<ContractPreview>;
  /** Hooks for the commands other issues fill (dashboard, status server). */
  openDashboard: () => Promise<unknown>;
  /** Starts the status server if needed and opens a one-time login link; returns the address opened. */
  openDashboardInBrowser: () => Promise<unknown>;
  startStatusServer: () => Promise<unknown>;
  /** Opens a page of the folder's status server at localhost (started if needed); the address opened. */
  openStatusServerPage: (folderPath: string, pathAndQuery: () => string) => Promise<vscode.Uri | undefined>;
  stopStatusServer: () => Promise<unknown>;
  /** This window's `loopx drive`: Start, Stop and Wake Agents. */
  /** The window's agents (drive/agentsControl.ts). */
  agents: { start(): Promise<unknown>; stop(): Promise<unknown>; wake(): unknown };
}

const cancelled = Symbol('cancelled');
export class Cancelled extends Error {
  readonly [cancelled] = true;
}

export function isNode(a: Arg): a is Node {
  return !!a && typeof a === 'object' && 'kind' in a && typeof (a as Node).kind === 'string';
}

/**
 * Whether other code called the command with plain arguments (another extension, an agent tool,
 * a chat or dashboard button), rather than the person from the tree or the palette's pickers.
 */
export function calledWithArguments(a: Arg): boolean {
  return !isNode(a) && a !== undefined && Object.keys(a).length > 0;
}

/** The plain arguments of a call: none when it came from a tree node. */
export function argsOf(a: Arg): CommandArgs {
  return isNode(a) ? {} : (a ?? {});
}

export function person(): Actor {
  let name = 'user';
  try {
    name = os.userInfo().username || name;
  } catch {
    /* keep the default */
  }
  return { kind: 'user', id: name.slice(0, 128), channel: 'vscode' };
}

export function lineValidator(what: string, max: number, optional = false) {
  return (v: string) => {
    if (!v.trim()) return optional ? undefined : `${what} must not be empty`;
    if (v.length > max) return `${what} must be at most ${max} characters`;
    const problem = textProblem(v);
    if (problem) return `${what} ${problem}`;
    return undefined;
  };
}

/** What LoopX says wherever Restricted Mode stops it: why nothing happened, and how to lift it. */
export const RESTRICTED_MODE_TEXT =
  'This workspace is in Restricted Mode (not trusted), so LoopX shows it read-only and changes nothing. ' +
  'To act on it, trust it: "Workspaces: Manage Workspace Trust" in the Command Palette, or "Restricted Mode" in the status bar';

/** The refusal of anything that would write while the workspace is untrusted. */
export function untrustedRefusal(): LoopxError {
  return refused(RESTRICTED_MODE_TEXT, { reason: 'workspace_untrusted' });
}

/**
 * Called first by every entry point that writes (a command, a decision, an agent tool): in an
 * untrusted workspace it refuses before anything is read, asked or written. The stores are
 * read-only there too (LoopxWorkspaces), so a write that slipped past this would still refuse.
 */
export async function guardTrust(): Promise<void> {
  if (!vscode.workspace.isTrusted) throw untrustedRefusal();
}

export async function pickFolder(a: CommandArgs): Promise<vscode.WorkspaceFolder> {
  const folders = vscode.workspace.workspaceFolders ?? [];
  if (a.folder) {
    const f = folders.find((x) => x.uri.fsPath === a.folder);
    if (!f) throw new LoopxError('not_found', `${a.folder} is not a folder of this workspace`);
    return f;
  }
  if (folders.length === 0)
    throw new LoopxError('usage', 'open a folder first: LoopX keeps its state in the folder’s .loopx/');
  if (folders.length === 1) return folders[0]!;
  const pick = await vscode.window.showWorkspaceFolderPick({ placeHolder: 'Which folder?' });
  if (!pick) throw new Cancelled();
  return pick;
}

export async function pickGoal(
  workspaces: LoopxWorkspaces,
  a: Arg,
  filter: (s: GoalState, ref: GoalRef) => boolean = () => true,
  what = 'goal',
): Promise<GoalRef> {
  if (isNode(a) && 'ref' in a) return a.ref;
  const args = argsOf(a);
  if (args.goalId) {
    const ref = workspaces.find(args.goalId, args.folder);
    if (!ref) throw new LoopxError('not_found', `no goal ${JSON.stringify(args.goalId)} in this workspace`);
    return ref;
  }
  const candidates: { ref: GoalRef; state: GoalState }[] = [];
  for (const { ref } of workspaces.goals()) {
    try {
      const state = ref.store.load(ref.goalId).state;
      if (filter(state, ref)) candidates.push({ ref, state });
    } catch {
      /* shown in the tree */
    }
  }
  if (candidates.length === 0) throw new LoopxError('not_found', `no ${what} to choose from`);
  const pick = await vscode.window.showQuickPick(
    candidates.map((c) => ({
      label: c.state.title,
      description: `${effectiveStatus(c.state)} · ${c.ref.goalId}`,
      detail: c.state.objective.split('\n')[0],
      c,
    })),
    { placeHolder: `Choose a ${what}`, matchOnDescription: true },
  );
  if (!pick) throw new Cancelled();
  return pick.c.ref;
}

/**
 * A modal dialog only a person can answer: other code may call a command with arguments, but the
 * decision waits for this click. Cancels (throws `Cancelled`) unless the person picks `action`.
 */
export async function confirmModal(message: string, detail: string, action: string): Promise<void> {
  const choice = await vscode.window.showWarningMessage(message, { modal: true, detail }, action);
  if (choice !== action) throw new Cancelled();
}

/** Runs a capability as the person, signed with their key: the one way a command records a decision. */
export async function invokeSigned(
  deps: CommandDeps,
  ref: GoalRef,
  capability: string,
  input: Record<string, unknown>,
): Promise<InvokeResult> {
  const signer = await deps.approver.signer(ref.store);
  // A workspace's first policy is signed by its person's key with their first decision (nothing
  // changes in effect: an edit that loosens it is left for the person to review).
  signFirstPolicy(ref.store, signer);
  return invoke(ref.store, capability, input, person(), { signer });
}

/**
 * Tells the person what failed, and logs it under `where`; a pick or modal they dismissed
 * (`Cancelled`) is no failure. `command`: the command runner's way, which adds a refusal's reason
 * to the log and calls an error LoopX did not raise unexpected, with its stack.
 */
export function reportFailure(
  log: vscode.LogOutputChannel,
  where: string,
  e: unknown,
  opts: { command?: boolean } = {},
): void {
  if (e instanceof Cancelled) return;
  const ours = e instanceof LoopxError;
  const text = ours ? e.message : ((e as Error)?.message ?? String(e));
  const msg = opts.command && !ours ? `unexpected error: ${text}` : text;
  log.error(`${where}: ${opts.command && ours ? `[${e.reason}] ` : ''}${msg}`);
  if (opts.command && !ours) log.error((e as Error)?.stack ?? String(e));
  void vscode.window.showErrorMessage(msg);
}

export async function input(
  opts: vscode.InputBoxOptions & { given?: string; optional?: boolean },
): Promise<string> {
  if (opts.given !== undefined) {
    const err = opts.validateInput?.(opts.given);
    if (typeof err === 'string' && err) throw new LoopxError('usage', err);
    return opts.given;
  }
  const v = await vscode.window.showInputBox({ ...opts, ignoreFocusOut: true });
  if (v === undefined) throw new Cancelled();
  return v;
}
