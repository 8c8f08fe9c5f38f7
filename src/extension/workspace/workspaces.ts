/**
 * The workspace folders that have a `.loopx/`, their stores, and one debounced change event fed
 * by a file watcher: any writer (this window, a CLI in a terminal, an agent, the MCP server)
 * shows up within a second.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { DriveStatus, IndexEntry, PolicyView } from '../../core/index';
import { driveStatus, indexJournal, LOOPX_DIR, plainText, readLanes, Store } from '../../core/index';
import { Disposable } from '../common/disposable';
import { ReadStamps } from '../common/readStamps';

export interface LoopxFolder {
  folder: vscode.WorkspaceFolder;
  store: Store;
}

export interface GoalRef {
  store: Store;
  goalId: string;
  folder: vscode.WorkspaceFolder;
}

/**
 * ` in folder <name>` when the window has several folders, for every notification, dialog and
 * queue item that must say which one it is about; empty in a window of one folder.
 */
export function inFolderWords(folder: vscode.WorkspaceFolder): string {
  return (vscode.workspace.workspaceFolders?.length ?? 0) > 1
    ? ` in folder ${plainText(folder.name, 40)}`
    : '';
}

/**
 * The longest a refresh waits while changes keep coming: lanes at work write every few hundred
 * milliseconds, and a debounce that restarts on each would show nothing until they stop.
 */
const MAX_REFRESH_DELAY_MS = 1000;

/** Goals per folder whose logs folder the once-a-second look covers (one stat each). */
const MAX_POLLED_GOALS = 200;

/**
 * What in `local/` is worth a refresh: the lanes' set-up and state files of `loopx drive`
 * (`local/drive/lanes/<name>.json`, `local/drive/state/<name>.json`). Everything else there is a
 * cache, a lock or a lane's turn log, which changes on every write or line of output.
 */
const LANE_FILE = /[\\/]local[\\/]drive[\\/](lanes|state)[\\/][^\\/]+(?<!\.contract)\.json$/;

export class LoopxWorkspaces extends Disposable {
  private readonly changed = this._register(new vscode.EventEmitter<void>());
  /** Fires (debounced) after anything under a `.loopx/` changed, and when folders change. */
  readonly onDidChange = this.changed.event;
  private timer: NodeJS.Timeout | undefined;
  /** When the refresh waiting now was first asked for. */
  private pendingSince: number | undefined;
  private cache: LoopxFolder[] | undefined;
  private goalsCache: { ref: GoalRef; entry: IndexEntry }[] | undefined;
  /** Each folder's policy (by folder path), read once per change. */
  private readonly policyCache = new Map<string, PolicyView | Error>();
  /** Each folder's lanes (by folder path), read once per change; undefined: it has none. */
  private readonly driveCache = new Map<string, DriveStatus | Error | undefined>();
  private readonly readStamps = new ReadStamps();

  constructor(private readonly log: vscode.LogOutputChannel) {
    super();
    const watcher = this._register(vscode.workspace.createFileSystemWatcher(`**/${LOOPX_DIR}/**`));
    const poke = (uri: vscode.Uri) => {
      // Locks and temp files change on every write; the files that matter change with them. The
      // lanes' files are the exception in local/: a lane's state shows in the tree within a second.
      if (/\.tmp-/.test(uri.fsPath)) return;
      if (/[\\/]local[\\/]/.test(uri.fsPath) && !LANE_FILE.test(uri.fsPath)) return;
      this.schedule();
    };
    this._register(watcher.onDidChange(poke));
    this._register(watcher.onDidCreate(poke));
    this._register(watcher.onDidDelete(poke));
    this._register(vscode.workspace.onDidChangeWorkspaceFolders(() => this.schedule()));
    this._register({ dispose: () => clearTimeout(this.timer) });
    // File watchers can miss events; a once-a-second look at what was read (each folder's goal
    // index and goals folder, and the logs folder of each goal still in play, which a git pull
    // changes) catches what changes the list, the gates and the counts even then.
    const poll = setInterval(() => {
      if (this.readStamps.changed().length > 0) this.schedule();
    }, 1000);
    this._register({ dispose: () => clearInterval(poll) });
  }

  /**
   * Re-reads now-ish: coalesces bursts of file events into one refresh, a second after the first
   * at the latest however long the burst.
   */
  schedule(): void {
    clearTimeout(this.timer);
    const ms = vscode.workspace.getConfiguration('loopx').get<number>('refreshDebounceMs', 200);
    this.pendingSince ??= Date.now();
    const latest = this.pendingSince + Math.max(ms, MAX_REFRESH_DELAY_MS);
    const wait = Math.max(0, Math.min(ms, latest - Date.now()));
    this.timer = setTimeout(() => {
      this.pendingSince = undefined;
      this.clearCaches();
      this.changed.fire();
    }, wait);
  }

  /**
   * Folders that have a `.loopx/`. Cheap: one stat per folder, cached until the next change. In an
   * untrusted workspace (Restricted Mode) each store is read-only: showing the goals writes no
   * cache and takes no lock, and any write through it refuses. Granting trust refreshes
   * (extension.ts), which opens them again writable.
   */
  folders(): LoopxFolder[] {
    if (!this.cache) {
      const readOnly = !vscode.workspace.isTrusted;
      this.cache = (vscode.workspace.workspaceFolders ?? [])
        .filter((f) => f.uri.scheme === 'file' && fs.existsSync(path.join(f.uri.fsPath, LOOPX_DIR, 'goals')))
        .map((folder) => ({ folder, store: this.opened(folder, readOnly) }));
    }
    return this.cache;
  }

  /** A folder's store, listed in the machine's registry of workspaces when trusted (All workspaces). */
  private opened(folder: vscode.WorkspaceFolder, readOnly: boolean): Store {
    const store = new Store(folder.uri.fsPath, { readOnly });
    try {
      store.register();
    } catch (e) {
      this.log.warn(`could not list ${folder.uri.fsPath} among this machine's workspaces: ${String(e)}`);
    }
    return store;
  }

  get hasWorkspace(): boolean {
    return this.folders().length > 0;
  }

  /**
   * Every goal of every folder, from the indexes. Unreadable goals are logged, not hidden.
   * Cached until the next change: the tree, status bar, notifier and view badge all ask after
   * each change, and one read of each index serves them all.
   */
  goals(): { ref: GoalRef; entry: IndexEntry }[] {
    this.goalsCache ??= this.readGoals();
    return this.goalsCache;
  }

  private readGoals(): { ref: GoalRef; entry: IndexEntry }[] {
    const out: { ref: GoalRef; entry: IndexEntry }[] = [];
    for (const f of this.folders()) {
      this.readStamps.markRead(f.store.indexPath);
      this.readStamps.markRead(indexJournal(f.store.indexPath));
      this.readStamps.markRead(path.join(f.store.root, 'goals'));
      const { goals, errors } = f.store.listGoals();
      for (const e of errors) this.log.warn(`${f.folder.name}: goal ${e.goalId}: ${e.message}`);
      let watched = 0;
      for (const entry of goals) {
        out.push({ ref: { store: f.store, goalId: entry.id, folder: f.folder }, entry });
        const inPlay = entry.status !== 'closed' && entry.status !== 'cancelled';
        if (inPlay && watched++ < MAX_POLLED_GOALS) this.readStamps.markRead(f.store.logsDir(entry.id));
      }
    }
    return out;
  }

  /**
   * Call just before reading `file` (a policy, a folder of keys): a change to it fires
   * onDidChange even when the file watcher misses it, like a change to an index the tree read.
   */
  markRead(file: string): void {
    this.readStamps.markRead(file);
  }

  find(goalId: string, folderPath?: string): GoalRef | undefined {
    const f = this.folders().find((x) =>
      folderPath ? x.folder.uri.fsPath === folderPath : x.store.exists(goalId),
    );
    return f && f.store.exists(goalId) ? { store: f.store, goalId, folder: f.folder } : undefined;
  }

  /**
   * A folder's policy: which one applies and the edits that wait for a signature, or why it
   * could not be read. Cached until the next change, like the goals: the tree and the Sign
   * notification both ask after each change, and reading it verifies signatures.
   */
  policyView(f: LoopxFolder): PolicyView | Error {
    const key = f.folder.uri.fsPath;
    let v = this.policyCache.get(key);
    if (!v) {
      this.markRead(f.store.policyPath);
      try {
        v = f.store.policyView();
      } catch (e) {
        v = e instanceof Error ? e : new Error(String(e));
      }
      this.policyCache.set(key, v);
    }
    return v;
  }

  /**
   * A folder's lanes and whether a driver keeps them going (`loopx drive status`), undefined when it
   * has none set up, or why they could not be read. Cached until the next change, like the goals:
   * the tree, the status bar, the lane notifications and the dashboard all ask after each change.
   */
  driveStatus(f: LoopxFolder): DriveStatus | Error | undefined {
    const key = f.folder.uri.fsPath;
    if (!this.driveCache.has(key)) {
      // No stamp for the once-a-second look: the lanes' files reach the file watcher (LANE_FILE),
      // and a driver in this window refreshes on each of its lanes' steps.
      let v: DriveStatus | Error | undefined;
      try {
        const { lanes, problems } = readLanes(f.store);
        // No lanes: no driver's lock is looked at (that look makes its lock file).
        v = lanes.length || problems.length ? driveStatus(f.store) : undefined;
      } catch (e) {
        v = e instanceof Error ? e : new Error(String(e));
      }
      this.driveCache.set(key, v);
    }
    return this.driveCache.get(key);
  }

  refreshNow(): void {
    clearTimeout(this.timer);
    this.pendingSince = undefined;
    this.clearCaches();
    this.changed.fire();
  }

  private clearCaches(): void {
    this.cache = undefined;
    this.goalsCache = undefined;
    this.policyCache.clear();
    this.driveCache.clear();
  }
}
