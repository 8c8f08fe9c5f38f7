/**
 * The `vscode://loopx.loopx-vscode/dashboard/<type>?...` links the browser dashboard shows for
 * what it may not do itself (approve, reject, reveal in the tree, open evidence, show a goal).
 * A link is read with the same rule as a webview message (`parseDashboardLink`) and leads to the
 * same navigation: approving opens the decision modal, which says the link came from outside the
 * editor.
 * Anything else is refused and logged.
 */
import * as vscode from 'vscode';
import { forLogLine } from '../../core/index';
import { parseDashboardLink } from '../../core/views';
import type { Dashboard } from './dashboard';

export class DashboardLinkHandler implements vscode.UriHandler {
  /** Links handled and refused (for tests). */
  readonly handled = { accepted: 0, refused: 0 };

  constructor(
    private readonly dashboard: Dashboard,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  async handleUri(uri: vscode.Uri): Promise<void> {
    const msg = parseDashboardLink(uri.path, new URLSearchParams(uri.query));
    if (!msg || msg.type === 'ready') {
      this.handled.refused++;
      const shown = forLogLine(`${uri.path}?${uri.query}`);
      this.log.warn(`dashboard link refused: ${shown}`);
      void vscode.window.showErrorMessage(
        'This link is not a LoopX dashboard link (or names an invalid goal, gate or evidence id); nothing was done.',
      );
      return;
    }
    this.handled.accepted++;
    this.log.info(`dashboard link: ${msg.type} for goal ${msg.goalId}`);
    await this.dashboard.navigate(msg);
  }
}
