/**
 * `/events`: Server-Sent Events. `event: snapshot` with the status document at once, then again
 * whenever the store changes; `: heartbeat` every `heartbeatMs`. The store is watched only while
 * a client is connected.
 */
import type * as http from 'node:http';
import type { Store } from '../core/index';
import { errorReport, statusAll } from '../core/index';
import { SECURITY_HEADERS, sendError } from './responses';
import { createStoreWatcher } from './store-watcher';

/** An SSE client that lets this much pile up unread is dropped. */
const MAX_SSE_BACKLOG_BYTES = 4 * 1024 * 1024;

interface SseClient {
  res: http.ServerResponse;
}

export interface EventStream {
  open(req: http.IncomingMessage, res: http.ServerResponse): void;
  /** Ends every stream and stops watching. */
  close(): void;
}

export function createEventStream(
  store: Store,
  opts: { maxClients: number; heartbeatMs: number },
): EventStream {
  const clients = new Set<SseClient>();
  let eventSeq = 0;
  let heartbeatTimer: NodeJS.Timeout | undefined;
  const watcher = createStoreWatcher(store, () => {
    const chunk = snapshotFrame();
    for (const c of clients) writeTo(c, chunk);
  });

  function frame(event: string, data: unknown): string {
    // JSON.stringify escapes newlines inside strings, so the data is one line.
    return `event: ${event}\nid: ${++eventSeq}\ndata: ${JSON.stringify(data)}\n\n`;
  }

  function snapshotFrame(): string {
    try {
      return frame('snapshot', statusAll(store));
    } catch (e) {
      return frame('error', { error: errorReport(e) });
    }
  }

  function writeTo(c: SseClient, chunk: string) {
    if (c.res.destroyed) return;
    c.res.write(chunk);
    if (c.res.writableLength > MAX_SSE_BACKLOG_BYTES) c.res.destroy(); // a reader that stopped reading
  }

  function startWatching() {
    watcher.start();
    heartbeatTimer ??= setInterval(() => {
      for (const c of clients) writeTo(c, ': heartbeat\n\n');
    }, opts.heartbeatMs);
  }

  function stopWatching() {
    watcher.stop();
    if (heartbeatTimer) clearInterval(heartbeatTimer);
    heartbeatTimer = undefined;
  }

  function open(req: http.IncomingMessage, res: http.ServerResponse) {
    if (clients.size >= opts.maxClients) {
      sendError(
        res,
        503,
        'busy',
        `too many event stream clients (${opts.maxClients}); try again later`,
        {},
        { 'Retry-After': '5' },
      );
      return;
    }
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      'Content-Type': 'text/event-stream; charset=utf-8',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    res.socket?.setNoDelay(true);
    const client: SseClient = { res };
    clients.add(client);
    startWatching(); // before the first document, so a change made meanwhile is pushed after it
    res.write('retry: 2000\n\n');
    writeTo(client, snapshotFrame());
    res.on('close', () => {
      clients.delete(client);
      if (clients.size === 0) stopWatching();
    });
  }

  return {
    open,
    close() {
      stopWatching();
      for (const c of clients) c.res.end();
      clients.clear();
    },
  };
}
