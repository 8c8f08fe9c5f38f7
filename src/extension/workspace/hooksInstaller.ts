/**
 * "LoopX: Install Agent Hooks": VS Code agent hooks (`.github/hooks/loopx.json`) and Claude Code
 * hooks (merged into `.claude/settings.local.json`, never clobbering what is there). The person
 * sees exactly what will be written, and answers a modal that names each file and the commands the
 * hooks run, before anything is (commands/workspace.ts).
 *
 * The hook commands call the shim in the extension's global storage by its absolute path. The
 * shim stays where it is across extension updates; what moves is the CLI it runs, which
 * `prepareHookShim` writes into the shim itself on every activation in a trusted window, and when
 * a window is trusted (no file beside it names the CLI: an agent could redirect one,
 * core/hooks/shim.ts); a window in Restricted Mode writes nothing, so it leaves the shim as the
 * last trusted window wrote it. Until then (the old version removed and the editor not yet
 * reopened) the shim blocks with a reason instead of letting tools run.
 */
import * as path from 'node:path';
import type * as vscode from 'vscode';
import type { HookPlan } from '../../core/index';
import {
  applyHooks,
  describeHookChanges,
  hookCommandsFor,
  LoopxError,
  planHooks as planHooksFor,
  writeHookShim,
} from '../../core/index';

export { applyHooks, describeHookChanges };

let shimPath: string | undefined;

/** Writes (or refreshes) the shim, naming the CLI it runs; called on activation once trusted. */
export function prepareHookShim(context: vscode.ExtensionContext): string {
  shimPath = writeHookShim(context.globalStorageUri.fsPath, {
    node: process.execPath,
    cli: path.join(context.extensionPath, 'bin', 'loopx.js'),
  });
  return shimPath;
}

/** What installing would write for `workspace`, without writing it. */
export function planHooks(workspace: string): HookPlan {
  if (!shimPath)
    throw new LoopxError(
      'usage',
      'the LoopX hook shim is not ready (it is written when the extension starts): reload the window and try again',
    );
  return planHooksFor(workspace, shimPath);
}

/** The command each installed hook runs (the shim by its absolute path), for the person to read. */
export function hookCommands(): string[] {
  return shimPath ? hookCommandsFor(shimPath) : [];
}
