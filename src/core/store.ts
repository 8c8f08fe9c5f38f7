/**
 * The `.loopx/` store. Per goal: `events.jsonl` (append-only, hash-chained, the truth),
 * `goal.json` (a snapshot derived from it) and `artifacts/`. Across goals: `index.json` (derived,
 * for fast listing), `policy.json` (hand-edited), `local/` (never committed). The workspace's
 * secrets (contract and snapshot keys, the status server token) live outside it, in the user's
 * config folder (`secretsDir`). No file under `.loopx/` is reached through a link (safe-path.ts).
 *
 * The class is the one door to these files; the formats and the write protocol live in their own
 * modules (event-log, snapshot, goal-index, local-dir, goal-load, commit).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LoopxError, corrupt, notFound } from './errors';
import { ID_PATTERN, checkId } from './ids';
import { sha256, writeFileAtomic } from './jsonfile';
import { withLock } from './lock';
import type { Artifact, GoalState, Policy } from './model';
import type { EventDraft } from './events';
import { parseLog, quarantineTornTail } from './event-log';
import type { ParsedLog } from './event-log';
import { readSnapshotFile, writeSnapshotFile } from './snapshot';
import type { Snapshot } from './snapshot';
import { resumeFromSnapshot, replayLog } from './goal-load';
import type { LoadedGoal } from './goal-load';
import {
  indexEntryOf,
  readIndexFile,
  writeIndexFile,
  upsertIndexEntry,
  collectIndexEntries,
} from './goal-index';
import type { IndexEntry } from './goal-index';
import { LOOPX_DIR, findWorkspace, initLayout } from './workspace';
import { policyFiles, readPolicyView, signWorkspacePolicy } from './workspace-policy';
import type { PolicyView } from './trust/policy-signature';
import { ensureLocalDir, lockFile, readOrCreateWriterId } from './local-dir';
import { commitGoal } from './commit';
import { configDir, readOrCreateSecret, workspaceId } from './config-dir';
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
    initLayout(s.root, { localDir: s.localDir, policy: s.policyPath, index: s.indexPath });
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
  get indexPath() {
    return path.join(this.root, 'index.json');
  }
  get localDir() {
    return path.join(this.root, 'local');
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
  eventsPath(goalId: string) {
    return path.join(this.goalDir(goalId), 'events.jsonl');
  }
  snapshotPath(goalId: string) {
    return path.join(this.goalDir(goalId), 'goal.json');
  }
  private lockPath(name: string) {
    return lockFile(this.localDir, name);
  }
  now(): string {
    return this.clock().toISOString();
  }

  /** A stable id of this clone of the workspace, recorded on every event it writes. */
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
    return storePathExists(this.eventsPath(goalId));
  }

  /** Reads and checks a goal's whole log. Throws `corrupt` naming the file, line and field. */
  readLog(goalId: string): ParsedLog {
    const fd = this.openLog(goalId);
    try {
      return parseLog(fs.readFileSync(fd), this.eventsPath(goalId));
    } finally {
      fs.closeSync(fd);
    }
  }

  /** The goal's events.jsonl, open for reading (not found, or corrupt, when the goal has none). */
  private openLog(goalId: string): number {
    try {
      return openStoreFile(this.eventsPath(goalId), 'r');
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') throw this.missing(goalId);
      throw e;
    }
  }

  private missing(goalId: string): LoopxError {
    if (storePathExists(this.goalDir(goalId))) {
      return corrupt(`goal ${goalId}: its folder has no events.jsonl (${this.eventsPath(goalId)})`, {
        goalId,
      });
    }
    return notFound(`no goal ${JSON.stringify(goalId)} in ${this.root}`, { goalId });
  }

  private writeSnapshot(goalId: string, snap: Snapshot): void {
    writeSnapshotFile(this.snapshotPath(goalId), this.secret('snapshot-key'), snap);
  }

  /** The snapshot, or why it cannot be used. Derived: a missing or broken one is rebuilt from the log. */
  readSnapshot(goalId: string): { snap?: Snapshot; problem?: string } {
    return readSnapshotFile(this.snapshotPath(goalId), () => this.secret('snapshot-key'));
  }

  /**
   * The goal's current state. Fast path: the snapshot, when it covers the whole log (same byte
   * length), or the snapshot plus the few lines appended after it. Otherwise a full replay.
   */
  load(goalId: string): LoadedGoal {
    checkId(goalId, 'goal id');
    const file = this.eventsPath(goalId);
    // Opened once: the size, the snapshot's check and the replay all read this one file.
    const fd = this.openLog(goalId);
    try {
      const size = fs.fstatSync(fd).size;
      const { snap, problem } = this.readSnapshot(goalId);
      const resumed = snap && resumeFromSnapshot(goalId, file, fd, size, snap, this.trust());
      if (resumed) return resumed;
      return this.replayGoal(
        goalId,
        problem
          ? [`${problem}; state rebuilt from the log`]
          : snap
            ? ['goal.json did not match events.jsonl; state rebuilt from the log']
            : [],
        parseLog(fs.readFileSync(fd), file),
      );
    } finally {
      fs.closeSync(fd);
    }
  }

  /** Full replay of the log (no snapshot). */
  replayGoal(goalId: string, warnings: string[] = [], log: ParsedLog = this.readLog(goalId)): LoadedGoal {
    return replayLog(goalId, this.eventsPath(goalId), log, warnings, this.trust());
  }

  /**
   * The goal list: the index, reconciled with the goal folders so a stale index cannot hide or
   * invent a goal. An index made under other pinned keys (or one that does not say, or none) is
   * rebuilt first.
   */
  listGoals(): { goals: IndexEntry[]; errors: { goalId: string; message: string }[] } {
    const index = readIndexFile(this.indexPath);
    if (index.trust !== this.trust().fingerprint) {
      try {
        return this.writeIndex();
      } catch {
        // Not written (a read-only checkout, a busy lock): the list is made from the goals all the same.
        return this.entriesFromGoals();
      }
    }
    const byId = new Map(index.goals.map((e) => [e.id, e]));
    return collectIndexEntries(this.goalIds(), (id) => byId.get(id) ?? indexEntryOf(this.load(id).state));
  }

  /** Rewrites `index.json` from the goals themselves. Returns goals that could not be read. */
  rebuildIndex(): { goalId: string; message: string }[] {
    return this.writeIndex().errors;
  }

  /** Every goal's entry, made from the goal itself (its snapshot and log), not from index.json. */
  private entriesFromGoals() {
    return collectIndexEntries(this.goalIds(), (id) => indexEntryOf(this.load(id).state));
  }

  private writeIndex() {
    return withLock(
      this.lockPath('index'),
      () => {
        const trust = this.trust().fingerprint;
        const list = this.entriesFromGoals();
        writeIndexFile(this.indexPath, list.goals, trust);
        return list;
      },
      { timeoutMs: this.lockTimeoutMs },
    );
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
   * returns the events to append; it may throw to refuse. Returns what was appended.
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
      file: this.eventsPath(goalId),
      dir: this.goalDir(goalId),
      withLock: (fn) => this.withGoalLock(goalId, fn),
      load: () => this.load(goalId),
      missing: () => this.missing(goalId),
      quarantineTornTail: () => this.quarantineTornTail(goalId),
      writerId: () => this.writerId(),
      trust: () => this.trust(),
      snapshotKey: () => this.secret('snapshot-key'),
      now: () => this.now(),
      writeSnapshot: (snap) => this.writeSnapshot(goalId, snap),
      updateIndexEntry: (entry, trust) => this.updateIndexEntry(entry, trust),
    };
  }

  private updateIndexEntry(entry: IndexEntry, trust: string) {
    withLock(this.lockPath('index'), () => upsertIndexEntry(this.indexPath, entry, trust), {
      timeoutMs: this.lockTimeoutMs,
    });
  }

  /** Moves the log's torn tail, if any, to a quarantine file. Only under the goal lock (event-log.ts says why). */
  quarantineTornTail(goalId: string): EventDraft | undefined {
    return quarantineTornTail(this.eventsPath(goalId), this.goalDir(goalId), () => this.now());
  }

  /** Rewrites the snapshot from a full replay (self-repair). */
  rebuildSnapshot(goalId: string): LoadedGoal {
    const trust = this.trust();
    const loaded = replayLog(goalId, this.eventsPath(goalId), this.readLog(goalId), [], trust);
    this.writeSnapshot(goalId, { ...loaded, trust: trust.fingerprint });
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
