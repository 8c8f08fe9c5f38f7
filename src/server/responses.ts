/**
 * How the status server answers: JSON bodies with the security headers every response carries,
 * errors as `{"error":{status,kind,message,...}}`, and the bare-socket answer for requests Node
 * could not parse.
 */
import * as http from 'node:http';
import type { Duplex } from 'node:stream';
import { errorReport, LoopxError } from '../core/index';

export const SECURITY_HEADERS: Record<string, string> = {
  'X-Content-Type-Options': 'nosniff',
  'Cache-Control': 'no-store',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'",
  'Cross-Origin-Resource-Policy': 'same-origin',
};
const JSON_TYPE = 'application/json; charset=utf-8';

function httpStatusOf(e: unknown): number {
  if (!(e instanceof LoopxError)) return 500;
  switch (e.kind) {
    case 'usage':
      return 400;
    case 'not_found':
      return 404;
    case 'refused':
      return 403;
    case 'conflict':
      return 409;
    case 'storage':
      return 507;
    default:
      return 500;
  }
}

export function send(
  res: http.ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
) {
  const text = JSON.stringify(body) + '\n';
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    'Content-Type': JSON_TYPE,
    'Content-Length': String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}

export function sendError(
  res: http.ServerResponse,
  status: number,
  kind: string,
  message: string,
  extra: Record<string, unknown> = {},
  headers: Record<string, string> = {},
) {
  send(res, status, errorBody(status, kind, message, extra), headers);
}

/** Every error answer's body; the reason code is the kind unless `extra` names one. */
function errorBody(status: number, kind: string, message: string, extra: Record<string, unknown> = {}) {
  return { error: { status, kind, reason: kind, message, ...extra } };
}

export function sendCaught(res: http.ServerResponse, e: unknown) {
  // The reason code (e.g. `goal_moved`) next to the kind, for programs; file, line, goal, field when known.
  const { kind, message, ...extra } = errorReport(e);
  sendError(res, httpStatusOf(e), kind, message, extra);
}

/** Answers a request Node rejected before it became one (no `ServerResponse` exists) and closes. */
export function endWithClientError(socket: Duplex, status: number) {
  const body =
    JSON.stringify(errorBody(status, 'bad_request', http.STATUS_CODES[status] ?? 'bad request')) + '\n';
  socket.end(
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Type: ${JSON_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `X-Content-Type-Options: nosniff\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** A small HTML page of fixed text (no workspace data ever goes into one). */
export function sendHtml(
  res: http.ServerResponse,
  status: number,
  html: string,
  headers: Record<string, string> = {},
) {
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(html)),
    ...headers,
  });
  res.end(html);
}
