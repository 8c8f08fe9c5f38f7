/**
 * The stand-in for the kernel lock (store/lock.ts) where its binding cannot be loaded: an
 * inter-process lock on a file created with O_EXCL. It has to judge whether a holder died, and
 * does so by pid, host and time, so it can be fooled (another PID namespace, a clock that jumps,
 * a holder stopped for longer than LOCK_MAX_HOLD_MS); the append's size check (appendToLog) and
 * replay's handling of a forked log keep such a goal readable.
 *
 * A lock whose holder died is stale: same host and the pid is gone, or older than
 * LOCK_MAX_HOLD_MS (a holder on another host, a pid reused, a hung process), or dated
 * in the future beyond LOCK_CLOCK_SKEW_MS (a clock that jumped back, or a lock planted by hand,
 * which would otherwise block every write for good). Breaking one renames it aside first, so of
 * two processes that both found it stale only one removes it; the other sees ENOENT and retries.
 * `self-repair` reports and clears stale locks too (`staleLocks`, `breakLock`).
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { hostname } from 'node:os';
import * as nodePath from 'node:path';
import { conflict, LoopxError } from '../model';
import { lstatStore, openStoreFile, readdirStore, readStoreFile } from './safe-path';
import { sleepMs } from './sleep';

/**
 * The longest any call holds a lock. Locks are held for one append and one rename (the command
 * of `exec` runs outside it), so a lock this old is stale even when its pid is alive (reused).
 */
const LOCK_MAX_HOLD_MS = 5 * 60_000;
/** How far in the future a lock's time may be before it is stale (clocks of two hosts differ). */
const LOCK_CLOCK_SKEW_MS = 60_000;

interface LockOwner {
  pid: number;
  host: string;
  nonce: string;
  at: number;
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
    const o = JSON.parse(readStoreFile(path, 'utf8')) as LockOwner;
    return typeof o.pid === 'number' && typeof o.at === 'number' ? o : undefined;
  } catch {
    return undefined;
  }
}

const iso = (ms: number) =>
  Number.isFinite(ms) && Math.abs(ms) < 8.64e15 ? new Date(ms).toISOString() : String(ms);

/** Why the lock at `path` is stale, or undefined when it is held (or gone). */
function whyStale(path: string): string | undefined {
  const now = Date.now();
  const owner = readOwner(path);
  if (owner) {
    if (owner.at > now + LOCK_CLOCK_SKEW_MS)
      return `its time ${iso(owner.at)} is in the future (process ${owner.pid} on ${owner.host})`;
    if (owner.host === hostname() && !pidAlive(owner.pid))
      return `its holder, process ${owner.pid} on this host, is gone`;
    if (now - owner.at > LOCK_MAX_HOLD_MS)
      return `held by process ${owner.pid} on ${owner.host} since ${iso(owner.at)}, longer than any call takes (${Math.round(LOCK_MAX_HOLD_MS / 1000)} s)`;
    return undefined;
  }
  // Unreadable or half-written: the creator may be between open and write, so judge by age.
  let mtime: number;
  try {
    const st = lstatStore(path);
    if (!st) return undefined;
    mtime = st.mtimeMs;
  } catch {
    return 'it is not a plain file';
  }
  if (mtime > now + LOCK_CLOCK_SKEW_MS) return `it is unreadable and dated in the future (${iso(mtime)})`;
  if (now - mtime > 2000) return 'it is unreadable (not a lock LoopX wrote)';
  return undefined;
}

/** A breaker's guard older than this was left by a breaker that died: it is removed. */
const BREAKING_MAX_MS = 2000;

/**
 * Removes a lock found stale. Two waiters can both find the same lock stale; if the first breaks it
 * and takes a new one before the second acts, the second must not remove that fresh lock (both
 * would then hold it). So breaking happens under a guard file of its own (`<lock>.breaking`,
 * O_EXCL), and the lock is judged again under it: while the stale lock is in place no new one can
 * be made, and no other breaker can remove it, so the lock judged is the lock removed.
 */
export function breakLock(path: string): void {
  const guard = `${path}.breaking`;
  let fd: number;
  try {
    fd = openStoreFile(guard, 'wx', 0o600);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    // Another breaker is at work; its guard is removed only when its breaker died.
    try {
      if (Date.now() - fs.lstatSync(guard).mtimeMs > BREAKING_MAX_MS) fs.rmSync(guard, { force: true });
    } catch {
      /* gone meanwhile */
    }
    return;
  }
  try {
    if (whyStale(path) === undefined) return;
    const aside = `${path}.stale-${randomBytes(8).toString('hex')}`;
    try {
      fs.renameSync(path, aside);
      fs.rmSync(aside, { force: true });
    } catch {
      /* gone meanwhile (its holder released it) */
    }
  } finally {
    fs.closeSync(fd);
    fs.rmSync(guard, { force: true });
  }
}

/** The stale locks in a locks folder, with why each is stale (self-repair). */
export function staleLocks(dir: string): { file: string; why: string }[] {
  let names: string[];
  try {
    names = readdirStore(dir);
  } catch {
    return [];
  }
  const out: { file: string; why: string }[] = [];
  for (const n of names.filter((x) => x.endsWith('.lock')).sort()) {
    const file = nodePath.join(dir, n);
    const why = whyStale(file);
    if (why) out.push({ file, why });
  }
  return out;
}

/**
 * How waiting works: a waiter sleeps in short, jittered, growing steps and then looks whether the
 * lock file is gone (one lstat, no read), so the lock is taken again soon after a release without
 * many waiters burning the CPU the holder needs; only when it is gone does it try to create it.
 * Whether the holder is stale (a read of the file and a look at the pid) is asked at most every
 * STALE_CHECK_MS, so a dead holder's lock is still broken within that much.
 */
const WAIT_MIN_MS = 0.1;
const WAIT_MAX_MS = 1;
export const STALE_CHECK_MS = 25;

function ownerBody(): string {
  const owner: LockOwner = {
    pid: process.pid,
    host: hostname(),
    nonce: randomBytes(8).toString('hex'),
    at: Date.now(),
  };
  return JSON.stringify(owner);
}

/**
 * One attempt to create the lock: its release, or undefined when another holds it. A link (or a
 * folder) in the lock's own place is never followed: it is removed like a stale lock and the
 * attempt fails, so the caller tries again.
 */
function attempt(path: string, body: string, deadline: number): (() => void) | undefined {
  let fd: number;
  try {
    fd = openStoreFile(path, 'wx', 0o600);
  } catch (e) {
    if (e instanceof LoopxError && e.details.path === path) {
      if (Date.now() > deadline) throw e;
      breakLock(path);
      return undefined;
    }
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    return undefined;
  }
  try {
    fs.writeSync(fd, body);
  } catch (e) {
    fs.closeSync(fd);
    fs.rmSync(path, { force: true });
    throw e;
  }
  // Kept open while held: the file cannot be replaced by another with the same inode number
  // meanwhile, so comparing inodes at release tells whether the lock is still ours.
  return () => {
    try {
      const mine = fs.fstatSync(fd);
      const now = fs.lstatSync(path, { throwIfNoEntry: false });
      // Remove only our own lock: if it was broken as stale and taken by another, leave it.
      if (now && now.ino === mine.ino && now.dev === mine.dev) fs.unlinkSync(path);
    } finally {
      fs.closeSync(fd);
    }
  };
}

/**
 * Takes the lock if it is free, without waiting: its release, or undefined. With `checkStale`, a
 * stale lock is broken first (the caller asks at most every STALE_CHECK_MS, as `acquireLock` does).
 */
export function tryLock(path: string, checkStale = false): (() => void) | undefined {
  if (fs.existsSync(path)) {
    if (!checkStale || whyStale(path) === undefined) return undefined;
    breakLock(path);
  }
  return attempt(path, ownerBody(), Date.now());
}

/** The error of a lock not taken within `timeoutMs`, naming its holder. */
export function lockBusy(path: string, timeoutMs: number): LoopxError {
  const o = readOwner(path);
  return conflict(
    `could not take the lock ${path} within ${timeoutMs} ms` +
      (o ? `: held by process ${o.pid} on ${o.host} since ${new Date(o.at).toISOString()}` : ''),
    { lock: path, reason: 'lock_busy' },
  );
}

/** Takes the lock (waiting up to `timeoutMs`, breaking a stale one) and returns its release. */
export function acquireLock(path: string, timeoutMs = 15000): () => void {
  const body = ownerBody();
  const deadline = Date.now() + timeoutMs;
  let staleCheckAt = 0;
  let wait = WAIT_MIN_MS;
  for (;;) {
    const release = attempt(path, body, deadline);
    if (release) return release;
    for (;;) {
      const now = Date.now();
      if (now >= staleCheckAt) {
        staleCheckAt = now + STALE_CHECK_MS;
        if (whyStale(path) !== undefined) {
          breakLock(path);
          if (now <= deadline) break;
        }
      }
      if (now > deadline) throw lockBusy(path, timeoutMs);
      // Jittered, so many waiting writers do not wake in lock-step.
      sleepMs(wait * (0.5 + Math.random()));
      wait = Math.min(wait * 1.5, WAIT_MAX_MS);
      if (!fs.existsSync(path)) break;
    }
  }
}
