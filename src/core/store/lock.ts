/**
 * The inter-process lock of a goal (and of the goal index): a lock the kernel keeps on an open
 * file (an open file description lock, `F_OFD_SETLK` on Linux, `flock` on macOS, `LockFileEx` on
 * Windows, through fs-native-extensions). Nothing about its holder is guessed: no clock, no pid,
 * no file age. The kernel releases it when the holder's last descriptor closes, so a holder that
 * dies frees it at once, and a holder that is stopped (SIGSTOP, a suspended VM) keeps it until it
 * goes on or dies: the others wait, then report who holds it. It works across PID namespaces and
 * clock jumps because it is one kernel's record of one inode.
 *
 * The lock file is never removed (a removed file could be locked anew by one process while
 * another holds the old inode): it holds only who last took it, for messages. A holder checks
 * that the file at the lock's path is still the one it locked (`assertHeld`) before it writes.
 *
 * Synchronous on purpose: every write to a goal is short (one append, one rename), and a
 * synchronous critical section cannot be interleaved with other work of the same process.
 *
 * Where the kernel lock cannot be loaded (a platform without a prebuilt binding), the exclusive
 * file of store/lock-file.ts stands in, with its rules for stale locks; `lockKind` says which.
 */
import * as fs from 'node:fs';
import { hostname } from 'node:os';
import * as nodePath from 'node:path';
import { conflict, LoopxError } from '../model';
import { writeAll } from './disk-write';
import * as fileLock from './lock-file';
import { mkdirStore, openStoreFile, readStoreFile } from './safe-path';
import { sleepMs } from './sleep';

export { STALE_CHECK_MS } from './lock-file';

export interface LockOptions {
  timeoutMs?: number;
}

interface KernelLocks {
  tryLock(fd: number): boolean;
}

let kernel: KernelLocks | null | undefined;
let kernelProblem: string | undefined;

function kernelLocks(): KernelLocks | null {
  if (kernel !== undefined) return kernel;
  // For a file system whose kernel locks do not work (and to test the stand-in): LOOPX_LOCK=file.
  if (process.env.LOOPX_LOCK === 'file') {
    kernelProblem = 'LOOPX_LOCK=file';
    return (kernel = null);
  }
  try {
    // Loaded on first use: a call that never writes never loads the binding.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const native = require('fs-native-extensions') as { tryLock(fd: number): boolean };
    kernel = { tryLock: (fd) => native.tryLock(fd) };
  } catch (e) {
    kernelProblem = (e as Error).message.split('\n')[0];
    kernel = null;
  }
  return kernel;
}

/** Which lock this process uses: the kernel's, or the exclusive file where it cannot be loaded (and why). */
export function lockKind(): { kind: 'kernel' | 'file'; problem?: string } {
  return kernelLocks() ? { kind: 'kernel' } : { kind: 'file', problem: kernelProblem };
}

/** The locks this process holds: path to the descriptor that holds it. */
const held = new Map<string, number>();

function sameFile(fd: number, path: string): boolean {
  const mine = fs.fstatSync(fd);
  const now = fs.lstatSync(path, { throwIfNoEntry: false });
  return !!now && now.ino === mine.ino && now.dev === mine.dev;
}

/** Who took the lock, written while it is held (for the message of a waiter that gives up). */
function recordHolder(fd: number): void {
  const body = Buffer.from(
    JSON.stringify({ pid: process.pid, host: hostname(), at: new Date().toISOString() }),
  );
  try {
    writeAll(fd, body, 0);
    fs.ftruncateSync(fd, body.length);
  } catch {
    // Only a message depends on it (a full disk must not stop the write the lock is for).
  }
}

/** The lock file open for locking (made when missing), or undefined to try again. */
function openLockFile(path: string): number | undefined {
  try {
    return openStoreFile(path, 'r+', 0o600);
  } catch (e) {
    if (e instanceof LoopxError && e.details.path === path) {
      // A link or a folder in the lock's own place is never followed: it goes, and the caller
      // tries again (nothing in it is LoopX's).
      fs.rmSync(path, { recursive: true, force: true });
      return undefined;
    }
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  mkdirStore(nodePath.dirname(path), 0o700);
  try {
    return openStoreFile(path, 'wx', 0o600);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return undefined; // made meanwhile
    throw e;
  }
}

/** Takes the kernel lock if it is free, without waiting: its release, or undefined. */
function tryKernelLock(path: string, locks: KernelLocks): (() => void) | undefined {
  if (held.has(path)) return undefined;
  const fd = openLockFile(path);
  if (fd === undefined) return undefined;
  try {
    // Locked, and still the file at the path: one removed by hand meanwhile is not the lock.
    if (!locks.tryLock(fd) || !sameFile(fd, path)) {
      fs.closeSync(fd);
      return undefined;
    }
  } catch (e) {
    fs.closeSync(fd);
    throw e;
  }
  held.set(path, fd);
  recordHolder(fd);
  return () => {
    held.delete(path);
    fs.closeSync(fd); // the kernel releases the lock with the last descriptor
  };
}

/**
 * Takes the lock if it is free, without waiting: its release, or undefined. `checkStale` matters
 * only to the exclusive file stand-in (a kernel lock is never stale).
 */
export function tryLock(path: string, checkStale = false): (() => void) | undefined {
  const locks = kernelLocks();
  return locks ? tryKernelLock(path, locks) : fileLock.tryLock(path, checkStale);
}

/**
 * Throws unless this process still holds the lock at `path` on the file now at that path: a
 * holder asks before it appends, so a lock file replaced meanwhile never lets two write.
 */
export function assertHeld(path: string): void {
  const fd = held.get(path);
  if (fd === undefined) {
    if (kernelLocks()) throw new LoopxError('internal', `the lock ${path} is not held by this process`);
    return;
  }
  if (!sameFile(fd, path))
    throw conflict(
      `the lock ${path} was removed or replaced while this process held it: nothing was written, run the command again`,
      { lock: path, reason: 'lock_lost' },
    );
}

/** The error of a lock not taken within `timeoutMs`, naming who last took it. */
export function lockBusy(path: string, timeoutMs: number): LoopxError {
  if (!kernelLocks()) return fileLock.lockBusy(path, timeoutMs);
  let who = '';
  try {
    const o = JSON.parse(readStoreFile(path, 'utf8')) as { pid?: unknown; host?: unknown; at?: unknown };
    if (typeof o.pid === 'number' && typeof o.host === 'string' && typeof o.at === 'string')
      who = `: held by process ${o.pid} on ${o.host} since ${o.at}`;
  } catch {
    /* no name to give */
  }
  return conflict(`could not take the lock ${path} within ${timeoutMs} ms${who}`, {
    lock: path,
    reason: 'lock_busy',
  });
}

/** Waiting: short, jittered, growing steps, so many waiters neither spin nor wake in lock-step. */
const WAIT_MIN_MS = 0.1;
const WAIT_MAX_MS = 1;

/** Takes the lock (waiting up to `timeoutMs`) and returns its release. */
function acquireLock(path: string, timeoutMs: number): () => void {
  const locks = kernelLocks();
  if (!locks) return fileLock.acquireLock(path, timeoutMs);
  const deadline = Date.now() + timeoutMs;
  let wait = WAIT_MIN_MS;
  for (;;) {
    const release = tryKernelLock(path, locks);
    if (release) return release;
    if (Date.now() > deadline) throw lockBusy(path, timeoutMs);
    sleepMs(wait * (0.5 + Math.random()));
    wait = Math.min(wait * 1.5, WAIT_MAX_MS);
  }
}

/** Takes the lock, runs `fn`, releases the lock (also when `fn` throws). */
export function withLock<T>(path: string, fn: () => T, opts: LockOptions = {}): T {
  const release = acquireLock(path, opts.timeoutMs ?? 15000);
  try {
    return fn();
  } finally {
    release();
  }
}

/**
 * The stale locks in a locks folder, with why each is stale (self-repair). A kernel lock is never
 * stale; files an older LoopX left (an exclusive lock of a holder that died) are reported by the
 * stand-in's rules only when it is the lock in use.
 */
export function staleLocks(dir: string): { file: string; why: string }[] {
  return kernelLocks() ? [] : fileLock.staleLocks(dir);
}

export function breakLock(path: string): void {
  if (!kernelLocks()) fileLock.breakLock(path);
}
