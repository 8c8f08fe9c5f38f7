/** Start/Stop Status Server from VS Code: one loopback server for the first LoopX folder. */
import * as vscode from 'vscode';
import { Disposable } from './disposable';
import type { LoopxWorkspaces } from './workspaces';
import { LoopxError } from '../core/index';

interface Running {
  url: string;
  port: number;
  token: string;
  close(): Promise<void>;
}

export class StatusServerControl extends Disposable {
  private running: Running | undefined;

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
    const f = this.workspaces.folders()[0];
    if (!f)
      throw new LoopxError('not_found', 'no folder of this workspace has a .loopx/: initialise one first');
    const port = vscode.workspace.getConfiguration('loopx').get<number>('statusServer.port', 8080);
    const { startStatusServer } = await import('../server/status-server');
    this.running = await startStatusServer({
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
    this.log.info(
      `status server listening on ${this.running.url} (token in ${f.store.secretsDir}/status-token, outside the workspace)`,
    );
    const { url, token } = this.running;
    void vscode.window
      .showInformationMessage(`LoopX status server: ${url}`, 'Copy Token')
      .then((c) => c && vscode.env.clipboard.writeText(token));
    return { url, token };
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
