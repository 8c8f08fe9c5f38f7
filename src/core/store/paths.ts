/**
 * Where a store's files are, and which goals and logs exist: the paths below `.loopx/` and the
 * user's config folder, the clone's writer id, the goal folders. Store (store/store.ts) reads and writes
 * through these; nothing here parses a log.
 */
import * as path from 'node:path';
import { checkId, ID_PATTERN, LoopxError, refused } from '../model';
import { workspaceId } from './config-dir';
import type { ParsedLog } from './event-log';
import type { LogFile } from './goal-logs';
import { listLogFiles, logsDir, logsStamp, missingGoal, readLogFile, writerLogPath } from './goal-logs';
import { ensureLocalDir, lockFile, peekWriterId, readOrCreateWriterId } from './local-dir';
import { readdirStore } from './safe-path';
import { LOOPX_DIR } from './workspace';
import { writerNames } from './writers';

export class StoreFiles {
  readonly workspace: string;
  readonly root: string;
  /** The user's LoopX config folder (pinned keys, workspace secrets). */
  readonly configDir: string;
  private cachedWriter?: string;
  private cachedSecretsDir?: string;

  constructor(
    workspace: string,
    configDir: string,
    /** Opened to read only: nothing is created or changed (StoreOptions.readOnly). */
    readonly readOnly = false,
  ) {
    this.workspace = path.resolve(workspace);
    this.root = path.join(this.workspace, LOOPX_DIR);
    this.configDir = configDir;
  }

  /**
   * Refuses (`store_read_only`) in a store opened read-only: called before anything would be
   * created or changed under `.loopx/` or in the config folder. `what` names that write.
   */
  assertWritable(what: string): void {
    if (this.readOnly)
      throw refused(`${this.workspace} is open read-only here: ${what} would write, so nothing was done`, {
        reason: 'store_read_only',
      });
  }

  get policyPath() {
    return path.join(this.root, 'policy.json');
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
    this.assertWritable('making .loopx/local/');
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
  protected lockPath(name: string) {
    this.assertWritable(`taking the lock ${name}`);
    return lockFile(this.localDir, name);
  }

  /** A stable id of this clone of the workspace: the name of its logs, recorded on every event it writes. */
  writerId(): string {
    // Read-only: a clone that has written before has an id; one that has not gets none made.
    if (this.readOnly && this.peekWriterId() === undefined) this.assertWritable('naming this clone a writer');
    this.cachedWriter ??= readOrCreateWriterId(this.localDir);
    return this.cachedWriter;
  }

  /** The writer id if this clone has one yet (nothing is made). */
  protected peekWriterId(): string | undefined {
    return (this.cachedWriter ??= peekWriterId(this.localDir));
  }

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

  /** Each writer's name (user@host, or LOOPX_WRITER_NAME where it first wrote), by writer id. */
  writerNames(): Map<string, string> {
    return writerNames(this.root);
  }

  /** What changes when any log of the goal changes (for callers that poll). */
  logsStamp(goalId: string): string {
    return logsStamp(this.logFiles(goalId));
  }

  protected missing(goalId: string): LoopxError {
    return missingGoal(this.root, this.goalDir(goalId), goalId);
  }
}
