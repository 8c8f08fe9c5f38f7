/**
 * A webhook receiver on 127.0.0.1 for the notification tests, and waiting on what it (or a sender's
 * output) sees without polling: every arrival emits `changed`.
 */
import { EventEmitter } from 'node:events';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

/** Anything the test waits on happened: a request arrived, a sender wrote a line. */
export const changed = new EventEmitter();
changed.setMaxListeners(50);

/** Resolves once `check` holds, looked at on each change; fails after `ms` naming `what`. */
export function waitFor(what: string, check: () => boolean, ms = 30_000, more = () => ''): Promise<void> {
  return new Promise((resolve, reject) => {
    const look = () => {
      if (!check()) return;
      done();
      resolve();
    };
    const timer = setTimeout(() => {
      done();
      reject(new Error(`timed out after ${ms} ms waiting for ${what}\n${more()}`));
    }, ms);
    const done = () => {
      clearTimeout(timer);
      changed.off('change', look);
    };
    changed.on('change', look);
    look();
  });
}

export interface Got {
  path: string;
  body: string;
  json: Record<string, unknown>;
}

/** The receiver: every request kept; `/bad` answers 500, the rest 200. */
export function receiver(): Promise<{ got: Got[]; base: string; close(): void }> {
  const got: Got[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (c: string) => (body += c));
    req.on('end', () => {
      got.push({ path: req.url ?? '', body, json: JSON.parse(body) as Record<string, unknown> });
      res.statusCode = req.url === '/bad' ? 500 : 200;
      res.end();
      changed.emit('change');
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({ got, base: `http://127.0.0.1:${port}`, close: () => server.close() });
    }),
  );
}
