/**
 * The notices outside the editor (core/reach: desktop and webhooks, set in the config folder's
 * channels.json): while a trusted window is open it is one of their senders, beside `loopx drive`
 * and `loopx notify watch`. Senders share one outbox, so a notice goes to each channel once
 * however many run; without channels nothing is read or sent. Setting `loopx.notifications.send`.
 */
import * as vscode from 'vscode';
import type { Notifier } from '../../core/index';
import { configDir, startNotifier } from '../../core/index';
import { Disposable } from '../common/disposable';

export const SEND_SETTING = 'notifications.send';

export class OutsideNotices extends Disposable {
  private notifier: Notifier | undefined;

  constructor(private readonly log: vscode.LogOutputChannel) {
    super();
    this._register(vscode.workspace.onDidGrantWorkspaceTrust(() => this.apply()));
    this._register(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration(`loopx.${SEND_SETTING}`)) this.apply();
      }),
    );
    this._register({ dispose: () => void this.close() });
    this.apply();
  }

  /** Whether this window sends now. */
  get sending(): boolean {
    return this.notifier !== undefined;
  }

  private apply(): void {
    const wanted =
      vscode.workspace.isTrusted &&
      vscode.workspace.getConfiguration('loopx').get<boolean>(SEND_SETTING, true);
    if (wanted && !this.notifier) {
      this.notifier = startNotifier({
        configDir: configDir(process.env),
        log: (line) => this.log.info(`notify: ${line}`),
      });
    } else if (!wanted) void this.close();
  }

  /** Stops sending and waits for the pass under way (its records written). */
  async close(): Promise<void> {
    const n = this.notifier;
    this.notifier = undefined;
    await n?.close();
  }
}
