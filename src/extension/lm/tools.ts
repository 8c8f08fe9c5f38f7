/**
 * The agent tools as VS Code language-model tools (agent mode). Declared in package.json
 * (`contributes.languageModelTools`, kept equal to AGENT_TOOLS by a unit test) and registered
 * here. VS Code does not validate tool input against the schema, so `callAgentTool` does.
 */
import * as vscode from 'vscode';
import { AGENT_TOOLS, callAgentTool, LoopxError } from '../../core/index';
import type { Actor } from '../../core/index';
import type { LoopxWorkspaces } from '../workspaces';

export function lmToolActor(): Actor {
  const name = vscode.workspace.getConfiguration('loopx').get<string>('agentName', 'vscode') || 'vscode';
  return { kind: 'agent', id: name.slice(0, 128), channel: 'lm-tool' };
}

export function registerLanguageModelTools(
  workspaces: LoopxWorkspaces,
  log: vscode.LogOutputChannel,
): vscode.Disposable[] {
  return AGENT_TOOLS.map((tool) =>
    vscode.lm.registerTool<Record<string, unknown>>(tool.name, {
      prepareInvocation(options) {
        // No side effect here: only say what the call is about to do.
        let what = tool.title;
        try {
          const parsed = tool.input.safeParse(options.input ?? {});
          if (parsed.success && tool.confirmation) what = tool.confirmation(parsed.data);
        } catch {
          /* fall back to the title */
        }
        return tool.writes
          ? {
              invocationMessage: what,
              confirmationMessages: {
                title: `LoopX: ${tool.title}`,
                message: new vscode.MarkdownString(what),
              },
            }
          : { invocationMessage: what };
      },
      async invoke(options) {
        const folder = workspaces.folders()[0];
        if (!folder)
          throw new Error('this workspace has no .loopx/: a person runs "LoopX: Initialize Workspace" first');
        if (tool.writes && !vscode.workspace.isTrusted)
          throw new Error('the workspace is not trusted: LoopX changes nothing in it');
        try {
          const result = callAgentTool(folder.store, tool.name, options.input, lmToolActor());
          log.info(`lm tool ${tool.name}: ${result.text.slice(0, 200)}`);
          workspaces.schedule();
          return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(result.text)]);
        } catch (e) {
          // The reason code first (e.g. `[todo_not_in_contract]`): the model and the log both get it.
          const msg =
            e instanceof LoopxError
              ? `[${e.reason}] ${e.message}`
              : `unexpected error: ${(e as Error)?.message ?? e}`;
          log.warn(`lm tool ${tool.name} refused: ${msg}`);
          throw new Error(msg);
        }
      },
    }),
  );
}
