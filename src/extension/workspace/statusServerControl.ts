/**
 * Start/Stop Status Server from VS Code: one loopback server for the first LoopX folder, and
 * "Open Dashboard in Browser", which starts it when needed and opens a one-time login link.
 */
import * as vscode from 'vscode';
import { LoopxError } from '../../core/index';
import type { StatusServer } from '../../server/status-server';
import { Disposable } from '../common/disposable';
import type { LoopxWorkspaces } from './workspaces';

export class StatusServerControl extends Disposable {
  private running: StatusServer | undefined;
  private starting: Promise<StatusServer> | undefined;

  constructor(
    private readonly workspaces: LoopxWorkspaces,
    private readonly log: vscode.LogOutputChannel,
  ) {
    super();
    this._register({ dispose: () => void this.running?.close() });
  }

  get url(): string | undefined {
    return this.running?.url;
  }

  async start(): Promise<{ url: string; token: string }> {
    if (this.running) {
      void vscode.window.showInformationMessage(
        `LoopX status server is already running at ${this.running.url}`,
      );
      return { url: this.running.url, token: this.running.token };
    }
    const { url, token } = await this.ensureStarted();
    void vscode.window
      .showInformationMessage(`LoopX status server: ${url}`, 'Copy Token', 'Open in Browser')
      .then((c) => {
        if (c === 'Copy Token') void vscode.env.clipboard.writeText(token);
        else if (c === 'Open in Browser') void this.openInBrowser();
      });
    return { url, token };
  }

  /**
   * Opens the dashboard in the person's browser: a fresh one-time login link (valid once, for a
   * minute), so the bearer token never appears in a URL. `asExternalUri` maps the loopback port
   * for remote windows and code-server; the server then also answers to the mapped address.
   * Returns the address opened.
   */
  async openInBrowser(): Promise<vscode.Uri> {
    const server = await this.ensureStarted();
    const login = vscode.Uri.parse(server.loginUrl(), true);
    const external = await vscode.env.asExternalUri(login);
    if (external.authority !== login.authority) server.allowHost(external.authority);
    const opened = await vscode.env.openExternal(external);
    this.log.info(
      `dashboard in the browser: ${opened ? 'opened' : 'could not open'} ${external.scheme}://${external.authority}/ with a one-time login link`,
    );
    if (!opened) {
      void vscode.window
        .showWarningMessage(
          'LoopX could not open a browser. Copy the one-time login link (valid for a minute) and open it yourself.',
          'Copy Link',
        )
        .then((c) => c && vscode.env.clipboard.writeText(external.toString(true)));
    }
    return external;
  }

  /** The running server, started if it is not. */
  private async ensureStarted(): Promise<StatusServer> {
    if (this.running) return this.running;
    this.starting ??= this.startServer().finally(() => (this.starting = undefined));
    return this.starting;
  }

  private async startServer(): Promise<StatusServer> {
    const f = this.workspaces.folders()[0];
    if (!f)
      throw new LoopxError('not_found', 'no folder of this workspace has a .loopx/: initialise one first');
    const port = vscode.workspace.getConfiguration('loopx').get<number>('statusServer.port', 8080);
    const { startStatusServer } = await import('../../server/status-server');
    const server = await startStatusServer({
      workspace: f.store.workspace,
      store: f.store,
      port,
      log: (l) => this.log.trace(`status server: ${l}`),
    }).catch((e: unknown) => {
      if (e instanceof LoopxError && e.reason === 'port_in_use')
        throw new LoopxError(
          e.kind,
          `port ${port} is in use: pick another in the setting loopx.statusServer.port, or 0 for a free one`,
          e.details,
        );
      throw e;
    });
    this.running = server;
    this.log.info(
      `status server listening on ${server.url} (token in ${f.store.secretsDir}/status-token, outside the workspace)`,
    );
    return server;
  }

  async stop(): Promise<boolean> {
    if (!this.running) {
      void vscode.window.showInformationMessage('LoopX status server is not running');
      return false;
    }
    await this.running.close();
    this.log.info('status server stopped');
    this.running = undefined;
    return true;
  }
}
