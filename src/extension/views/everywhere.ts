/**
 * The dashboard's All workspaces: what needs the person in every workspace listed on this machine
 * (core/reach needsYou), kept current by a file watcher on each listed workspace's `.loopx/`
 * outside this window, and the way to an item's own window. A folder to open is always one the
 * machine's list names: a message from the page only picks among them.
 */
import * as vscode from 'vscode';
import type { EverywhereSection } from '../../core/index';
import { configDir, everywhereSection, listWorkspaces, LOOPX_DIR, needsYou, Store } from '../../core/index';
import { Disposable } from '../common/disposable';

/** Fewest milliseconds between two readings of every workspace while changes keep coming. */
const SETTLE_MS = 300;

export class EverywhereQueue extends Disposable {
  private readonly changed = this._register(new vscode.EventEmitter<void>());
  /** Fires when a listed workspace outside this window changed. */
  readonly onDidChange = this.changed.event;
  private readonly watchers = new Map<string, vscode.Disposable>();
  private cached: { section?: EverywhereSection } | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly log: vscode.LogOutputChannel,
    /** The folders of this window (their own changes refresh the dashboard already). */
    private readonly ownFolders: () => string[],
    private readonly config: string = configDir(process.env),
  ) {
    super();
    this._register({
      dispose: () => {
        clearTimeout(this.timer);
        for (const w of this.watchers.values()) w.dispose();
        this.watchers.clear();
      },
    });
  }

  /** Forget the last reading (this window's own workspace changed). */
  invalidate(): void {
    this.cached = undefined;
  }

  /** The section, or undefined when no workspace but this window's is listed. */
  section(): EverywhereSection | undefined {
    if (!this.cached) {
      const started = performance.now();
      // Restricted Mode writes nothing, not even caches, in any workspace this window reads.
      const readOnly = !vscode.workspace.isTrusted;
      const doc = needsYou({
        configDir: this.config,
        open: (w) => Store.open(w.path, { configDir: this.config, readOnly }),
      });
      this.watch(doc.workspaces.map((w) => w.path));
      const section = everywhereSection(doc, this.ownFolders());
      this.cached = section ? { section } : {};
      this.log.trace(
        `all workspaces: ${doc.items.length} items in ${doc.workspaces.length} workspaces in ${(performance.now() - started).toFixed(1)} ms`,
      );
    }
    return this.cached.section;
  }

  /**
   * Opens the window of a listed workspace (a new window; VS Code brings an open one forward).
   * Returns false for a folder the machine's list does not name.
   */
  async open(folder: string): Promise<boolean> {
    const listed = listWorkspaces(this.config, { prune: false }).workspaces.some((w) => w.path === folder);
    if (!listed) {
      this.log.warn(`all workspaces: ${folder} is not a workspace listed on this machine; not opened`);
      return false;
    }
    await vscode.commands.executeCommand('vscode.openFolder', vscode.Uri.file(folder), {
      forceNewWindow: true,
    });
    return true;
  }

  /** One watcher per listed workspace outside this window; a workspace gone from the list loses its own. */
  private watch(paths: string[]): void {
    const own = new Set(this.ownFolders());
    const wanted = new Set(paths.filter((p) => !own.has(p)));
    for (const [p, w] of this.watchers) {
      if (!wanted.has(p)) {
        w.dispose();
        this.watchers.delete(p);
      }
    }
    for (const p of wanted) {
      if (this.watchers.has(p)) continue;
      const watcher = vscode.workspace.createFileSystemWatcher(
        new vscode.RelativePattern(vscode.Uri.file(p), `${LOOPX_DIR}/**`),
      );
      const poke = (uri: vscode.Uri) => {
        // Caches, locks and temp files change on every write; the logs they follow change too.
        if (/\.tmp-/.test(uri.fsPath) || /[\\/]local[\\/](?!drive[\\/])/.test(uri.fsPath)) return;
        this.schedule();
      };
      const subs = [watcher, watcher.onDidChange(poke), watcher.onDidCreate(poke), watcher.onDidDelete(poke)];
      this.watchers.set(p, { dispose: () => subs.forEach((s) => s.dispose()) });
    }
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.cached = undefined;
      this.changed.fire();
    }, SETTLE_MS);
  }
}
