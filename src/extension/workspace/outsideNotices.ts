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
  /** The start asked for, not made yet (see apply). */
  private starting: NodeJS.Immediate | undefined;

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

  private apply(): void {
    const wanted =
      vscode.workspace.isTrusted &&
      vscode.workspace.getConfiguration('loopx').get<boolean>(SEND_SETTING, true);
    if (!wanted) return void this.close();
    if (this.notifier || this.starting) return;
    // Off activation's turn: with channels set, the sender's first pass reads every listed
    // workspace and watches each of their goals.
    this.starting = setImmediate(() => {
      this.starting = undefined;
      this.notifier = startNotifier({
        configDir: configDir(process.env),
        log: (line) => this.log.info(`notify: ${line}`),
      });
    });
  }

  /** Stops sending and waits for the pass under way (its records written). */
  async close(): Promise<void> {
    if (this.starting) clearImmediate(this.starting);
    this.starting = undefined;
    const n = this.notifier;
    this.notifier = undefined;
    await n?.close();
  }
}
