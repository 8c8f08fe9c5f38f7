/**
 * The editor's own `loopx drive`: Start Agents runs the core's Driver in the extension host, one
 * per trusted LoopX folder that has lanes; Stop Agents stops them (a turn in progress is stopped
 * and its run ended `interrupted`); Wake Agents has every sleeping lane look again. This class is
 * the one owner of the drivers, so deactivation stops them all. A folder that another `loopx
 * drive` already drives (a terminal, a user service) is left to it, and the person is told which
 * process it is.
 *
 * The lanes' `loopx` is this extension's own CLI (Driver's `loopx`), run by the editor's runtime as
 * the terminals' shim runs it: where that runtime is VS Code's Electron binary, ELECTRON_RUN_AS_NODE
 * makes it Node (bin/loopx does the same for a terminal).
 */
import * as vscode from 'vscode';
import type { DriveEvent } from '../../core/index';
import { Driver, LoopxError, notFound, readLanes, runningDriver, Store } from '../../core/index';
import { reportFailure, untrustedRefusal } from '../commands/shared';
import { Disposable } from '../common/disposable';
import type { LoopxFolder, LoopxWorkspaces } from '../workspace/workspaces';
import { inFolderWords } from '../workspace/workspaces';

/** The context key the menus read: Stop and Wake Agents show only while this window drives lanes. */
export const AGENTS_RUNNING_KEY = 'loopx.agentsRunning';

/** What Start Agents did, folder by folder (paths), for the caller and the tests. */
export interface AgentsStarted {
  /** Folders whose driver started now. */
  started: string[];
  /** Folders this window drove already. */
  already: string[];
  /** Folders another process drives, with its pid when its lock says. */
  elsewhere: { folder: string; pid?: number }[];
}

interface Running {
  folder: vscode.WorkspaceFolder;
  driver: Driver;
  /** Settles when the driver's `run()` has returned (its lanes stopped, its lock released). */
  done: Promise<void>;
}

/** The environment lanes start from: this window's, with Electron run as Node (see the file comment). */
function laneEnv(): NodeJS.ProcessEnv {
  return process.versions.electron ? { ...process.env, ELECTRON_RUN_AS_NODE: '1' } : { ...process.env };
}

export class AgentsControl extends Disposable {
  /** This window's drivers, by folder path. */
  private readonly drivers = new Map<string, Running>();

  constructor(
    private readonly workspaces: LoopxWorkspaces,
    private readonly log: vscode.LogOutputChannel,
    /** The CLI the lanes' `loopx` runs: this extension's bin/loopx.js and the editor's runtime. */
    private readonly cli: { node: string; cli: string },
  ) {
    super();
    this._register({ dispose: () => void this.stopAll() });
  }

  /** Folder paths this window drives now. */
  get runningFolders(): string[] {
    return [...this.drivers.keys()];
  }

  /** Starts a driver for each trusted folder with lanes that no driver drives yet. */
  async start(): Promise<AgentsStarted> {
    if (!vscode.workspace.isTrusted) throw untrustedRefusal();
    const folders = this.workspaces.folders().filter((f) => readLanes(f.store).lanes.length > 0);
    if (folders.length === 0)
      throw notFound(
        'no folder of this workspace has lanes: set one up in a terminal with `loopx lane add <name> --goal-id G --runtime R` (a runtime the signed policy declares)',
        { reason: 'no_lanes' },
      );
    const out: AgentsStarted = { started: [], already: [], elsewhere: [] };
    for (const f of folders) {
      const key = f.folder.uri.fsPath;
      if (this.drivers.has(key)) {
        out.already.push(key);
        continue;
      }
      const other = runningDriver(f.store);
      if (other) {
        out.elsewhere.push({ folder: key, ...(other.pid ? { pid: other.pid } : {}) });
        this.sayDrivenElsewhere(f.folder, other.pid);
        continue;
      }
      this.startDriver(f);
      out.started.push(key);
    }
    if (out.already.length && !out.started.length && !out.elsewhere.length)
      void vscode.window.showInformationMessage('The agents already run in this window.');
    this.updateContext();
    return out;
  }

  private startDriver(f: LoopxFolder): void {
    const key = f.folder.uri.fsPath;
    const where = inFolderWords(f.folder);
    // A store of its own: the driver outlives the window's stores, which each change replaces.
    const store = Store.open(key);
    const driver = new Driver({
      store,
      env: laneEnv(),
      loopx: this.cli,
      onEvent: (e) => this.onEvent(e, where),
    });
    const done = driver
      .run()
      .then(
        () => this.log.info(`agents${where}: stopped`),
        (e: unknown) => {
          // Another `loopx drive` took the folder between the look and the start.
          if (e instanceof LoopxError && e.reason === 'drive_running') {
            this.log.info(`agents${where}: ${e.message}`);
            void vscode.window.showInformationMessage(`${e.message.replace(/`/g, '')}.`);
          } else reportFailure(this.log, `agents${where}`, e);
        },
      )
      .finally(() => {
        if (this.drivers.get(key)?.driver === driver) this.drivers.delete(key);
        this.updateContext();
        this.workspaces.refreshNow();
      });
    this.drivers.set(key, { folder: f.folder, driver, done });
    this.log.info(`agents${where}: started (lanes run this extension's loopx, ${this.cli.cli})`);
  }

  /** Each step of a lane goes to the log; the views refresh at once, without waiting on the watcher. */
  private onEvent(e: DriveEvent, where: string): void {
    const line = `agents${where}: ${e.lane}: ${e.kind.replace(/_/g, ' ')}: ${e.message}`;
    if (e.kind === 'error') this.log.warn(line);
    else this.log.info(line);
    this.workspaces.schedule();
  }

  private sayDrivenElsewhere(folder: vscode.WorkspaceFolder, pid: number | undefined): void {
    const who = pid ? `loopx drive (process ${pid})` : 'Another loopx drive';
    this.log.info(`agents${inFolderWords(folder)}: already driven by ${who}`);
    void vscode.window.showInformationMessage(
      `${who} already runs the agents${inFolderWords(folder)}, so they keep going there. To run them from this window, stop that one first (Ctrl+C in its terminal, or loopx drive --uninstall-service for a service).`,
    );
  }

  /**
   * Stops this window's drivers and waits until each has stopped its lanes; returns the folder
   * paths stopped. With none running here, says so (naming another process that drives a folder).
   */
  async stop(): Promise<string[]> {
    if (!vscode.workspace.isTrusted) throw untrustedRefusal();
    if (this.drivers.size === 0) {
      const others = this.workspaces
        .folders()
        .map((f) => ({ f, other: readLanes(f.store).lanes.length ? runningDriver(f.store) : undefined }))
        .filter((x) => x.other);
      void vscode.window.showInformationMessage(
        others.length
          ? `No agents run in this window. ${others.map((x) => `loopx drive${x.other!.pid ? ` (process ${x.other!.pid})` : ''} drives them${inFolderWords(x.f.folder)}`).join('; ')}: stop it where it runs.`
          : 'No agents run in this window.',
      );
      return [];
    }
    const stopped = this.runningFolders;
    await this.stopAll();
    return stopped;
  }

  /** Stops every driver of this window and waits for them (also on deactivation). */
  async stopAll(): Promise<void> {
    const all = [...this.drivers.values()];
    for (const r of all) r.driver.stop();
    await Promise.all(all.map((r) => r.done));
  }

  /** Every sleeping lane of this window's drivers looks again now; returns the lanes woken. */
  wake(): string[] {
    if (!vscode.workspace.isTrusted) throw untrustedRefusal();
    if (this.drivers.size === 0) {
      void vscode.window.showInformationMessage(
        'No agents run in this window: LoopX: Start Agents starts them. (A loopx drive in a terminal wakes its lanes on SIGHUP.)',
      );
      return [];
    }
    const woken: string[] = [];
    for (const r of this.drivers.values()) {
      r.driver.wake();
      woken.push(...r.driver.laneNames());
    }
    this.log.info(`agents: woke ${woken.join(', ') || 'no lane'}`);
    return woken;
  }

  private updateContext(): void {
    void vscode.commands.executeCommand('setContext', AGENTS_RUNNING_KEY, this.drivers.size > 0);
  }
}
