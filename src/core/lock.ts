/**
 * An inter-process lock on a file created with O_EXCL. Synchronous on purpose: every write to a
 * goal is short (one append, one rename), and a synchronous critical section cannot be
 * interleaved with other work of the same process.
 *
 * A lock whose holder died is stale: same host and the pid is gone, or older than `staleMs`
 * (a holder on another host, or a pid reused). Breaking one renames it aside first, so of two
 * processes that both found it stale only one removes it; the other sees ENOENT and retries.
 */
import * as fs from 'node:fs';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { conflict } from './errors';

export interface LockOptions {
  timeoutMs?: number;
  staleMs?: number;
}

interface LockOwner {
  pid: number;
  host: string;
  nonce: string;
  at: number;
}

const sleepCell = new Int32Array(new SharedArrayBuffer(4));
function sleepMs(ms: number) {
  Atomics.wait(sleepCell, 0, 0, ms);
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readOwner(path: string): LockOwner | undefined {
  try {
    const o = JSON.parse(fs.readFileSync(path, 'utf8')) as LockOwner;
    return typeof o.pid === 'number' && typeof o.at === 'number' ? o : undefined;
  } catch {
    return undefined;
  }
}

function isStale(path: string, staleMs: number): boolean {
  const owner = readOwner(path);
  if (owner) {
    if (owner.host === hostname() && !pidAlive(owner.pid)) return true;
    return Date.now() - owner.at > staleMs;
  }
  // Unreadable or half-written: the creator may be between open and write, so judge by age.
  try {
    return Date.now() - fs.statSync(path).mtimeMs > Math.min(staleMs, 2000);
  } catch {
    return false;
  }
}

/** Takes the lock, runs `fn`, releases the lock (also when `fn` throws). */
export function withLock<T>(path: string, fn: () => T, opts: LockOptions = {}): T {
  const release = acquireLock(path, opts);
  try {
    return fn();
  } finally {
    release();
  }
}

export function acquireLock(
  path: string,
  { timeoutMs = 15000, staleMs = 30000 }: LockOptions = {},
): () => void {
  const owner: LockOwner = {
    pid: process.pid,
    host: hostname(),
    nonce: randomBytes(8).toString('hex'),
    at: Date.now(),
  };
  const body = JSON.stringify(owner);
  const deadline = Date.now() + timeoutMs;
  let wait = 0.25;
  for (;;) {
    try {
      const fd = fs.openSync(path, 'wx', 0o600);
      try {
        fs.writeSync(fd, body);
      } finally {
        fs.closeSync(fd);
      }
      return () => {
        // Remove only our own lock: if it was broken as stale and taken by another, leave it.
        const now = readOwner(path);
        if (now?.nonce === owner.nonce) fs.rmSync(path, { force: true });
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    if (isStale(path, staleMs)) {
      const aside = `${path}.stale-${owner.nonce}`;
      try {
        fs.renameSync(path, aside);
        fs.rmSync(aside, { force: true });
      } catch {
        /* another process broke it first */
      }
      continue;
    }
    if (Date.now() > deadline) {
      const o = readOwner(path);
      throw conflict(
        `could not take the lock ${path} within ${timeoutMs} ms` +
          (o ? `: held by process ${o.pid} on ${o.host} since ${new Date(o.at).toISOString()}` : ''),
        { lock: path },
      );
    }
    // Jittered backoff keeps many waiting writers from waking in lock-step.
    sleepMs(wait + Math.random() * wait);
    wait = Math.min(wait * 2, 2);
  }
}
