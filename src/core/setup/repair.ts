/**
 * Self-repair: finds what a crash, a hand edit or a vanished agent left behind, fixes what is
 * safe to fix through the ordinary capabilities (so every fix is an event in the log), and
 * reports the rest. Never rewrites history: a broken chain or a corrupt line is reported only.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { invoke } from '../capabilities';
import type { Actor, GoalState, LoopxError } from '../model';
import type { IndexEntry, Store } from '../store';
import {
  breakLock,
  canonicalJson,
  indexEntryOf,
  LEGACY_LOCAL_SECRETS,
  LEGACY_LOG,
  locksDir,
  readIndexFile,
  shownEntry,
  staleLocks,
  storePathExists,
} from '../store';

export type FindingKind =
  | 'torn-tail'
  | 'corrupt-log'
  | 'log-legacy'
  | 'snapshot-stale'
  | 'run-abandoned'
  | 'claim-stale'
  | 'gate-expired'
  | 'index-stale'
  | 'lock-stale'
  | 'secret-in-workspace';

export interface Finding {
  goal_id: string | null;
  kind: FindingKind;
  message: string;
  fixed: boolean;
}

export interface RepairReport {
  schema: 'loopx.repair/1';
  dry_run: boolean;
  checked_goals: number;
  findings: Finding[];
  changed: number;
}

export const SELF_REPAIR_ACTOR: Actor = { kind: 'system', id: 'self-repair', channel: 'system' };
const DEFAULT_CLAIM_TIMEOUT_MINUTES = 120;

function repairGoal(store: Store, goalId: string, dryRun: boolean, actor: Actor, findings: Finding[]) {
  const add = (kind: FindingKind, message: string, fixed: boolean) =>
    findings.push({ goal_id: goalId, kind, message, fixed });
  let logs;
  try {
    logs = store.readLogs(goalId);
  } catch (e) {
    add(
      'corrupt-log',
      `${(e as Error).message} (history is never rewritten: restore the file from git or a backup)`,
      false,
    );
    return;
  }
  const own = store.writerId();
  let rewrite = false;
  for (const l of logs) {
    if (!l.parsed.torn) continue;
    const msg = `${l.file}:${l.parsed.torn.line} is an incomplete line of ${l.parsed.torn.bytes} bytes (a crashed write, never acknowledged)`;
    if (l.name !== own)
      add(
        'torn-tail',
        `${msg}; it is the log of writer ${l.name}: self-repair on that clone moves it aside`,
        false,
      );
    else if (dryRun) add('torn-tail', msg, false);
    else {
      // A commit with nothing to add still quarantines the tail under the lock and records it.
      store.commit(goalId, () => [], { actor });
      add('torn-tail', `${msg}: moved aside to a quarantine file`, true);
      rewrite = true;
    }
  }
  if (logs.some((l) => l.name === LEGACY_LOG)) {
    const msg = `${store.goalDir(goalId)}/${LEGACY_LOG} is an older LoopX's single log (git conflicts on it when two clones write)`;
    if (dryRun) add('log-legacy', msg, false);
    else {
      // The first write by this version moves it to this writer's log; a commit with nothing to add does it.
      store.commit(goalId, () => [], { actor });
      const left = store.logFiles(goalId).some((l) => l.name === LEGACY_LOG);
      add(
        'log-legacy',
        left
          ? `${msg}; it holds events this clone's log does not, so it is kept and read as one more log`
          : `${msg}: moved to ${store.logPath(goalId)}`,
        !left,
      );
      rewrite = true;
    }
  }
  let replayed;
  try {
    replayed = store.replayGoal(goalId, rewrite ? store.readLogs(goalId) : logs);
  } catch (e) {
    add('corrupt-log', (e as Error).message, false);
    return;
  }
  // Canonical (sorted keys): a snapshot state that went through its zod schema has its keys in
  // schema order, a replayed one in event order; only the values must agree.
  // The snapshot may lag the log by a few events by design (see SNAPSHOT_EVERY): it is right
  // when loading through it gives what a full replay gives.
  // A cache that merely fell behind the logs (a pull brought events) is made again by the load
  // itself: a finding is a damaged cache, or one that fits the logs and says something else.
  const { problem } = store.readSnapshot(goalId);
  const viaSnapshot = store.load(goalId);
  const snapOk =
    !problem && !viaSnapshot.cacheStale && canonicalJson(viaSnapshot.state) === canonicalJson(replayed.state);
  if (!snapOk) {
    if (!dryRun) store.rebuildSnapshot(goalId);
    add(
      'snapshot-stale',
      `${problem ?? 'the cached snapshot did not match the logs'}` + (dryRun ? '' : ': rebuilt from the log'),
      !dryRun,
    );
  }
  const goal: GoalState = replayed.state;
  const now = new Date(store.now());
  const policy = store.policy();
  const fix = (kind: FindingKind, message: string, cap: string, input: Record<string, unknown>) => {
    if (dryRun) return add(kind, message, false);
    try {
      invoke(store, cap, { goalId, ...input }, actor, { policy });
      add(kind, message, true);
    } catch (e) {
      add(kind, `${message}; not fixed: ${(e as LoopxError).message}`, false);
    }
  };
  const finished = goal.status === 'closed' || goal.status === 'cancelled';
  for (const r of goal.runs.filter((x) => !x.endedAt)) {
    if (r.contract && Date.parse(r.contract.expiresAt) <= now.getTime()) {
      fix(
        'run-abandoned',
        `run ${r.id} is open past its contract's expiry (${r.contract.expiresAt}): closed as abandoned`,
        'run.abandon',
        { runId: r.id, summary: 'closed by self-repair: open past its contract expiry' },
      );
    }
  }
  if (finished) return;
  const claimTimeout = (policy.claimTimeoutMinutes ?? DEFAULT_CLAIM_TIMEOUT_MINUTES) * 60_000;
  const liveAgents = new Set(
    goal.runs
      .filter((r) => !r.endedAt && (!r.contract || Date.parse(r.contract.expiresAt) > now.getTime()))
      .map((r) => r.agent),
  );
  for (const t of goal.todos.filter((x) => x.status === 'claimed')) {
    const age = now.getTime() - Date.parse(t.claimedAt ?? t.updatedAt);
    if (age > claimTimeout && !liveAgents.has(t.claimedBy ?? '')) {
      fix(
        'claim-stale',
        `todo ${t.id} is claimed by ${t.claimedBy} for ${Math.round(age / 60000)} min with no open run: released`,
        'todo.release',
        { todoId: t.id, reason: 'released by self-repair: claim holder gone' },
      );
    }
  }
  for (const g of goal.gates.filter((x) => x.status === 'pending')) {
    const expiry = g.expiresAt
      ? Date.parse(g.expiresAt)
      : policy.gateExpiryHours
        ? Date.parse(g.requestedAt) + policy.gateExpiryHours * 3600_000
        : Infinity;
    if (expiry <= now.getTime()) {
      fix(
        'gate-expired',
        `gate ${g.id} is pending past its expiry (${new Date(expiry).toISOString()}): expired`,
        'gate.expire',
        { gateId: g.id },
      );
    }
  }
}

export function repair(
  store: Store,
  opts: { goalId?: string; dryRun?: boolean; actor?: Actor } = {},
): RepairReport {
  const dryRun = opts.dryRun ?? false;
  const actor = opts.actor ?? SELF_REPAIR_ACTOR;
  const findings: Finding[] = [];
  // Locks first: a stale one (its time in the future, its holder gone or hung) would make every
  // fix below wait for it and fail.
  for (const l of staleLocks(locksDir(store.localDir))) {
    if (!dryRun) breakLock(l.file);
    findings.push({
      goal_id: null,
      kind: 'lock-stale',
      message: `${l.file} is stale: ${l.why}` + (dryRun ? '' : ': removed'),
      fixed: !dryRun,
    });
  }
  // Secrets an older version kept in the workspace: no longer used, and an agent may have read them.
  for (const name of LEGACY_LOCAL_SECRETS) {
    const file = path.join(store.localDir, name);
    let there = false;
    try {
      there = storePathExists(file);
    } catch {
      there = true; // a link: remove it all the same
    }
    if (!there) continue;
    if (!dryRun) fs.rmSync(file, { force: true });
    findings.push({
      goal_id: null,
      kind: 'secret-in-workspace',
      message:
        `${file} is a secret left in the workspace by an older LoopX (secrets now live in ${store.secretsDir})` +
        (dryRun ? '' : ': removed'),
      fixed: !dryRun,
    });
  }
  const ids = opts.goalId ? [opts.goalId] : store.goalIds();
  if (opts.goalId && !store.exists(opts.goalId)) store.load(opts.goalId); // throws not found, clearly
  for (const id of ids) {
    repairGoal(store, id, dryRun, actor, findings);
  }
  // The index: every goal folder listed, nothing invented, entries current.
  let indexed: IndexEntry[] = [];
  try {
    indexed = readIndexFile(store.indexPath).goals.map(shownEntry);
  } catch {
    indexed = [];
  }
  const byId = new Map(indexed.map((e) => [e.id, JSON.stringify(e)]));
  const problems: string[] = [];
  const all = store.goalIds();
  for (const id of all) {
    let entry: string | undefined;
    try {
      entry = JSON.stringify(indexEntryOf(store.load(id).state));
    } catch {
      continue;
    }
    if (!byId.has(id)) problems.push(`misses ${id}`);
    else if (byId.get(id) !== entry) problems.push(`is out of date for ${id}`);
  }
  const folders = new Set(all);
  for (const e of indexed) if (!folders.has(e.id)) problems.push(`lists ${e.id}, which has no folder`);
  if (problems.length) {
    if (!dryRun) store.rebuildIndex();
    findings.push({
      goal_id: null,
      kind: 'index-stale',
      message:
        `the goal index ${problems.slice(0, 5).join('; ')}${problems.length > 5 ? `; and ${problems.length - 5} more` : ''}` +
        (dryRun ? '' : ': rebuilt'),
      fixed: !dryRun,
    });
  }
  return {
    schema: 'loopx.repair/1',
    dry_run: dryRun,
    checked_goals: ids.length,
    findings,
    changed: findings.filter((f) => f.fixed).length,
  };
}
