/**
 * A goal's snapshot (`local/cache/goals/<id>.json`): the state derived from its logs, saved so a
 * load need not replay them all. A cache of this clone, never committed.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import type { GoalState } from '../model';
import { lazy } from '../model';
import type { WriterHead } from './event-log';
import { canonicalJson, parseJsonText, writeFileAtomic } from './json-file';
import { readStoreFile } from './safe-path';

/**
 * The file is two lines: a header (revision, where each writer's log ended, the highest clock
 * stamp, and an HMAC with the workspace's local key) and the state. The fast path trusts it only
 * when the MAC verifies and it covers the logs, so a hand-edited snapshot (say, a gate flipped to
 * approved) is ignored and the state is replayed from the logs instead.
 */
const WriterHeadSchema = lazy(() =>
  z.object({
    seq: z.number().int().nonnegative(),
    bytes: z.number().int().nonnegative(),
    lastHash: z.string().nullable(),
    key: z.string().optional(),
  }),
);
const SnapshotHeader = lazy(() =>
  z.object({
    v: z.literal(3),
    revision: z.number().int().nonnegative(),
    heads: z.record(z.string(), WriterHeadSchema),
    hlc: z.string().optional(),
    heldUntil: z.string().max(40).optional(),
    /** The fingerprint of the pinned keys the state was computed under. */
    trust: z.string().max(64).default(''),
    mac: z.string().regex(/^[0-9a-f]{64}$/),
  }),
);
export interface Snapshot {
  revision: number;
  heads: Record<string, WriterHead>;
  hlc?: string;
  /** The lowest stamp of the events that wait for their time (LoadedGoal.heldUntil). */
  heldUntil?: string;
  /** Fingerprint of the pinned keys the state was computed under (see `Trust`). */
  trust: string;
  state: GoalState;
}

export const SNAPSHOT_EVERY = 8;

function snapshotMac(key: Buffer, snap: Omit<Snapshot, 'state'>, stateText: string): string {
  const header = canonicalJson({
    revision: snap.revision,
    heads: snap.heads,
    hlc: snap.hlc,
    heldUntil: snap.heldUntil,
    trust: snap.trust,
  });
  return createHmac('sha256', key).update(`${header}\n${stateText}`).digest('hex');
}

export function writeSnapshotFile(file: string, key: Buffer, snap: Snapshot): void {
  const { state, ...rest } = snap;
  const stateText = JSON.stringify(state);
  const header = JSON.stringify({ v: 3, ...rest, mac: snapshotMac(key, rest, stateText) });
  writeFileAtomic(file, `${header}\n${stateText}\n`);
}

/**
 * The snapshot, or why it cannot be used. Derived: a missing or broken one is rebuilt from the log.
 * `key` is asked for only once there is a header to check: reading creates no key, and a damaged
 * one makes the snapshot unusable rather than the load fail.
 */
export function readSnapshotFile(file: string, key: () => Buffer): { snap?: Snapshot; problem?: string } {
  const { head, stateText, problem } = readVerified(file, key);
  if (!head) return { problem };
  // The MAC says we wrote these bytes after validating them: parse, do not re-validate.
  let state: GoalState;
  try {
    state = JSON.parse(stateText!) as GoalState;
  } catch (e) {
    return { problem: `${file} (line 2): not valid JSON: ${(e as Error).message}` };
  }
  return { snap: { ...head, state } };
}

/**
 * The snapshot's header once its MAC verifies, without parsing the state: what a commit that
 * already holds the state needs to know (how far behind the file is, or that it is unusable).
 */
export function readSnapshotHead(
  file: string,
  key: () => Buffer,
): { head?: Omit<Snapshot, 'state'>; problem?: string } {
  const { head, problem } = readVerified(file, key);
  return head ? { head } : { problem };
}

function readVerified(
  file: string,
  key: () => Buffer,
): { head?: Omit<Snapshot, 'state'>; stateText?: string; problem?: string } {
  let text: string;
  try {
    text = readStoreFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return {};
    return { problem: `${file}: ${(e as Error).message}` };
  }
  try {
    const nl = text.indexOf('\n');
    const header = parseJsonText(nl === -1 ? text : text.slice(0, nl), SnapshotHeader, `${file} (line 1)`);
    const stateText = text.slice(nl + 1).replace(/\n$/, '');
    const { v: _v, mac: headerMac, ...rest } = header;
    const mac = Buffer.from(snapshotMac(key(), rest, stateText), 'hex');
    if (!timingSafeEqual(mac, Buffer.from(headerMac, 'hex'))) {
      return {
        problem: `${file}: its MAC does not verify (edited by hand, or written with another clone's key)`,
      };
    }
    return { head: rest, stateText };
  } catch (e) {
    return { problem: (e as Error).message }; // names the file, the line (JSON syntax) or the field
  }
}
