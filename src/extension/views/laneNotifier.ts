/**
 * Warns the person once when a lane of `loopx drive` comes to need them for something other than a
 * pending gate (gates have their own notification, views/notifier.ts): a budget used up, a paused
 * or closed goal, a runtime nobody signed, turns that failed too often, or anything else it waits
 * for a person about. One warning per transition: a lane announced is announced again only once it
 * stopped needing them (or needs them for another reason). Its buttons: Show Agents, and for a
 * budget Grant Quota (the existing command, which asks in its modal). The sentence is LoopX's, with
 * store text made plain (core/views/lane-text.ts): a notification renders links.
 */
import * as vscode from 'vscode';
import type { GoalState, LaneNeed, LaneReport } from '../../core/index';
import { laneNeed, laneNeedText, plainText } from '../../core/index';
import { Disposable } from '../common/disposable';
import type { LoopxFolder, LoopxWorkspaces } from '../workspace/workspaces';
import { inFolderWords } from '../workspace/workspaces';
import type { Node } from './tree';

export const SHOW_AGENTS = 'Show Agents';
export const GRANT_QUOTA = 'Grant Quota';

/** A lane that needs the person, as announced. */
export interface LaneWarning {
  folder: string;
  lane: string;
  need: LaneNeed;
  text: string;
  buttons: string[];
}

/** The same need again is no news; another budget or another reason is. */
const needKey = (n: LaneNeed) => (n.kind === 'budget' ? `budget:${n.budget}` : n.kind);

export class LaneNotifier extends Disposable {
  /** Each lane announced (folder path and name) and the need it was announced for. */
  private readonly announced = new Map<string, string>();
  /** The warnings shown (or, with notifications off, only logged), for tests. */
  readonly shown: LaneWarning[] = [];

  constructor(
    private readonly workspaces: LoopxWorkspaces,
    private readonly log: vscode.LogOutputChannel,
    /** Focuses the tree's Agents node. */
    private readonly showAgents: () => Promise<void>,
  ) {
    super();
    this._register(workspaces.onDidChange(() => this.scan()));
  }

  /** Announces each lane that came to need the person since the last scan. */
  scan(): void {
    const still = new Set<string>();
    for (const f of this.workspaces.folders()) {
      const doc = this.workspaces.driveStatus(f);
      if (!doc || doc instanceof Error) continue;
      const now = new Date(f.store.now());
      for (const r of doc.lanes) {
        if (!r.needs_person) continue;
        const need = laneNeed(r, this.goal(f, r), this.runtimeSigned(f, r), now);
        if (!need) continue;
        const lane = `${f.folder.uri.fsPath}\0${r.name}`;
        still.add(lane);
        if (this.announced.get(lane) === needKey(need)) continue;
        this.announced.set(lane, needKey(need));
        this.warn(f, r, need);
      }
    }
    for (const lane of [...this.announced.keys()]) if (!still.has(lane)) this.announced.delete(lane);
  }

  private goal(f: LoopxFolder, r: LaneReport): GoalState | undefined {
    try {
      return f.store.load(r.goal_id).state;
    } catch {
      return undefined; // the tree shows the unreadable goal
    }
  }

  /** Whether the policy in force declares the lane's runtime (a policy that does not read: unknown, so yes). */
  private runtimeSigned(f: LoopxFolder, r: LaneReport): boolean {
    try {
      return f.store.policy().runtimes?.[r.runtime] !== undefined;
    } catch {
      return true;
    }
  }

  private warn(f: LoopxFolder, r: LaneReport, need: LaneNeed): void {
    const text = laneNeedText(`${r.name}${inFolderWords(f.folder)}`, need);
    // Restricted Mode grants nothing: no button that would only be refused.
    const buttons = [
      SHOW_AGENTS,
      ...(need.kind === 'budget' && vscode.workspace.isTrusted ? [GRANT_QUOTA] : []),
    ];
    this.log.warn(`lane ${plainText(r.name)} needs a person: ${text}`);
    this.shown.push({ folder: f.folder.uri.fsPath, lane: r.name, need, text, buttons });
    if (this.shown.length > 50) this.shown.shift();
    const level = vscode.workspace.getConfiguration('loopx').get<string>('notifications', 'all');
    if (level !== 'all') return;
    void vscode.window.showWarningMessage(text, ...buttons).then((choice) => {
      if (choice === SHOW_AGENTS) void this.showAgents();
      else if (choice === GRANT_QUOTA) void this.grantQuota(f, r.goal_id);
    });
  }

  /**
   * The person's click on Grant Quota: the command is given the goal as the tree gives it (a node,
   * not arguments), so its modal asks them as a click in LoopX, which it is.
   */
  private grantQuota(f: LoopxFolder, goalId: string): Thenable<unknown> {
    const found = this.workspaces
      .goals()
      .find((g) => g.ref.goalId === goalId && g.ref.folder.uri.fsPath === f.folder.uri.fsPath);
    const arg: Node | { goalId: string; folder: string } = found
      ? { kind: 'goal', ref: found.ref, entry: found.entry }
      : { goalId, folder: f.folder.uri.fsPath };
    return vscode.commands.executeCommand('loopx.grantQuota', arg);
  }
}
