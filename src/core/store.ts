/**
 * The `.loopx/` store. Per goal: `events.jsonl` (append-only, hash-chained, the truth),
 * `goal.json` (a snapshot derived from it) and `artifacts/`. Across goals: `index.json` (derived,
 * for fast listing), `policy.json` (hand-edited), `local/` (never committed).
 *
 * Write protocol (see DESIGN.md): lock the goal, load its current state, let the caller plan the
 * events against it, append them in one write + fsync (the acknowledgement), then rewrite the
 * snapshot and the index entry through temp file + rename, then unlock. A crash anywhere leaves
 * a log whose complete lines are every acknowledged event; derived files are rebuilt from it.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import type { LoopxError } from './errors';
import { conflict, corrupt, notFound, usageError } from './errors';
import { ID_PATTERN, ID_RULE, checkId, newId } from './ids';
import {
  sha256,
  describeIssues,
  readJsonFile,
  writeFileAtomic,
  writeJsonAtomic,
  parseJsonText,
} from './jsonfile';
import { withLock } from './lock';
import { Actor, Policy, DEFAULT_POLICY, effectiveStatus, Id, GoalStatus, Timestamp } from './model';
import type { Artifact, GoalState } from './model';
import { EVENT_VERSION, LoopxEvent, applyInPlace } from './events';
import type { EventDraft } from './events';

export const LOOPX_DIR = '.loopx';

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
  mac: z.string().regex(/^[0-9a-f]{64}$/),
});
interface Snapshot {
  revision: number;
  logBytes: number;
  lastHash: string | null;
  state: GoalState;
}

export const IndexEntry = z.object({
  id: Id,
  title: z.string(),
  status: GoalStatus,
  createdAt: Timestamp,
  todosDone: z.number().int().nonnegative(),
  todosTotal: z.number().int().nonnegative(),
  pendingGates: z.number().int().nonnegative(),
});
export type IndexEntry = z.infer<typeof IndexEntry>;
const IndexFile = z.object({ v: z.literal(1), goals: z.array(IndexEntry) });

export interface LoadedGoal {
  state: GoalState;
  /** Seq of the last event: the goal's revision. */
  revision: number;
  lastHash: string | null;
  logBytes: number;
  /** Things a person should know that did not stop the load (a torn tail, a stale snapshot). */
  warnings: string[];
  /** Events in the log after the snapshot that was used (0 after a full replay or when current). */
  snapshotLag?: number;
}

/**
 * A commit rewrites goal.json only once the log has run this many events past it: loading reads
 * the few lines after the snapshot anyway, and rewriting the whole state on every event would
 * make each write cost as much as the goal is large.
 */
export const SNAPSHOT_EVERY = 8;

export interface ParsedLog {
  events: LoopxEvent[];
  /** Sha256 of each complete line, in order. */
  hashes: string[];
  /** Bytes after the last newline: a write in progress or a crash mid-write. */
  torn?: { line: number; offset: number; bytes: number };
  /** Byte length of the complete lines. */
  completeBytes: number;
}

export interface CommitOptions {
  actor: Actor;
  /** Refuse with a conflict if the goal is not at this revision. */
  expectRevision?: number;
  /** The goal must not exist yet (goal creation). */
  create?: boolean;
  /**
   * Leave index.json alone (bulk generation: the caller rebuilds the index once at the end).
   * Listing stays correct meanwhile: it reconciles the index with the goal folders.
   */
  deferIndex?: boolean;
}

export interface CommitResult {
  events: LoopxEvent[];
  state: GoalState;
  revision: number;
}

export interface StoreOptions {
  clock?: () => Date;
  lockTimeoutMs?: number;
}

export function indexEntryOf(state: GoalState): IndexEntry {
  const counted = state.todos.filter((t) => t.status !== 'cancelled');
  return {
    id: state.id,
    title: state.title,
    status: effectiveStatus(state),
    createdAt: state.createdAt,
    todosDone: counted.filter((t) => t.status === 'done').length,
    todosTotal: counted.length,
    pendingGates: state.gates.filter((g) => g.status === 'pending').length,
  };
}

/** Parses a log's bytes into events, checking each line's schema, seq and hash link. */
export function parseLog(
  buf: Buffer,
  file: string,
  startLine = 1,
  prevHash: string | null = null,
): ParsedLog {
  const events: LoopxEvent[] = [];
  const hashes: string[] = [];
  let offset = 0;
  let lineNo = startLine;
  let prev = prevHash;
  while (offset < buf.length) {
    const nl = buf.indexOf(10, offset);
    if (nl === -1) {
      return {
        events,
        hashes,
        completeBytes: offset,
        torn: { line: lineNo, offset, bytes: buf.length - offset },
      };
    }
    const line = buf.toString('utf8', offset, nl);
    const where = `${file}:${lineNo}`;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch (e) {
      throw corrupt(`${where}: not valid JSON: ${(e as Error).message}`, { file, line: lineNo });
    }
    const parsed = LoopxEvent.safeParse(raw);
    if (!parsed.success) throw corrupt(`${where}: ${describeIssues(parsed.error)}`, { file, line: lineNo });
    const ev = parsed.data as LoopxEvent;
    if (ev.seq !== lineNo) {
      throw corrupt(
        `${where}: field seq: is ${ev.seq}, expected ${lineNo} (a line was removed, inserted or moved)`,
        {
          file,
          line: lineNo,
        },
      );
    }
    if (ev.prev !== prev) {
      throw corrupt(
        `${where}: field prev: does not match the sha256 of line ${lineNo - 1} (the log was edited before this line)`,
        { file, line: lineNo },
      );
    }
    prev = sha256(line);
    hashes.push(prev);
    events.push(ev);
    offset = nl + 1;
    lineNo++;
  }
  return { events, hashes, completeBytes: offset };
}

/**
 * Creates `file` with `content` unless it exists, atomically: the content is written to a temp
 * file first and hard-linked into place, so a concurrent reader never sees it half-written.
 */
function createOnce(file: string, content: string): void {
  const tmp = `${file}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  fs.writeFileSync(tmp, content, { mode: 0o600 });
  try {
    fs.linkSync(tmp, file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}

export class Store {
  readonly workspace: string;
  readonly root: string;
  private readonly clock: () => Date;
  private readonly lockTimeoutMs: number;
  private cachedWriter?: string;
  private readonly secrets = new Map<string, Buffer>();

  constructor(workspace: string, opts: StoreOptions = {}) {
    this.workspace = path.resolve(workspace);
    this.root = path.join(this.workspace, LOOPX_DIR);
    this.clock = opts.clock ?? (() => new Date());
    this.lockTimeoutMs = opts.lockTimeoutMs ?? 15000;
  }

  /** Creates `.loopx/` (idempotent) and returns the store. */
  static init(workspace: string, opts?: StoreOptions): Store {
    const s = new Store(workspace, opts);
    fs.mkdirSync(path.join(s.root, 'goals'), { recursive: true });
    s.ensureLocalDir();
    // Committed with .loopx/, so a fresh clone ignores local/ before anything is written there.
    const topIgnore = path.join(s.root, '.gitignore');
    if (!fs.existsSync(topIgnore)) fs.writeFileSync(topIgnore, 'local/\n');
    const policy = s.policyPath;
    if (!fs.existsSync(policy)) writeJsonAtomic(policy, DEFAULT_POLICY);
    if (!fs.existsSync(s.indexPath)) writeJsonAtomic(s.indexPath, { v: 1, goals: [] });
    return s;
  }

  /** Opens an existing store; a clear error when the workspace has none. */
  static open(workspace: string, opts?: StoreOptions): Store {
    const s = new Store(workspace, opts);
    if (!fs.existsSync(path.join(s.root, 'goals'))) {
      throw notFound(
        `no LoopX workspace at ${s.workspace} (no ${LOOPX_DIR}/goals): run \`loopx init\` there first`,
      );
    }
    return s;
  }

  /** Like git: the nearest folder at or above `start` that has a `.loopx/`. */
  static discover(start: string): string | undefined {
    let dir = path.resolve(start);
    for (;;) {
      if (fs.existsSync(path.join(dir, LOOPX_DIR, 'goals'))) return dir;
      const up = path.dirname(dir);
      if (up === dir) return undefined;
      dir = up;
    }
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

  /** Creates `local/` (0700) with its own `.gitignore`: keys, locks and tokens never reach git. */
  ensureLocalDir(): string {
    const dir = this.localDir;
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const ignore = path.join(dir, '.gitignore');
    if (!fs.existsSync(ignore))
      fs.writeFileSync(ignore, '# Machine-local: signing keys, locks, tokens. Never commit.\n*\n');
    return dir;
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
    const dir = path.join(this.localDir, 'locks');
    if (!fs.existsSync(dir)) {
      this.ensureLocalDir();
      fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    }
    return path.join(dir, `${name}.lock`);
  }
  now(): string {
    return this.clock().toISOString();
  }

  /** A stable id of this clone of the workspace, recorded on every event it writes. */
  writerId(): string {
    if (this.cachedWriter) return this.cachedWriter;
    const file = path.join(this.localDir, 'writer-id');
    let id: string;
    try {
      id = fs.readFileSync(file, 'utf8').trim();
    } catch {
      this.ensureLocalDir();
      createOnce(file, newId('w', 12));
      id = fs.readFileSync(file, 'utf8').trim();
    }
    // A damaged file in local/ is a corrupt store (exit 6, naming the file), not a usage error.
    if (!ID_PATTERN.test(id)) {
      throw corrupt(`${file} does not hold a valid writer id (${ID_RULE}): delete it and a new one is made`, {
        file,
      });
    }
    this.cachedWriter = id;
    return this.cachedWriter;
  }

  /** A secret in `local/` (created on first use, mode 0600), e.g. the contract signing key. */
  localSecret(name: string, bytes = 32): Buffer {
    const cached = this.secrets.get(name);
    if (cached) return cached;
    const key = this.readOrCreateSecret(name, bytes);
    this.secrets.set(name, key);
    return key;
  }

  private readOrCreateSecret(name: string, bytes: number): Buffer {
    const file = path.join(this.localDir, checkId(name, 'secret name'));
    // A damaged key must not quietly become a short (or empty) one: anyone could sign with that.
    const read = () => {
      const text = fs.readFileSync(file, 'utf8').trim();
      if (!new RegExp(`^[0-9a-f]{${bytes * 2}}$`).test(text)) {
        throw corrupt(
          `${file} is not a valid key (expected ${bytes * 2} hex characters): delete it to make a new one (what the old key signed stops verifying)`,
          { file },
        );
      }
      return Buffer.from(text, 'hex');
    };
    if (fs.existsSync(file)) return read();
    this.ensureLocalDir();
    createOnce(file, randomBytes(bytes).toString('hex') + '\n');
    return read();
  }

  policy(): Policy {
    if (!fs.existsSync(this.policyPath)) return DEFAULT_POLICY;
    return readJsonFile(this.policyPath, Policy);
  }

  // ---------------------------------------------------------------------------------------------
  // Reading

  /** Goal ids that have a folder, sorted. Folders whose names are not ids are ignored. */
  goalIds(): string[] {
    let names: string[];
    try {
      names = fs.readdirSync(path.join(this.root, 'goals'));
    } catch {
      return [];
    }
    return names.filter((n) => /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/.test(n)).sort();
  }

  exists(goalId: string): boolean {
    return fs.existsSync(this.eventsPath(goalId));
  }

  /** Reads and checks a goal's whole log. Throws `corrupt` naming the file, line and field. */
  readLog(goalId: string): ParsedLog {
    const file = this.eventsPath(goalId);
    let buf: Buffer;
    try {
      buf = fs.readFileSync(file);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw this.missing(goalId);
      throw e;
    }
    return parseLog(buf, file);
  }

  private missing(goalId: string): LoopxError {
    if (fs.existsSync(this.goalDir(goalId))) {
      return corrupt(`goal ${goalId}: its folder has no events.jsonl (${this.eventsPath(goalId)})`, {
        goalId,
      });
    }
    return notFound(`no goal ${JSON.stringify(goalId)} in ${this.root}`, { goalId });
  }

  private snapshotMac(
    revision: number,
    logBytes: number,
    lastHash: string | null,
    stateText: string,
  ): string {
    return createHmac('sha256', this.localSecret('snapshot-key'))
      .update(`${revision}\n${logBytes}\n${lastHash}\n${stateText}`)
      .digest('hex');
  }

  private writeSnapshot(goalId: string, snap: Snapshot): void {
    const stateText = JSON.stringify(snap.state);
    const mac = this.snapshotMac(snap.revision, snap.logBytes, snap.lastHash, stateText);
    const header = JSON.stringify({
      v: 2,
      revision: snap.revision,
      logBytes: snap.logBytes,
      lastHash: snap.lastHash,
      mac,
    });
    writeFileAtomic(this.snapshotPath(goalId), `${header}\n${stateText}\n`);
  }

  /** The snapshot, or why it cannot be used. Derived: a missing or broken one is rebuilt from the log. */
  readSnapshot(goalId: string): { snap?: Snapshot; problem?: string } {
    const file = this.snapshotPath(goalId);
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return {};
      return { problem: `${file}: ${(e as Error).message}` };
    }
    try {
      const nl = text.indexOf('\n');
      const header = parseJsonText(nl === -1 ? text : text.slice(0, nl), SnapshotHeader, `${file} (line 1)`);
      const stateText = text.slice(nl + 1).replace(/\n$/, '');
      const mac = Buffer.from(
        this.snapshotMac(header.revision, header.logBytes, header.lastHash, stateText),
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
        snap: { revision: header.revision, logBytes: header.logBytes, lastHash: header.lastHash, state },
      };
    } catch (e) {
      return { problem: (e as Error).message }; // names the file, the line (JSON syntax) or the field
    }
  }

  /** Whether the log's last complete line (ending at `end`) hashes to `lastHash`: a cheap guard against same-length edits. */
  private lastLineMatches(file: string, end: number, lastHash: string | null): boolean {
    if (end === 0) return lastHash === null;
    const fd = fs.openSync(file, 'r');
    try {
      // Read backwards in small steps: a line is usually well under 4 KB.
      let len = Math.min(end, 4096);
      for (;;) {
        const buf = Buffer.alloc(len);
        fs.readSync(fd, buf, 0, len, end - len);
        if (buf[len - 1] !== 10) return false;
        const nl = buf.lastIndexOf(10, len - 2);
        if (nl !== -1 || len === end) return sha256(buf.subarray(nl + 1, len - 1)) === lastHash;
        if (len >= 1024 * 1024) return false;
        len = Math.min(end, len * 4);
      }
    } finally {
      fs.closeSync(fd);
    }
  }

  /**
   * The goal's current state. Fast path: the snapshot, when it covers the whole log (same byte
   * length), or the snapshot plus the few lines appended after it. Otherwise a full replay.
   */
  load(goalId: string): LoadedGoal {
    checkId(goalId, 'goal id');
    const file = this.eventsPath(goalId);
    let size: number;
    try {
      size = fs.statSync(file).size;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw this.missing(goalId);
      throw e;
    }
    const { snap, problem } = this.readSnapshot(goalId);
    if (
      snap &&
      snap.logBytes === size &&
      snap.state.id === goalId &&
      this.lastLineMatches(file, size, snap.lastHash)
    ) {
      return {
        state: snap.state,
        revision: snap.revision,
        lastHash: snap.lastHash,
        logBytes: size,
        warnings: [],
        snapshotLag: 0,
      };
    }
    if (
      snap &&
      snap.logBytes < size &&
      snap.state.id === goalId &&
      this.lastLineMatches(file, snap.logBytes, snap.lastHash)
    ) {
      const fd = fs.openSync(file, 'r');
      try {
        const tail = Buffer.alloc(size - snap.logBytes);
        fs.readSync(fd, tail, 0, tail.length, snap.logBytes);
        const parsed = parseLog(tail, file, snap.revision + 1, snap.lastHash);
        let state = snap.state;
        for (const ev of parsed.events) state = applyInPlace(state, ev, goalId);
        return {
          state,
          revision: snap.revision + parsed.events.length,
          lastHash: parsed.hashes.at(-1) ?? snap.lastHash,
          logBytes: snap.logBytes + parsed.completeBytes,
          warnings: parsed.torn ? [this.tornWarning(goalId, parsed.torn)] : [],
          snapshotLag: parsed.events.length,
        };
      } catch {
        // The tail does not continue the snapshot (log rewritten or truncated): replay it all.
      } finally {
        fs.closeSync(fd);
      }
    }
    return this.replayGoal(
      goalId,
      problem
        ? [`${problem}; state rebuilt from the log`]
        : snap
          ? ['goal.json did not match events.jsonl; state rebuilt from the log']
          : [],
    );
  }

  private tornWarning(goalId: string, torn: NonNullable<ParsedLog['torn']>) {
    return (
      `goal ${goalId}: ${this.eventsPath(goalId)}:${torn.line} is an incomplete line (${torn.bytes} bytes without a newline): ` +
      'a write in progress or one cut short by a crash; it is not part of the state. `loopx self-repair` moves it aside.'
    );
  }

  /** Full replay of the log (no snapshot). */
  replayGoal(goalId: string, warnings: string[] = []): LoadedGoal {
    const log = this.readLog(goalId);
    if (log.events.length === 0)
      throw corrupt(`goal ${goalId}: ${this.eventsPath(goalId)} has no complete event`, { goalId });
    let state: GoalState | undefined;
    log.events.forEach((ev, i) => {
      try {
        state = applyInPlace(state, ev, goalId);
      } catch (e) {
        throw corrupt(`${this.eventsPath(goalId)}:${i + 1}: ${(e as Error).message}`, {
          goalId,
          line: i + 1,
        });
      }
    });
    const w = [...warnings];
    if (log.torn) w.push(this.tornWarning(goalId, log.torn));
    return {
      state: state!,
      revision: log.events.length,
      lastHash: log.hashes.at(-1) ?? null,
      logBytes: log.completeBytes,
      warnings: w,
    };
  }

  /** The goal list: the index, reconciled with the goal folders so a stale index cannot hide or invent a goal. */
  listGoals(): { goals: IndexEntry[]; errors: { goalId: string; message: string }[] } {
    const ids = this.goalIds();
    let entries: IndexEntry[] = [];
    try {
      entries = readJsonFile(this.indexPath, IndexFile).goals;
    } catch {
      entries = [];
    }
    const byId = new Map(entries.map((e) => [e.id, e]));
    const goals: IndexEntry[] = [];
    const errors: { goalId: string; message: string }[] = [];
    for (const id of ids) {
      const entry = byId.get(id);
      if (entry) {
        goals.push(entry);
        continue;
      }
      try {
        goals.push(indexEntryOf(this.load(id).state));
      } catch (e) {
        errors.push({ goalId: id, message: (e as Error).message });
      }
    }
    goals.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
    return { goals, errors };
  }

  /** Rewrites `index.json` from the goals themselves. Returns goals that could not be read. */
  rebuildIndex(): { goalId: string; message: string }[] {
    return withLock(
      this.lockPath('index'),
      () => {
        const errors: { goalId: string; message: string }[] = [];
        const goals: IndexEntry[] = [];
        for (const id of this.goalIds()) {
          try {
            goals.push(indexEntryOf(this.load(id).state));
          } catch (e) {
            errors.push({ goalId: id, message: (e as Error).message });
          }
        }
        goals.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
        writeJsonAtomic(this.indexPath, { v: 1, goals });
        return errors;
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
    // The actor comes from outside (LOOPX_ACTOR, LOOPX_AGENT, --agent, a client's name): a bad one
    // is the caller's error, not a crash.
    const checkedActor = Actor.safeParse(opts.actor);
    if (!checkedActor.success) {
      throw usageError(`the caller's identity (actor) is not valid: ${describeIssues(checkedActor.error)}`, {
        goalId,
      });
    }
    const actor = checkedActor.data;
    // `made`: this call created the goal's folder, so a refused creation removes it again (while
    // still empty) instead of leaving a goal that never existed, listed as broken from then on.
    const made = opts.create ? fs.mkdirSync(this.goalDir(goalId), { recursive: true }) !== undefined : false;
    let pendingSync: number | undefined;
    try {
      return this.withGoalLock(goalId, () => {
        try {
          return this.commitLocked(goalId, plan, opts, actor, (fd) => (pendingSync = fd));
        } catch (e) {
          if (made && pendingSync === undefined) {
            try {
              fs.rmdirSync(this.goalDir(goalId));
            } catch {
              /* not empty: leave it */
            }
          }
          throw e;
        }
      });
    } finally {
      if (pendingSync !== undefined) {
        try {
          fs.fsyncSync(pendingSync);
        } finally {
          fs.closeSync(pendingSync);
        }
      }
    }
  }

  private commitLocked(
    goalId: string,
    plan: (state: GoalState | undefined, revision: number) => EventDraft[],
    opts: CommitOptions,
    actor: Actor,
    syncLater: (fd: number) => void,
  ): CommitResult {
    const file = this.eventsPath(goalId);
    const exists = fs.existsSync(file);
    if (opts.create && exists) throw conflict(`goal ${goalId} already exists`, { goalId });
    if (!opts.create && !exists) throw this.missing(goalId);
    // A torn tail is not part of the state (load leaves it out), so plan against the state first
    // and quarantine only once the call is not refused: a refusal must change nothing, and the
    // quarantine is then recorded by the `log.quarantined` event of the write that does it.
    const cur: LoadedGoal | undefined = exists ? this.load(goalId) : undefined;
    const revision = cur?.revision ?? 0;
    if (opts.expectRevision !== undefined && opts.expectRevision !== revision) {
      throw conflict(
        `goal ${goalId} is at revision ${revision}, not ${opts.expectRevision} as expected: it changed since you read it; read it again and retry`,
        { goalId, revision, expected: opts.expectRevision },
      );
    }
    // The plan sees a private copy: a refusal half-way must not leave a changed state behind.
    const planned = plan(cur ? structuredClone(cur.state) : undefined, revision);
    const quarantined = exists ? this.quarantineTornTail(goalId) : undefined;
    const drafts: EventDraft[] = quarantined ? [quarantined, ...planned] : planned;
    if (drafts.length === 0) return { events: [], state: cur!.state, revision };
    const indexBefore = cur ? JSON.stringify(indexEntryOf(cur.state)) : '';
    const writer = this.writerId();
    // The snapshot key is needed after the append: a damaged one must refuse the call before
    // anything is written, not report an error for an event that was appended anyway.
    this.localSecret('snapshot-key');
    const ts = this.now();
    let state = cur?.state;
    let prev = cur?.lastHash ?? null;
    let seq = revision;
    const events: LoopxEvent[] = [];
    const lines: string[] = [];
    for (const d of drafts) {
      const candidate = {
        v: EVENT_VERSION,
        seq: ++seq,
        id: newId('ev', 10),
        ts,
        writer,
        actor,
        prev,
        type: d.type,
        data: d.data,
      };
      const checked = LoopxEvent.safeParse(candidate);
      if (!checked.success) {
        throw usageError(`refused to write an invalid ${d.type} event: ${describeIssues(checked.error)}`, {
          goalId,
        });
      }
      const ev = checked.data as LoopxEvent;
      try {
        state = applyInPlace(state, ev, goalId);
      } catch (e) {
        throw usageError(`refused to write ${d.type}: ${(e as Error).message}`, { goalId });
      }
      const line = JSON.stringify(ev);
      lines.push(line);
      prev = sha256(line);
      events.push(ev);
    }
    const chunk = Buffer.from(lines.join('\n') + '\n', 'utf8');
    const fd = fs.openSync(file, 'a', 0o644);
    try {
      fs.writeSync(fd, chunk);
    } catch (e) {
      fs.closeSync(fd);
      throw e;
    }
    // The fsync (the acknowledgement) happens after the lock is released: waiting for the disk
    // no longer holds other writers back, and concurrent fsyncs share one journal commit. An
    // fsync flushes everything written to the file before it, so no later event is durable
    // while an earlier one is not. Derived files below are rebuilt if a crash outruns them.
    syncLater(fd);
    const logBytes = (cur?.logBytes ?? 0) + chunk.length;
    const lag = (cur?.snapshotLag ?? 0) + events.length;
    if (!cur || cur.snapshotLag === undefined || lag >= SNAPSHOT_EVERY) {
      this.writeSnapshot(goalId, { revision: seq, logBytes, lastHash: prev, state: state! });
    }
    const entry = indexEntryOf(state!);
    if (!opts.deferIndex && JSON.stringify(entry) !== indexBefore) this.updateIndexEntry(entry);
    return { events, state: state!, revision: seq };
  }

  private updateIndexEntry(entry: IndexEntry) {
    withLock(
      this.lockPath('index'),
      () => {
        let goals: IndexEntry[];
        try {
          goals = readJsonFile(this.indexPath, IndexFile).goals;
        } catch {
          goals = []; // missing or broken: listGoals reconciles with folders, self-repair rebuilds
        }
        const i = goals.findIndex((g) => g.id === entry.id);
        if (i === -1) goals.push(entry);
        else goals[i] = entry;
        writeJsonAtomic(this.indexPath, { v: 1, goals });
      },
      { timeoutMs: this.lockTimeoutMs },
    );
  }

  /**
   * Under the goal lock an incomplete last line cannot be a write in progress: it is a crashed
   * write, never acknowledged. Move it to a quarantine file (never delete) and cut the log back
   * to its last complete line, so the next append starts on a fresh line.
   */
  quarantineTornTail(goalId: string): EventDraft | undefined {
    const file = this.eventsPath(goalId);
    // Every commit checks, so look at the last byte before reading the whole log.
    const fd = fs.openSync(file, 'r');
    try {
      const size = fs.fstatSync(fd).size;
      const last = Buffer.alloc(1);
      if (size === 0 || (fs.readSync(fd, last, 0, 1, size - 1) === 1 && last[0] === 10)) return undefined;
    } finally {
      fs.closeSync(fd);
    }
    const buf = fs.readFileSync(file);
    if (buf.length === 0 || buf[buf.length - 1] === 10) return undefined;
    const cut = buf.lastIndexOf(10) + 1;
    const torn = buf.subarray(cut);
    const name = `events.torn-${this.now().replace(/[:.]/g, '-')}-${newId('q', 4)}.jsonl`;
    fs.writeFileSync(path.join(this.goalDir(goalId), name), torn);
    fs.truncateSync(file, cut);
    return { type: 'log.quarantined', data: { file: name, bytes: torn.length, sha256: sha256(torn) } };
  }

  /** Rewrites the snapshot from a full replay (self-repair). */
  rebuildSnapshot(goalId: string): LoadedGoal {
    const loaded = this.replayGoal(goalId);
    this.writeSnapshot(goalId, loaded);
    return loaded;
  }

  /** Stores command output or a file as evidence, named by the evidence id, with its sha256. */
  writeArtifact(goalId: string, evidenceId: string, content: Buffer | string, ext = 'log'): Artifact {
    checkId(evidenceId, 'evidence id');
    const dir = path.join(this.goalDir(goalId), 'artifacts');
    fs.mkdirSync(dir, { recursive: true });
    const name = `${evidenceId}.${ext.replace(/[^a-z0-9]/gi, '') || 'log'}`;
    const buf = Buffer.isBuffer(content) ? content : Buffer.from(content, 'utf8');
    writeFileAtomic(path.join(dir, name), buf);
    return { path: `artifacts/${name}`, sha256: sha256(buf), bytes: buf.length };
  }
}
