/**
 * The status server's dashboard routes over real sockets on 127.0.0.1: login codes (mint and
 * verify), the session cookie, `/` with its CSP, the assets allow-list, and that the old
 * defences (bearer, Origin, methods, no CORS) hold for the new routes too.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Store, invoke } from '../../src/core/index';
import type { Actor } from '../../src/core/index';
import {
  startStatusServer,
  mintLoginCode,
  loginUrl,
  LOGIN_CODE_TTL_MS,
} from '../../src/server/status-server';
import type { StatusServer } from '../../src/server/status-server';
import { createLoginVerifier, createSessions, loginCodeExpiry } from '../../src/server/login';
import { ASSET_FILES } from '../../src/server/assets';
import { tempDir, removeTempDirs } from '../helpers/store';
import { loopbackRequest } from '../helpers/http';
import type { Reply } from '../helpers/http';

const REPO = path.resolve(__dirname, '..', '..');
const user: Actor = { kind: 'user', id: 't', channel: 'cli' };
const TOKEN = 'a'.repeat(64);

const servers: StatusServer[] = [];
after(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  removeTempDirs();
});

async function serve(
  extra: { rateLimitPerMinute?: number } = {},
): Promise<StatusServer & { lines: string[] }> {
  const store = Store.init(fs.realpathSync(tempDir('loopx-page-')));
  invoke(store, 'goal.create', { goalId: 'alpha', title: 'Goal alpha' }, user);
  const lines: string[] = [];
  const srv = await startStatusServer({
    workspace: store.workspace,
    port: 0,
    assetsDir: REPO,
    log: (l) => lines.push(l),
    ...extra,
  });
  servers.push(srv);
  return Object.assign(srv, { lines });
}

const request = (
  srv: StatusServer,
  target: string,
  o: { method?: string; headers?: Record<string, string> } = {},
) => loopbackRequest(srv.port, target, o);

const codeOf = (url: string) => new URL(url).searchParams.get('code')!;

async function signIn(srv: StatusServer): Promise<string> {
  const r = await request(srv, `/login?code=${encodeURIComponent(codeOf(srv.loginUrl()))}`);
  assert.equal(r.status, 303);
  const cookie = String(r.headers['set-cookie']?.[0]).split(';')[0]!;
  return cookie;
}

describe('login codes', () => {
  it('are <expiry>.<nonce>.<mac>, valid once, for 60 s', () => {
    const now = Date.parse('2026-12-01T10:00:00Z');
    const code = mintLoginCode(TOKEN, now);
    assert.match(code, /^\d+\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}$/);
    assert.equal(loginCodeExpiry(code), now + LOGIN_CODE_TTL_MS);
    const v = createLoginVerifier(TOKEN);
    assert.equal(v.redeem(code, now + 1000), undefined);
    assert.equal(v.redeem(code, now + 2000), 'login_code_used');
  });

  it('refuses expired, tampered, foreign and far-future codes', () => {
    const now = Date.parse('2026-12-01T10:00:00Z');
    const v = createLoginVerifier(TOKEN);
    assert.equal(v.redeem(mintLoginCode(TOKEN, now), now + LOGIN_CODE_TTL_MS), 'login_code_expired');
    assert.equal(v.redeem(mintLoginCode(TOKEN, now - 120_000), now), 'login_code_expired');
    const [exp, nonce, mac] = mintLoginCode(TOKEN, now).split('.') as [string, string, string];
    assert.equal(v.redeem(`${Number(exp) + 1}.${nonce}.${mac}`, now), 'login_code_invalid', 'expiry changed');
    // A character in the middle: the last of 43 base64url characters also holds 2 padding bits,
    // so changing it can decode to the same MAC (this test failed that way about 1 run in 16).
    const flipped = mac.slice(0, 10) + (mac[10] === 'A' ? 'B' : 'A') + mac.slice(11);
    assert.equal(v.redeem(`${exp}.${nonce}.${flipped}`, now), 'login_code_invalid', 'mac changed');
    assert.equal(v.redeem(mintLoginCode('b'.repeat(64), now), now), 'login_code_invalid', 'another token');
    // Minted with the real token but an hour ahead: longer than any code is meant to live.
    assert.equal(v.redeem(mintLoginCode(TOKEN, now + 3600_000), now), 'login_code_invalid');
    for (const junk of [
      '',
      'x',
      '1.2.3',
      `${exp}.${nonce}`,
      `${exp}.${nonce}.${mac}.x`,
      `-1.${nonce}.${mac}`,
    ])
      assert.equal(v.redeem(junk, now), 'login_code_invalid', junk);
    // None of the refusals spent the good code.
    assert.equal(v.redeem(`${exp}.${nonce}.${mac}`, now), undefined);
  });

  it('loginUrl puts a fresh code on /login of the server', () => {
    const a = loginUrl('http://127.0.0.1:9000/', TOKEN);
    const b = loginUrl('http://127.0.0.1:9000', TOKEN);
    assert.match(a, /^http:\/\/127\.0\.0\.1:9000\/login\?code=\d+\.[\w-]+\.[\w-]+$/);
    assert.notEqual(codeOf(a), codeOf(b));
  });

  it('sessions expire after 12 h and are named after the port', () => {
    const s = createSessions(() => 4321);
    const id = s.create(0);
    assert.equal(s.valid(id, 12 * 3600_000 - 1), true);
    assert.equal(s.valid(id, 12 * 3600_000), false);
    assert.equal(s.fromCookieHeader(`other=1; loopx_session_4321=${id}; x=y`), id);
    assert.equal(s.fromCookieHeader(`loopx_session_4322=${id}`), undefined);
  });
});

describe('the dashboard routes', () => {
  it('GET /login with a good code: 303 to / with exactly the session cookie', async () => {
    const srv = await serve();
    const r = await request(srv, `/login?code=${encodeURIComponent(codeOf(srv.loginUrl()))}`);
    assert.equal(r.status, 303);
    assert.equal(r.headers.location, './', 'relative: the page works behind a path proxy too');
    const set = r.headers['set-cookie'];
    assert.equal(set?.length, 1);
    assert.match(
      set![0]!,
      new RegExp(
        `^loopx_session_${srv.port}=[A-Za-z0-9_-]{43}; HttpOnly; SameSite=Strict; Path=/; Max-Age=43200$`,
      ),
    );
    assert.equal(r.text, '');
  });

  it('refuses a used, expired or bad code with a 401 page, or JSON reason codes when asked', async () => {
    const srv = await serve();
    const code = encodeURIComponent(codeOf(srv.loginUrl()));
    assert.equal((await request(srv, `/login?code=${code}`)).status, 303);
    const again = await request(srv, `/login?code=${code}`);
    assert.equal(again.status, 401);
    assert.match(String(again.headers['content-type']), /^text\/html/);
    assert.match(again.text, /already used/);
    assert.match(again.text, new RegExp(`loopx status-server --login-link --port ${srv.port}`));
    assert.equal(again.headers['set-cookie'], undefined);
    const asJson = { headers: { Accept: 'application/json' } };
    const reason = async (target: string) =>
      (JSON.parse((await request(srv, target, asJson)).text) as { error: { reason: string } }).error.reason;
    assert.equal(await reason(`/login?code=${code}`), 'login_code_used');
    assert.equal(
      await reason(`/login?code=${encodeURIComponent(mintLoginCode(srv.token, Date.now() - 61_000))}`),
      'login_code_expired',
    );
    assert.equal(await reason('/login?code=forged'), 'login_code_invalid');
    assert.equal(await reason('/login'), 'login_code_invalid');
    const fresh = encodeURIComponent(codeOf(srv.loginUrl()));
    assert.equal(await reason(`/login?code=${fresh}&code=${fresh}`), 'login_code_invalid', 'two codes');
    assert.ok(srv.lines.some((l) => l === 'login refused: login_code_used'));
    assert.ok(
      srv.lines.every((l) => !l.includes('code=')),
      'no code in the log lines',
    );
  });

  it('HEAD /login spends nothing; POST /login is 405', async () => {
    const srv = await serve();
    const code = encodeURIComponent(codeOf(srv.loginUrl()));
    assert.equal((await request(srv, `/login?code=${code}`, { method: 'HEAD' })).status, 405);
    const post = await request(srv, `/login?code=${code}`, { method: 'POST' });
    assert.equal(post.status, 405);
    assert.equal(post.headers.allow, 'GET, HEAD');
    assert.equal((await request(srv, `/login?code=${code}`)).status, 303, 'the code is still good');
  });

  it('/, /status, /goals/<id> and /events: 401 without a cookie, 200 with the session or the bearer', async () => {
    const srv = await serve();
    const cookie = await signIn(srv);
    for (const p of ['/', '/status', '/goals/alpha', '/events']) {
      assert.equal((await request(srv, p)).status, 401, `${p} without anything`);
      assert.equal(
        (await request(srv, p, { headers: { Cookie: `loopx_session_${srv.port}=${'x'.repeat(43)}` } }))
          .status,
        401,
        `${p} with a made-up session`,
      );
      assert.equal(
        (await request(srv, p, { headers: { Cookie: cookie } })).status,
        200,
        `${p} with the session`,
      );
      assert.equal(
        (await request(srv, p, { headers: { Authorization: `Bearer ${srv.token}` } })).status,
        200,
        `${p} with the bearer`,
      );
    }
    const page = await request(srv, '/');
    assert.match(String(page.headers['content-type']), /^text\/html/);
    assert.match(page.text, /--login-link --port/);
    assert.doesNotMatch(page.text, /Goal alpha|webview\.js/);
    // A session of another port's server is not ours.
    const other = cookie.replace(`loopx_session_${srv.port}`, `loopx_session_${srv.port + 1}`);
    assert.equal((await request(srv, '/status', { headers: { Cookie: other } })).status, 401);
  });

  it('serves / with a fresh nonce per response, the CSP as a header, and the same page as the webview', async () => {
    const srv = await serve();
    const cookie = await signIn(srv);
    const a = await request(srv, '/', { headers: { Cookie: cookie } });
    const b = await request(srv, '/', { headers: { Cookie: cookie } });
    const nonce = (r: Reply) =>
      /script-src 'nonce-([A-Za-z0-9_-]+)'/.exec(String(r.headers['content-security-policy']))?.[1];
    assert.ok(nonce(a));
    assert.notEqual(nonce(a), nonce(b));
    assert.equal(
      a.headers['content-security-policy'],
      `default-src 'none'; script-src 'nonce-${nonce(a)}'; style-src 'self'; font-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
    );
    assert.ok(a.text.includes(`<script nonce="${nonce(a)}" src="assets/webview.js"></script>`));
    assert.ok(a.text.includes('<link rel="stylesheet" href="assets/browser-theme.css">'));
    assert.ok(a.text.includes('<link rel="stylesheet" href="assets/dashboard.css">'));
    assert.equal(a.headers['x-frame-options'], 'DENY');
    assert.equal(a.headers['x-content-type-options'], 'nosniff');
    assert.doesNotMatch(a.text, new RegExp(srv.token));
    assert.doesNotMatch(a.text, new RegExp(cookie.split('=')[1]!));
    assert.doesNotMatch(a.text, /Goal alpha/, 'the data comes by fetch, not in the page');
  });

  it('serves the allow-listed assets without a session, and nothing else', async () => {
    const srv = await serve();
    const types: Record<string, RegExp> = {
      'webview.js': /^text\/javascript/,
      'dashboard.css': /^text\/css/,
      'browser-theme.css': /^text\/css/,
    };
    for (const [name, type] of Object.entries(types)) {
      const r = await request(srv, `/assets/${name}`);
      assert.equal(r.status, 200, name);
      assert.match(String(r.headers['content-type']), type);
      assert.equal(r.headers['x-content-type-options'], 'nosniff');
      assert.ok(r.text.length > 100);
    }
    assert.deepEqual([...ASSET_FILES].sort(), [
      'dist/decide.js',
      'dist/webview.js',
      'media/browser-theme.css',
      'media/dashboard.css',
    ]);
    for (const bad of [
      '/assets/../package.json',
      '/assets/%2e%2e/package.json',
      '/assets/%2e%2e%2fpackage.json',
      '/assets/..%2f..%2fpackage.json',
      '/assets/dist/webview.js',
      '/assets/webview.js/',
      '/assets/',
      '/assets/constructor',
      '/assets/__proto__',
      '/assets/loopx.svg',
      '/assets/WEBVIEW.JS',
    ]) {
      const r = await request(srv, bad);
      assert.equal(r.status, 404, bad);
      assert.doesNotMatch(r.text, /loopx-vscode/, `${bad} leaks no file`);
    }
    const head = await request(srv, '/assets/webview.js', { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.text, '');
  });

  it('says which file is missing when the install lacks an asset', async () => {
    const store = Store.init(fs.realpathSync(tempDir('loopx-page-')));
    const srv = await startStatusServer({
      workspace: store.workspace,
      port: 0,
      assetsDir: tempDir('loopx-empty-'),
    });
    servers.push(srv);
    const r = await request(srv, '/assets/webview.js');
    assert.equal(r.status, 404);
    assert.match(r.text, /dist\/webview\.js is missing/);
  });

  it('sends no Access-Control-* header on any route, and refuses a foreign Origin everywhere', async () => {
    const srv = await serve();
    const cookie = await signIn(srv);
    const targets = [
      '/',
      '/login?code=x',
      '/assets/webview.js',
      '/status',
      '/goals/alpha',
      '/events',
      '/healthz',
      '/nope',
    ];
    for (const t of targets) {
      const variants: Record<string, string>[] = [
        { Cookie: cookie },
        { Cookie: cookie, Origin: `http://127.0.0.1:${srv.port}` },
      ];
      for (const headers of variants) {
        const r = await request(srv, t, { headers });
        assert.deepEqual(
          Object.keys(r.headers).filter((h) => h.startsWith('access-control-')),
          [],
          t,
        );
      }
      const evil = await request(srv, t, { headers: { Cookie: cookie, Origin: 'http://evil.example' } });
      assert.equal(evil.status, 403, `${t} from another origin`);
      assert.equal(evil.headers['set-cookie'], undefined);
    }
    assert.equal((await request(srv, '/', { method: 'POST', headers: { Cookie: cookie } })).status, 405);
  });

  it('allowHost adds one Host value (a forwarded port) and refuses junk', async () => {
    const srv = await serve();
    assert.equal((await request(srv, '/healthz', { headers: { Host: 'box.example.dev:1234' } })).status, 421);
    srv.allowHost('box.example.dev:1234');
    assert.equal((await request(srv, '/healthz', { headers: { Host: 'box.example.dev:1234' } })).status, 200);
    // A forwarded port on the person's machine is localhost at another port: accepted as it is.
    assert.equal((await request(srv, '/healthz', { headers: { Host: 'localhost:1234' } })).status, 200);
    assert.throws(() => srv.allowHost('evil.example/x'), /not a host name/);
  });
});
