/**
 * Activation: builds the long-lived services once and hands them to each other by constructor.
 * Cheap on purpose: nothing reads the store until a view or command asks. An activation error
 * is shown to the person, never swallowed.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import { AgentsControl } from './drive/agentsControl';
import { Approver } from './trust/approver';
import { ApproverKeyNotifier } from './trust/approverKeys';
import { chatHandler, registerChatParticipant } from './lm/chat';
import { LoopxCommands, person } from './commands';
import { refreshCliTarget } from './commands/cliInstall';
import { decideGate } from './commands/gates';
import { reportFailure } from './commands/shared';
import { EverywhereQueue } from './views/everywhere';
import { OutsideNotices } from './workspace/outsideNotices';
import { Dashboard } from './views/dashboard';
import { DashboardLinkHandler } from './views/dashboardLinks';
import { EVENT_LOG_SCHEME, EventLogProvider } from './views/eventLog';
import { CONTRACT_PREVIEW_SCHEME, ContractPreviewProvider } from './views/contractPreview';
import { GATE_REASON_SCHEME, GateReasonProvider } from './views/gateReason';
import { prepareHookShim } from './workspace/hooksInstaller';
import { mcpDefinitions, registerMcpProvider } from './lm/mcpProvider';
import { registerLanguageModelTools } from './lm/tools';
import { LaneNotifier } from './views/laneNotifier';
import { GateNotifier } from './views/notifier';
import { PolicySignNotifier } from './trust/policySigning';
import { LoopxStatusBar } from './views/statusBar';
import { StatusServerControl } from './workspace/statusServerControl';
import { configureTerminals } from './workspace/terminal';
import type { Node } from './views/tree';
import { GoalsTreeProvider } from './views/tree';
import type { GoalRef } from './workspace/workspaces';
import { LoopxWorkspaces } from './workspace/workspaces';

export interface LoopxApi {
  /** How long `activate` took, in milliseconds (printed by the integration tests). */
  activationMs: number;
  workspaces: LoopxWorkspaces;
  tree: GoalsTreeProvider;
  statusBar: LoopxStatusBar;
  notifier: GateNotifier;
  /** The warning when a lane of `loopx drive` needs the person (not for a gate). */
  laneNotifier: LaneNotifier;
  /** This window's `loopx drive`: Start, Stop and Wake Agents. */
  agents: AgentsControl;
  /** Trust / Ignore for teammates' keys published in `.loopx/approvers/`. */
  approverKeys: ApproverKeyNotifier;
  commands: LoopxCommands;
  statusServer: StatusServerControl;
  dashboard: Dashboard;
  /** The `vscode://loopx.loopx-vscode/dashboard/...` links of the browser dashboard. */
  dashboardLinks: DashboardLinkHandler;
  /** The `@loopx` chat handler, for tests that drive it without a language model. */
  chatHandler: vscode.ChatRequestHandler;
  /** The MCP servers offered to VS Code now (none in Restricted Mode), for tests. */
  mcpDefinitions: () => vscode.McpStdioServerDefinition[];
}

/** This window's drivers, stopped (and waited for) on deactivation. */
let agentsOfWindow: AgentsControl | undefined;
/** This window's sender of notices outside the editor, closed (and waited for) on deactivation. */
let noticesOfWindow: OutsideNotices | undefined;

export function activate(context: vscode.ExtensionContext): LoopxApi | undefined {
  const started = performance.now();
  const log = vscode.window.createOutputChannel('LoopX', { log: true });
  context.subscriptions.push(log);
  try {
    const workspaces = new LoopxWorkspaces(log);
    const tree = new GoalsTreeProvider(workspaces);
    const view = vscode.window.createTreeView<Node>('loopx.goals', {
      treeDataProvider: tree,
      showCollapseAll: true,
    });
    const statusBar = new LoopxStatusBar(workspaces);
    const eventLog = new EventLogProvider(workspaces);
    const gateReasons = new GateReasonProvider(workspaces);
    const contractPreviews = new ContractPreviewProvider(workspaces);
    const approver = new Approver(context.secrets, () => person().id);
    const statusServer = new StatusServerControl(workspaces, log);
    // The lanes' `loopx` is this extension's CLI, run by the editor's runtime (as terminals run it).
    const agents = new AgentsControl(workspaces, log, {
      node: process.execPath,
      cli: path.join(context.extensionPath, 'bin', 'loopx.js'),
    });
    agentsOfWindow = agents;
    // Built now, not on first open: its serializer must exist when a reload restores the panel.
    const outsideNotices = new OutsideNotices(log);
    context.subscriptions.push(outsideNotices);
    noticesOfWindow = outsideNotices;
    const everywhere = new EverywhereQueue(log, () => workspaces.folders().map((f) => f.folder.uri.fsPath));
    context.subscriptions.push(everywhere);
    const dashboard: Dashboard = new Dashboard({
      extensionUri: context.extensionUri,
      workspaces,
      log,
      everywhere,
      decideGate: (ref, gateId, decision, asked): Promise<void> =>
        decideGate(commandDeps, ref, gateId, decision, { asked }).catch((e) =>
          reportFailure(log, `gate ${gateId} of goal ${ref.goalId}`, e),
        ),
    });
    const commandDeps = {
      workspaces,
      approver,
      log,
      eventLog,
      showGateReason: (ref: GoalRef, gateId: string) => gateReasons.show(ref, gateId),
      showContractPreview: (ref: GoalRef) => contractPreviews.show(ref),
      openDashboard: () => dashboard.open(),
      openDashboardInBrowser: () => statusServer.openInBrowser(),
      openStatusServerPage: (folderPath: string, pathAndQuery: () => string) =>
        statusServer.openPage(folderPath, pathAndQuery),
      startStatusServer: () => statusServer.start(),
      stopStatusServer: () => statusServer.stop(),
      agents,
    };
    const commands = new LoopxCommands(commandDeps);
    const dashboardLinks = new DashboardLinkHandler(dashboard, log);
    context.subscriptions.push(vscode.window.registerUriHandler(dashboardLinks));
    const notifier = new GateNotifier(workspaces, log, (p, decision) =>
      decideGate(commandDeps, p.ref, p.gate.id, decision),
    );
    /** Show Agents: the LoopX view, with its Agents node selected. */
    const showAgents = async (): Promise<void> => {
      await vscode.commands.executeCommand('loopx.goals.focus');
      const node = tree.agentsNode();
      if (node) await view.reveal(node, { select: true, focus: true, expand: true });
    };
    const laneNotifier = new LaneNotifier(workspaces, log, showAgents);
    const approverKeys = new ApproverKeyNotifier(workspaces, log, context.workspaceState, () =>
      approver.keyId(),
    );
    const policySigning = new PolicySignNotifier(workspaces, log, approver);
    commands.register(context);
    // Agent surfaces: each is optional in hosts that lack the API, and says so in the log.
    const optional = (what: string, fn: () => void) => {
      try {
        fn();
      } catch (e) {
        log.warn(`${what} is not available in this VS Code: ${(e as Error).message}`);
      }
    };
    optional('language-model tools', () =>
      context.subscriptions.push(...registerLanguageModelTools(workspaces, log)),
    );
    optional('the MCP server definition provider', () =>
      context.subscriptions.push(registerMcpProvider(context, workspaces)),
    );
    optional('the @loopx chat participant', () =>
      context.subscriptions.push(registerChatParticipant(context, workspaces)),
    );
    configureTerminals(context, workspaces);
    context.subscriptions.push(
      workspaces,
      tree,
      view,
      statusBar,
      notifier,
      laneNotifier,
      approverKeys,
      policySigning,
      eventLog,
      statusServer,
      dashboard,
      agents,
    );
    context.subscriptions.push(
      vscode.workspace.registerTextDocumentContentProvider(EVENT_LOG_SCHEME, eventLog),
      vscode.workspace.registerTextDocumentContentProvider(GATE_REASON_SCHEME, gateReasons),
      vscode.workspace.registerTextDocumentContentProvider(CONTRACT_PREVIEW_SCHEME, contractPreviews),
      contractPreviews,
    );

    const updateContext = () => {
      // loopx.hasWorkspace (the welcome view) and what the walkthrough's steps tick off on.
      for (const [key, value] of Object.entries(tree.contextKeys()))
        void vscode.commands.executeCommand('setContext', key, value);
      const pending = workspaces
        .goals()
        .reduce(
          (n, g) =>
            n + (g.entry.status === 'closed' || g.entry.status === 'cancelled' ? 0 : g.entry.pendingGates),
          0,
        );
      view.badge = pending
        ? { value: pending, tooltip: `${pending} gate${pending > 1 ? 's' : ''} waiting for approval` }
        : undefined;
    };
    context.subscriptions.push(workspaces.onDidChange(updateContext));
    // Files outside the workspace that the extension keeps current for the CLI it bundles: written
    // only in a trusted window (Restricted Mode writes nothing), so also when trust is granted.
    const refreshShims = () => {
      if (!vscode.workspace.isTrusted) return;
      // Installed agent hooks call this shim; it runs the CLI of the version active now.
      optional('the agent-hook shim', () => prepareHookShim(context));
      // An installed `loopx` command (Install 'loopx' Command in PATH) runs the CLI of this version.
      optional('the loopx command target', () => refreshCliTarget(context));
    };
    context.subscriptions.push(
      vscode.workspace.onDidGrantWorkspaceTrust(() => {
        refreshShims();
        // The stores open again writable, and every view, terminal and agent surface follows.
        workspaces.refreshNow();
      }),
    );
    context.subscriptions.push(
      view.onDidChangeSelection((e) => {
        const n = e.selection[0];
        if (n && 'ref' in n) {
          statusBar.focusedGoal = n.ref.goalId;
          statusBar.update();
        }
      }),
    );
    // The first look at the store (and the first file written) happens after activation returns.
    setTimeout(() => {
      refreshShims();
      updateContext();
      statusBar.update();
      notifier.scan();
      laneNotifier.scan();
      void approverKeys.scan();
      policySigning.scan();
    }, 0);

    const activationMs = performance.now() - started;
    log.info(
      `activated in ${activationMs.toFixed(1)} ms${vscode.workspace.isTrusted ? '' : ' (untrusted workspace: read-only)'}`,
    );
    return {
      activationMs,
      workspaces,
      tree,
      statusBar,
      notifier,
      laneNotifier,
      agents,
      approverKeys,
      commands,
      statusServer,
      dashboard,
      dashboardLinks,
      chatHandler: chatHandler(workspaces),
      mcpDefinitions: () => mcpDefinitions(context, workspaces),
    };
  } catch (e) {
    const msg = `LoopX could not start: ${(e as Error)?.message ?? e}`;
    log.error(msg);
    void vscode.window.showErrorMessage(msg, 'Show Log').then((c) => c && log.show());
    return undefined;
  }
}

/**
 * Everything else is in context.subscriptions. The drivers are waited for: each stops its lanes'
 * turns and ends their runs `interrupted` before the extension host goes.
 */
export async function deactivate(): Promise<void> {
  const agents = agentsOfWindow;
  const notices = noticesOfWindow;
  agentsOfWindow = undefined;
  noticesOfWindow = undefined;
  await Promise.all([agents?.stopAll(), notices?.close()]);
}
