/**
 * The routes. `/healthz`, `/login` and `/assets/*` need no token; `/status` and `/goals/<id>`
 * are the core's `statusAll` and `goalStatus` documents; `/all` is what needs the person in every
 * workspace listed on this machine (`loopx.needs-you/1`); `/events` is the event stream; `/`,
 * `/login` and `/assets/*` are the dashboard page's (page-routes.ts).
 */
import type * as http from 'node:http';
import type { Store } from '../core/index';
import { checkId, forLogLine, goalStatus, needsYou, statusAll } from '../core/index';
import type { EventStream } from './event-stream';
import type { PageRoutes } from './page-routes';
import type { RequestGuard } from './request-guard';
import { requestPath } from './request-guard';
import { send, sendCaught, sendError } from './responses';

export function createRequestHandler(
  store: Store,
  guard: RequestGuard,
  events: EventStream,
  pages: PageRoutes,
): (req: http.IncomingMessage, res: http.ServerResponse) => void {
  return (req, res) => {
    if (guard.rejectBeforeRouting(req, res)) return;
    const pathname = requestPath(req);
    if (pathname === '/healthz') return send(res, 200, { ok: true });
    if (pages.handle(req, res, pathname)) return;
    if (guard.rejectUnauthorized(req, res)) return;

    if (pathname === '/status') {
      try {
        return send(res, 200, statusAll(store));
      } catch (e) {
        return sendCaught(res, e);
      }
    }
    if (pathname === '/all') {
      try {
        return send(res, 200, needsYou({ configDir: store.configDir }));
      } catch (e) {
        return sendCaught(res, e);
      }
    }
    if (pathname === '/events') return events.open(req, res);
    const m = /^\/goals\/([^/]*)$/.exec(pathname);
    if (m) {
      let id: string;
      try {
        id = decodeURIComponent(m[1]!);
      } catch {
        return sendError(
          res,
          400,
          'usage',
          `goal id ${JSON.stringify(forLogLine(m[1]!))} is not valid percent-encoding`,
        );
      }
      try {
        checkId(id, 'goal id');
        return send(res, 200, goalStatus(store, id));
      } catch (e) {
        return sendCaught(res, e);
      }
    }
    return sendError(
      res,
      404,
      'not_found',
      `no route ${JSON.stringify(forLogLine(pathname))}: try /, /status, /goals/<id>, /all, /events or /healthz`,
    );
  };
}
