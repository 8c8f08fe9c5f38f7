/** A goal's `goal.json`: the state derived from its log, saved so a load need not replay it all. */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { writeFileAtomic, parseJsonText } from './jsonfile';
import { readStoreFile } from './safe-path';
import type { GoalState } from './model';

/**
 * goal.json is two lines: a header (revision, log length, hash of the last log line, and an HMAC
 * with the workspace's local key) and the state. The fast path trusts it only when the MAC
 * verifies and it covers the log, so a hand-edited snapshot (say, a gate flipped to approved) is
 * ignored and the state is replayed from the log instead.
 */
const SnapshotHeader = z.object({
  v: z.literal(2),
  revision: z.number().int().nonnegative(),
  logBytes: z.number().int().nonnegative(),
  lastHash: z.string().nullable(),
  /** The fingerprint of the pinned keys the state was computed under. */
  trust: z.string().max(64).default(''),
  mac: z.string().regex(/^[0-9a-f]{64}$/),
});
export interface Snapshot {
  revision: number;
  logBytes: number;
  lastHash: string | null;
  /** Fingerprint of the pinned keys the state was computed under (see `Trust`). */
  trust: string;
  state: GoalState;
}

/**
 * A commit rewrites goal.json only once the log has run this many events past it: loading reads
 * the few lines after the snapshot anyway, and rewriting the whole state on every event would
 * make each write cost as much as the goal is large.
 */
export const SNAPSHOT_EVERY = 8;

function snapshotMac(
  key: Buffer,
  revision: number,
  logBytes: number,
  lastHash: string | null,
  trust: string,
  stateText: string,
): string {
  return createHmac('sha256', key)
    .update(`${revision}\n${logBytes}\n${lastHash}\n${trust}\n${stateText}`)
    .digest('hex');
}

export function writeSnapshotFile(file: string, key: Buffer, snap: Snapshot): void {
  const stateText = JSON.stringify(snap.state);
  const mac = snapshotMac(key, snap.revision, snap.logBytes, snap.lastHash, snap.trust, stateText);
  const header = JSON.stringify({
    v: 2,
    revision: snap.revision,
    logBytes: snap.logBytes,
    lastHash: snap.lastHash,
    trust: snap.trust,
    mac,
  });
  writeFileAtomic(file, `${header}\n${stateText}\n`);
}

/**
 * The snapshot, or why it cannot be used. Derived: a missing or broken one is rebuilt from the log.
 * `key` is asked for only once there is a header to check: reading creates no key, and a damaged
 * one makes the snapshot unusable rather than the load fail.
 */
export function readSnapshotFile(file: string, key: () => Buffer): { snap?: Snapshot; problem?: string } {
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
    const mac = Buffer.from(
      snapshotMac(key(), header.revision, header.logBytes, header.lastHash, header.trust, stateText),
      'hex',
    );
    if (!timingSafeEqual(mac, Buffer.from(header.mac, 'hex'))) {
      return {
        problem: `${file}: its MAC does not verify (edited by hand, or written with another clone's key)`,
      };
    }
    // The MAC says we wrote these bytes after validating them: parse, do not re-validate.
    let state: GoalState;
    try {
      state = JSON.parse(stateText) as GoalState;
    } catch (e) {
      return { problem: `${file} (line 2): not valid JSON: ${(e as Error).message}` };
    }
    return {
      snap: {
        revision: header.revision,
        logBytes: header.logBytes,
        lastHash: header.lastHash,
        trust: header.trust,
        state,
      },
    };
  } catch (e) {
    return { problem: (e as Error).message }; // names the file, the line (JSON syntax) or the field
  }
}
