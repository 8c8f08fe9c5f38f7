/**
 * Integrated terminals get the bundled `loopx` on PATH and LOOPX_WORKSPACE, so a shell agent
 * (Claude Code, Codex, a script) started there talks to the same control plane. The shim runs
 * the CLI with the editor's own runtime when there is no global Node.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type * as vscode from 'vscode';
import type { LoopxWorkspaces } from './workspaces';

export function configureTerminals(context: vscode.ExtensionContext, workspaces: LoopxWorkspaces): void {
  const bin = path.join(context.extensionPath, 'bin');
  try {
    // A .vsix does not keep file modes everywhere: make sure the shim is executable.
    fs.chmodSync(path.join(bin, 'loopx'), 0o755);
  } catch {
    /* read-only install: the PATH entry still helps where the mode survived */
  }
  const env = context.environmentVariableCollection;
  env.description = 'LoopX: the `loopx` command and this workspace’s LoopX folder';
  env.prepend('PATH', `${bin}${path.delimiter}`);
  env.replace('LOOPX_NODE', process.execPath);
  const update = () => {
    const f = workspaces.folders()[0];
    if (f) env.replace('LOOPX_WORKSPACE', f.store.workspace);
    else env.delete('LOOPX_WORKSPACE');
  };
  update();
  context.subscriptions.push(workspaces.onDidChange(update));
}
