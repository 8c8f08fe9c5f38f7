/**
 * The agent tools as VS Code language-model tools (agent mode). Declared in package.json
 * (`contributes.languageModelTools`, kept equal to AGENT_TOOLS by a unit test) and registered
 * here. VS Code does not validate tool input against the schema, so `callAgentTool` does.
 */
import { createHash } from 'node:crypto';
import * as vscode from 'vscode';
import type { Actor } from '../../core/index';
import { AGENT_TOOLS, callAgentTool, LoopxError, sessionAgentId } from '../../core/index';
import { untrustedRefusal } from '../commands/shared';
import { literalMarkdown } from '../views/markdown';
import type { LoopxWorkspaces } from '../workspace/workspaces';

/**
 * The chat session a tool call comes from, if the host says. The stable API keeps
 * `toolInvocationToken` opaque; at run time VS Code passes the chat's invocation context, whose
 * `sessionId` names the chat session (the field its proposed `chatSessionId` is read from). It is
 * read only when it is there, as a string; anything else counts as no chat session.
 */
function chatSessionOf(token: unknown): string | undefined {
  if (!token || typeof token !== 'object') return undefined;
  const id = (token as { sessionId?: unknown }).sessionId;
  return typeof id === 'string' && id ? id : undefined;
}

/**
 * The short hash of a session that ends an agent's identity here: of a chat (`chat:<id>`), or by
 * default of this window (`vscode.env.sessionId`), for the tools outside a chat and the MCP server.
 */
export function sessionSuffix(session = `window:${vscode.env.sessionId}`): string {
  return createHash('sha256').update(session).digest('hex').slice(0, 8);
}

/**
 * Who the agent is, from the channel (core/trust/identity.ts), never from the tool's input: the
 * `loopx.agentName` setting plus a short hash of its chat session, so two chats are two agents
 * and neither can work under the other's contract. A call outside a chat (no session in its
 * token) gets the window's session (`vscode.env.sessionId`) instead: one identity per window.
 */
function lmToolActor(toolInvocationToken?: unknown): Actor {
  const name = vscode.workspace.getConfiguration('loopx').get<string>('agentName', 'vscode') || 'vscode';
  const chat = chatSessionOf(toolInvocationToken);
  const suffix = sessionSuffix(chat ? `chat:${chat}` : undefined);
  return { kind: 'agent', id: sessionAgentId(name, suffix, 'vscode'), channel: 'lm-tool' };
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
        // One message for both places VS Code shows it: in a chat a string is rendered as Markdown
        // (the agent's title or command would show as links and images), outside a chat a modal
        // dialog renders a MarkdownString to plain text (its markup dropped). Markdown that shows
        // exactly this text reads the same in both. In Restricted Mode a writing call is refused
        // without a question: there is nothing to confirm.
        return tool.writes && vscode.workspace.isTrusted
          ? {
              invocationMessage: literalMarkdown(what),
              confirmationMessages: { title: `LoopX: ${tool.title}`, message: literalMarkdown(what) },
            }
          : { invocationMessage: literalMarkdown(what) };
      },
      async invoke(options) {
        const folder = workspaces.folders()[0];
        if (!folder)
          throw new Error('this workspace has no .loopx/: a person runs "LoopX: Initialize Workspace" first');
        try {
          if (tool.writes && !vscode.workspace.isTrusted) throw untrustedRefusal();
          const result = callAgentTool(
            folder.store,
            tool.name,
            options.input,
            lmToolActor(options.toolInvocationToken),
          );
          log.info(`lm tool ${tool.name}: ${result.text.slice(0, 200)}`);
          workspaces.schedule();
          return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(result.text)]);
        } catch (caught) {
          // A tool that reads may still write (loopx_get_contract opens a run): in Restricted
          // Mode the store is read-only and refuses, which is Restricted Mode's refusal.
          const e =
            caught instanceof LoopxError && caught.reason === 'store_read_only' ? untrustedRefusal() : caught;
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
