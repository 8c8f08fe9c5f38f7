/**
 * The loopback status server over real sockets on 127.0.0.1 (port 0): every route's JSON against
 * the zod schemas, the token, the Host and Origin checks, the methods, the size and rate limits,
 * Server-Sent Events fed by a write from another process, broken goal files, and that nothing
 * under `.loopx/` (minus `local/`) changes however the server is asked.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { createHash } from 'node:crypto';
import { spawn, spawnSync } from 'node:child_process';
import { Store, invoke, statusAll, goalStatus, StatusDoc, GoalStatusDoc } from '../../src/core/index';
import type { Actor } from '../../src/core/index';
import { startStatusServer, isLoopbackHost, TOKEN_FILE, tokenFile } from '../../src/server/status-server';
import type { StatusServer, StatusServerOptions } from '../../src/server/status-server';
import { tempDir, removeTempDirs, settleIndex } from '../helpers/store';
import { writeIndex } from '../helpers/goal-index';

const REPO = path.resolve(__dirname, '..', '..');
const BIN = path.join(REPO, 'bin', 'loopx.js');
const user: Actor = { kind: 'user', id: 't', channel: 'cli' };

const servers: StatusServer[] = [];
after(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  removeTempDirs();
});

// ---------------------------------------------------------------------------------------------
// Helpers

function workspace(goals: string[] = ['alpha']): Store {
  const store = Store.init(fs.realpathSync(tempDir('loopx-server-')));
  for (const goalId of goals) {
    invoke(store, 'goal.create', { goalId, title: `Goal ${goalId}`, objective: 'ship it' }, user);
  }
  return store;
}

async function serve(
  store: Store,
  extra: Partial<StatusServerOptions> = {},
): Promise<StatusServer & { lines: string[] }> {
  const lines: string[] = [];
  const srv = await startStatusServer({
    workspace: store.workspace,
    port: 0,
    log: (l) => lines.push(l),
    ...extra,
  });
  servers.push(srv);
  return Object.assign(srv, { lines });
}

interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  json: unknown;
}

interface RequestOptions {
  method?: string;
  token?: string | null;
  headers?: Record<string, string>;
  body?: string;
  chunked?: boolean;
}

/** One request on a fresh connection. `token: null` sends none; by default the server's token. */
function request(srv: StatusServer, target: string, o: RequestOptions = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { Host: `127.0.0.1:${srv.port}`, ...o.headers };
    const token = o.token === undefined ? srv.token : o.token;
    if (token !== null) headers.Authorization = `Bearer ${token}`;
    if (o.body !== undefined && !o.chunked) headers['Content-Length'] = String(Buffer.byteLength(o.body));
    const req = http.request(
      { host: '127.0.0.1', port: srv.port, path: target, method: o.method ?? 'GET', headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = text ? JSON.parse(text) : undefined;
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
        res.on('error', reject);
      },
    );
    req.setTimeout(5000, () => req.destroy(new Error(`no answer to ${target} in 5 s`)));
    req.on('error', reject);
    if (o.chunked) {
      req.setHeader('Transfer-Encoding', 'chunked');
      req.write(o.body ?? 'x');
    } else if (o.body !== undefined) req.write(o.body);
    req.end();
  });
}

/** The error object of a JSON error reply. */
function errorOf(r: Reply): { status: number; kind: string; reason: string; message: string; file?: string } {
  const e = (
    r.json as
      { error?: { status: number; kind: string; reason: string; message: string; file?: string } } | undefined
  )?.error;
  assert.ok(e, `expected a JSON error, got ${r.status} ${r.text.slice(0, 200)}`);
  assert.equal(e.status, r.status);
  assert.equal(typeof e.message, 'string');
  // Every error body carries a reason code for programs: its own, or the kind.
  assert.match(e.reason, /^[a-z][a-z_]*$/);
  return e;
}

function assertCommonHeaders(r: Reply) {
  assert.equal(r.headers['x-content-type-options'], 'nosniff');
  assert.equal(r.headers['cache-control'], 'no-store');
  assert.equal(r.headers['access-control-allow-origin'], undefined, 'no CORS header, ever');
  assert.equal(r.headers['access-control-allow-credentials'], undefined);
}

function assertJson(r: Reply) {
  assertCommonHeaders(r);
  assert.equal(r.headers['content-type'], 'application/json; charset=utf-8');
  assert.equal(Number(r.headers['content-length']), Buffer.byteLength(r.text));
}

interface SseEvent {
  event: string;
  id?: string;
  data: string;
}

interface SseStream {
  status: number;
  headers: http.IncomingHttpHeaders;
  events: SseEvent[];
  comments: string[];
  ended: boolean;
  /** Resolves with the first event (already received or coming) that matches, or rejects after `ms`. */
  waitFor(pred: (e: SseEvent) => boolean, ms: number, from?: number): Promise<SseEvent>;
  waitForComment(pred: (c: string) => boolean, ms: number): Promise<string>;
  close(): void;
}

function openSse(srv: StatusServer, o: { token?: string | null } = {}): Promise<SseStream> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { Host: `127.0.0.1:${srv.port}`, Accept: 'text/event-stream' };
    const token = o.token === undefined ? srv.token : o.token;
    if (token !== null) headers.Authorization = `Bearer ${token}`;
    const req = http.request(
      { host: '127.0.0.1', port: srv.port, path: '/events', headers, agent: false },
      (res) => {
        let buf = '';
        const waiters = new Set<() => void>();
        const s: SseStream = {
          status: res.statusCode ?? 0,
          headers: res.headers,
          events: [],
          comments: [],
          ended: false,
          waitFor(pred, ms, from = 0) {
            return new Promise((ok, fail) => {
              const look = () => {
                const hit = s.events.slice(from).find(pred);
                if (hit) {
                  clearTimeout(timer);
                  waiters.delete(look);
                  ok(hit);
                }
              };
              const timer = setTimeout(() => {
                waiters.delete(look);
                fail(
                  new Error(
                    `no matching event in ${ms} ms; got ${s.events.map((e) => e.event).join(', ') || 'none'}`,
                  ),
                );
              }, ms);
              waiters.add(look);
              look();
            });
          },
          waitForComment(pred, ms) {
            return new Promise((ok, fail) => {
              const look = () => {
                const hit = s.comments.find(pred);
                if (hit !== undefined) {
                  clearTimeout(timer);
                  waiters.delete(look);
                  ok(hit);
                }
              };
              const timer = setTimeout(() => {
                waiters.delete(look);
                fail(new Error(`no matching comment in ${ms} ms`));
              }, ms);
              waiters.add(look);
              look();
            });
          },
          close() {
            req.destroy();
          },
        };
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buf += chunk;
          let cut: number;
          while ((cut = buf.indexOf('\n\n')) !== -1) {
            const block = buf.slice(0, cut);
            buf = buf.slice(cut + 2);
            const ev: SseEvent = { event: 'message', data: '' };
            let isEvent = false;
            for (const line of block.split('\n')) {
              if (line.startsWith(':')) s.comments.push(line.slice(1).trim());
              else if (line.startsWith('event: ')) {
                ev.event = line.slice(7);
                isEvent = true;
              } else if (line.startsWith('id: ')) ev.id = line.slice(4);
              else if (line.startsWith('data: ')) {
                ev.data += line.slice(6);
                isEvent = true;
              }
            }
            if (isEvent) s.events.push(ev);
          }
          for (const w of [...waiters]) w();
        });
        res.on('end', () => (s.ended = true));
        res.on('error', () => (s.ended = true));
        resolve(s);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const snapshotOf = (e: SseEvent) => StatusDoc.parse(JSON.parse(e.data));

/** Every file under `.loopx/` except `local/`, with its sha256: a fingerprint of the shared state. */
function treeHash(store: Store): string {
  const out: string[] = [];
  (function walk(dir: string) {
    for (const e of fs
      .readdirSync(dir, { withFileTypes: true })
      .sort((a, b) => a.name.localeCompare(b.name))) {
      const p = path.join(dir, e.name);
      const rel = path.relative(store.root, p);
      if (rel === 'local') continue;
      if (e.isDirectory()) {
        out.push(`${rel}/`);
        walk(p);
      } else out.push(`${rel} ${createHash('sha256').update(fs.readFileSync(p)).digest('hex')}`);
    }
  })(store.root);
  return out.join('\n');
}

function withoutGenerated<T extends { generated_at?: string }>(doc: T): Omit<T, 'generated_at'> {
  const { generated_at: _ignored, ...rest } = doc;
  return rest;
}

/** Writes garbage into a goal's log and snapshot, as a bad merge or a disk error would. */
function breakGoal(store: Store, goalId: string) {
  fs.writeFileSync(store.logPath(goalId), '{"v":1,"seq":1 this is not json\n\u0000\u0001garbage\n');
  fs.writeFileSync(store.snapshotPath(goalId), 'not json either {{{');
}

// ---------------------------------------------------------------------------------------------

describe('status server: routes', () => {
  let store: Store;
  let srv: Awaited<ReturnType<typeof serve>>;
  before(async () => {
    store = workspace(['alpha', 'beta']);
    invoke(
      store,
      'todo.add',
      { goalId: 'alpha', todoId: 't1', title: 'run the tests', action: 'npm test' },
      user,
    );
    invoke(
      store,
      'todo.add',
      { goalId: 'alpha', todoId: 't2', title: 'deploy', action: './deploy.sh', gate: 'prod' },
      user,
    );
    srv = await serve(store);
  });

  it('GET /healthz answers {ok:true} without a token', async () => {
    const r = await request(srv, '/healthz', { token: null });
    assert.equal(r.status, 200);
    assertJson(r);
    assert.deepEqual(r.json, { ok: true });
  });

  it('GET /status is the statusAll document, schema-valid', async () => {
    const r = await request(srv, '/status');
    assert.equal(r.status, 200);
    assertJson(r);
    const doc = StatusDoc.parse(r.json);
    assert.equal(doc.schema, 'loopx.status/1');
    assert.equal(doc.workspace, store.workspace);
    assert.deepEqual(
      doc.goals.map((g) => g.id),
      ['alpha', 'beta'],
    );
    assert.deepEqual(doc.goals[0]!.progress, { done: 0, total: 2 });
    assert.equal(doc.goals[0]!.pending_gates, 1);
    assert.deepEqual(doc.errors, []);
    assert.deepEqual(withoutGenerated(doc), withoutGenerated(statusAll(store)));
  });

  it('GET /goals/<id> is the goalStatus document, schema-valid', async () => {
    const r = await request(srv, '/goals/alpha');
    assert.equal(r.status, 200);
    assertJson(r);
    const doc = GoalStatusDoc.parse(r.json);
    assert.equal(doc.id, 'alpha');
    assert.deepEqual(
      doc.todos.map((t) => t.id),
      ['t1', 't2'],
    );
    assert.deepEqual(
      doc.gates.map((g) => [g.id, g.status]),
      [['prod', 'pending']],
    );
    assert.deepEqual(doc, JSON.parse(JSON.stringify(goalStatus(store, 'alpha'))));
    // A query string is ignored, not part of the id.
    const q = await request(srv, '/goals/beta?x=1');
    assert.equal(GoalStatusDoc.parse(q.json).id, 'beta');
  });

  it('an invalid goal id is 400 with a JSON error that names it', async () => {
    for (const [target, shown] of [
      ['/goals/..%2F..%2Fetc', '../../etc'],
      ['/goals/a%20b', 'a b'],
      ['/goals/%24(id)', '$(id)'],
      ['/goals/..', '..'],
      ['/goals/' + 'x'.repeat(65), 'x'.repeat(20)],
    ] as const) {
      const r = await request(srv, target);
      assert.equal(r.status, 400, target);
      assertJson(r);
      const e = errorOf(r);
      assert.equal(e.kind, 'usage');
      assert.ok(e.message.includes(JSON.stringify(shown).slice(1, -1)), `${target}: ${e.message}`);
    }
    const bad = await request(srv, '/goals/%E0%A4%A');
    assert.equal(bad.status, 400);
    assert.match(errorOf(bad).message, /percent-encoding/);
    const empty = await request(srv, '/goals/');
    assert.equal(empty.status, 400);
  });

  it('an unknown goal is 404, an unknown route 404', async () => {
    const r = await request(srv, '/goals/nope');
    assert.equal(r.status, 404);
    assertJson(r);
    assert.equal(errorOf(r).kind, 'not_found');
    assert.equal(errorOf(r).reason, 'not_found');
    assert.match(errorOf(r).message, /nope/);
    const route = await request(srv, '/admin');
    assert.equal(route.status, 404);
    assert.equal((await request(srv, '/status/')).status, 404);
    assert.equal((await request(srv, '/goals/alpha/todos')).status, 404);
  });

  it('HEAD answers the headers of GET without a body', async () => {
    const get = await request(srv, '/goals/alpha');
    const head = await request(srv, '/goals/alpha', { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.text, '');
    assert.equal(head.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(head.headers['content-length'], String(Buffer.byteLength(get.text)));
  });

  it('logs one line per request, without the token or the query string', async () => {
    srv.lines.length = 0;
    await request(srv, '/status?token=secret-in-query');
    await request(srv, '/goals/nope');
    await request(srv, '/status', { token: 'wrong-token-wrong-token' });
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(srv.lines.length, 3, srv.lines.join('\n'));
    assert.match(srv.lines[0]!, /^GET \/status 200 \d+\.\dms$/);
    assert.match(srv.lines[1]!, /^GET \/goals\/nope 404 \d+\.\dms$/);
    assert.match(srv.lines[2]!, /^GET \/status 401 /);
    for (const l of srv.lines) {
      assert.ok(!l.includes(srv.token), 'the token is never logged');
      assert.ok(!l.includes('secret-in-query') && !l.includes('wrong-token'));
    }
  });
});

describe('status server: token', () => {
  it('401 with WWW-Authenticate: Bearer without a token, with a wrong one, or another scheme', async () => {
    const store = workspace();
    const srv = await serve(store);
    for (const [what, o] of [
      ['no token', { token: null }],
      ['a wrong token', { token: 'f'.repeat(64) }],
      ['a prefix of the token', { token: srv.token.slice(0, 63) }],
      ['the token plus one character', { token: srv.token + '0' }],
      ['another scheme', { token: null, headers: { Authorization: `Basic ${srv.token}` } }],
      ['the token twice', { token: `${srv.token} ${srv.token}` }],
    ] as const) {
      for (const target of ['/status', '/goals/alpha', '/events', '/goals/..']) {
        const r = await request(srv, target, o);
        assert.equal(r.status, 401, `${what} on ${target}`);
        assertJson(r);
        assert.match(String(r.headers['www-authenticate']), /^Bearer /);
        assert.equal(errorOf(r).kind, 'unauthorized');
        assert.ok(!r.text.includes('Goal alpha'), 'nothing of the store leaks');
      }
    }
    assert.equal(
      (await request(srv, '/status', { token: null, headers: { Authorization: `bearer   ${srv.token}` } }))
        .status,
      200,
      'the scheme is case-insensitive',
    );
  });

  it('is generated once into the config folder (0600, outside the workspace) and reused; a given token is used as is', async () => {
    const store = workspace();
    const file = tokenFile(store);
    assert.equal(file, path.join(store.secretsDir, TOKEN_FILE));
    assert.ok(!file.startsWith(store.workspace + path.sep), file);
    assert.equal(fs.existsSync(file), false);
    const a = await serve(store);
    assert.match(a.token, /^[0-9a-f]{64}$/);
    assert.equal(fs.readFileSync(file, 'utf8').trim(), a.token);
    assert.equal(fs.existsSync(path.join(store.localDir, TOKEN_FILE)), false, 'a token in the workspace');
    if (process.platform !== 'win32') assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    await a.close();
    const b = await serve(store);
    assert.equal(b.token, a.token, 'restarting keeps the token');
    const c = await serve(store, { token: 'my-own-token-of-32-characters-00' });
    assert.equal(c.token, 'my-own-token-of-32-characters-00');
    assert.equal((await request(c, '/status')).status, 200);
    assert.equal((await request(c, '/status', { token: a.token })).status, 401);
    await assert.rejects(serve(store, { token: 'short' }), /token must be/);
    await assert.rejects(serve(store, { token: 'has space in it, sixteen+' }), /token must be/);
  });

  it('on a fresh clone (no local/) writes nothing in the workspace: the token goes to the config folder', async () => {
    const store = workspace();
    fs.rmSync(store.localDir, { recursive: true });
    const srv = await serve(store);
    assert.equal((await request(srv, '/status')).status, 200);
    assert.equal(fs.readFileSync(tokenFile(store), 'utf8').trim(), srv.token);
    assert.equal(fs.existsSync(store.localDir), false, 'the server made .loopx/local/');
  });

  it('refuses a token file that holds no token', async () => {
    const store = workspace();
    fs.mkdirSync(store.secretsDir, { recursive: true, mode: 0o700 });
    fs.writeFileSync(tokenFile(store), 'not hex at all\n', { mode: 0o600 });
    await assert.rejects(serve(store), (e: Error) =>
      /status-token is not a valid key .*delete it to make a new one/.test(e.message),
    );
  });

  it('refuses a workspace without .loopx/', async () => {
    await assert.rejects(startStatusServer({ workspace: tempDir(), port: 0 }), /no LoopX workspace/);
  });
});

describe('status server: Host, Origin, methods and limits', () => {
  let store: Store;
  let srv: Awaited<ReturnType<typeof serve>>;
  before(async () => {
    store = workspace();
    srv = await serve(store);
  });

  it('refuses a Host that is not a loopback name with our port (DNS rebinding)', async () => {
    for (const host of [
      'evil.example',
      `evil.example:${srv.port}`,
      `127.0.0.1:${srv.port + 1}`,
      '127.0.0.1',
      `localhost.evil.example:${srv.port}`,
      `127.0.0.1.nip.io:${srv.port}`,
    ]) {
      for (const target of ['/status', '/healthz', '/events']) {
        const r = await request(srv, target, { headers: { Host: host } });
        assert.equal(r.status, 421, `${host} ${target}`);
        assertJson(r);
        assert.ok(!r.text.includes('Goal alpha'));
      }
    }
    for (const host of [
      `127.0.0.1:${srv.port}`,
      `localhost:${srv.port}`,
      `LOCALHOST:${srv.port}`,
      `[::1]:${srv.port}`,
    ]) {
      assert.equal((await request(srv, '/status', { headers: { Host: host } })).status, 200, host);
    }
  });

  it('refuses a cross-origin request', async () => {
    for (const origin of [
      'http://evil.example',
      'null',
      `http://localhost:${srv.port + 1}`,
      `https://127.0.0.1:${srv.port}`,
    ]) {
      const r = await request(srv, '/status', { headers: { Origin: origin } });
      assert.equal(r.status, 403, origin);
      assertJson(r);
    }
    assert.equal(
      (await request(srv, '/status', { headers: { Origin: `http://127.0.0.1:${srv.port}` } })).status,
      200,
    );
  });

  it('answers 405 with Allow: GET, HEAD to every other method', async () => {
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE', 'PROPFIND']) {
      for (const target of ['/status', '/goals/alpha', '/events', '/healthz', '/nope']) {
        const r = await request(srv, target, { method });
        assert.equal(r.status, 405, `${method} ${target}`);
        assert.equal(r.headers.allow, 'GET, HEAD');
        assertJson(r);
      }
    }
    const withBody = await request(srv, '/goals/alpha', {
      method: 'POST',
      body: JSON.stringify({ status: 'closed' }),
    });
    assert.equal(withBody.status, 405);
    assert.equal(GoalStatusDoc.parse((await request(srv, '/goals/alpha')).json).status, 'active');
  });

  it('413 for a request body, 414 for a long URL, 431 for big headers', async () => {
    const body = await request(srv, '/status', { body: 'hello' });
    assert.equal(body.status, 413);
    assertJson(body);
    const chunked = await request(srv, '/status', { body: 'hello', chunked: true });
    assert.equal(chunked.status, 413);
    assert.equal(
      (await request(srv, '/status', { headers: { 'Content-Length': '0' } })).status,
      200,
      'an empty body is fine',
    );
    const long = await request(srv, '/goals/' + 'a'.repeat(2100));
    assert.equal(long.status, 414);
    assertJson(long);
    assert.equal((await request(srv, '/status?' + 'a'.repeat(1900))).status, 200, 'just under 2 KB is fine');
    const big = await request(srv, '/status', { headers: { 'X-Filler': 'x'.repeat(10_000) } });
    assert.equal(big.status, 431);
    assert.equal((await request(srv, '/healthz')).status, 200, 'still serving');
  });
});

describe('status server: binding', () => {
  it('refuses a non-loopback host unless allowUnsafeHost', async () => {
    const store = workspace();
    for (const host of [
      '0.0.0.0',
      '::',
      '192.0.2.1',
      '10.0.0.1',
      'example.com',
      '128.0.0.1',
      '::2',
      'localhost.example',
    ]) {
      await assert.rejects(
        startStatusServer({ workspace: store.workspace, port: 0, host }),
        /not a loopback address/,
        host,
      );
    }
    assert.equal(fs.existsSync(tokenFile(store)), false, 'refused before anything is written');
    const unsafe = await serve(store, { host: '0.0.0.0', allowUnsafeHost: true });
    assert.equal((await request(unsafe, '/healthz')).status, 200);
    assert.equal(
      (await request(unsafe, '/status', { headers: { Host: 'evil.example' } })).status,
      421,
      'the Host check stays',
    );
    await unsafe.close();
  });

  it('binds 127.0.0.1 by default; other loopback spellings are accepted', async () => {
    const store = workspace();
    const srv = await serve(store);
    assert.equal(srv.url, `http://127.0.0.1:${srv.port}`);
    const local = await serve(store, { host: 'localhost' });
    assert.equal((await request(local, '/healthz')).status, 200);
    for (const h of [
      '127.0.0.1',
      '127.1.2.3',
      'localhost',
      'LocalHost',
      '::1',
      '[::1]',
      '0:0:0:0:0:0:0:1',
      '::ffff:127.0.0.1',
    ])
      assert.ok(isLoopbackHost(h), h);
    for (const h of [
      '0.0.0.0',
      '::',
      '::2',
      '1::1',
      '128.0.0.1',
      '127.0.0.1.nip.io',
      'localhost.',
      'example.com',
      '',
      '::ffff:10.0.0.1',
    ])
      assert.ok(!isLoopbackHost(h), h);
  });

  it('rejects a bad port', async () => {
    const store = workspace();
    for (const port of [-1, 65536, 1.5, NaN])
      await assert.rejects(startStatusServer({ workspace: store.workspace, port }), /port/);
  });
});

describe('status server: rate limit', () => {
  it('answers 429 with Retry-After past the per-minute budget', async () => {
    const store = workspace();
    const srv = await serve(store, { rateLimitPerMinute: 5 });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await request(srv, i % 2 ? '/healthz' : '/status')).status);
    assert.deepEqual(statuses, [200, 200, 200, 200, 200]);
    const r = await request(srv, '/status');
    assert.equal(r.status, 429);
    assertJson(r);
    const wait = Number(r.headers['retry-after']);
    assert.ok(wait >= 1 && wait <= 12, `Retry-After ${r.headers['retry-after']}`);
    assert.equal((await request(srv, '/healthz')).status, 429, 'every route counts');
    assert.equal(
      (await request(srv, '/status', { token: null })).status,
      429,
      'a request without a token counts too',
    );
  });
});

describe('status server: events', () => {
  before(() => {
    if (!fs.existsSync(path.join(REPO, 'dist', 'cli.js'))) {
      const r = spawnSync('npm', ['run', 'build'], { cwd: REPO, encoding: 'utf8', timeout: 120_000 });
      assert.equal(r.status, 0, `npm run build failed:\n${r.stdout}\n${r.stderr}`);
    }
  });

  /** Runs the built CLI in its own process. */
  function cli(store: Store, args: string[]): Promise<{ code: number | null; out: string }> {
    const env = Object.fromEntries(
      Object.entries(process.env).filter(([k]) => !k.startsWith('LOOPX_') || k === 'LOOPX_CONFIG_DIR'),
    );
    return new Promise((resolve, reject) => {
      const p = spawn(process.execPath, [BIN, '--workspace', store.workspace, ...args], {
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      p.stdout.on('data', (d) => (out += d));
      p.stderr.on('data', (d) => (out += d));
      const timer = setTimeout(() => p.kill(), 10_000);
      p.on('error', reject);
      p.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code, out });
      });
    });
  }

  it('sends a snapshot at once, then another within 2 s of a write by another process', async () => {
    const store = workspace(['alpha']);
    const srv = await serve(store);
    const sse = await openSse(srv);
    assert.equal(sse.status, 200);
    assert.equal(sse.headers['content-type'], 'text/event-stream; charset=utf-8');
    assertCommonHeaders({ status: 200, headers: sse.headers, text: '', json: undefined });
    const first = snapshotOf(await sse.waitFor((e) => e.event === 'snapshot', 2000));
    assert.deepEqual(
      first.goals.map((g) => [g.id, g.progress.total]),
      [['alpha', 0]],
    );

    const seen = sse.events.length;
    const r = await cli(store, [
      'todo',
      'add',
      '--goal-id',
      'alpha',
      '--title',
      'from another process',
      '--action',
      'true',
    ]);
    assert.equal(r.code, 0, r.out);
    const t0 = Date.now();
    const ev = await sse.waitFor(
      (e) => e.event === 'snapshot' && snapshotOf(e).goals[0]?.progress.total === 1,
      2000,
      seen,
    );
    const doc = snapshotOf(ev);
    assert.ok(Date.now() - t0 < 2000);
    assert.deepEqual(withoutGenerated(doc), withoutGenerated(statusAll(store)));

    // A goal created by another process (a new folder) shows up too.
    const seen2 = sse.events.length;
    const made = await cli(store, ['goal', 'create', '--goal-id', 'gamma', '--title', 'made elsewhere']);
    assert.equal(made.code, 0, made.out);
    await sse.waitFor(
      (e) => e.event === 'snapshot' && snapshotOf(e).goals.some((g) => g.id === 'gamma'),
      2000,
      seen2,
    );
    sse.close();
  });

  it('coalesces a burst of writes into few pushes and stays quiet when nothing changes', async () => {
    const store = workspace(['alpha']);
    const srv = await serve(store);
    const sse = await openSse(srv);
    await sse.waitFor((e) => e.event === 'snapshot', 2000);
    const start = Date.now();
    for (let i = 0; i < 20; i++)
      invoke(store, 'todo.add', { goalId: 'alpha', title: `todo ${i}`, action: 'true' }, user);
    await sse.waitFor((e) => e.event === 'snapshot' && snapshotOf(e).goals[0]?.progress.total === 20, 2000);
    const elapsed = Date.now() - start;
    const pushes = sse.events.length - 1;
    assert.ok(
      pushes <= Math.ceil(elapsed / 200) + 1,
      `${pushes} pushes in ${elapsed} ms: at most one per 200 ms`,
    );
    await new Promise((r) => setTimeout(r, 700)); // a push racing the last write may still come
    const settled = sse.events.length;
    await new Promise((r) => setTimeout(r, 1200)); // more than two polls
    assert.equal(sse.events.length, settled, 'no push without a change');
    // Writes to local/ (locks, keys) are not changes of the shared state.
    fs.writeFileSync(path.join(store.localDir, 'scratch'), 'x');
    await new Promise((r) => setTimeout(r, 700));
    assert.equal(sse.events.length, settled);
    sse.close();
  });

  it('sends heartbeats, needs the token, and caps concurrent clients (503)', async () => {
    const store = workspace();
    const srv = await serve(store, { heartbeatMs: 100 });
    const noToken = await request(srv, '/events', { token: null });
    assert.equal(noToken.status, 401);
    const streams: SseStream[] = [];
    for (let i = 0; i < 32; i++) streams.push(await openSse(srv));
    assert.ok(streams.every((s) => s.status === 200));
    await streams[0]!.waitForComment((c) => c === 'heartbeat', 2000);
    const over = await request(srv, '/events');
    assert.equal(over.status, 503);
    assertJson(over);
    assert.ok(Number(over.headers['retry-after']) > 0);
    assert.equal((await request(srv, '/status')).status, 200, 'plain requests still served');
    streams.pop()!.close();
    await new Promise((r) => setTimeout(r, 50));
    const again = await openSse(srv);
    assert.equal(again.status, 200, 'a slot freed by a client leaving is reused');
    await again.waitFor((e) => e.event === 'snapshot', 2000);
    streams.push(again);
    await srv.close();
    await new Promise((r) => setTimeout(r, 50));
    assert.ok(
      streams.every((s) => s.ended),
      'close() ends the streams',
    );
    await assert.rejects(request(srv, '/healthz'), /ECONNREFUSED/);
  });
});

describe('status server: broken goal files', () => {
  it('keeps serving: the broken goal is an error naming its file, the others are served', async () => {
    const store = workspace(['alpha', 'beta']);
    settleIndex(store); // the index vouches for beta: listing does not read its broken log
    breakGoal(store, 'beta');
    // A goal folder the index does not know, with garbage files: an older LoopX's single log, from
    // a bad merge.
    fs.mkdirSync(path.join(store.root, 'goals', 'gamma'));
    fs.writeFileSync(path.join(store.root, 'goals', 'gamma', 'events.jsonl'), 'garbage\n');
    fs.writeFileSync(path.join(store.root, 'goals', 'gamma', 'goal.json'), '[');
    const srv = await serve(store);

    const status = await request(srv, '/status');
    assert.equal(status.status, 200);
    const doc = StatusDoc.parse(status.json);
    assert.ok(doc.goals.some((g) => g.id === 'alpha'));
    assert.deepEqual(
      doc.errors.map((e) => e.goal_id),
      ['gamma'],
    );
    assert.match(doc.errors[0]!.message, /gamma[\\/]events\.jsonl:1/);

    const logOf = (id: string) =>
      id === 'gamma' ? path.join(store.goalDir(id), 'events.jsonl') : store.logPath(id);
    for (const id of ['beta', 'gamma']) {
      const r = await request(srv, `/goals/${id}`);
      assert.equal(r.status, 500, id);
      assertJson(r);
      const e = errorOf(r);
      assert.equal(e.kind, 'corrupt');
      assert.equal(e.file, logOf(id));
      assert.ok(e.message.includes(logOf(id)), e.message);
    }
    const alpha = await request(srv, '/goals/alpha');
    assert.equal(alpha.status, 200);
    assert.equal(GoalStatusDoc.parse(alpha.json).id, 'alpha');

    // With the index broken as well, every goal is read from its own files; beta is now an error too.
    writeIndex(store, '{"v":1,"goals":[{"id":');
    const all = StatusDoc.parse((await request(srv, '/status')).json);
    assert.deepEqual(
      all.goals.map((g) => g.id),
      ['alpha'],
    );
    assert.deepEqual(
      all.errors.map((e) => e.goal_id),
      ['beta', 'gamma'],
    );

    // The event stream works over broken files too.
    const sse = await openSse(srv);
    const snap = snapshotOf(await sse.waitFor((e) => e.event === 'snapshot', 2000));
    assert.deepEqual(
      snap.errors.map((e) => e.goal_id),
      ['beta', 'gamma'],
    );
    sse.close();

    // A broken policy.json breaks goal documents (they need it) but not /status or the server.
    fs.writeFileSync(store.policyPath, '{ nope');
    const pol = await request(srv, '/goals/alpha');
    assert.equal(pol.status, 500);
    assert.equal(errorOf(pol).file, store.policyPath);
    assert.equal((await request(srv, '/status')).status, 200);
    assert.equal((await request(srv, '/healthz')).status, 200);
  });
});

describe('status server: read-only', () => {
  it('no request changes a byte under .loopx/ (the token is kept in the config folder)', async () => {
    const store = workspace(['alpha', 'beta', 'gamma']);
    invoke(
      store,
      'todo.add',
      { goalId: 'alpha', todoId: 't1', title: 'deploy', action: './deploy.sh', gate: 'prod' },
      user,
    );
    breakGoal(store, 'gamma');
    fs.rmSync(store.snapshotPath('beta')); // a missing snapshot: readers rebuild it in memory, never on disk
    const hashBefore = treeHash(store);
    const localBefore = fs.readdirSync(store.localDir).sort();

    const srv = await serve(store, { heartbeatMs: 50 });
    const sse = await openSse(srv);
    await sse.waitFor((e) => e.event === 'snapshot', 2000);
    const targets = [
      '/status',
      '/goals/alpha',
      '/goals/beta',
      '/goals/gamma',
      '/goals/nope',
      '/goals/..%2F..',
      '/healthz',
      '/events?x',
      '/x',
    ];
    for (const method of ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']) {
      for (const target of targets) {
        if (target.startsWith('/events') && method === 'GET') continue; // the open stream covers it
        await request(srv, target, { method });
        await request(srv, target, { method, token: null });
        await request(srv, target, { method, body: '{"status":"closed"}' });
      }
    }
    await request(srv, '/status', { headers: { Host: 'evil.example' } });
    await new Promise((r) => setTimeout(r, 600)); // a poll runs while the stream is open
    sse.close();
    await srv.close();

    assert.equal(treeHash(store), hashBefore);
    assert.deepEqual(fs.readdirSync(store.localDir).sort(), localBefore);
    assert.ok(fs.existsSync(tokenFile(store)), 'the token was made in the config folder');
  });
});
