/**
 * The status server under abuse. It runs as its own process, the way a person starts it
 * (`loopx --format json status-server --port 0`, the BUILT command, default limits), so its
 * memory can be read from /proc before and after: malformed and oversized requests over raw
 * sockets, slowloris clients trickling headers for a bounded time, 200 concurrent clients, the
 * 32 SSE streams it allows (and the ones over the limit), and wrong tokens at a high rate. All
 * along it keeps answering /healthz, its RSS stays bounded, and no byte of `.loopx/` (minus
 * `local/`) changes because of it.
 *
 * The abuse comes from other loopback addresses (127.0.0.2-9) than the health checks
 * (127.0.0.1): the rate limit is per address, and that is the point of it.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as path from 'node:path';
import { Store } from '../../src/core/store/store';
import { invoke } from '../../src/core/capabilities/registry';
import {
  BIN,
  Budget,
  cleanEnv,
  figure,
  hashTree,
  procMemory,
  removeTempDirs,
  requireBuilt,
  rssMb,
  sleep,
  tempDir,
} from '../helpers/reliability';
import { human } from '../helpers/store';

let ws = '';
let store: Store;
let child: ChildProcess;
let port = 0;
let token = '';
let stderr = '';
let hostHeader = '';
let loopxHash: Record<string, string> = {};
const mem: { label: string; rss: number; hwm: number }[] = [];

after(() => {
  child?.kill('SIGKILL');
  removeTempDirs();
});

function memory(label: string) {
  const m = procMemory(child.pid!);
  mem.push({ label, ...m });
  return m;
}

/** `.loopx/` minus `local/`, as the server must leave it. */
const loopxNow = () => hashTree(path.join(ws, '.loopx'), ['local']);

interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  ms: number;
}

/** One request on a fresh connection from `from` (a loopback address). */
function request(
  target: string,
  o: {
    from?: string;
    token?: string | null;
    method?: string;
    headers?: Record<string, string>;
    timeoutMs?: number;
  } = {},
): Promise<Reply> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { Host: hostHeader, ...o.headers };
    const tok = o.token === undefined ? token : o.token;
    if (tok !== null) headers.Authorization = `Bearer ${tok}`;
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: target,
        method: o.method ?? 'GET',
        headers,
        agent: false,
        localAddress: o.from ?? '127.0.0.1',
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
            ms: performance.now() - t0,
          }),
        );
        res.on('error', reject);
      },
    );
    req.setTimeout(o.timeoutMs ?? 10_000, () =>
      req.destroy(new Error(`no answer to ${target} in ${o.timeoutMs ?? 10_000} ms`)),
    );
    req.on('error', reject);
    req.end();
  });
}

/** /healthz from 127.0.0.1 answers 200 quickly. */
async function healthy(where: string, maxMs = 3000) {
  const r = await request('/healthz', { token: null, timeoutMs: maxMs });
  assert.equal(r.status, 200, `${where}: /healthz answered ${r.status}`);
  assert.deepEqual(JSON.parse(r.body), { ok: true });
  return r.ms;
}

/** Writes raw bytes from `from` and reads until the server closes (or `ms`). */
function raw(
  data: Buffer | string | (Buffer | string)[],
  o: { from?: string; ms?: number } = {},
): Promise<{ text: string; closedByServer: boolean }> {
  return new Promise((resolve) => {
    const sock = net.connect({ host: '127.0.0.1', port, localAddress: o.from ?? '127.0.0.2' });
    const chunks: Buffer[] = [];
    let closedByServer = false;
    const timer = setTimeout(() => sock.destroy(), o.ms ?? 8000);
    sock.on('data', (c) => chunks.push(c));
    sock.on('end', () => (closedByServer = true));
    sock.on('close', () => {
      clearTimeout(timer);
      resolve({ text: Buffer.concat(chunks).toString('latin1'), closedByServer });
    });
    sock.on('error', () => undefined);
    for (const d of Array.isArray(data) ? data : [data]) sock.write(d);
  });
}

const statusOf = (text: string) => Number(/^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1] ?? 0);

before(async () => {
  requireBuilt();
  ws = tempDir('loopx-abuse-');
  store = Store.init(ws);
  for (const g of ['alpha', 'beta', 'gamma']) {
    invoke(store, 'goal.create', { goalId: g, title: `Goal ${g}` }, human);
    for (let i = 0; i < 10; i++)
      invoke(
        store,
        'todo.add',
        { goalId: g, todoId: `t${i}`, title: `todo ${i}`, action: `echo ${i}` },
        human,
      );
  }
  loopxHash = loopxNow();
  child = spawn(
    process.execPath,
    [BIN, '--workspace', ws, '--format', 'json', 'status-server', '--port', '0'],
    { cwd: ws, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr = (stderr + c).slice(-200_000)));
  let out = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`the status server did not start in 30 s: ${stderr}`)),
      30_000,
    );
    child.stdout!.setEncoding('utf8').on('data', (c: string) => {
      out += c;
      try {
        const info = JSON.parse(out) as { port: number; token: string };
        port = info.port;
        token = info.token;
        clearTimeout(timer);
        resolve();
      } catch {
        /* not all of it yet */
      }
    });
    child.on('exit', (code) => reject(new Error(`the status server exited with ${code}: ${stderr}`)));
  });
  hostHeader = `127.0.0.1:${port}`;
  // Warm up (first requests compile code and fill caches), then the baseline.
  for (let i = 0; i < 30; i++) await request(i % 2 ? '/status' : '/goals/alpha');
  memory('baseline');
});

describe('the status server under abuse (a `loopx status-server` process)', { concurrency: 1 }, () => {
  it(
    'malformed and oversized requests: each gets a 4xx or a closed connection, never a crash',
    { timeout: 60_000 },
    async (t) => {
      const H = `Host: ${hostHeader}\r\n`;
      const A = `Authorization: Bearer ${token}\r\n`;
      const cases: [string, (Buffer | string)[]][] = [
        ['garbage request line', ['GARBAGE\r\n\r\n']],
        ['method only', ['GET\r\n\r\n']],
        ['unknown HTTP version', [`GET /status HTTP/9.9\r\n${H}${A}\r\n`]],
        ['binary junk', [Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) % 256))]],
        ['NUL in the request line', [`GET /sta\u0000tus HTTP/1.1\r\n${H}${A}\r\n`]],
        ['header without a colon', [`GET /status HTTP/1.1\r\n${H}${A}NoColonHere\r\n\r\n`]],
        ['a 20 KB header', [`GET /status HTTP/1.1\r\n${H}${A}X-Big: ${'a'.repeat(20_000)}\r\n\r\n`]],
        [
          '500 short headers (Node keeps 64, ignores the rest)',
          [
            `GET /status HTTP/1.1\r\n${H}${A}${Array.from({ length: 500 }, (_, i) => `X${i}: v\r\n`).join('')}\r\n`,
          ],
        ],
        [
          '2,000 headers (over 8 KB)',
          [
            `GET /status HTTP/1.1\r\n${H}${A}${Array.from({ length: 2000 }, (_, i) => `X-H${i}: v\r\n`).join('')}\r\n`,
          ],
        ],
        ['a 100 KB URL', [`GET /${'u'.repeat(100_000)} HTTP/1.1\r\n${H}${A}\r\n`]],
        ['a 3 KB URL', [`GET /goals/${'u'.repeat(3000)} HTTP/1.1\r\n${H}${A}\r\n`]],
        ['negative Content-Length', [`GET /status HTTP/1.1\r\n${H}${A}Content-Length: -1\r\n\r\n`]],
        ['huge Content-Length', [`GET /status HTTP/1.1\r\n${H}${A}Content-Length: 99999999999999\r\n\r\n`]],
        [
          'Content-Length and chunked (smuggling)',
          [
            `GET /status HTTP/1.1\r\n${H}${A}Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /status HTTP/1.1\r\n${H}\r\n`,
          ],
        ],
        [
          'two Content-Lengths',
          [`GET /status HTTP/1.1\r\n${H}${A}Content-Length: 1\r\nContent-Length: 2\r\n\r\nab`],
        ],
        ['a body on GET', [`GET /status HTTP/1.1\r\n${H}${A}Content-Length: 5\r\n\r\nhello`]],
        [
          'a 5 MB POST',
          [
            `POST /status HTTP/1.1\r\n${H}${A}Content-Length: ${5 * 1024 * 1024}\r\n\r\n`,
            Buffer.alloc(5 * 1024 * 1024, 0x61),
          ],
        ],
        [
          'a 2 MB chunked PUT',
          [
            `PUT /status HTTP/1.1\r\n${H}${A}Transfer-Encoding: chunked\r\n\r\n200000\r\n`,
            Buffer.alloc(0x200000, 0x62),
            '\r\n0\r\n\r\n',
          ],
        ],
        ['CONNECT', [`CONNECT example.com:443 HTTP/1.1\r\n${H}${A}\r\n`]],
        ['TRACE', [`TRACE /status HTTP/1.1\r\n${H}${A}\r\n`]],
        ['DELETE', [`DELETE /goals/alpha HTTP/1.1\r\n${H}${A}\r\n`]],
        ['an absolute-form target', [`GET http://evil.example/status HTTP/1.1\r\n${H}${A}\r\n`]],
        ['an asterisk target', [`OPTIONS * HTTP/1.1\r\n${H}${A}\r\n`]],
        ['HTTP/1.0 without Host', [`GET /status HTTP/1.0\r\n${A}\r\n`]],
        ['a wrong Host', [`GET /status HTTP/1.1\r\nHost: evil.example\r\n${A}\r\n`]],
        ['a foreign Origin', [`GET /status HTTP/1.1\r\n${H}${A}Origin: http://evil.example\r\n\r\n`]],
        [
          '100 pipelined requests',
          [Array.from({ length: 100 }, () => `GET /healthz HTTP/1.1\r\n${H}\r\n`).join('')],
        ],
        ['a bare LF request', [`GET /status HTTP/1.1\n${H.replace('\r', '')}${A.replace('\r', '')}\n`]],
        ['half a request, then close', [`GET /status HTTP/1.1\r\n${H}`]],
      ];
      // Requests that are valid after all: extra headers are dropped by Node, a bare LF is tolerated.
      const fine = new Set(['500 short headers (Node keeps 64, ignores the rest)', 'a bare LF request']);
      const statuses: Record<string, number> = {};
      const results = await Promise.all(
        cases.map(([, data], i) => raw(data, { from: `127.0.0.${2 + (i % 3)}`, ms: 8000 })),
      );
      for (const [i, [name]] of cases.entries()) {
        const { text } = results[i]!;
        const status = statusOf(text);
        statuses[status] = (statuses[status] ?? 0) + 1;
        if (name === '100 pipelined requests') {
          assert.equal((text.match(/HTTP\/1\.1 200 /g) ?? []).length, 100, `${name}: every one answered`);
          continue;
        }
        if (name === 'half a request, then close') continue; // the socket is closed by the timer; the server just forgets it
        // A refusal, or (for a request line Node's parser rejects outright) a closed connection.
        if (fine.has(name))
          assert.ok(
            status === 200 || (status >= 400 && status < 500),
            `${name}: answered ${status}: ${text.slice(0, 200)}`,
          );
        else
          assert.ok(
            status === 0 || (status >= 400 && status < 500),
            `${name}: answered ${status}: ${text.slice(0, 200)}`,
          );
        assert.ok(!/^\s+at /m.test(text), `${name}: a stack trace`);
      }
      await healthy('after the malformed requests');
      assert.deepEqual(loopxNow(), loopxHash, '.loopx/ changed');
      const m = memory('after malformed');
      figure(
        t,
        `status server/malformed: ${cases.length} kinds of malformed or oversized request (5 MB and 2 MB bodies, 100 KB URL, 20 KB header, 500 and 2,000 headers, smuggling, 100 pipelined); statuses ${JSON.stringify(statuses)} (0 = closed by the parser); RSS ${rssMb(m.rss)} MB`,
      );
    },
  );

  it(
    'slowloris: 100 clients trickling headers are cut off after the headers timeout, /healthz answers all along (bounded: 12 s)',
    { timeout: 60_000 },
    async (t) => {
      const SLOW = 100;
      const budget = new Budget(12_000);
      const t0 = performance.now();
      const closedAt: number[] = [];
      const got408: boolean[] = [];
      const socks: net.Socket[] = [];
      for (let i = 0; i < SLOW; i++) {
        const sock = net.connect({ host: '127.0.0.1', port, localAddress: `127.0.0.${3 + (i % 4)}` });
        let text = '';
        sock.on('data', (c) => (text += c.toString('latin1')));
        sock.on('error', () => undefined);
        sock.on('close', () => {
          closedAt.push(performance.now() - t0);
          got408.push(/^HTTP\/1\.1 408 /.test(text));
        });
        sock.write(`GET /status HTTP/1.1\r\nHost: ${hostHeader}\r\n`);
        socks.push(sock);
      }
      const healthMs: number[] = [];
      while (!budget.over && closedAt.length < SLOW) {
        for (const s of socks) if (!s.destroyed) s.write('X'); // one byte per client per 500 ms
        healthMs.push(await healthy('during slowloris', 2000));
        await sleep(500);
      }
      for (const s of socks) s.destroy();
      await sleep(100);
      const sorted = [...closedAt].sort((a, b) => a - b);
      // headersTimeout is 5 s; allow the check interval and a loaded machine on top.
      const byServer = sorted.filter((ms) => ms < budget.ms).length;
      assert.equal(
        byServer,
        SLOW,
        `only ${byServer} of ${SLOW} slow clients were cut off within ${budget.ms / 1000} s (the last after ${((sorted.at(-1) ?? 0) / 1000).toFixed(1)} s)`,
      );
      assert.ok(
        got408.filter(Boolean).length >= SLOW * 0.9,
        `${got408.filter(Boolean).length} of ${SLOW} got a 408`,
      );
      await healthy('after slowloris');
      const m = memory('after slowloris');
      figure(
        t,
        `status server/slowloris: ${SLOW} slow clients all cut off (408) between ${(sorted[0]! / 1000).toFixed(1)} and ${(sorted.at(-1)! / 1000).toFixed(1)} s; /healthz during it: ${healthMs.length} checks, slowest ${Math.max(...healthMs).toFixed(0)} ms; RSS ${rssMb(m.rss)} MB`,
      );
    },
  );

  it(
    '200 concurrent clients: all answered (/status and /goals/<id>), /healthz stays quick',
    { timeout: 60_000 },
    async (t) => {
      const t0 = performance.now();
      const replies = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          request(i % 2 ? '/status' : `/goals/${['alpha', 'beta', 'gamma'][i % 3]}`, {
            from: `127.0.0.${10 + (i % 5)}`,
            timeoutMs: 30_000,
          }),
        ),
      );
      const wall = performance.now() - t0;
      for (const r of replies) assert.equal(r.status, 200, r.body.slice(0, 200));
      for (const r of replies.filter((_, i) => i % 2))
        assert.equal((JSON.parse(r.body) as { goals: unknown[] }).goals.length, 3);
      const ms = replies.map((r) => r.ms).sort((a, b) => a - b);
      await healthy('after 200 concurrent clients');
      const m = memory('after 200 concurrent');
      figure(
        t,
        `status server/concurrency: 200 concurrent requests answered in ${wall.toFixed(0)} ms (median ${ms[100]!.toFixed(0)} ms, slowest ${ms[199]!.toFixed(0)} ms); RSS ${rssMb(m.rss)} MB`,
      );
    },
  );

  it(
    'SSE: 32 streams get a snapshot and every change, the 33rd to 40th get 503, closed slots are reused',
    { timeout: 60_000 },
    async (t) => {
      interface Stream {
        status: number;
        snapshots: number;
        req: http.ClientRequest;
      }
      const open = (from: string) =>
        new Promise<Stream>((resolve, reject) => {
          const req = http.request(
            {
              host: '127.0.0.1',
              port,
              path: '/events',
              headers: { Host: hostHeader, Authorization: `Bearer ${token}` },
              agent: false,
              localAddress: from,
            },
            (res) => {
              const s: Stream = { status: res.statusCode ?? 0, snapshots: 0, req };
              res.setEncoding('utf8');
              res.on('data', (c: string) => (s.snapshots += (c.match(/^event: snapshot$/gm) ?? []).length));
              res.on('error', () => undefined);
              resolve(s);
            },
          );
          req.on('error', reject);
          req.end();
        });
      const streams: Stream[] = [];
      for (let i = 0; i < 40; i++) streams.push(await open(`127.0.0.${20 + (i % 5)}`));
      const ok = streams.filter((s) => s.status === 200);
      const busy = streams.filter((s) => s.status === 503);
      assert.equal(ok.length, 32, `${ok.length} streams accepted`);
      assert.equal(busy.length, 8, `${busy.length} refused with 503`);
      for (const s of busy) s.req.destroy();
      const deadline = Date.now() + 10_000;
      while (ok.some((s) => s.snapshots < 1) && Date.now() < deadline) await sleep(100);
      assert.ok(
        ok.every((s) => s.snapshots >= 1),
        'every stream got its first snapshot',
      );
      await healthy('with 32 streams open');
      // A change (made here, through the core, like any writer) reaches all 32.
      assert.deepEqual(loopxNow(), loopxHash, '.loopx/ changed before our own write');
      invoke(
        store,
        'todo.add',
        { goalId: 'alpha', todoId: 'pushed', title: 'pushed to every stream' },
        human,
      );
      loopxHash = loopxNow(); // our write; from here on the server must again change nothing
      const pushed = Date.now() + 15_000;
      while (ok.some((s) => s.snapshots < 2) && Date.now() < pushed) await sleep(100);
      assert.ok(
        ok.every((s) => s.snapshots >= 2),
        `${ok.filter((s) => s.snapshots >= 2).length} of 32 streams got the change`,
      );
      const m = memory('with 32 SSE streams');
      for (const s of ok) s.req.destroy();
      await sleep(300);
      const again = await open('127.0.0.25');
      assert.equal(again.status, 200, 'a slot is free again once streams close');
      again.req.destroy();
      await healthy('after the streams');
      figure(
        t,
        `status server/SSE: 40 streams asked, 32 served and 8 refused (503); one change pushed to all 32; RSS with 32 open ${rssMb(m.rss)} MB`,
      );
    },
  );

  it(
    'wrong tokens at a high rate (2,000 requests, bounded to 20 s): 401 then 429, valid clients and /healthz unaffected',
    { timeout: 60_000 },
    async (t) => {
      const budget = new Budget(20_000);
      const agent = new http.Agent({
        keepAlive: true,
        maxSockets: 32,
        localAddress: '127.0.0.30',
      } as http.AgentOptions);
      const counts: Record<number, number> = {};
      let sent = 0;
      const t0 = performance.now();
      const one = () =>
        new Promise<void>((resolve) => {
          const req = http.request(
            {
              host: '127.0.0.1',
              port,
              path: sent % 2 ? '/status' : '/events',
              headers: { Host: hostHeader, Authorization: `Bearer wrong-${sent}-${'x'.repeat(sent % 64)}` },
              agent,
            },
            (res) => {
              counts[res.statusCode ?? 0] = (counts[res.statusCode ?? 0] ?? 0) + 1;
              res.resume();
              res.on('end', resolve);
            },
          );
          req.on('error', () => {
            counts[-1] = (counts[-1] ?? 0) + 1;
            resolve();
          });
          req.end();
        });
      const healthMs: number[] = [];
      while (sent < 2000 && !budget.over) {
        const batch = Array.from({ length: Math.min(100, 2000 - sent) }, () => {
          sent++;
          return one();
        });
        await Promise.all(batch);
        if (sent % 500 === 0) {
          healthMs.push(await healthy('during the wrong-token flood'));
          const good = await request('/status', { from: '127.0.0.31' });
          assert.equal(good.status, 200, 'a client with the right token from another address is served');
        }
      }
      agent.destroy();
      const rate = sent / ((performance.now() - t0) / 1000);
      assert.ok(sent >= 500, `only ${sent} requests in the time budget`);
      assert.ok(
        (counts[401] ?? 0) > 0 && (counts[429] ?? 0) > 0,
        `401s then 429s: ${JSON.stringify(counts)}`,
      );
      assert.equal(
        (counts[401] ?? 0) + (counts[429] ?? 0),
        sent,
        `only 401 and 429: ${JSON.stringify(counts)}`,
      );
      // The bucket holds 600 and refills at 10 a second: that many guesses, and not one more.
      const allowed = 600 + Math.ceil(((performance.now() - t0) / 1000) * 10) + 5;
      assert.ok(
        (counts[401] ?? 0) <= allowed,
        `the rate limit (600 a minute per address) let ${counts[401]} guesses through (at most ${allowed} expected)`,
      );
      await healthy('after the flood');
      const m = memory('after the token flood');
      figure(
        t,
        `status server/wrong tokens: ${sent} requests at ${rate.toFixed(0)}/s from one address: ${counts[401] ?? 0} x 401 then ${counts[429] ?? 0} x 429; /healthz and a valid client from other addresses served throughout; RSS ${rssMb(m.rss)} MB`,
      );
    },
  );

  it('RSS stayed bounded, the process is alive, and .loopx/ (minus local/) was never written', (t) => {
    assert.equal(child.exitCode, null, `the server exited: ${stderr.slice(-2000)}`);
    assert.ok(
      !/^\s+at .+:\d+:\d+\)?$/m.test(stderr),
      `a stack trace on the server's stderr: ${stderr.slice(-2000)}`,
    );
    assert.deepEqual(loopxNow(), loopxHash, 'the server wrote to .loopx/');
    const first = mem[0]!;
    const last = memory('end');
    const growth = last.rss - first.rss;
    figure(
      t,
      `status server/memory: ${mem.map((m) => `${m.label} ${rssMb(m.rss)} MB`).join(', ')}; peak (VmHWM) ${rssMb(last.hwm)} MB; growth ${rssMb(growth)} MB`,
    );
    assert.ok(
      growth < 64 * 1024 * 1024,
      `RSS grew by ${rssMb(growth)} MB (from ${rssMb(first.rss)} to ${rssMb(last.rss)})`,
    );
    assert.ok(last.hwm < 400 * 1024 * 1024, `peak RSS ${rssMb(last.hwm)} MB`);
    assert.ok(
      !fs.existsSync(path.join(ws, '.loopx', 'local', 'status-token')),
      'the token is kept in the config folder, not in the workspace',
    );
  });
});
