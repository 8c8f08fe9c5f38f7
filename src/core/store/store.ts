/**
 * The `.loopx/` store. Per goal: `events/<writer>.jsonl`, one append-only, hash-chained log per
 * clone (together the truth; merged at replay), and `artifacts/`. Across goals: `policy.json`
 * (hand-edited, signed), `approvers/`, and `local/` (never committed: the writer id, locks, and
 * the caches: goal snapshots and the goal index). The workspace's secrets (contract and snapshot
 * keys, the status server token) live outside it, in the user's config folder (`secretsDir`). No
 * file under `.loopx/` is reached through a link (store/safe-path.ts).
 *
 * The class is the one door to these files; the formats and the write protocol live in their own
 * modules (event-log, goal-logs, merge-logs, snapshot, goal-index, local-dir, goal-load, commit).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Artifact, EventDraft, GoalState, Policy } from '../model';
import { aheadCutoff, checkId, notFound, VERSION } from '../model';
import type { PolicyView, Signer, Trust } from '../trust';
import { artifactsDir, writeArtifact } from './artifacts';
import type { CommitOptions, CommitResult, CommitTarget } from './commit';
import { commitGoal } from './commit';
import { configDir, readOrCreateSecret } from './config-dir';
import type { ParsedLog, WriterHead } from './event-log';
import { quarantineTornTail } from './event-log';
import { eventsOfCall, nextCall } from './calls';
import type { IndexEntry } from './goal-index';
import type { LoadedGoal } from './goal-load';
import { cutSince, parseOpenLogs, replayLogs, resumeFromSnapshot } from './goal-load';
import type { LogFile, OpenLog } from './goal-logs';
import { closeLogFiles, LEGACY_LOG, openLogFiles, readLogFile } from './goal-logs';
import { GoalMemos } from './goal-memos';
import type { GroupContext } from './group-commit';
import type { GroupRequest } from './group-queue';
import { GroupQueue } from './group-queue';
import { copyJson, sha256 } from './json-file';
import { LocalCache } from './local-cache';
import { assertHeld, tryLock, withLock } from './lock';
import { migrateLegacyLog } from './log-migration';
import { StoreFiles } from './paths';
import { lstatStore, storePathExists } from './safe-path';
import type { Snapshot } from './snapshot';
import { ensureGitFiles, findWorkspace, initLayout, LOOPX_DIR } from './workspace';
import type { WorkspaceIdentity } from './workspace-identity';
import { WorkspaceTrust } from './workspace-trust';
import { defaultWriterName, recordWriter } from './writers';

// Declared with the write protocol; capabilities import CommitResult from here.
export type { CommitOptions, CommitResult } from './commit';

export interface StoreOptions {
  clock?: () => Date;
  lockTimeoutMs?: number;
  /** The user's LoopX config folder (pinned keys, workspace secrets); default from the environment. */
  configDir?: string;
  /**
   * Told what did not fail a call but should be known (a cache the disk refused after the events
   * were written); default: kept in `Store.warnings`.
   */
  onWarning?: (message: string) => void;
  /**
   * An idempotency key (the id rule): the n-th commit of this store is the call `<key>#<n>`, so a
   * process that is run again with the same key (a retry) appends nothing its first run wrote.
   */
  callKey?: string;
  /**
   * Each commit leaves the goal's snapshot current, so the next reader validates no tail of the
   * log: for `loopx` calls, whose commits are few. Otherwise a process writes the snapshot with
   * its first commit to a goal and then every SNAPSHOT_EVERY events (a writer that goes on and
   * on, like the extension or the benchmark's writers).
   */
  oneShot?: boolean;
  /**
   * Read only: listing and loading write no cache, take no lock and make no writer id, secret or
   * `local/`; every write refuses with reason `store_read_only`. The editor reads an untrusted
   * workspace (VS Code's Restricted Mode) this way.
   */
  readOnly?: boolean;
}

function keepLast(list: string[], item: string, max: number): void {
  list.push(item);
  if (list.length > max) list.shift();
}

export class Store extends StoreFiles {
  private readonly clock: () => Date;
  private readonly realClock: boolean;
  private groupCtx?: string;
  private readonly lockTimeoutMs: number;
  private readonly secrets = new Map<string, Buffer>();
  private readonly workspaceTrust: WorkspaceTrust;
  private readonly cache: LocalCache;
  private readonly memos = new GoalMemos();
  private readonly onWarning: (message: string) => void;
  private readonly callKey?: string;
  private readonly oneShot: boolean;
  /** Warnings no `onWarning` took (the last 50). */
  readonly warnings: string[] = [];

  constructor(workspace: string, opts: StoreOptions = {}) {
    super(workspace, opts.configDir ?? configDir(process.env), opts.readOnly);
    this.clock = opts.clock ?? (() => new Date());
    this.realClock = opts.clock === undefined;
    this.lockTimeoutMs = opts.lockTimeoutMs ?? 15000;
    this.onWarning = opts.onWarning ?? ((m) => keepLast(this.warnings, m, 50));
    this.callKey = opts.callKey === undefined ? undefined : checkId(opts.callKey, 'idempotency key');
    this.oneShot = opts.oneShot ?? false;
    this.workspaceTrust = new WorkspaceTrust(this.root, this.secretsDir, this.configDir);
    this.cache = new LocalCache({
      localDir: this.localDir,
      snapshotKey: () => this.secret('snapshot-key'),
      lockTimeoutMs: this.lockTimeoutMs,
      readOnly: this.readOnly,
      assertWritable: (what) => this.assertWritable(what),
    });
  }

  /**
   * The keys pinned on this machine and the workspace's identity: whose decisions count when the
   * logs are replayed, and for which workspace they must have been signed.
   */
  trust(): Trust {
    return this.workspaceTrust.trust();
  }

  /** The workspace's identity on this clone (store/workspace-identity.ts). */
  identity(): WorkspaceIdentity {
    return this.workspaceTrust.identity();
  }

  /**
   * Lists this workspace in the config folder's registry of workspaces (store/workspace-registry.ts),
   * once a process; a read-only store lists nothing. Writing lists it too.
   */
  register(): void {
    if (!this.readOnly) this.workspaceTrust.register();
  }

  private ensureIdentity(make: boolean): void {
    this.workspaceTrust.ensureIdentity(make);
  }

  /** Creates `.loopx/` (idempotent) and returns the store. */
  static init(workspace: string, opts?: StoreOptions): Store {
    const s = new Store(workspace, opts);
    s.assertWritable('initialising .loopx/');
    initLayout(s.root, { localDir: s.localDir, policy: s.policyPath });
    s.ensureIdentity(true);
    return s;
  }

  /** Opens an existing store; a clear error when the workspace has none. */
  static open(workspace: string, opts?: StoreOptions): Store {
    const s = new Store(workspace, opts);
    // Refuses a linked .loopx, goals/ or local/ here, naming the link, before any command runs.
    const goals = lstatStore(path.join(s.root, 'goals'));
    lstatStore(s.localDir);
    if (!goals?.isDirectory()) {
      throw notFound(
        `no LoopX workspace at ${s.workspace} (no ${LOOPX_DIR}/goals): run \`loopx init\` there first`,
      );
    }
    return s;
  }

  /** Like git: the nearest folder at or above `start` that has a `.loopx/`. */
  static discover(start: string): string | undefined {
    return findWorkspace(start);
  }

  /** The goal index: a cache of this clone (store/local-cache.ts). */
  get indexPath() {
    return this.cache.indexPath;
  }
  /** A goal's snapshot: a cache of this clone (store/local-cache.ts). */
  snapshotPath(goalId: string) {
    return this.cache.snapshotPath(goalId);
  }
  now(): string {
    return this.clock().toISOString();
  }

  /**
   * A secret of this workspace in `secretsDir` (made on first use: folder 0700, file 0600), e.g.
   * the contract signing key. Nothing an agent edits in the workspace can reach it.
   */
  secret(name: string, bytes = 32): Buffer {
    const cached = this.secrets.get(name);
    if (cached) return cached;
    if (this.readOnly && !storePathExists(path.join(this.secretsDir, name)))
      this.assertWritable(`making the workspace secret ${name}`);
    const key = readOrCreateSecret(this.secretsDir, name, bytes);
    this.secrets.set(name, key);
    return key;
  }

  /** The policy LoopX enforces: the last one a person signed, tightened by unsigned edits. */
  policy(): Policy {
    return this.policyView().effective;
  }

  /** Which policy applies and why: signed or not, and the edits that wait for a signature. */
  policyView(): PolicyView {
    return this.workspaceTrust.policyView();
  }

  /**
   * A person signs policy.json as it is now (refused when it is no longer `shown`, what they
   * reviewed): from then on it is what LoopX enforces.
   */
  signPolicy(signer: Signer | undefined, shown?: Policy): PolicyView {
    this.assertWritable('signing the policy');
    return this.workspaceTrust.signPolicy(signer, this.clock(), shown);
  }

  // ---------------------------------------------------------------------------------------------
  // Reading

  /** One writer's log of a goal, read and checked (this clone's by default). */
  readLog(goalId: string, writer = this.writerId()): ParsedLog {
    const name = checkId(writer, 'writer id');
    const log = this.logFiles(goalId).find((f) => f.name === name);
    if (!log) throw this.missing(goalId);
    return readLogFile(log);
  }

  /** Every log of the goal open for reading (not found, or corrupt, when the goal has none). */
  private openLogs(goalId: string, files = this.logFiles(goalId)): OpenLog[] {
    if (files.length === 0) throw this.missing(goalId);
    return openLogFiles(files);
  }

  /** The snapshot, or why it cannot be used. Derived: a missing or broken one is rebuilt from the logs. */
  readSnapshot(goalId: string): { snap?: Snapshot; problem?: string } {
    return this.cache.readSnapshot(goalId);
  }

  /**
   * The goal's current state. Fast path: the snapshot, when the logs are as it saw them, or only
   * this clone's own log grew since. Otherwise (a pull brought other writers' events) a full
   * replay, whose result is cached for the next load.
   */
  load(goalId: string, files?: LogFile[]): LoadedGoal {
    checkId(goalId, 'goal id');
    // Opened once: the sizes, the snapshot's check and the replay all read these descriptors.
    const logs = this.openLogs(goalId, files);
    try {
      const { snap, problem } = this.readSnapshot(goalId);
      const trust = this.trust();
      const own = this.peekWriterId() ?? '';
      const cutoff = aheadCutoff(this.clock());
      const resumed = snap && resumeFromSnapshot(goalId, logs, snap, own, trust, cutoff);
      if (resumed) return resumed;
      const ours = snap && snap.trust === trust.fingerprint && snap.state.id === goalId;
      const cut = ours ? cutSince(logs, snap) : undefined;
      const warnings = [problem, cut]
        .filter((w) => w !== undefined)
        .map((w) => `${w}; state rebuilt from the logs`);
      const loaded = replayLogs(goalId, parseOpenLogs(logs), warnings, trust, cutoff);
      // A stale cache is made again; a damaged one (or one over a cut log) is left for
      // self-repair to find and report.
      // Cached: the snapshot is current (a commit need not write it again).
      if (warnings.length === 0 && this.cache.keepReplay(goalId, loaded, trust.fingerprint))
        return { ...loaded, snapshotLag: 0 };
      return warnings.length > 0 ? { ...loaded, cacheStale: true } : loaded;
    } finally {
      closeLogFiles(logs);
    }
  }

  /** Full replay of all the goal's logs (no snapshot). */
  replayGoal(goalId: string, logs = this.readLogs(goalId)): LoadedGoal {
    return replayLogs(goalId, logs, [], this.trust(), aheadCutoff(this.clock()));
  }

  /**
   * For a caller that has just read the goal (`load` or `replayGoal`) and writes to it next, once
   * or more (`exec` records a claim, then evidence): a copy of what it read is kept, so that its
   * commits resume from it instead of reading the goal again.
   */
  keepForCommit(goalId: string, loaded: LoadedGoal): void {
    const copy = { ...loaded, state: copyJson(loaded.state) };
    this.memos.put(goalId, LocalCache.snapshotOf(copy, this.trust().fingerprint), true);
  }

  /**
   * The goal list: the index, reconciled with the goal folders so a stale index cannot hide or
   * invent a goal, and each entry checked against its goal's logs folder (a pull may have
   * changed it). An index made under other pinned keys (or one that does not say, or none) is
   * rebuilt first.
   */
  listGoals(): { goals: IndexEntry[]; errors: { goalId: string; message: string }[] } {
    return this.goalList(false);
  }

  /** Rewrites the index from the goals themselves. Returns goals that could not be read. */
  rebuildIndex(): { goalId: string; message: string }[] {
    return this.goalList(true).errors;
  }

  private goalList(rebuild: boolean) {
    const source = {
      trust: this.trust().fingerprint,
      goalIds: this.goalIds(),
      logsDir: (id: string) => this.logsDir(id),
      stateOf: (id: string) => this.load(id).state,
    };
    return this.cache.listGoals(source, rebuild);
  }

  // ---------------------------------------------------------------------------------------------
  // Writing

  /** Runs `fn` holding the goal's lock (used by commit and by self-repair). */
  withGoalLock<T>(goalId: string, fn: () => T): T {
    checkId(goalId, 'goal id');
    return withLock(this.lockPath(`goal-${goalId}`), fn, { timeoutMs: this.lockTimeoutMs });
  }

  /**
   * The one way state changes. `plan` sees the current state (undefined for a new goal) and
   * returns the events to append to this clone's log; it may throw to refuse. Returns what was
   * appended.
   */
  commit(
    goalId: string,
    plan: (state: GoalState | undefined, revision: number) => EventDraft[],
    opts: CommitOptions,
  ): CommitResult {
    checkId(goalId, 'goal id');
    this.assertWritable(`a change to goal ${goalId}`);
    this.ensureIdentity(opts.signer !== undefined);
    const call = opts.call ?? (this.callKey === undefined ? undefined : nextCall(this.callKey));
    const group =
      opts.group && call !== undefined
        ? { ...opts.group, request: { ...opts.group.request, call } }
        : opts.group;
    return commitGoal(this.commitTarget(goalId), plan, { ...opts, call, group });
  }

  /**
   * How a call to goal `goalId` is queued for the lock holder, and how this process plans the
   * calls it finds queued (group commit, store/group-commit.ts). Undefined with a clock of the caller's
   * own (tests): such a store neither queues nor answers calls.
   */
  groupFor(
    goalId: string,
    call: Omit<GroupRequest, 'ctx'>,
    planOf: GroupContext['planOf'],
  ): GroupContext | undefined {
    if (!this.realClock) return undefined;
    this.groupCtx ??= sha256(JSON.stringify([1, VERSION, this.configDir])).slice(0, 32);
    return {
      queue: new GroupQueue(path.join(this.localDir, 'queue', goalId)),
      request: { ctx: this.groupCtx, ...call },
      planOf,
      lockPath: this.lockPath(`goal-${goalId}`),
      lockTimeoutMs: this.lockTimeoutMs,
    };
  }

  /** The store as the write protocol (store/commit.ts) sees it for one goal. */
  private commitTarget(goalId: string): CommitTarget {
    let lock: string | undefined;
    return {
      goalId,
      dir: this.goalDir(goalId),
      logsDir: this.logsDir(goalId),
      ownLog: this.logPath(goalId),
      withLock: (fn) => this.withGoalLock(goalId, fn),
      assertLockHeld: () => assertHeld((lock ??= this.lockPath(`goal-${goalId}`))),
      tryLock: (stale) => tryLock((lock ??= this.lockPath(`goal-${goalId}`)), stale),
      logFiles: () => this.logFiles(goalId),
      load: (files) => this.load(goalId, files),
      missing: () => this.missing(goalId),
      eventsOfCall: (call) => eventsOfCall(this.logPath(goalId), call),
      quarantineTornTail: () => this.quarantineTornTail(goalId),
      migrateLegacy: (head, ownExists) => this.migrateLegacy(goalId, head, ownExists),
      writerId: () => this.writerId(),
      firstWrite: () => this.firstWrite(),
      trust: () => this.trust(),
      snapshotKey: () => this.secret('snapshot-key'),
      now: () => this.clock(),
      writeSnapshot: (snap) => this.cache.writeSnapshot(goalId, snap),
      updateIndexEntry: (entry, trust) => this.cache.updateIndexEntry(entry, this.logsDir(goalId), trust),
      snapshotHead: () => this.cache.snapshotHead(goalId),
      warn: (m) => this.onWarning(m),
      memo: this.memos.forGoal(goalId),
      oneShot: this.oneShot,
    };
  }

  /** Moves this writer's torn tail, if any, to a quarantine file. Only under the goal lock (store/event-log.ts says why). */
  quarantineTornTail(goalId: string): EventDraft | undefined {
    return quarantineTornTail(this.logPath(goalId), this.goalDir(goalId), () => this.now());
  }

  /** Under the goal lock: an older LoopX's events.jsonl becomes the head of this writer's log (store/log-migration.ts). */
  /**
   * Before this clone's first event in a goal: name the writer for people, and bring a store made
   * before team mode up to date (the git lines that keep the logs' bytes; its goal index, now a
   * local cache) whichever goal its first write goes to.
   */
  private firstWrite(): void {
    recordWriter(this.root, this.writerId(), defaultWriterName());
    ensureGitFiles(this.root);
    fs.rmSync(path.join(this.root, 'index.json'), { force: true });
  }

  private migrateLegacy(goalId: string, head: WriterHead, ownExists: boolean) {
    return migrateLegacyLog({
      goalDir: this.goalDir(goalId),
      legacy: path.join(this.goalDir(goalId), LEGACY_LOG),
      own: this.logPath(goalId),
      head,
      ownExists,
    });
  }

  /** Rewrites the snapshot from a full replay (self-repair). */
  rebuildSnapshot(goalId: string): LoadedGoal {
    const trust = this.trust();
    const loaded = replayLogs(goalId, this.readLogs(goalId), [], trust, aheadCutoff(this.clock()));
    this.cache.writeSnapshot(goalId, LocalCache.snapshotOf(loaded, trust.fingerprint));
    return loaded;
  }

  /** The goal's `artifacts/` folder; refuses when it (or a folder above it in .loopx) is a link. */
  artifactsDir(goalId: string): string {
    return artifactsDir(this.goalDir(goalId));
  }

  /** Stores command output or a file as evidence, named by the evidence id, with its sha256. */
  writeArtifact(goalId: string, evidenceId: string, content: Buffer | string, ext = 'log'): Artifact {
    this.assertWritable(`keeping evidence ${evidenceId}`);
    return writeArtifact(this.goalDir(goalId), evidenceId, content, ext);
  }
}
