/**
 * The dashboard's login, attacked the way an agent with a shell would: replaying a spent code,
 * forging one without the token, guessing codes until the rate limit stops it, looking for the
 * session id in anything the server answers, and handing the extension a `vscode://` link built
 * from hostile ids.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { Store, invoke } from '../../src/core/index';
import { parseDashboardLink } from '../../src/core/views/dashboard-links';
import { startStatusServer } from '../../src/server/status-server';
import type { StatusServer } from '../../src/server/status-server';
import { removeTempDirs, tempDir } from '../helpers/security';
import { loopbackRequest } from '../helpers/http';

const servers: StatusServer[] = [];
after(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  removeTempDirs();
});

async function serve(rateLimitPerMinute?: number): Promise<StatusServer> {
  const store = Store.init(fs.realpathSync(tempDir('loopx-sec-dash-')));
  invoke(
    store,
    'goal.create',
    { goalId: 'alpha', title: 'Secret plans' },
    { kind: 'user', id: 't', channel: 'cli' },
  );
  const srv = await startStatusServer({ workspace: store.workspace, store, port: 0, rateLimitPerMinute });
  servers.push(srv);
  return srv;
}

const get = (srv: StatusServer, target: string, headers: Record<string, string> = {}) =>
  loopbackRequest(srv.port, target, { headers });

const codeOf = (url: string) => new URL(url).search;

describe('dashboard login attacks', () => {
  it('a spent code cannot be replayed, not even at once from another connection', async () => {
    const srv = await serve();
    const q = codeOf(srv.loginUrl());
    const [a, b] = await Promise.all([get(srv, `/login${q}`), get(srv, `/login${q}`)]);
    assert.deepEqual([a.status, b.status].sort(), [303, 401]);
    assert.equal((await get(srv, `/login${q}`)).status, 401);
  });

  it('a code forged without the token is refused (guessed key, empty key, the MAC of the nonce alone)', async () => {
    const srv = await serve();
    const exp = String(Date.now() + 30_000);
    const nonce = randomBytes(16).toString('base64url');
    for (const key of ['', 'loopx', 'a'.repeat(64), srv.token.slice(0, 32)]) {
      const mac = createHmac('sha256', key).update(`loopx-login/1|${exp}|${nonce}`).digest('base64url');
      const r = await get(srv, `/login?code=${exp}.${nonce}.${mac}`, { Accept: 'application/json' });
      assert.equal(r.status, 401, key);
      assert.equal((JSON.parse(r.text) as { error: { reason: string } }).error.reason, 'login_code_invalid');
      assert.equal(r.headers['set-cookie'], undefined);
    }
    // A real code with its expiry pushed back is no longer signed.
    const [, n, m] = new URL(srv.loginUrl()).searchParams.get('code')!.split('.');
    assert.equal((await get(srv, `/login?code=${Date.now() + 3600_000}.${n}.${m}`)).status, 401);
  });

  it('guessing codes runs into the rate limit long before a session', async () => {
    const srv = await serve(30);
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) {
      const guess = `${Date.now() + 30_000}.${randomBytes(16).toString('base64url')}.${randomBytes(32).toString('base64url')}`;
      statuses.push((await get(srv, `/login?code=${guess}`)).status);
    }
    assert.ok(
      statuses.every((s) => s === 401 || s === 429),
      statuses.join(','),
    );
    assert.ok(statuses.filter((s) => s === 429).length >= 5, 'the limit kicks in');
    // Even a good code waits behind the limit: the guesser's address is out of requests.
    assert.equal((await get(srv, `/login${codeOf(srv.loginUrl())}`)).status, 429);
  });

  it('the session id appears in no body and no URL: only in Set-Cookie', async () => {
    const srv = await serve();
    const login = await get(srv, `/login${codeOf(srv.loginUrl())}`);
    const cookie = String(login.headers['set-cookie']?.[0]).split(';')[0]!;
    const id = cookie.split('=')[1]!;
    assert.equal(login.headers.location, './', 'the redirect carries no secret');
    for (const target of [
      '/',
      '/status',
      '/goals/alpha',
      '/events',
      '/assets/webview.js',
      '/healthz',
      '/nope',
    ]) {
      const r = await get(srv, target, { Cookie: cookie });
      assert.ok(!r.text.includes(id), `${target} shows the session id`);
      assert.ok(!r.text.includes(srv.token), `${target} shows the token`);
      assert.ok(!JSON.stringify(r.headers).includes(id), `${target} echoes the session id in a header`);
    }
    // A session id passed in a URL is not a session.
    for (const target of [`/status?session=${id}`, `/?loopx_session_${srv.port}=${id}`])
      assert.equal((await get(srv, target)).status, 401, target);
    // Nor is the bearer token in a URL.
    assert.equal((await get(srv, `/status?token=${srv.token}`)).status, 401);
  });

  it('a vscode:// link built from hostile ids is rejected by parseDashboardLink', () => {
    const hostile = [
      'goalId=payments&gateId=deploy%22%3B%20rm%20-rf%20~',
      'goalId=..%2F..%2Fetc&gateId=deploy',
      'goalId=payments&gateId=%60id%60',
      'goalId=payments&gateId=deploy%00',
      'goalId=payments&gateId=deploy&folder=%2Ftmp%0A--note%20x',
      'goalId=payments&gateId=deploy&__proto__=x',
      'goalId=payments&gateId=deploy&goalId=other',
    ];
    for (const q of hostile) {
      const u = new URL(`vscode://loopx.loopx-vscode/dashboard/approve-gate?${q}`);
      assert.equal(parseDashboardLink(u.pathname, u.searchParams), undefined, q);
    }
  });
});
