/**
 * The JSON calls of the decision and passkey endpoints: the body of a POST the request guard let
 * through (request-guard.ts), counted while it arrives so a chunked body cannot grow past the
 * limit a Content-Length would have been held to, and the answer.
 */
import type * as http from 'node:http';
import { LoopxError, usageError } from '../core/index';
import { MAX_POST_BYTES } from './request-guard';
import { send, sendCaught, sendError } from './responses';

export function readJsonBody(req: http.IncomingMessage): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on('data', (c: Buffer) => {
      if (failed) return;
      size += c.length;
      if (size > MAX_POST_BYTES) {
        failed = true;
        reject(
          new LoopxError('usage', `a request body is at most ${MAX_POST_BYTES} bytes`, {
            reason: 'payload_too_large',
          }),
        );
        req.resume();
        return;
      }
      chunks.push(c);
    });
    req.on('error', (e) => !failed && reject(e));
    req.on('end', () => {
      if (failed) return;
      let v: unknown;
      try {
        v = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return reject(usageError('the request body is not valid JSON', { reason: 'bad_json' }));
      }
      if (!v || typeof v !== 'object' || Array.isArray(v))
        return reject(usageError('the request body must be a JSON object', { reason: 'bad_json' }));
      resolve(v as Record<string, unknown>);
    });
  });
}

/** A refusal with its own HTTP status (401 for a missing session, 410 for a spent challenge). */
export function httpRefusal(status: number, reason: string, message: string): LoopxError {
  return new LoopxError('refused', message, { reason, httpStatus: status });
}

/**
 * Answers a JSON POST: the body read and handed to `fn`, its result sent as 200 JSON (with its
 * headers, a Set-Cookie say), any error as the JSON error every route sends. Any other method is 405.
 */
export function answerPost(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  fn: (body: Record<string, unknown>) => Promise<{ body: unknown; headers?: Record<string, string> }>,
): void {
  if (req.method !== 'POST') {
    sendError(
      res,
      405,
      'method_not_allowed',
      'this endpoint takes a JSON POST from the page',
      {},
      { Allow: 'POST' },
    );
    return;
  }
  readJsonBody(req)
    .then(fn)
    .then(
      (r) => send(res, 200, r.body, r.headers),
      (e: unknown) => (res.headersSent ? void res.destroy() : sendFailure(res, e)),
    );
}

/** An error as JSON: an `httpRefusal` with its own status, any other as every route sends it. */
export function sendFailure(res: http.ServerResponse, e: unknown): void {
  const status = e instanceof LoopxError ? e.details.httpStatus : undefined;
  if (typeof status === 'number' && e instanceof LoopxError)
    return sendError(res, status, e.kind, e.message, { reason: e.reason });
  sendCaught(res, e);
}
