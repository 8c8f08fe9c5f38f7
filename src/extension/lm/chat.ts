/**
 * `@loopx` in the chat view: /status, /contract and /gates answered from the core (no language
 * model needed), with buttons that run LoopX commands. It never decides anything itself.
 */
import * as vscode from 'vscode';
import { decide, effectiveStatus, mdText as esc, goalStatus, render, statusAll } from '../../core/index';
import type { LoopxWorkspaces } from '../workspace/workspaces';

export const CHAT_PARTICIPANT_ID = 'loopx.chat';

export function chatHandler(workspaces: LoopxWorkspaces): vscode.ChatRequestHandler {
  return async (request, _context, stream) => {
    const folder = workspaces.folders()[0];
    if (!folder) {
      stream.markdown('This workspace has no LoopX goals yet.');
      stream.button({ command: 'loopx.initWorkspace', title: 'Initialize LoopX' });
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
          stream.button({
            command: 'loopx.approveGate',
            arguments: [{ goalId: g.id, gateId: x.id, folder: folder.folder.uri.fsPath }],
            title: `Approve gate ${x.id}`,
          });
          stream.button({
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
        const loaded = store.load(goal.id);
        const out = render(
          loaded.state,
          decide(loaded.state, store.policy(), new Date(), { agent: 'vscode' }),
          { preview: true },
        );
        stream.markdown(
          `**${out.decision.toUpperCase()}** for _${esc(goal.title)}_ (${effectiveStatus(loaded.state)})\n\n${out.reasons.map((r) => `- ${esc(r)}`).join('\n')}\n`,
        );
        const p = out.interaction_contract.agent_channel.primary;
        if (p) stream.markdown(`\nNext: \`${p.todo_id}\` ${esc(p.title)}\n`);
        stream.button({
          command: 'loopx.requestContract',
          arguments: [{ goalId: goal.id, folder: folder.folder.uri.fsPath }],
          title: 'Request Contract',
        });
        return {};
      }
      default: {
        if (!all.goals.length) {
          stream.markdown('No goals yet.');
          stream.button({ command: 'loopx.createGoal', title: 'Create Goal' });
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
