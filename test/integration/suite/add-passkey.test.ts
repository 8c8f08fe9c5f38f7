/**
 * Add Passkey in the real host: after the person's click on the modal, the command opens the status
 * server's one-time registration page at localhost, signed with the editor's key (secret storage);
 * the server takes that link's code. Without the click nothing is opened.
 */
import * as assert from 'node:assert/strict';
import * as http from 'node:http';
import * as vscode from 'vscode';
import { api, until, withStub } from './util';

function postJson(url: string, origin: string, body: unknown): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const data = JSON.stringify(body);
    const req = http.request(
      url,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin, 'content-length': Buffer.byteLength(data) },
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString('utf8')));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    req.end(data);
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
      const origin = `http://localhost:${port}`;
      const forged = await postJson(`${origin}/passkey/register/options`, origin, {
        code: `${code.slice(0, -4)}AAAA`,
      });
      assert.equal(forged.status, 401, forged.body);
      const good = await postJson(`${origin}/passkey/register/options`, origin, { code });
      assert.equal(good.status, 200, good.body);
      const options = (
        JSON.parse(good.body) as {
          options?: { rp?: { id?: string }; authenticatorSelection?: { userVerification?: string } };
        }
      ).options;
      assert.equal(options?.rp?.id, 'localhost');
      assert.equal(options?.authenticatorSelection?.userVerification, 'required');
      await vscode.commands.executeCommand('loopx.stopStatusServer');
    });
  });
}
