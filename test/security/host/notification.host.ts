/**
 * Finding 1, in the real VS Code host: an agent's text must never become a link in a notification.
 * VS Code renders `[label](command:id?args)` in a notification message as a link that runs the
 * command; an agent that could put one there would make one click of the person run anything.
 * The agent here is the real one: the LoopX language-model tools, as agent mode calls them.
 */
import * as assert from 'node:assert/strict';
import type * as vscode from 'vscode';
import {
  api,
  clickNotificationLink,
  invokeTool,
  notificationLinks,
  until,
  withNotifications,
  withStub,
  workspaceDir,
} from '../../integration/suite/util';
import { Store } from '../../../src/core/index';

const GOAL = 'refactor-payment-module';

export function registerNotificationAttackTests(): void {
  describe('security (host): text an agent writes is shown as data', function () {
    it('finding 1: a command link in a gate reason is not a link in the notification; Approve opens the modal with the full command', async () => {
      const a = await api();
      const link = `[Show the diff](command:loopx.approveGate?${encodeURIComponent(
        JSON.stringify({ goalId: GOAL, gateId: 'diff-check', fromNotification: true }),
      )})`;
      const command = `echo notes ${'--padding '.repeat(40)}the-end`;
      const modals: { msg: string; detail?: string; modal?: boolean }[] = [];
      const note = await withNotifications((shown) =>
        withStub(
          'showWarningMessage',
          (async (msg: string, opts?: vscode.MessageOptions) => {
            modals.push({ msg, detail: opts?.detail, modal: opts?.modal });
            return undefined; // the person reads the facts and closes the dialog
          }) as unknown as typeof vscode.window.showWarningMessage,
          async () => {
            await invokeTool('loopx_request_gate', {
              goalId: GOAL,
              gateId: 'diff-check',
              reason: `Nothing to decide here. ${link}`,
            });
            await invokeTool('loopx_add_todo', {
              goalId: GOAL,
              title: 'Publish the notes',
              action: command,
              gate: 'diff-check',
            });
            a.notifier.scan();
            const n = await until('the notification', () =>
              shown.find((x) => x.title.includes('Gate diff-check ')),
            );
            // The person clicks what looks like the way to read more: Approve, which must only ask.
            await clickNotificationLink(n.title, 'Approve');
            await until('the modal after Approve', () => modals.find((m) => m.detail?.includes(command)));
            return n.title;
          },
        ),
      );
      assert.deepEqual(
        notificationLinks(note).map((l) => [l.label, l.href.split('?')[0]]),
        [
          ['Approve', 'command:loopx.gateNotification.answer'],
          ['Reject', 'command:loopx.gateNotification.answer'],
          ['Show in LoopX', 'command:loopx.gateNotification.answer'],
        ],
        'no link but the notification’s own',
      );
      assert.doesNotMatch(note, /loopx\.approveGate|Show the diff/, 'the agent’s text is not in it at all');
      assert.match(note, /asked by agent .* via a VS Code chat tool/, 'who asked, and through which channel');
      const m = modals.find((x) => x.detail?.includes(command))!;
      assert.equal(m.modal, true);
      assert.ok(m.detail!.includes(`$ ${command}`), 'the guarded command, whole');
      assert.ok(
        m.detail!.includes(
          `Reason, in the agent’s words (not LoopX’s):\n│ Nothing to decide here. ${link}\n`,
        ),
        m.detail,
      );
      const gate = new Store(workspaceDir()).load(GOAL).state.gates.find((g) => g.id === 'diff-check')!;
      assert.equal(gate.status, 'pending', 'the click on Approve alone decided nothing');
    });
  });
}
