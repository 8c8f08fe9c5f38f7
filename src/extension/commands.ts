/**
 * The LoopX commands. Each turns a click (or a test's arguments) into one core call; inputs come
 * from quick picks and input boxes with validation, and every refusal is shown and logged.
 */
import * as vscode from 'vscode';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  Store,
  invoke,
  shouldRun,
  repair,
  LoopxError,
  checkId,
  ID_RULE,
  effectiveStatus,
} from '../core/index';
import type { Actor, GoalState, ShouldRunOutput } from '../core/index';
import type { GoalRef, LoopxWorkspaces } from './workspaces';
import type { Node } from './tree';
import type { Approver } from './approver';
import type { EventLogProvider } from './eventLog';
import { planHooks, applyHooks } from './hooksInstaller';

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
  fromNotification?: boolean;
}

type Arg = Node | CommandArgs | undefined;

export interface CommandDeps {
  workspaces: LoopxWorkspaces;
  approver: Approver;
  log: vscode.LogOutputChannel;
  eventLog: EventLogProvider;
  /** Hooks for the commands other issues fill (dashboard, status server). */
  openDashboard: () => Promise<unknown>;
  startStatusServer: () => Promise<unknown>;
  stopStatusServer: () => Promise<unknown>;
}

const cancelled = Symbol('cancelled');
class Cancelled extends Error {
  readonly [cancelled] = true;
}

function isNode(a: Arg): a is Node {
  return !!a && typeof a === 'object' && 'kind' in a && typeof (a as Node).kind === 'string';
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

function lineValidator(what: string, max: number, optional = false) {
  return (v: string) => {
    if (!v.trim()) return optional ? undefined : `${what} must not be empty`;
    if (v.length > max) return `${what} must be at most ${max} characters`;
    if (/[\u0000-\u001f\u007f]/.test(v)) return `${what} must not contain control characters`;
    return undefined;
  };
}

export class LoopxCommands {
  constructor(private readonly deps: CommandDeps) {}

  register(context: vscode.ExtensionContext): void {
    const table: Record<string, (a: Arg) => Promise<unknown>> = {
      'loopx.initWorkspace': (a) => this.initWorkspace(a),
      'loopx.createGoal': (a) => this.createGoal(a),
      'loopx.addTodo': (a) => this.addTodo(a),
      'loopx.requestContract': (a) => this.requestContract(a),
      'loopx.approveGate': (a) => this.decideGate(a, 'approve'),
      'loopx.rejectGate': (a) => this.decideGate(a, 'reject'),
      'loopx.recordReward': (a) => this.recordReward(a),
      'loopx.grantQuota': (a) => this.grantQuota(a),
      'loopx.pauseGoal': (a) => this.transition(a, 'pause'),
      'loopx.resumeGoal': (a) => this.transition(a, 'resume'),
      'loopx.closeGoal': (a) => this.transition(a, 'close'),
      'loopx.runSelfRepair': (a) => this.selfRepair(a),
      'loopx.showEventLog': (a) => this.showEventLog(a),
      'loopx.completeTodo': (a) => this.completeTodo(a),
      'loopx.openEvidence': (a) => this.openEvidence(a),
      'loopx.refresh': async () => this.deps.workspaces.refreshNow(),
      'loopx.installAgentHooks': (a) => this.installAgentHooks(a),
      'loopx.openDashboard': () => this.deps.openDashboard(),
      'loopx.startStatusServer': () => this.guardTrust().then(() => this.deps.startStatusServer()),
      'loopx.stopStatusServer': () => this.deps.stopStatusServer(),
    };
    for (const [id, fn] of Object.entries(table)) {
      context.subscriptions.push(vscode.commands.registerCommand(id, (a: Arg) => this.run(id, () => fn(a))));
    }
  }

  /** Runs a command: a refusal or error is shown to the person and logged, never swallowed. */
  private async run<T>(id: string, fn: () => Promise<T>): Promise<T | undefined> {
    try {
      const result = await fn();
      return result;
    } catch (e) {
      if (e instanceof Cancelled) return undefined;
      const msg = e instanceof LoopxError ? e.message : `unexpected error: ${(e as Error)?.message ?? e}`;
      this.deps.log.error(`${id}: ${msg}`);
      if (!(e instanceof LoopxError)) this.deps.log.error((e as Error)?.stack ?? String(e));
      void vscode.window.showErrorMessage(`LoopX: ${msg}`);
      return undefined;
    } finally {
      this.deps.workspaces.refreshNow();
    }
  }

  private async guardTrust(): Promise<void> {
    if (!vscode.workspace.isTrusted) {
      throw new LoopxError(
        'refused',
        'this workspace is not trusted: LoopX shows it read-only and changes nothing (Manage Workspace Trust to allow changes)',
      );
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Pickers

  private async pickFolder(a: CommandArgs): Promise<vscode.WorkspaceFolder> {
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

  private async pickGoal(
    a: Arg,
    filter: (s: GoalState) => boolean = () => true,
    what = 'goal',
  ): Promise<GoalRef> {
    if (isNode(a) && 'ref' in a) return a.ref;
    const args = (isNode(a) ? {} : (a ?? {})) as CommandArgs;
    if (args.goalId) {
      const ref = this.deps.workspaces.find(args.goalId, args.folder);
      if (!ref) throw new LoopxError('not_found', `no goal ${JSON.stringify(args.goalId)} in this workspace`);
      return ref;
    }
    const candidates: { ref: GoalRef; state: GoalState }[] = [];
    for (const { ref } of this.deps.workspaces.goals()) {
      try {
        const state = ref.store.load(ref.goalId).state;
        if (filter(state)) candidates.push({ ref, state });
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

  private async input(
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

  // ---------------------------------------------------------------------------------------------
  // Commands

  async initWorkspace(a: Arg): Promise<string> {
    await this.guardTrust();
    const folder = await this.pickFolder((isNode(a) ? {} : a) ?? {});
    const store = Store.init(folder.uri.fsPath);
    this.deps.log.info(`initialised ${store.root}`);
    void vscode.window
      .showInformationMessage(`LoopX: ${folder.name} is ready. Create a first goal?`, 'Create Goal')
      .then((c) => {
        if (c) void vscode.commands.executeCommand('loopx.createGoal', { folder: folder.uri.fsPath });
      });
    return store.root;
  }

  async createGoal(a: Arg): Promise<string> {
    await this.guardTrust();
    const args = (isNode(a) ? {} : (a ?? {})) as CommandArgs;
    const folder = isNode(a) && a.kind === 'folder' ? a.folder.folder : await this.pickFolder(args);
    const store = Store.init(folder.uri.fsPath);
    const title = await this.input({
      given: args.title,
      prompt: 'Goal title',
      placeHolder: 'Refactor the payment module',
      validateInput: lineValidator('The title', 200),
    });
    const objective = await this.input({
      given: args.objective ?? (args.title !== undefined ? '' : undefined),
      prompt: 'Objective (what done looks like)',
      placeHolder: 'Extract retry logic, add a circuit breaker, update tests',
      validateInput: (v) => (v.length > 10000 ? 'at most 10,000 characters' : undefined),
    });
    const res = invoke(store, 'goal.create', { title: title.trim(), objective }, person());
    this.deps.log.info(`created goal ${res.goalId}`);
    return res.goalId;
  }

  async addTodo(a: Arg): Promise<string> {
    await this.guardTrust();
    const args = (isNode(a) ? {} : (a ?? {})) as CommandArgs;
    const ref = await this.pickGoal(a, (s) => s.status === 'active' || s.status === 'paused');
    const title = await this.input({
      given: args.title,
      prompt: 'Todo title',
      validateInput: lineValidator('The title', 200),
    });
    const direct = args.title !== undefined;
    const action = await this.input({
      given: args.action ?? (direct ? '' : undefined),
      prompt: 'Command an agent runs for it (empty: the agent uses its judgment)',
      placeHolder: 'npm test',
      validateInput: lineValidator('The command', 2000, true),
    });
    let gate = args.gate ?? '';
    if (!direct) {
      gate = await this.input({
        prompt: 'Gate that must be approved first (empty: none)',
        placeHolder: 'prod',
        validateInput: (v) =>
          v && !/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/.test(v) ? `a gate id is ${ID_RULE}` : undefined,
      });
    }
    const owner =
      args.owner ??
      (direct
        ? 'agent'
        : ((await vscode.window.showQuickPick(['agent', 'user'], { placeHolder: 'Who does it?' })) as
            'agent' | 'user' | undefined));
    if (!owner) throw new Cancelled();
    const res = invoke(
      ref.store,
      'todo.add',
      {
        goalId: ref.goalId,
        title: title.trim(),
        action: action.trim() || undefined,
        gate: gate || undefined,
        owner,
        priority: args.priority ?? 'P2',
      },
      person(),
    );
    return res.input.todoId as string;
  }

  async requestContract(a: Arg): Promise<ShouldRunOutput> {
    await this.guardTrust();
    const ref = await this.pickGoal(a, (s) => s.status === 'active');
    const cfg = vscode.workspace.getConfiguration('loopx');
    const out = shouldRun(
      ref.store,
      {
        goalId: ref.goalId,
        agent: cfg.get<string>('agentName', 'vscode'),
        ttlMinutes: cfg.get<number>('contractTtlMinutes'),
      },
      person(),
    );
    const doc = await vscode.workspace.openTextDocument({
      language: 'json',
      content: JSON.stringify(out, null, 2),
    });
    await vscode.window.showTextDocument(doc, { preview: true });
    const actions = out.interaction_contract.cli_channel.next_cli_actions.length;
    void vscode.window
      .showInformationMessage(
        `LoopX: ${out.decision.toUpperCase()}: ${out.reasons[0] ?? ''}${actions ? ` (${actions} action${actions > 1 ? 's' : ''})` : ''}`,
        ...(out.interaction_contract.id ? ['Copy Contract'] : []),
      )
      .then((c) => {
        if (c) void vscode.env.clipboard.writeText(JSON.stringify(out.interaction_contract, null, 2));
      });
    return out;
  }

  async decideGate(a: Arg, decision: 'approve' | 'reject'): Promise<boolean> {
    await this.guardTrust();
    const args = (isNode(a) ? {} : (a ?? {})) as CommandArgs;
    const hasPending = (s: GoalState) => s.gates.some((g) => g.status === 'pending');
    const ref = await this.pickGoal(a, hasPending, 'goal with a pending gate');
    const state = ref.store.load(ref.goalId).state;
    let gateId = isNode(a) && a.kind === 'gate' ? a.gate.id : args.gateId;
    if (!gateId) {
      const pending = state.gates.filter((g) => g.status === 'pending');
      const pick = await vscode.window.showQuickPick(
        pending.map((g) => ({ label: g.id, description: g.title, detail: g.reason, g })),
        { placeHolder: `Which gate to ${decision}?` },
      );
      if (!pick) throw new Cancelled();
      gateId = pick.g.id;
    }
    checkId(gateId, 'gate id');
    const gate = state.gates.find((g) => g.id === gateId);
    if (!gate) throw new LoopxError('not_found', `goal ${ref.goalId} has no gate ${gateId}`);
    if (gate.status !== 'pending') {
      // Say so before asking for a note: the capability would refuse it anyway.
      throw new LoopxError(
        'refused',
        `gate ${gateId} is ${gate.status}${gate.decidedBy ? ` (by ${gate.decidedBy.id} at ${gate.decidedAt})` : ''}: only a pending gate can be ${decision === 'approve' ? 'approved' : 'rejected'}`,
      );
    }
    // A click on the notification's button is the decision itself; elsewhere ask for a note.
    const note =
      args.note ??
      (args.fromNotification
        ? undefined
        : await this.input({
            prompt: `${decision === 'approve' ? 'Approve' : 'Reject'} gate ${gateId}: a note for the record (optional)`,
            validateInput: (v) => (v.length > 2000 ? 'at most 2,000 characters' : undefined),
          }));
    const cleanNote = note?.trim() ? note.trim() : undefined;
    if (decision === 'approve') {
      const signature = await this.deps.approver.sign(ref.store, ref.goalId, gate, cleanNote);
      invoke(ref.store, 'gate.approve', { goalId: ref.goalId, gateId, note: cleanNote, signature }, person());
    } else {
      invoke(ref.store, 'gate.reject', { goalId: ref.goalId, gateId, note: cleanNote }, person());
    }
    this.deps.log.info(
      `${decision === 'approve' ? 'approved (signed)' : 'rejected'} gate ${gateId} of goal ${ref.goalId}`,
    );
    return true;
  }

  async recordReward(a: Arg): Promise<string> {
    await this.guardTrust();
    const args = (isNode(a) ? {} : (a ?? {})) as CommandArgs;
    const ref = await this.pickGoal(a, (s) => s.runs.length > 0, 'goal with runs');
    let runId = isNode(a) && a.kind === 'run' ? a.run.id : args.runId;
    if (!runId) {
      const runs = [...ref.store.load(ref.goalId).state.runs].reverse();
      const pick = await vscode.window.showQuickPick(
        runs.map((r) => ({
          label: r.id,
          description: `${r.agent} · ${r.outcome ?? 'open'} · ${r.startedAt}`,
          detail: r.summary?.split('\n')[0],
          r,
        })),
        { placeHolder: 'Which run?' },
      );
      if (!pick) throw new Cancelled();
      runId = pick.r.id;
    }
    let score = args.score;
    if (score === undefined) {
      const pick = await vscode.window.showQuickPick(
        [
          ['1', 'excellent'],
          ['0.8', 'good'],
          ['0.5', 'acceptable'],
          ['0', 'no value'],
          ['-0.5', 'harmful'],
          ['-1', 'must not happen again'],
        ].map(([v, d]) => ({ label: v!, description: d })),
        { placeHolder: 'Score (-1 to 1)' },
      );
      if (!pick) throw new Cancelled();
      score = Number(pick.label);
    }
    const comment = await this.input({
      given: args.comment,
      prompt: 'Comment: what was good or bad',
      validateInput: (v) => (v.length > 4000 ? 'at most 4,000 characters' : undefined),
    });
    const res = invoke(ref.store, 'reward.add', { goalId: ref.goalId, runId, score, comment }, person());
    return res.input.rewardId as string;
  }

  async grantQuota(a: Arg): Promise<boolean> {
    await this.guardTrust();
    const args = (isNode(a) ? {} : (a ?? {})) as CommandArgs;
    const ref = await this.pickGoal(a);
    let budgets: { turns?: number; costUsd?: number; tokens?: number } = {
      turns: args.turns,
      costUsd: args.costUsd,
      tokens: args.tokens,
    };
    if (args.turns === undefined && args.costUsd === undefined && args.tokens === undefined) {
      const v = await this.input({
        prompt: 'Grant how many more turns?',
        value: '10',
        validateInput: (x) => (/^\d+$/.test(x) && Number(x) > 0 ? undefined : 'a whole number above 0'),
      });
      budgets = { turns: Number(v) };
    }
    invoke(ref.store, 'quota.grant', { goalId: ref.goalId, budgets, note: args.note }, person());
    return true;
  }

  async transition(a: Arg, t: 'pause' | 'resume' | 'close'): Promise<string> {
    await this.guardTrust();
    const wanted = { pause: ['active'], resume: ['paused'], close: ['active', 'paused', 'completed'] }[t];
    const ref = await this.pickGoal(a, (s) => wanted.includes(effectiveStatus(s)), `goal to ${t}`);
    if (t === 'close' && !(a && !isNode(a) && a.goalId)) {
      const ok = await vscode.window.showWarningMessage(
        `Close goal ${ref.goalId}? A closed goal is read-only.`,
        { modal: true },
        'Close Goal',
      );
      if (ok !== 'Close Goal') throw new Cancelled();
    }
    const res = invoke(ref.store, `goal.${t}`, { goalId: ref.goalId }, person());
    return effectiveStatus(res.state);
  }

  async selfRepair(a: Arg) {
    await this.guardTrust();
    const args = (isNode(a) ? {} : (a ?? {})) as CommandArgs;
    const folders = this.deps.workspaces.folders();
    if (folders.length === 0) throw new LoopxError('not_found', 'no folder of this workspace has a .loopx/');
    return vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'LoopX: self-repair', cancellable: false },
      async (progress) => {
        const reports = [];
        for (const f of folders) {
          progress.report({ message: f.folder.name });
          reports.push(repair(f.store, { goalId: args.goalId }));
        }
        const findings = reports.flatMap((r) => r.findings);
        for (const f of findings)
          this.deps.log.info(
            `self-repair: ${f.fixed ? 'fixed' : 'found'} ${f.kind} ${f.goal_id ?? ''}: ${f.message}`,
          );
        const fixed = findings.filter((f) => f.fixed).length;
        void vscode.window.showInformationMessage(
          findings.length
            ? `LoopX self-repair: ${findings.length} finding${findings.length > 1 ? 's' : ''}, ${fixed} fixed (details in the LoopX output)`
            : 'LoopX self-repair: nothing to repair',
        );
        return reports;
      },
    );
  }

  async showEventLog(a: Arg): Promise<vscode.Uri> {
    const ref = await this.pickGoal(a);
    const uri = this.deps.eventLog.uriFor(ref);
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc, { preview: true });
    return uri;
  }

  async completeTodo(a: Arg): Promise<boolean> {
    await this.guardTrust();
    const args = (isNode(a) ? {} : (a ?? {})) as CommandArgs;
    const ref = await this.pickGoal(a, (s) =>
      s.todos.some((t) => t.status === 'open' || t.status === 'claimed'),
    );
    let todoId = isNode(a) && a.kind === 'todo' ? a.todo.id : args.todoId;
    if (!todoId) {
      const open = ref.store
        .load(ref.goalId)
        .state.todos.filter((t) => t.status === 'open' || t.status === 'claimed');
      const pick = await vscode.window.showQuickPick(
        open.map((t) => ({ label: t.title, description: t.id, t })),
        { placeHolder: 'Which todo is done?' },
      );
      if (!pick) throw new Cancelled();
      todoId = pick.t.id;
    }
    const summary = await this.input({
      given: args.summary,
      prompt: 'What shows it is done? (recorded as evidence)',
      validateInput: (v) => (v.length > 4000 ? 'at most 4,000 characters' : undefined),
    });
    invoke(
      ref.store,
      'todo.complete',
      { goalId: ref.goalId, todoId, summary: summary.trim() || undefined },
      person(),
    );
    return true;
  }

  /** Shows what it will write, then writes it on the person's say-so (`confirm: true` from tests). */
  async installAgentHooks(a: Arg): Promise<string[]> {
    await this.guardTrust();
    const args = (isNode(a) ? {} : (a ?? {})) as CommandArgs & { confirm?: boolean };
    const folder = await this.pickFolder(args);
    const plan = planHooks(folder.uri.fsPath);
    const changes = plan.files.filter((f) => f.before !== f.after);
    if (changes.length === 0) {
      void vscode.window.showInformationMessage('LoopX agent hooks are already installed.');
      return [];
    }
    if (!args.confirm) {
      const preview = changes
        .map(
          (f) =>
            `── ${path.relative(folder.uri.fsPath, f.path)} (${f.before === undefined ? 'new file' : 'merged into the existing file'}) ──\n${f.after}`,
        )
        .join('\n');
      const doc = await vscode.workspace.openTextDocument({ language: 'jsonc', content: preview });
      await vscode.window.showTextDocument(doc, { preview: true });
      const ok = await vscode.window.showInformationMessage(
        `Write ${changes.length} file${changes.length > 1 ? 's' : ''} so VS Code agent hooks and Claude Code call \`loopx hook\` (shown in the editor)?`,
        { modal: true, detail: changes.map((f) => path.relative(folder.uri.fsPath, f.path)).join('\n') },
        'Install',
      );
      if (ok !== 'Install') throw new Cancelled();
    }
    const written = applyHooks({ files: changes });
    this.deps.log.info(`installed agent hooks: ${written.join(', ')}`);
    return written;
  }

  async openEvidence(a: Arg): Promise<vscode.Uri | undefined> {
    if (!isNode(a) || a.kind !== 'evidence' || !a.evidence.artifact) return undefined;
    const uri = vscode.Uri.file(path.join(a.ref.store.goalDir(a.ref.goalId), a.evidence.artifact.path));
    await vscode.window.showTextDocument(uri, { preview: true });
    return uri;
  }
}
