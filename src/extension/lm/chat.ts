/**
 * `@loopx` in the chat view: /status, /contract and /gates answered from the core (no language
 * model needed), with buttons that run LoopX commands. It never decides anything itself, and it
 * only reads: the contract is a preview. In Restricted Mode it answers the same from the
 * read-only stores but offers no button that would write, and says why.
 */
import * as vscode from 'vscode';
import { mdText as esc, goalStatus, previewContract, statusAll } from '../../core/index';
import { person, RESTRICTED_MODE_TEXT } from '../commands/shared';
import type { LoopxWorkspaces } from '../workspace/workspaces';

export const CHAT_PARTICIPANT_ID = 'loopx.chat';

export function chatHandler(workspaces: LoopxWorkspaces): vscode.ChatRequestHandler {
  return async (request, _context, stream) => {
    const trusted = vscode.workspace.isTrusted;
    /** A button that runs a command that writes: offered only in a trusted workspace. */
    const writing = (b: vscode.Command) => {
      if (trusted) stream.button(b);
    };
    if (!trusted) stream.markdown(`_${esc(RESTRICTED_MODE_TEXT)}._\n\n`);
    const folder = workspaces.folders()[0];
    if (!folder) {
      stream.markdown('This workspace has no LoopX goals yet.');
      writing({ command: 'loopx.initWorkspace', title: 'Initialize LoopX' });
      return {};
    }
    const store = folder.store;
    const all = statusAll(store);
    const wanted = request.prompt.trim();
    const goal =
      all.goals.find((g) => g.id === wanted || g.title.toLowerCase() === wanted.toLowerCase()) ??
      all.goals.filter((g) => g.status === 'active').at(-1);
    switch (request.command) {
      case 'gates': {
        const pending = all.goals
          .filter((g) => g.pending_gates > 0)
          .flatMap((g) =>
            goalStatus(store, g.id)
              .gates.filter((x) => x.status === 'pending')
              .map((x) => ({ g, x })),
          );
        if (!pending.length) {
          stream.markdown('No gate is waiting for you.');
          return {};
        }
        stream.markdown(`**${pending.length} gate${pending.length > 1 ? 's' : ''} waiting for you**\n\n`);
        for (const { g, x } of pending) {
          stream.markdown(`- **${esc(x.id)}** on _${esc(g.title)}_: ${esc(x.reason || x.title)}\n`);
          writing({
            command: 'loopx.approveGate',
            arguments: [{ goalId: g.id, gateId: x.id, folder: folder.folder.uri.fsPath }],
            title: `Approve gate ${x.id}`,
          });
          writing({
            command: 'loopx.rejectGate',
            arguments: [{ goalId: g.id, gateId: x.id, folder: folder.folder.uri.fsPath }],
            title: `Reject gate ${x.id}`,
          });
        }
        return {};
      }
      case 'contract': {
        if (!goal) {
          stream.markdown('No active goal.');
          return {};
        }
        // A preview: looking at the contract from chat must not open a run or spend a turn.
        const agent = vscode.workspace.getConfiguration('loopx').get<string>('agentName', 'vscode');
        const out = previewContract(store, { goalId: goal.id, agent }, person()).answer;
        stream.markdown(
          `**${out.decision.toUpperCase()}** for _${esc(goal.title)}_ (${out.status})\n\n${out.reasons.map((r) => `- ${esc(r)}`).join('\n')}\n`,
        );
        const p = out.interaction_contract.agent_channel.primary;
        if (p) stream.markdown(`\nNext: \`${p.todo_id}\` ${esc(p.title)}\n`);
        // A preview: it writes nothing, so it is offered in Restricted Mode too.
        stream.button({
          command: 'loopx.requestContract',
          arguments: [{ goalId: goal.id, folder: folder.folder.uri.fsPath }],
          title: 'Preview Contract',
        });
        return {};
      }
      default: {
        if (!all.goals.length) {
          stream.markdown('No goals yet.');
          writing({ command: 'loopx.createGoal', title: 'Create Goal' });
          return {};
        }
        stream.markdown(`**LoopX: ${all.goals.length} goal${all.goals.length > 1 ? 's' : ''}**\n\n`);
        for (const g of all.goals.slice(0, 20)) {
          stream.markdown(
            `- ${esc(g.title)} — ${g.status}, ${g.progress.done}/${g.progress.total} done${g.pending_gates ? `, ${g.pending_gates} gate${g.pending_gates > 1 ? 's' : ''} pending` : ''}\n`,
          );
        }
        if (all.attention.length)
          stream.markdown(
            `\n${all.attention.length} item${all.attention.length > 1 ? 's' : ''} need${all.attention.length > 1 ? '' : 's'} you.\n`,
          );
        stream.button({ command: 'loopx.openDashboard', title: 'Open Dashboard' });
        return {};
      }
    }
  };
}

export function registerChatParticipant(
  context: vscode.ExtensionContext,
  workspaces: LoopxWorkspaces,
): vscode.Disposable {
  const participant = vscode.chat.createChatParticipant(CHAT_PARTICIPANT_ID, chatHandler(workspaces));
  participant.iconPath = vscode.Uri.joinPath(context.extensionUri, 'media', 'loopx.svg');
  return participant;
}
