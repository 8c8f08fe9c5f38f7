/**
 * `loopx status-server --login-link`: a fresh login link for a server already running on this
 * machine. The code is minted from the token in the config folder (login.ts), so the server is
 * asked nothing but whether it is there (`/healthz`) and whether it is this workspace's (`HEAD
 * /status` with the token); both on loopback only.
 */
import * as http from 'node:http';
import type { Store } from '../core/index';
import { LoopxError, notFound, refused } from '../core/index';
import { LOGIN_CODE_TTL_MS, loginUrl } from './login';
import { readOrCreateToken } from './token';

export interface LoginLink {
  schema: 'loopx.login-link/1';
  url: string;
  expires_at: string;
}

function get(port: number, path: string, method: string, token?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path,
        method,
        agent: false,
        timeout: 3000,
        headers: {
          Host: `127.0.0.1:${port}`,
          ...(token ? { Authorization: `Bearer ${token}` } : {}),
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end();
  });
}

export async function loginLinkFor(store: Store, port: number, nowMs = Date.now()): Promise<LoginLink> {
  const start = `start one with \`loopx status-server --port ${port}\` (or pass the --port it runs on)`;
  let health: number;
  try {
    health = await get(port, '/healthz', 'GET');
  } catch (e) {
    throw notFound(
      `nothing answers on 127.0.0.1:${port} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}): ${start}`,
      { reason: 'status_server_not_running', port },
    );
  }
  if (health !== 200)
    throw notFound(
      `what answers on 127.0.0.1:${port} is not a LoopX status server (/healthz: ${health}): ${start}`,
      {
        reason: 'status_server_not_running',
        port,
      },
    );
  const token = readOrCreateToken(store);
  const status = await get(port, '/status', 'HEAD', token).catch(() => 0);
  if (status === 401)
    throw refused(
      `the status server on port ${port} serves another workspace (it does not take this workspace's token): run this in its workspace, or pass its --port`,
      { reason: 'status_server_other_workspace', port },
    );
  if (status !== 200)
    throw new LoopxError('internal', `the status server on port ${port} answered ${status} for /status`, {
      reason: 'status_server_unhealthy',
      port,
    });
  return {
    schema: 'loopx.login-link/1',
    url: loginUrl(`http://127.0.0.1:${port}`, token, nowMs),
    expires_at: new Date(nowMs + LOGIN_CODE_TTL_MS).toISOString(),
  };
}
