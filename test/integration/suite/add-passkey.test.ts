/**
 * Add Passkey in the real host: after the person's click on the modal, the command opens the status
 * server's one-time registration page at localhost, signed with the editor's key (secret storage);
 * the server takes that link's code. Without the click nothing is opened.
 */
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { loopbackRequest } from '../../helpers/http';
import { api, until, withStub } from './util';

/** A JSON POST from the page's origin at localhost, as the registration page sends it. */
function postJson(port: number, target: string, body: unknown) {
  return loopbackRequest(port, target, {
    method: 'POST',
    headers: {
      Host: `localhost:${port}`,
      Origin: `http://localhost:${port}`,
      'Content-Type': 'application/json',
    },
    body: JSON.stringify(body),
  });
}

async function withOpenExternal<R>(record: (u: vscode.Uri) => void, fn: () => Thenable<R>): Promise<R> {
  const env = vscode.env as unknown as Record<string, unknown>;
  const original = env.openExternal;
  env.openExternal = async (u: vscode.Uri) => {
    record(u);
    return true;
  };
  try {
    return await fn();
  } finally {
    env.openExternal = original;
  }
}

export function registerAddPasskeyTests(): void {
  describe('Add Passkey in the real host', function () {
    it('opens nothing without the person’s click, and a registration link the server takes with it', async () => {
      const { statusServer } = await api();
      const opened: vscode.Uri[] = [];
      const dismiss = (async () => undefined) as unknown as typeof vscode.window.showWarningMessage;
      await withOpenExternal(
        (u) => opened.push(u),
        () =>
          withStub('showWarningMessage', dismiss, () => vscode.commands.executeCommand('loopx.addPasskey')),
      );
      assert.equal(opened.length, 0, 'dismissed: nothing opened');

      const click = (async (_m: string, _o: unknown, action: string) =>
        action) as unknown as typeof vscode.window.showWarningMessage;
      await withOpenExternal(
        (u) => opened.push(u),
        () => withStub('showWarningMessage', click, () => vscode.commands.executeCommand('loopx.addPasskey')),
      );
      const url = (await until('the registration page was opened', () => opened[0]))!;
      assert.match(url.path, /\/passkey\/register$/);
      const code = new URLSearchParams(url.query).get('code');
      assert.ok(code, url.toString());
      const port = Number(new URL(statusServer.url!).port);
      const forged = await postJson(port, '/passkey/register/options', {
        code: `${code.slice(0, -4)}AAAA`,
      });
      assert.equal(forged.status, 401, forged.text);
      const good = await postJson(port, '/passkey/register/options', { code });
      assert.equal(good.status, 200, good.text);
      const options = (
        JSON.parse(good.text) as {
          options?: { rp?: { id?: string }; authenticatorSelection?: { userVerification?: string } };
        }
      ).options;
      assert.equal(options?.rp?.id, 'localhost');
      assert.equal(options?.authenticatorSelection?.userVerification, 'required');
      await vscode.commands.executeCommand('loopx.stopStatusServer');
    });
  });
}
