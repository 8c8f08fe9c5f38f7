/**
 * Registers `loopx mcp` with VS Code's MCP support, one server per LoopX folder, so agent mode
 * finds it with no setup. It runs on the editor's own runtime (Electron as Node on desktop).
 *
 * None is offered in Restricted Mode: the server is a process of its own that writes (agents add
 * todos, open runs, report spend through it), and a read-only store in this window cannot stop
 * it. Once the person trusts the workspace the list is asked for again and they appear.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { LoopxWorkspaces } from '../workspace/workspaces';
import { sessionSuffix } from './tools';

export const MCP_PROVIDER_ID = 'loopx.mcp';

/**
 * The agent the server speaks for (LOOPX_AGENT, which `loopx mcp` takes as configured): one per
 * window, so that agents in two windows are two agents, and stable while the window lives, so
 * that a restarted server finds its own run again.
 */
function mcpAgentName(): string {
  return `vscode-mcp-${sessionSuffix()}`;
}

/** The MCP servers this window offers now: one per LoopX folder, none in Restricted Mode. */
export function mcpDefinitions(
  context: vscode.ExtensionContext,
  workspaces: LoopxWorkspaces,
): vscode.McpStdioServerDefinition[] {
  if (!vscode.workspace.isTrusted) return [];
  const version = String((context.extension.packageJSON as { version?: string }).version ?? '0.0.0');
  const folders = workspaces.folders();
  return folders.map(
    (f) =>
      new vscode.McpStdioServerDefinition(
        folders.length > 1 ? `LoopX (${f.folder.name})` : 'LoopX',
        process.execPath,
        [path.join(context.extensionPath, 'dist', 'cli.js'), '--workspace', f.store.workspace, 'mcp'],
        { ELECTRON_RUN_AS_NODE: '1', LOOPX_AGENT: mcpAgentName() },
        version,
      ),
  );
}

export function registerMcpProvider(
  context: vscode.ExtensionContext,
  workspaces: LoopxWorkspaces,
): vscode.Disposable {
  const changed = new vscode.EventEmitter<void>();
  // Also after trust is granted: extension.ts refreshes the workspaces then.
  const sub = workspaces.onDidChange(() => changed.fire());
  const provider = vscode.lm.registerMcpServerDefinitionProvider(MCP_PROVIDER_ID, {
    onDidChangeMcpServerDefinitions: changed.event,
    provideMcpServerDefinitions: () => mcpDefinitions(context, workspaces),
  });
  return vscode.Disposable.from(provider, sub, changed);
}
