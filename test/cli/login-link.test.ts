/**
 * The dashboard's login links through the built CLI: `loopx status-server` prints one when it
 * starts, `loopx status-server --login-link --port N` mints a fresh one for the server running
 * there, and says so plainly when nothing runs there or it is another workspace's.
 */
import { describe, it, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import * as net from 'node:net';
import { z } from 'zod';
import { BIN, Ws, cleanEnv, fails, json, ok, removeTempDirs } from '../helpers/cli';
import { loopbackRequest } from '../helpers/http';
import { LoginLinkOutput } from '../../src/core/views/output-schemas';

const ErrorDoc = z.object({ error: z.object({ reason: z.string(), exit_code: z.number() }).passthrough() });

let server: ChildProcess | undefined;
after(() => {
  server?.kill('SIGTERM');
  removeTempDirs();
});

/** Starts `loopx status-server --port 0` in `ws`; resolves with its first lines once it printed the login link. */
function startServer(ws: Ws): Promise<string> {
  server = spawn(process.execPath, [BIN, 'status-server', '--port', '0'], { cwd: ws.dir, env: cleanEnv() });
  return new Promise((resolve, reject) => {
    let out = '';
    server!.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      if (/^Dashboard: .*\n/m.test(out)) resolve(out);
    });
    server!.once('exit', (code) => reject(new Error(`status-server exited ${code}: ${out}`)));
  });
}

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe('loopx status-server login links', () => {
  const ws = new Ws();
  let port = 0;
  let printed = '';

  before(async () => {
    ok(await ws.run('init'));
    printed = await startServer(ws);
    port = Number(/^Dashboard: http:\/\/127\.0\.0\.1:(\d+)\/login\?code=/m.exec(printed)?.[1]);
  });

  it('prints a one-time dashboard link at start, and the command for a new one', async () => {
    assert.ok(port > 0, printed);
    assert.match(printed, /\(valid once, for 60 s\)/);
    assert.match(printed, new RegExp(`loopx status-server --login-link --port ${port}`));
    const link = /^Dashboard: (\S+)/m.exec(printed)![1]!;
    const target = link.slice(link.indexOf('/login'));
    assert.equal((await loopbackRequest(port, target)).status, 303);
    assert.equal((await loopbackRequest(port, target)).status, 401, 'the printed link works once');
  });

  it('--login-link mints a fresh link for the running server: it signs in once, and expires within a minute', async () => {
    const before = Date.now();
    const doc = json(
      await ws.run('--json', 'status-server', '--login-link', '--port', String(port)),
      LoginLinkOutput,
    );
    assert.match(doc.url, new RegExp(`^http://127\\.0\\.0\\.1:${port}/login\\?code=`));
    const expires = Date.parse(doc.expires_at);
    assert.ok(expires > before && expires <= Date.now() + 60_000, doc.expires_at);
    const target = doc.url.slice(doc.url.indexOf('/login'));
    const first = await loopbackRequest(port, target);
    assert.equal(first.status, 303);
    const cookie = String(first.headers['set-cookie']?.[0]).split(';')[0]!;
    assert.equal((await loopbackRequest(port, '/status', { headers: { Cookie: cookie } })).status, 200);
    assert.equal((await loopbackRequest(port, target)).status, 401);

    const text = ok(await ws.run('status-server', '--login-link', '--port', String(port)));
    assert.match(
      text.stdout,
      /^Dashboard: http:\/\/127\.0\.0\.1:\d+\/login\?code=\S+ {2}\(valid once, for 60 s\)$/m,
    );
  });

  it('says when nothing listens on the port (exit 3), and when the server there is another workspace’s (exit 4)', async () => {
    const nothing = await freePort();
    const r = await ws.run('--json', 'status-server', '--login-link', '--port', String(nothing));
    assert.equal(r.code, 3, r.stderr);
    assert.equal(ErrorDoc.parse(JSON.parse(r.stderr)).error.reason, 'status_server_not_running');
    fails(await ws.run('status-server', '--login-link', '--port', String(nothing)), 3, /nothing answers/);

    const other = new Ws();
    ok(await other.run('init'));
    const o = await other.run('--json', 'status-server', '--login-link', '--port', String(port));
    assert.equal(o.code, 4, o.stderr);
    assert.equal(ErrorDoc.parse(JSON.parse(o.stderr)).error.reason, 'status_server_other_workspace');
    fails(await other.run('status-server', '--login-link', '--port', String(port)), 4, /another workspace/);
  });
});
