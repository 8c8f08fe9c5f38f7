/**
 * Integrated terminals get the bundled `loopx` on PATH, and each folder's terminals that folder's
 * LOOPX_WORKSPACE, so a shell agent (Claude Code, Codex, a script) started there talks to the
 * control plane of the folder it works in. The shim runs the CLI with the editor's own runtime
 * when there is no global Node.
 *
 * LOOPX_WORKSPACE is set per folder (a collection scoped to the workspace folder, which VS Code
 * applies to terminals whose working folder is that one), never window-wide: in a window of
 * several folders a terminal in `beta` must not read and write `alpha`'s goals, and a folder
 * without `.loopx/` gets none (its `loopx` finds a workspace from the shell's folder, like git).
 *
 * In Restricted Mode terminals get nothing from LoopX: no `loopx` on PATH and no workspace, so
 * a shell or agent there is not pointed at a store the person has not trusted. Granting trust
 * refreshes the workspaces, which adds them (VS Code offers to relaunch open terminals).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
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
  // The collection persists across reloads: what an older version or an earlier window set
  // (a window-wide LOOPX_WORKSPACE, a folder since removed) goes first.
  env.clear();
  /** The folders whose scoped collection holds LOOPX_WORKSPACE now, by URI. */
  const scoped = new Map<string, vscode.WorkspaceFolder>();
  const update = () => {
    const trusted = vscode.workspace.isTrusted;
    const want = new Map(
      (trusted ? workspaces.folders() : []).map((f) => [f.folder.uri.toString(), f] as const),
    );
    for (const [uri, folder] of scoped) {
      if (want.has(uri)) continue;
      env.getScoped({ workspaceFolder: folder }).delete('LOOPX_WORKSPACE');
      scoped.delete(uri);
    }
    // `replace` and `prepend` change nothing when the value is the same (no relaunch prompt).
    for (const [uri, f] of want) {
      env.getScoped({ workspaceFolder: f.folder }).replace('LOOPX_WORKSPACE', f.store.workspace);
      scoped.set(uri, f.folder);
    }
    if (trusted) {
      env.description = 'LoopX: the `loopx` command and each folder’s LoopX workspace';
      env.prepend('PATH', `${bin}${path.delimiter}`);
      env.replace('LOOPX_NODE', process.execPath);
    } else {
      env.delete('PATH');
      env.delete('LOOPX_NODE');
    }
  };
  update();
  context.subscriptions.push(workspaces.onDidChange(update));
}
