/**
 * Add Passkey: the editor's way to register a passkey for deciding from a browser (the status
 * server's `/decide`), as `loopx key passkey add` is the terminal's. The person's click on the
 * modal is the act; the one-time registration link is signed with the person's key in VS Code's
 * secret storage, so no other code (an agent with a shell, a command called with arguments) can
 * make one.
 */
import * as vscode from 'vscode';
import { mintPasskeyCode } from '../../server/passkey-codes';
import type { Arg, CommandDeps, CommandTable } from './shared';
import { argsOf, guardTrust, pickFolder } from './shared';

export const ADD_PASSKEY = 'Add Passkey';

export function passkeyCommands(deps: CommandDeps): CommandTable {
  return { 'loopx.addPasskey': (a) => addPasskey(deps, a) };
}

async function addPasskey(deps: CommandDeps, a: Arg): Promise<string | undefined> {
  await guardTrust();
  const folder = await pickFolder(argsOf(a));
  const f = deps.workspaces.folders().find((x) => x.folder.uri.fsPath === folder.uri.fsPath);
  if (!f) throw new Error(`${folder.name} has no .loopx/: run LoopX: Initialize Workspace first`);
  const choice = await vscode.window.showWarningMessage(
    'Add a passkey for deciding from a browser?',
    {
      modal: true,
      detail:
        'LoopX opens a one-time page (valid once, for 10 minutes) on the status server at localhost, where your browser makes a passkey with user verification. ' +
        'Gates you approve or reject and budgets you grant there with it count as your decisions, on every clone that pins it. ' +
        'It is pinned in your LoopX config folder and published in .loopx/approvers/ for teammates to pin.',
    },
    ADD_PASSKEY,
  );
  if (choice !== ADD_PASSKEY) return undefined;
  const signer = await deps.approver.signer(f.store);
  const opened = await deps.openStatusServerPage(
    f.folder.uri.fsPath,
    () => `/passkey/register?code=${mintPasskeyCode(signer, signer.name).code}`,
  );
  if (!opened) {
    void vscode.window.showWarningMessage(
      'No browser could be opened for the passkey page. At a terminal, `loopx key passkey add` prints the link instead.',
    );
    return undefined;
  }
  deps.log.info(`passkey registration page opened for ${signer.name}`);
  return opened.toString(true);
}
