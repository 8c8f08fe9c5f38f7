/**
 * The read-only dashboard: one webview panel (revealed if already open, restored after a window
 * reload) that shows the status documents. It never writes: the extension posts snapshots, the
 * webview may only say `ready` and ask to navigate; its Approve and Reject only choose the gate:
 * the decision modal asks the person (as their own click; a link from the browser is said to be
 * one). Any other message is dropped and logged.
 */
import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import type { AttentionItem, GateDecision } from '../../core/index';
import type { AskedBy } from '../commands/decisionModal';
import {
  agentsSection,
  attentionChangesWithTime,
  attentionFor,
  fileStamp,
  goalStatus,
  quotaUse,
  statusAll,
} from '../../core/index';
import type { AgentsSection, EverywhereSection, HostMessage, Msg } from '../../core/views';
import { dashboardHtml, parseWebviewMessage, statusMessage } from '../../core/views';
import { Disposable } from '../common/disposable';
import type { GoalRef, LoopxFolder, LoopxWorkspaces } from '../workspace/workspaces';
import type { EverywhereQueue } from './everywhere';
import { openEvidence } from './evidence';

export const DASHBOARD_VIEW_TYPE = 'loopx.dashboard';

export interface DashboardDeps {
  extensionUri: vscode.Uri;
  workspaces: LoopxWorkspaces;
  log: vscode.LogOutputChannel;
  /** Reveals a goal in the Goals tree; without it `reveal-goal` only focuses the tree. */
  revealGoal?: (ref: GoalRef) => Thenable<unknown> | Promise<unknown>;
  /**
   * Asks the person to decide a gate in the decision modal; `asked` says what led there: the
   * panel's own button (the person) or a link from outside the editor.
   */
  decideGate: (ref: GoalRef, gateId: string, decision: GateDecision, asked: AskedBy) => Promise<void>;
  /** All workspaces: the machine-wide queue and the way to an item's window. */
  everywhere?: EverywhereQueue;
}

interface Selected {
  goalId: string;
  folder?: string;
}

/**
 * Attention of one goal, kept until its files or the policy change (or, while it changes with time
 * alone, the minute: a rolling quota window, a refusal within the hour).
 */
interface CachedAttention {
  stamp: string;
  minute?: number;
  items: AttentionItem[];
}

export class Dashboard extends Disposable {
  private _panel: vscode.WebviewPanel | undefined;
  private panelDisposables: vscode.Disposable[] = [];
  private ready = false;
  private selected: Selected | undefined;
  private readonly attentionCache = new Map<string, CachedAttention>();

  /** The last message posted to the webview (for tests). */
  lastPosted: HostMessage | undefined;
  /** Messages from the webview: accepted ones and dropped ones (for tests). */
  readonly received = { accepted: 0, dropped: 0 };

  constructor(private readonly deps: DashboardDeps) {
    super();
    this._register(
      vscode.window.registerWebviewPanelSerializer(DASHBOARD_VIEW_TYPE, {
        deserializeWebviewPanel: async (panel) => {
          // A second restored panel (should not happen) replaces nothing: keep the first.
          if (this._panel) {
            panel.dispose();
            return;
          }
          this.attach(panel);
        },
      }),
    );
    this._register(
      deps.workspaces.onDidChange(() => {
        deps.everywhere?.invalidate();
        this.update();
      }),
    );
    if (deps.everywhere) this._register(deps.everywhere.onDidChange(() => this.update()));
    this._register({ dispose: () => this._panel?.dispose() });
  }

  /** The open panel, if any. */
  get panel(): vscode.WebviewPanel | undefined {
    return this._panel;
  }

  /** Opens the dashboard, or reveals it when it is already open. */
  async open(): Promise<vscode.WebviewPanel> {
    if (this._panel) {
      this._panel.reveal();
      return this._panel;
    }
    const panel = vscode.window.createWebviewPanel(
      DASHBOARD_VIEW_TYPE,
      'LoopX Dashboard',
      vscode.ViewColumn.Active,
      {
        enableScripts: true,
        retainContextWhenHidden: false,
        enableFindWidget: true,
        localResourceRoots: this.resourceRoots(),
      },
    );
    this.attach(panel);
    return panel;
  }

  private resourceRoots(): vscode.Uri[] {
    return [
      vscode.Uri.joinPath(this.deps.extensionUri, 'dist'),
      vscode.Uri.joinPath(this.deps.extensionUri, 'media'),
    ];
  }

  private attach(panel: vscode.WebviewPanel): void {
    this._panel = panel;
    this.ready = false;
    panel.iconPath = vscode.Uri.joinPath(this.deps.extensionUri, 'media', 'loopx.svg');
    panel.webview.options = { enableScripts: true, localResourceRoots: this.resourceRoots() };
    this.panelDisposables.push(
      panel.webview.onDidReceiveMessage((raw: unknown) => this.onMessage(raw)),
      // Not retained when hidden: the page is rebuilt when shown again and says `ready` anew.
      panel.onDidChangeViewState((e) => {
        if (!e.webviewPanel.visible) this.ready = false;
      }),
      panel.onDidDispose(() => {
        if (this._panel === panel) {
          this._panel = undefined;
          this.ready = false;
          this.selected = undefined;
        }
        for (const d of this.panelDisposables.splice(0)) d.dispose();
      }),
    );
    this.render(panel);
  }

  /** (Re)writes the page with a fresh nonce. */
  private render(panel: vscode.WebviewPanel): void {
    const webview = panel.webview;
    const asUri = (...p: string[]) =>
      webview.asWebviewUri(vscode.Uri.joinPath(this.deps.extensionUri, ...p)).toString();
    panel.webview.html = dashboardHtml({
      cspSource: webview.cspSource,
      nonce: randomBytes(18).toString('base64url'),
      scriptUri: asUri('dist', 'webview.js'),
      styleUri: asUri('media', 'dashboard.css'),
    });
  }

  // -------------------------------------------------------------------------------------------
  // Extension -> webview

  private post(msg: HostMessage): void {
    if (!this._panel || !this.ready) return;
    this.lastPosted = msg;
    void this._panel.webview
      .postMessage(msg)
      .then(undefined, (e: unknown) =>
        this.deps.log.warn(`dashboard: could not post ${msg.type}: ${String(e)}`),
      );
  }

  /** Posts the overview and, if a goal is selected, its details. Called on every change. */
  update(): void {
    if (!this._panel || !this.ready) return;
    this.postStatus();
    if (this.selected) this.postGoal(this.selected);
  }

  private postStatus(): void {
    const started = performance.now();
    try {
      // Restricted Mode decides nothing: without the detailed queue the page offers no Approve
      // or Reject there (its gates are "Gates pending", to review).
      const trusted = vscode.workspace.isTrusted;
      const parts = this.deps.workspaces.folders().map((f) => {
        const doc = statusAll(f.store);
        return {
          path: f.folder.uri.fsPath,
          name: f.folder.name,
          doc,
          ...(trusted ? { attention: this.attention(f, doc.goals) } : {}),
        };
      });
      this.post({ ...statusMessage(parts), ...this.agents(), ...this.everywhere() });
      this.deps.log.trace(
        `dashboard: status of ${parts.reduce((n, p) => n + p.doc.goals.length, 0)} goals in ${(performance.now() - started).toFixed(1)} ms`,
      );
    } catch (e) {
      this.fail('could not read the status', e);
    }
  }

  private everywhere(): { everywhere?: EverywhereSection } {
    try {
      const section = this.deps.everywhere?.section();
      return section ? { everywhere: section } : {};
    } catch (e) {
      this.deps.log.warn(`dashboard: could not read the other workspaces: ${String(e)}`);
      return {};
    }
  }

  /** The Agents section (`loopx drive`'s lanes), made here: the page only shows its text. */
  private agents(): { agents?: AgentsSection } {
    const folders = this.deps.workspaces.folders();
    const parts = folders.flatMap((f) => {
      const doc = this.deps.workspaces.driveStatus(f);
      return doc && !(doc instanceof Error) ? [{ name: f.folder.name, doc }] : [];
    });
    const agents = agentsSection(parts, { ownPid: process.pid, now: Date.now(), named: folders.length > 1 });
    return agents ? { agents } : {};
  }

  /**
   * The attention queue with actionable ids (gate ids, todo ids, budgets), read from each open
   * goal. A goal is re-read only when its files or the pinned keys changed (or the minute, while
   * its attention changes with time), so a change costs a few stats per goal plus a read of the
   * goals that changed.
   */
  private attention(f: LoopxFolder, goals: { id: string; status: string }[]): AttentionItem[] {
    const out: AttentionItem[] = [];
    // Which decisions count depends on the keys pinned here: pinning one changes the attention.
    const trust = f.store.trust().fingerprint;
    const now = new Date(f.store.now());
    const minute = Math.floor(now.getTime() / 60_000);
    const seen = new Set<string>();
    for (const g of goals) {
      if (g.status === 'closed' || g.status === 'cancelled') continue;
      const key = `${f.folder.uri.fsPath}\0${g.id}`;
      seen.add(key);
      const stamp = `${f.store.logsStamp(g.id)}|${fileStamp(f.store.snapshotPath(g.id))}|${trust}`;
      let cached = this.attentionCache.get(key);
      if (!cached || cached.stamp !== stamp || (cached.minute !== undefined && cached.minute !== minute)) {
        try {
          const { state } = f.store.load(g.id);
          const items = attentionFor(state, quotaUse(state, now), now);
          cached = { stamp, items, ...(attentionChangesWithTime(state, now) ? { minute } : {}) };
        } catch {
          cached = { stamp, items: [] }; // a broken goal is reported in the overview's errors
        }
        this.attentionCache.set(key, cached);
      }
      out.push(...cached.items);
    }
    const prefix = `${f.folder.uri.fsPath}\0`;
    for (const key of [...this.attentionCache.keys()])
      if (key.startsWith(prefix) && !seen.has(key)) this.attentionCache.delete(key);
    return out;
  }

  private postGoal(sel: Selected): void {
    const ref = this.deps.workspaces.find(sel.goalId, sel.folder);
    if (!ref) {
      this.selected = undefined;
      this.post({ type: 'error', message: `Goal ${sel.goalId} is not in this workspace (any more).` });
      return;
    }
    try {
      const doc = goalStatus(ref.store, ref.goalId);
      this.post({ type: 'goal', doc, ...(sel.folder ? { folder: sel.folder } : {}) });
    } catch (e) {
      this.fail(`could not read goal ${sel.goalId}`, e);
    }
  }

  private fail(what: string, e: unknown): void {
    const message = `${what}: ${(e as Error)?.message ?? String(e)}`;
    this.deps.log.error(`dashboard: ${message}`);
    this.post({ type: 'error', message });
  }

  // -------------------------------------------------------------------------------------------
  // Webview -> extension: `ready` and navigation intents only

  /** The one entry for messages from the webview (public so a test drives the same path). */
  async onMessage(raw: unknown): Promise<void> {
    const msg = parseWebviewMessage(raw);
    if (!msg) {
      this.received.dropped++;
      this.deps.log.warn(
        `dashboard: dropped a message that is not an accepted navigation intent: ${describe(raw)}`,
      );
      return;
    }
    this.received.accepted++;
    try {
      await this.handle(msg, 'person');
    } catch (e) {
      this.fail(`${msg.type} failed`, e);
    }
  }

  /**
   * A navigation from outside the panel (a `vscode://` dashboard link from the browser): the same
   * as the webview's own, with the panel opened first when it is to show a goal.
   */
  async navigate(msg: Msg): Promise<void> {
    if (msg.type === 'select-goal') await this.open();
    await this.handle(msg, 'link');
  }

  /** `asked`: the panel's own click (the person) or a link from outside the editor. */
  private async handle(msg: Msg, asked: AskedBy): Promise<void> {
    if (msg.type === 'ready') {
      this.ready = true;
      this.update();
      return;
    }
    if (msg.type === 'open-workspace') return this.openWorkspace(msg.folder, msg.goalId);
    const ref = this.deps.workspaces.find(msg.goalId, msg.folder);
    if (!ref) {
      this.deps.log.warn(
        `dashboard: ${msg.type}: no goal ${msg.goalId}${msg.folder ? ` in ${msg.folder}` : ''}`,
      );
      this.post({ type: 'error', message: `Goal ${msg.goalId} is not in this workspace.` });
      return;
    }
    switch (msg.type) {
      case 'select-goal':
        this.selected = { goalId: msg.goalId, ...(msg.folder ? { folder: msg.folder } : {}) };
        this.postGoal(this.selected);
        return;
      case 'reveal-goal':
        if (this.deps.revealGoal) await this.deps.revealGoal(ref);
        else await vscode.commands.executeCommand('loopx.goals.focus');
        return;
      case 'open-evidence':
        {
          const problem = await openEvidence(ref, msg.evidenceId);
          if (problem) this.post({ type: 'error', message: problem });
        }
        return;
      case 'approve-gate':
      case 'reject-gate':
        // The decision modal asks the person; the webview's message only chose the gate.
        await this.deps.decideGate(
          ref,
          msg.gateId,
          msg.type === 'approve-gate' ? 'approve' : 'reject',
          asked,
        );
        return;
    }
  }

  /** An item of All workspaces: its goal when the folder is open here, else the folder's window. */
  private async openWorkspace(folder: string, goalId: string | undefined): Promise<void> {
    const here = this.deps.workspaces.folders().find((f) => f.folder.uri.fsPath === folder);
    if (here) {
      if (goalId) await this.handle({ type: 'select-goal', goalId, folder }, 'person');
      return;
    }
    if (!(await this.deps.everywhere?.open(folder)))
      this.post({ type: 'error', message: `${folder} is not a workspace listed on this machine.` });
  }
}

/** A short, single-line description of a refused message for the log. */
function describe(raw: unknown): string {
  let s: string;
  try {
    s = JSON.stringify(raw) ?? String(raw);
  } catch {
    s = Object.prototype.toString.call(raw);
  }
  return s.length > 200 ? `${s.slice(0, 200)}…` : s;
}
