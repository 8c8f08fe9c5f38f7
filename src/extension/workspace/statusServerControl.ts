/**
 * Start/Stop Status Server from VS Code, and "Open Dashboard in Browser", which starts it when
 * needed and opens a one-time login link. A server serves one folder's `.loopx/`: in a window of
 * several LoopX folders the person picks which, and each gets its own server.
 *
 * The port is the setting `loopx.statusServer.port`, 0 (a free port) by default: a fixed default
 * collided with whatever else holds it (code-server itself, in `npm start`). A fixed port that is
 * taken is the person's to resolve, so it is a notification naming the port with the fixes, never
 * only a line in the log.
 */
import * as vscode from 'vscode';
import { LoopxError } from '../../core/index';
import type { StatusServer } from '../../server/status-server';
import { Cancelled, reportFailure } from '../commands/shared';
import { Disposable } from '../common/disposable';
import type { LoopxFolder, LoopxWorkspaces } from './workspaces';
import { inFolderWords } from './workspaces';

/** The buttons of the notification for a taken port. */
export const USE_FREE_PORT = 'Use a Free Port';
export const OPEN_PORT_SETTING = 'Open Setting';
const PORT_SETTING = 'loopx.statusServer.port';

export class StatusServerControl extends Disposable {
  /** The running servers, by folder path. */
  private readonly running = new Map<string, StatusServer>();
  private readonly starting = new Map<string, Promise<StatusServer>>();

  constructor(
    private readonly workspaces: LoopxWorkspaces,
    private readonly log: vscode.LogOutputChannel,
  ) {
    super();
    this._register({ dispose: () => void Promise.all([...this.running.values()].map((s) => s.close())) });
  }

  /** The address of a running server (the first one started), if any. */
  get url(): string | undefined {
    return [...this.running.values()][0]?.url;
  }

  /** Starts the server of a folder (asked for when there are several). Undefined: the port was taken. */
  async start(folderPath?: string, port?: number): Promise<{ url: string; token: string } | undefined> {
    const f = await this.pickFolder(folderPath);
    const key = f.folder.uri.fsPath;
    const already = this.running.get(key);
    if (already) {
      void vscode.window.showInformationMessage(
        `The status server${inFolderWords(f.folder)} is already running at ${already.url}`,
      );
      return { url: already.url, token: already.token };
    }
    const server = await this.serverFor(f, port, () => this.start(key, 0));
    if (!server) return undefined;
    void vscode.window
      .showInformationMessage(
        `The status server${inFolderWords(f.folder)} is at ${server.url}`,
        'Copy Token',
        'Open in Browser',
      )
      .then((c) => {
        if (c === 'Copy Token') void vscode.env.clipboard.writeText(server.token);
        else if (c === 'Open in Browser')
          this.openInBrowser(key).catch((e: unknown) => reportFailure(this.log, 'open in browser', e));
      });
    return { url: server.url, token: server.token };
  }

  /**
   * Opens the dashboard in the person's browser: a fresh one-time login link (valid once, for a
   * minute), so the bearer token never appears in a URL. `asExternalUri` maps the loopback port
   * for remote windows and code-server; the server then also answers to the mapped address.
   * Returns the address opened; undefined when the configured port was taken (the notification
   * offers a free one).
   */
  async openInBrowser(folderPath?: string, port?: number): Promise<vscode.Uri | undefined> {
    const f = await this.pickFolder(folderPath);
    const server = await this.serverFor(f, port, () => this.openInBrowser(f.folder.uri.fsPath, 0));
    if (!server) return undefined;
    const login = vscode.Uri.parse(server.loginUrl(), true);
    const external = await vscode.env.asExternalUri(login);
    if (external.authority !== login.authority) server.allowHost(external.authority);
    const opened = await vscode.env.openExternal(external);
    this.log.info(
      `dashboard in the browser${inFolderWords(f.folder)}: ${opened ? 'opened' : 'could not open'} ${external.scheme}://${external.authority}/ with a one-time login link`,
    );
    if (!opened) {
      void vscode.window
        .showWarningMessage(
          'No browser could be opened. Copy the one-time login link (valid for a minute) and open it yourself.',
          'Copy Link',
        )
        .then((c) => c && vscode.env.clipboard.writeText(external.toString(true)));
    }
    return external;
  }

  /**
   * Opens one of the server's pages at `localhost` (a passkey needs a host name, never an address)
   * in the person's browser: `pathAndQuery` like `/passkey/register?code=...`, made once the server
   * runs (it refuses a one-time code minted before it started). The server is started for the
   * folder when it is not running. Returns the address opened.
   */
  async openPage(folderPath: string, pathAndQuery: () => string): Promise<vscode.Uri | undefined> {
    const f = await this.pickFolder(folderPath);
    const server = await this.serverFor(f, undefined, () => this.openPage(f.folder.uri.fsPath, pathAndQuery));
    if (!server) return undefined;
    const local = vscode.Uri.parse(`http://localhost:${server.port}${pathAndQuery()}`, true);
    const external = await vscode.env.asExternalUri(local);
    if (external.authority !== local.authority) server.allowHost(external.authority);
    const opened = await vscode.env.openExternal(external);
    this.log.info(
      `status server page${inFolderWords(f.folder)}: ${opened ? 'opened' : 'could not open'} ${external.scheme}://${external.authority}${local.path}`,
    );
    return opened ? external : undefined;
  }

  async stop(): Promise<boolean> {
    if (this.running.size === 0) {
      void vscode.window.showInformationMessage('The status server is not running');
      return false;
    }
    const servers = [...this.running.entries()];
    this.running.clear();
    await Promise.all(servers.map(([, s]) => s.close()));
    this.log.info(`status server stopped (${servers.map(([p]) => p).join(', ')})`);
    return true;
  }

  /** ` for folder <name>` in a window of several folders: which folder's goals the server shows. */
  /** The LoopX folder named, the only one, or the one the person picks (those serving say so). */
  private async pickFolder(folderPath: string | undefined): Promise<LoopxFolder> {
    const folders = this.workspaces.folders();
    if (folderPath !== undefined) {
      const f = folders.find((x) => x.folder.uri.fsPath === folderPath);
      if (!f) throw new LoopxError('not_found', `${folderPath} is not a LoopX folder of this workspace`);
      return f;
    }
    if (folders.length === 0)
      throw new LoopxError('not_found', 'no folder of this workspace has a .loopx/: initialise one first');
    if (folders.length === 1) return folders[0]!;
    const pick = await vscode.window.showQuickPick(
      folders.map((f) => ({
        label: f.folder.name,
        description: this.running.get(f.folder.uri.fsPath)?.url ?? '',
        detail: f.folder.uri.fsPath,
        f,
      })),
      { placeHolder: 'The status server serves one folder: which one?' },
    );
    if (!pick) throw new Cancelled();
    return pick.f;
  }

  /**
   * The folder's running server, started if it is not (on `port`, default the setting). When the
   * port is taken: a notification naming it, whose Use a Free Port runs `onFreePort`, and undefined.
   */
  private async serverFor(
    f: LoopxFolder,
    port: number | undefined,
    onFreePort: () => Promise<unknown>,
  ): Promise<StatusServer | undefined> {
    const wanted = port ?? vscode.workspace.getConfiguration('loopx').get<number>('statusServer.port', 0);
    try {
      return await this.ensureStarted(f, wanted);
    } catch (e) {
      if (!(e instanceof LoopxError && e.reason === 'port_in_use')) throw e;
      const ours = [...this.running.entries()].find(([, s]) => s.port === wanted);
      const holder = ours ? `the status server of ${ours[0]}` : 'another program';
      this.log.warn(`status server${inFolderWords(f.folder)}: port ${wanted} is in use by ${holder}`);
      void vscode.window
        .showWarningMessage(
          `The status server cannot start on port ${wanted} (the setting ${PORT_SETTING}): ${holder} is using it.`,
          USE_FREE_PORT,
          OPEN_PORT_SETTING,
        )
        .then((c) => {
          if (c === USE_FREE_PORT)
            onFreePort().catch((err: unknown) => reportFailure(this.log, 'status server', err));
          else if (c === OPEN_PORT_SETTING)
            void vscode.commands.executeCommand('workbench.action.openSettings', PORT_SETTING);
        });
      return undefined;
    }
  }

  /** The running server, started if it is not (one start at a time per folder). */
  private async ensureStarted(f: LoopxFolder, port: number): Promise<StatusServer> {
    const key = f.folder.uri.fsPath;
    const running = this.running.get(key);
    if (running) return running;
    let starting = this.starting.get(key);
    if (!starting) {
      starting = this.startServer(f, port).finally(() => this.starting.delete(key));
      this.starting.set(key, starting);
    }
    return starting;
  }

  private async startServer(f: LoopxFolder, port: number): Promise<StatusServer> {
    const { startStatusServer } = await import('../../server/status-server');
    const server = await startStatusServer({
      workspace: f.store.workspace,
      store: f.store,
      port,
      log: (l) => this.log.trace(`status server: ${l}`),
    });
    this.running.set(f.folder.uri.fsPath, server);
    this.log.info(
      `status server${inFolderWords(f.folder)} listening on ${server.url} (token in ${f.store.secretsDir}/status-token, outside the workspace)`,
    );
    return server;
  }
}
