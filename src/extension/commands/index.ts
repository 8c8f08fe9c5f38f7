/**
 * The LoopX commands. Each turns a click (or a test's arguments) into one core call; inputs come
 * from quick picks and input boxes with validation, and every refusal is shown and logged.
 * The commands live by domain in this folder; `LoopxCommands` registers them all.
 */
import * as vscode from 'vscode';
import { agentCommands } from './agents';
import { cliInstallCommands } from './cliInstall';
import { gateCommands } from './gates';
import { passkeyCommands } from './passkey';
import { goalCommands } from './goals';
import { quotaAndRewardCommands } from './quotaAndRewards';
import type { Arg, CommandDeps, CommandTable } from './shared';
import { reportFailure } from './shared';
import { todoCommands } from './todos';
import { workflowCommands } from './workflows';
import { workspaceCommands } from './workspace';

export { person } from './shared';

export class LoopxCommands {
  constructor(private readonly deps: CommandDeps) {}

  register(context: vscode.ExtensionContext): void {
    const table: CommandTable = {
      ...workspaceCommands(this.deps),
      ...goalCommands(this.deps),
      ...todoCommands(this.deps),
      ...workflowCommands(this.deps),
      ...gateCommands(this.deps),
      ...passkeyCommands(this.deps),
      ...quotaAndRewardCommands(this.deps),
      ...agentCommands(this.deps),
      ...cliInstallCommands(context, this.deps.log),
    };
    for (const [id, fn] of Object.entries(table)) {
      context.subscriptions.push(vscode.commands.registerCommand(id, (a: Arg) => this.run(id, () => fn(a))));
    }
  }

  /** Runs a command: a refusal or error is shown to the person and logged, never swallowed. */
  private async run<T>(id: string, fn: () => Promise<T>): Promise<T | undefined> {
    try {
      const result = await fn();
      return result;
    } catch (e) {
      reportFailure(this.deps.log, id, e, { command: true });
      return undefined;
    } finally {
      this.deps.workspaces.refreshNow();
    }
  }
}
