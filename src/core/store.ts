/**
 * The `.loopx/` store. Per goal: `events/<writer>.jsonl`, one append-only, hash-chained log per
 * clone (together the truth; merged at replay), and `artifacts/`. Across goals: `policy.json`
 * (hand-edited, signed), `approvers/`, and `local/` (never committed: the writer id, locks, and
 * the caches: goal snapshots and the goal index). The workspace's secrets (contract and snapshot
 * keys, the status server token) live outside it, in the user's config folder (`secretsDir`). No
 * file under `.loopx/` is reached through a link (safe-path.ts).
 *
 * The class is the one door to these files; the formats and the write protocol live in their own
 * modules (event-log, goal-logs, merge-logs, snapshot, goal-index, local-dir, goal-load, commit).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LoopxError, corrupt, notFound } from './errors';
import { ID_PATTERN, checkId } from './ids';
import { sha256, writeFileAtomic } from './jsonfile';
import { withLock } from './lock';
import type { Artifact, GoalState, Policy } from './model';
import type { EventDraft } from './events';
import { quarantineTornTail } from './event-log';
import { LEGACY_LOG, listLogFiles, logsDir, readLogFile, writerLogPath } from './goal-logs';
import type { LogFile } from './goal-logs';
import type { ParsedLog } from './event-log';
import { readSnapshotFile, writeSnapshotFile } from './snapshot';
import type { Snapshot } from './snapshot';
import { cutSince, parseOpenLogs, replayLogs, resumeFromSnapshot } from './goal-load';
import type { LoadedGoal, OpenLog, WriterHead } from './goal-load';
import { listGoalEntries, upsertIndexEntry } from './goal-index';
import type { IndexEntry } from './goal-index';
import { LOOPX_DIR, ensureGitFiles, findWorkspace, initLayout } from './workspace';
import { policyFiles, readPolicyView, signWorkspacePolicy } from './workspace-policy';
import type { PolicyView } from './trust/policy-signature';
import { ensureLocalDir, lockFile, peekWriterId, readOrCreateWriterId } from './local-dir';
import { commitGoal } from './commit';
import { migrateLegacyLog } from './log-migration';
import { configDir, readOrCreateSecret, workspaceId } from './config-dir';
import { fileStamp, folderStamp } from './file-stamp';
import { lstatStore, mkdirStore, openStoreFile, readdirStore, storePathExists } from './safe-path';
import { PinnedTrust } from './trust/decisions';
import type { Signer, Trust } from './trust/decisions';
import type { CommitOptions, CommitResult, CommitTarget } from './commit';

// Declared with the write protocol; capabilities import CommitResult from here.
export type { CommitOptions, CommitResult } from './commit';

export interface StoreOptions {
  clock?: () => Date;
  lockTimeoutMs?: number;
  /** The user's LoopX config folder (pinned keys, workspace secrets); default from the environment. */
  configDir?: string;
}

export class Store {
  readonly workspace: string;
  readonly root: string;
  private readonly clock: () => Date;
  private readonly lockTimeoutMs: number;
  private cachedWriter?: string;
  private cachedSecretsDir?: string;
  private readonly secrets = new Map<string, Buffer>();
  readonly configDir: string;
  private readonly pinned: PinnedTrust;

  constructor(workspace: string, opts: StoreOptions = {}) {
    this.workspace = path.resolve(workspace);
    this.root = path.join(this.workspace, LOOPX_DIR);
    this.clock = opts.clock ?? (() => new Date());
    this.lockTimeoutMs = opts.lockTimeoutMs ?? 15000;
    this.configDir = opts.configDir ?? configDir(process.env);
    this.pinned = new PinnedTrust(this.configDir);
  }

  /** The keys pinned on this machine: whose decisions count when the logs are replayed. */
  trust(): Trust {
    return this.pinned.current();
  }

  /** Creates `.loopx/` (idempotent) and returns the store. */
  static init(workspace: string, opts?: StoreOptions): Store {
    const s = new Store(workspace, opts);
    initLayout(s.root, { localDir: s.localDir, policy: s.policyPath });
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

  get policyPath() {
    return path.join(this.root, 'policy.json');
  }
  get localDir() {
    return path.join(this.root, 'local');
  }
  /** Caches of this clone, rebuilt from the logs when missing or stale. */
  get cacheDir() {
    return path.join(this.localDir, 'cache');
  }
  get indexPath() {
    return path.join(this.cacheDir, 'index.json');
  }
  /** This workspace's secrets: `<configDir>/workspaces/<workspace id>/` (0700), never in the workspace. */
  get secretsDir() {
    this.cachedSecretsDir ??= path.join(this.configDir, 'workspaces', workspaceId(this.workspace));
    return this.cachedSecretsDir;
  }

  /** Creates `local/` (0700) with its own `.gitignore`: the writer id, locks and caches never reach git. */
  ensureLocalDir(): string {
    return ensureLocalDir(this.localDir);
  }
  goalDir(goalId: string) {
    return path.join(this.root, 'goals', checkId(goalId, 'goal id'));
  }
  /** The folder of a goal's logs, one per writer. */
  logsDir(goalId: string) {
    return logsDir(this.goalDir(goalId));
  }
  /** A writer's log of a goal (this clone's by default). */
  logPath(goalId: string, writer?: string) {
    const dir = this.goalDir(goalId);
    return writerLogPath(dir, checkId(writer ?? this.writerId(), 'writer id'));
  }
  snapshotPath(goalId: string) {
    return path.join(this.cacheDir, 'goals', `${checkId(goalId, 'goal id')}.json`);
  }
  private lockPath(name: string) {
    return lockFile(this.localDir, name);
  }
  now(): string {
    return this.clock().toISOString();
  }

  /** A stable id of this clone of the workspace: the name of its logs, recorded on every event it writes. */
  writerId(): string {
    this.cachedWriter ??= readOrCreateWriterId(this.localDir);
    return this.cachedWriter;
  }

  /**
   * A secret of this workspace in `secretsDir` (made on first use: folder 0700, file 0600), e.g.
   * the contract signing key. Nothing an agent edits in the workspace can reach it.
   */
  secret(name: string, bytes = 32): Buffer {
    const cached = this.secrets.get(name);
    if (cached) return cached;
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
    return readPolicyView(policyFiles(this.root, this.secretsDir), this.trust());
  }

  /**
   * A workspace's first policy is signed with its person's key when the key is first used here,
   * unless policy.json already holds edits that would loosen the default: those the person
   * reviews and signs (`review`). Undefined when a signed policy already counts.
   */
  signFirstPolicy(signer: Signer): 'signed' | 'review' | undefined {
    const v = this.policyView();
    if (v.state !== 'not_signed') return undefined;
    if (v.unsigned.length > 0) return 'review';
    this.signPolicy(signer, v.file);
    return 'signed';
  }

  /**
   * A person signs policy.json as it is now (refused when it is no longer `shown`, what they
   * reviewed): from then on it is what LoopX enforces.
   */
  signPolicy(signer: Signer | undefined, shown?: Policy): PolicyView {
    return signWorkspacePolicy(
      policyFiles(this.root, this.secretsDir),
      signer,
      this.trust(),
      this.clock(),
      shown,
    );
  }

  // ---------------------------------------------------------------------------------------------
  // Reading

  /** Goal ids that have a folder, sorted. Folders whose names are not ids are ignored. */
  goalIds(): string[] {
    let names: string[];
    try {
      names = readdirStore(path.join(this.root, 'goals'));
    } catch (e) {
      if (e instanceof LoopxError) throw e;
      return [];
    }
    return names.filter((n) => ID_PATTERN.test(n)).sort();
  }

  exists(goalId: string): boolean {
    return this.logFiles(goalId).length > 0;
  }

  /** The goal's logs: each writer's, and an older LoopX's events.jsonl while it is there. */
  logFiles(goalId: string): LogFile[] {
    return listLogFiles(this.goalDir(goalId));
  }

  /** Reads and checks every log of a goal. Throws `corrupt` naming the file, line and field. */
  readLogs(goalId: string): { name: string; file: string; parsed: ParsedLog }[] {
    const files = this.logFiles(goalId);
    if (files.length === 0) throw this.missing(goalId);
    return files.map((f) => ({ ...f, parsed: readLogFile(f) }));
  }

  /** What changes when any log of the goal changes (for callers that poll): each log's file stamp. */
  logsStamp(goalId: string): string {
    return this.logFiles(goalId)
      .map((f) => `${f.name}=${fileStamp(f.file)}`)
      .join(',');
  }

  /** One writer's log of a goal, read and checked (this clone's by default). */
  readLog(goalId: string, writer = this.writerId()): ParsedLog {
    const name = checkId(writer, 'writer id');
    const log = this.logFiles(goalId).find((f) => f.name === name);
    if (!log) throw this.missing(goalId);
    return readLogFile(log);
  }

  /** Every log of the goal open for reading (not found, or corrupt, when the goal has none). */
  private openLogs(goalId: string): OpenLog[] {
    const files = this.logFiles(goalId);
    if (files.length === 0) throw this.missing(goalId);
    const open: OpenLog[] = [];
    try {
      for (const f of files) {
        const fd = openStoreFile(f.file, 'r');
        const l: OpenLog = { ...f, fd, size: 0 };
        open.push(l);
        l.size = fs.fstatSync(fd).size;
      }
    } catch (e) {
      for (const l of open) fs.closeSync(l.fd);
      throw e;
    }
    return open;
  }

  private missing(goalId: string): LoopxError {
    if (storePathExists(this.goalDir(goalId))) {
      return corrupt(`goal ${goalId}: its folder has no event log (${this.logsDir(goalId)} holds none)`, {
        goalId,
      });
    }
    return notFound(`no goal ${JSON.stringify(goalId)} in ${this.root}`, { goalId });
  }

  private writeSnapshot(goalId: string, snap: Snapshot): void {
    mkdirStore(path.dirname(this.snapshotPath(goalId)), 0o700);
    writeSnapshotFile(this.snapshotPath(goalId), this.secret('snapshot-key'), snap);
  }

  /** The snapshot, or why it cannot be used. Derived: a missing or broken one is rebuilt from the logs. */
  readSnapshot(goalId: string): { snap?: Snapshot; problem?: string } {
    return readSnapshotFile(this.snapshotPath(goalId), () => this.secret('snapshot-key'));
  }

  /**
   * The goal's current state. Fast path: the snapshot, when the logs are as it saw them, or only
   * this clone's own log grew since. Otherwise (a pull brought other writers' events) a full
   * replay, whose result is cached for the next load.
   */
  load(goalId: string): LoadedGoal {
    checkId(goalId, 'goal id');
    // Opened once: the sizes, the snapshot's check and the replay all read these descriptors.
    const logs = this.openLogs(goalId);
    try {
      const { snap, problem } = this.readSnapshot(goalId);
      const trust = this.trust();
      const own = peekWriterId(this.localDir) ?? '';
      const resumed = snap && resumeFromSnapshot(goalId, logs, snap, own, trust);
      if (resumed) return resumed;
      const ours = snap && snap.trust === trust.fingerprint && snap.state.id === goalId;
      const cut = ours ? cutSince(logs, snap) : undefined;
      const warnings = [problem, cut]
        .filter((w) => w !== undefined)
        .map((w) => `${w}; state rebuilt from the logs`);
      const loaded = replayLogs(goalId, parseOpenLogs(logs), warnings, trust);
      // A stale cache is made again; a damaged one (or one over a cut log) is left for
      // self-repair to find and report.
      if (warnings.length === 0) this.cacheSnapshot(goalId, loaded, trust);
      return loaded;
    } finally {
      for (const l of logs) fs.closeSync(l.fd);
    }
  }

  /**
   * Whether a reader may write caches: only into a `local/` this clone already has. A reader on
   * a fresh clone (the status server, a listing) writes nothing in the workspace.
   */
  private canCache(): boolean {
    try {
      return storePathExists(this.localDir);
    } catch {
      return false;
    }
  }

  /** Saves a replayed state for the next load; a cache, so a failure to write it is no error. */
  private cacheSnapshot(goalId: string, loaded: LoadedGoal, trust: Trust): void {
    if (!this.canCache()) return;
    try {
      this.writeSnapshot(goalId, {
        revision: loaded.revision,
        heads: loaded.heads,
        hlc: loaded.hlc,
        trust: trust.fingerprint,
        state: loaded.state,
      });
    } catch {
      /* a read-only checkout, a full disk: the next load replays again */
    }
  }

  /** Full replay of all the goal's logs (no snapshot). */
  replayGoal(goalId: string, logs = this.readLogs(goalId)): LoadedGoal {
    return replayLogs(goalId, logs, [], this.trust());
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
    return listGoalEntries({
      indexFile: this.indexPath,
      trust: this.trust().fingerprint,
      goalIds: this.goalIds(),
      logsDir: (id) => this.logsDir(id),
      stateOf: (id) => this.load(id).state,
      // A listing keeps the index of a clone that has a local/ current; it makes no local/.
      withIndexLock: (fn) => {
        if (!rebuild && !this.canCache()) throw new Error('no local/ to keep a cache in');
        return withLock(this.lockPath('index'), fn, { timeoutMs: this.lockTimeoutMs });
      },
      rebuild,
    });
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
    return commitGoal(this.commitTarget(goalId), plan, opts);
  }

  /** The store as the write protocol (commit.ts) sees it for one goal. */
  private commitTarget(goalId: string): CommitTarget {
    return {
      goalId,
      dir: this.goalDir(goalId),
      logsDir: this.logsDir(goalId),
      ownLog: this.logPath(goalId),
      withLock: (fn) => this.withGoalLock(goalId, fn),
      exists: () => this.exists(goalId),
      load: () => this.load(goalId),
      missing: () => this.missing(goalId),
      quarantineTornTail: () => this.quarantineTornTail(goalId),
      migrateLegacy: (head, ownExists) => this.migrateLegacy(goalId, head, ownExists),
      writerId: () => this.writerId(),
      trust: () => this.trust(),
      snapshotKey: () => this.secret('snapshot-key'),
      now: () => this.clock(),
      writeSnapshot: (snap) => this.writeSnapshot(goalId, snap),
      updateIndexEntry: (entry, trust) => this.updateIndexEntry(goalId, entry, trust),
    };
  }

  private updateIndexEntry(goalId: string, entry: IndexEntry, trust: string) {
    const logs = folderStamp(this.logsDir(goalId));
    withLock(this.lockPath('index'), () => upsertIndexEntry(this.indexPath, { ...entry, logs }, trust), {
      timeoutMs: this.lockTimeoutMs,
    });
  }

  /** Moves this writer's torn tail, if any, to a quarantine file. Only under the goal lock (event-log.ts says why). */
  quarantineTornTail(goalId: string): EventDraft | undefined {
    return quarantineTornTail(this.logPath(goalId), this.goalDir(goalId), () => this.now());
  }

  /** Under the goal lock: an older LoopX's events.jsonl becomes the head of this writer's log (log-migration.ts). */
  private migrateLegacy(goalId: string, head: WriterHead, ownExists: boolean) {
    // A store from before team mode lacks the lines that keep git from touching the logs' bytes,
    // and holds its goal index where the caches no longer live.
    ensureGitFiles(this.root);
    fs.rmSync(path.join(this.root, 'index.json'), { force: true });
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
    const loaded = replayLogs(goalId, this.readLogs(goalId), [], trust);
    this.writeSnapshot(goalId, {
      revision: loaded.revision,
      heads: loaded.heads,
      hlc: loaded.hlc,
      trust: trust.fingerprint,
      state: loaded.state,
    });
    return loaded;
  }

  /** The goal's `artifacts/` folder; refuses when it (or a folder above it in .loopx) is a link. */
  artifactsDir(goalId: string): string {
    const dir = path.join(this.goalDir(goalId), 'artifacts');
    lstatStore(dir);
    return dir;
  }

  /** Stores command output or a file as evidence, named by the evidence id, with its sha256. */
  writeArtifact(goalId: string, evidenceId: string, content: Buffer | string, ext = 'log'): Artifact {
    checkId(evidenceId, 'evidence id');
    const dir = this.artifactsDir(goalId);
    mkdirStore(dir);
    const name = `${evidenceId}.${ext.replace(/[^a-z0-9]/gi, '') || 'log'}`;
    const buf = Buffer.isBuffer(content) ? content : Buffer.from(content, 'utf8');
    writeFileAtomic(path.join(dir, name), buf);
    return { path: `artifacts/${name}`, sha256: sha256(buf), bytes: buf.length };
  }
}
