/**
 * The files of group commit (store/group-commit.ts says how it works), one folder per goal in the
 * clone's `local/queue/<goal>/`, never committed:
 *
 *   <id>.req      a call waiting for the lock holder
 *   <id>.claimed  a call the holder took (renamed from .req, so a caller that gives up and the
 *                 holder cannot both have it: whoever renames or removes it first wins)
 *   <id>.res      the answer: the holder writes it into the .claimed file once the call's events
 *                 are fsync'd (or it was refused), then renames that, so it is never seen half-written
 *   batch.json    the holder's journal while it commits a batch (empty between batches): where in
 *                 its log each call's events go, so the next holder can finish a batch whose holder
 *                 died (`recover`): a call whose bytes are in the log is answered as committed, every
 *                 other claimed call goes back in the queue
 *
 * Each call costs four changes to the folder (create, claim, answer, remove): on a journaling file
 * system those wait behind the log's fsync, so no temp files. Nothing here is fsync'd but the log:
 * the files matter only to processes that are running, and a machine that crashes takes those
 * with it.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import type { ErrorKind, LoopxEvent } from '../model';
import { CallKey, lazy } from '../model';
import { storageError, writeAll } from './disk-write';
import { sha256 } from './json-file';
import { lstatStore, mkdirStore, openStoreFile } from './safe-path';

/** A call as the process that made it hands it to the lock holder. */
export interface GroupRequest {
  /** Only a holder with the same context answers it: the same LoopX, config folder and clock. */
  ctx: string;
  capability: string;
  input: Record<string, unknown>;
  actor: unknown;
  expectRevision?: number;
  /** The call's idempotency key (CommitOptions.call). */
  call?: string;
}

/** The holder's answer: the call's events (fsync'd), or why it was refused. */
export type GroupAnswer =
  | { ok: true; events: LoopxEvent[]; revision: number }
  | { ok: false; kind: ErrorKind; message: string; details: Record<string, unknown> };

/** A queued call's file is at most this big; a bigger call waits for the lock itself. */
const MAX_REQUEST_BYTES = 256 * 1024;
/** An answer, or the journal of a whole batch's answers: bigger than this is not read (a hand-made file). */
const MAX_JOURNAL_BYTES = 256 * 1024 * 1024;

const RequestFile = lazy(() =>
  z.object({
    v: z.literal(1),
    ctx: z.string().max(128),
    capability: z.string().max(128),
    input: z.record(z.string(), z.unknown()),
    actor: z.unknown(),
    expectRevision: z.number().int().nonnegative().optional(),
    call: CallKey.optional(),
  }),
);

const Journal = lazy(() =>
  z.object({
    v: z.literal(1),
    /** Where each committed call's events are in the holder's log, and its answer. */
    entries: z.array(
      z.object({
        id: z.string(),
        log: z.string(),
        start: z.number().int().nonnegative(),
        end: z.number().int().nonnegative(),
        sha: z.string(),
        answer: z.unknown(),
      }),
    ),
  }),
);

export interface JournalEntry {
  id: string;
  /** The log the events were appended to, and their byte range in it. */
  log: string;
  start: number;
  end: number;
  sha: string;
  answer: GroupAnswer;
}

const ID = /^[0-9a-f]{24}$/;
const JOURNAL = 'batch.json';
/** An answer nobody collected (its caller died) is removed after this long. */
const ANSWER_KEPT_MS = 10 * 60_000;
/** A call file that still does not parse this long after it was made is refused (not one being written). */
const UNREADABLE_MS = 2000;

const O_NOFOLLOW = fs.constants.O_NOFOLLOW ?? 0;
const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_TRUNC } = fs.constants;

const gone = (e: unknown) => (e as NodeJS.ErrnoException).code === 'ENOENT';

/** unlink, where one that is gone already is fine (fs.rmSync costs several calls more). */
function removeFile(p: string): void {
  try {
    fs.unlinkSync(p);
  } catch (e) {
    if (!gone(e)) throw e;
  }
}

/**
 * The folder's files are opened with O_NOFOLLOW; the folders above them are checked for links
 * (store/safe-path.ts) once per operation, not once per file: a batch touches dozens.
 */
function openIn(file: string, flags: number): number {
  return fs.openSync(file, flags | O_NOFOLLOW, 0o600);
}

function writeWhole(file: string, flags: number, body: string): void {
  const fd = openIn(file, flags);
  const buf = Buffer.from(body);
  try {
    writeAll(fd, buf);
  } catch (e) {
    // A new file the disk would not take whole is removed: a half-written call is no call.
    if (flags & O_EXCL) removeFile(file);
    throw storageError(e, file, buf.length);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Replaces a file's content without ever leaving it empty: written over from the start, then cut
 * to length. A kill in between leaves old bytes after the new ones, which do not parse; an emptied
 * journal would read as "no batch under way" while calls are still claimed.
 */
function overwrite(file: string, body: string): void {
  const fd = openIn(file, O_WRONLY | O_CREAT);
  try {
    const buf = Buffer.from(body);
    try {
      writeAll(fd, buf, 0);
    } catch (e) {
      throw storageError(e, file, buf.length, 'the batch was not started');
    }
    fs.ftruncateSync(fd, buf.length);
  } finally {
    fs.closeSync(fd);
  }
}

function readWhole(file: string, max = MAX_REQUEST_BYTES): { text: string; mtimeMs: number } {
  const fd = openIn(file, O_RDONLY);
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw new Error('it is not a plain file');
    if (st.size > max) throw new Error(`it is over ${max} bytes`);
    return { text: fs.readFileSync(fd, 'utf8'), mtimeMs: st.mtimeMs };
  } finally {
    fs.closeSync(fd);
  }
}

export class GroupQueue {
  constructor(readonly dir: string) {}

  private file(id: string, ext: 'req' | 'claimed' | 'res') {
    return path.join(this.dir, `${id}.${ext}`);
  }

  /** Refuses a linked folder on the way to the queue (and says whether it exists). */
  private checked(): boolean {
    return lstatStore(this.dir)?.isDirectory() ?? false;
  }

  // ---------------------------------------------------------------------------------------------
  // The caller's side

  /** Queues a call; its id, or undefined when it is too big to queue. */
  submit(req: GroupRequest): string | undefined {
    const body = JSON.stringify({ v: 1, ...req });
    if (Buffer.byteLength(body) > MAX_REQUEST_BYTES) return undefined;
    if (!this.checked()) mkdirStore(this.dir, 0o700);
    const id = randomBytes(12).toString('hex');
    // Written in one write after an exclusive create: a holder that reads it half-written leaves
    // it for the next batch.
    writeWhole(this.file(id, 'req'), O_WRONLY | O_CREAT | O_EXCL, body);
    return id;
  }

  /** The answer to call `id` if there is one yet (taken: the file is removed). */
  answer(id: string): GroupAnswer | undefined {
    const f = this.file(id, 'res');
    if (!fs.existsSync(f)) return undefined;
    let answer: GroupAnswer;
    try {
      answer = JSON.parse(readWhole(f, MAX_JOURNAL_BYTES).text) as GroupAnswer;
    } catch (e) {
      answer = refusal(
        `the answer to queued call ${id} in ${this.dir} could not be read: ${(e as Error).message}`,
      );
    }
    removeFile(f);
    return answer;
  }

  /** Takes call `id` back: true if it was still waiting, false if a holder has claimed it. */
  withdraw(id: string): boolean {
    try {
      fs.unlinkSync(this.file(id, 'req'));
      return true;
    } catch (e) {
      if (gone(e)) return false;
      throw e;
    }
  }

  // ---------------------------------------------------------------------------------------------
  // The lock holder's side (only ever under the goal's lock)

  /**
   * Claims up to `max` waiting calls made in context `ctx` (in the order they were queued). A file
   * that is not a call LoopX wrote is answered as refused and removed; calls of another context
   * are left for a holder of theirs.
   */
  claim(ctx: string, max: number): { id: string; req: GroupRequest }[] {
    let names: string[];
    try {
      // Asked by every commit: most find no folder, and an exception costs more than a look.
      if (!fs.existsSync(this.dir)) return [];
      names = fs.readdirSync(this.dir);
    } catch {
      return [];
    }
    // The folder is checked for links once there is something in it to act on (most commits find
    // it empty or missing).
    if (!names.some((n) => n.endsWith('.req') || n.endsWith('.res')) || !this.checked()) return [];
    const read: { id: string; req: GroupRequest; at: number }[] = [];
    const now = Date.now();
    for (const n of names) {
      if (!n.endsWith('.req')) {
        if (n.endsWith('.res')) this.sweep(n, now);
        continue;
      }
      const id = n.slice(0, -4);
      if (!ID.test(id)) continue;
      let file: { text: string; mtimeMs: number };
      try {
        file = readWhole(this.file(id, 'req'));
      } catch (e) {
        if (!gone(e)) this.refuseFile(id, (e as Error).message);
        continue;
      }
      const parsed = parseRequest(file.text);
      if (!parsed) {
        if (now - file.mtimeMs > UNREADABLE_MS) this.refuseFile(id, 'it is not a call LoopX queued');
        continue;
      }
      if (parsed.ctx === ctx) read.push({ id, req: parsed, at: file.mtimeMs });
    }
    const picked = read.sort((a, b) => a.at - b.at).slice(0, max);
    if (picked.length === 0) return [];
    // Before the first claim: a holder that dies from here on leaves the journal, and the next
    // one puts the claimed calls back.
    this.journal([]);
    const out: { id: string; req: GroupRequest }[] = [];
    for (const p of picked) {
      try {
        fs.renameSync(this.file(p.id, 'req'), this.file(p.id, 'claimed'));
        out.push({ id: p.id, req: p.req });
      } catch (e) {
        if (!gone(e)) throw e; // withdrawn between the read and the claim: its caller has it
      }
    }
    return out;
  }

  private refuseFile(id: string, why: string): void {
    removeFile(this.file(id, 'req'));
    writeWhole(
      this.file(id, 'res'),
      O_WRONLY | O_CREAT | O_TRUNC,
      JSON.stringify(refusal(`queued call ${id} was not read: ${why}`)),
    );
  }

  /** Records the batch before its events are appended: where each call's events go, and its answer. */
  journal(entries: JournalEntry[]): void {
    overwrite(path.join(this.dir, JOURNAL), JSON.stringify({ v: 1, entries }));
  }

  /** Answers a claimed call: the answer goes into its file, which is then renamed. */
  respond(id: string, answer: GroupAnswer): void {
    const claimed = this.file(id, 'claimed');
    writeWhole(claimed, O_WRONLY | O_TRUNC, JSON.stringify(answer));
    fs.renameSync(claimed, this.file(id, 'res'));
  }

  /** The batch is over: every call it claimed was answered or put back (`unanswered`). */
  endBatch(unanswered: string[] = []): void {
    for (const id of unanswered) this.unclaim(id);
    writeWhole(path.join(this.dir, JOURNAL), O_WRONLY | O_TRUNC, '');
  }

  private unclaim(id: string): void {
    try {
      fs.renameSync(this.file(id, 'claimed'), this.file(id, 'req'));
    } catch (e) {
      if (!gone(e)) throw e;
    }
  }

  /**
   * Finishes the batch of a holder that died (its journal is not empty): a call whose events are
   * in the log, byte for byte, is answered as committed (the log is fsync'd first), every other
   * claimed call goes back in the queue to be planned again. Only `ownLog`, the log this clone's
   * holders append to, is looked at. Returns the calls answered.
   */
  recover(ownLog: string): string[] {
    const f = path.join(this.dir, JOURNAL);
    // Asked by every commit: no exception when there is no journal (the common case).
    const st = fs.lstatSync(f, { throwIfNoEntry: false });
    if (!st || st.size === 0 || !this.checked()) return [];
    let journal: z.infer<typeof Journal> | undefined;
    try {
      // As big as a batch's answers: every call's events (BATCH_MAX calls).
      const parsed = Journal.safeParse(JSON.parse(readWhole(f, MAX_JOURNAL_BYTES).text));
      journal = parsed.success ? parsed.data : undefined;
    } catch {
      journal = undefined; // torn while written: the batch appended nothing yet
    }
    const answered: string[] = [];
    const synced = new Set<string>();
    for (const e of journal?.entries ?? []) {
      if (e.log !== ownLog || !ID.test(e.id) || !fs.existsSync(this.file(e.id, 'claimed'))) continue;
      if (!bytesAre(e.log, e.start, e.end, e.sha, synced)) continue;
      this.respond(e.id, e.answer as GroupAnswer);
      answered.push(e.id);
    }
    // Only one batch is ever under way (under the lock): every call still claimed was in it.
    const left = fs
      .readdirSync(this.dir)
      .filter((n) => n.endsWith('.claimed'))
      .map((n) => n.slice(0, -8));
    this.endBatch(left.filter((id) => ID.test(id)));
    return answered;
  }

  /** Removes an answer nobody collected (its caller died). */
  private sweep(name: string, now: number): void {
    const p = path.join(this.dir, name);
    try {
      if (now - fs.lstatSync(p).mtimeMs > ANSWER_KEPT_MS) removeFile(p);
    } catch {
      /* gone meanwhile */
    }
  }
}

function parseRequest(text: string): GroupRequest | undefined {
  try {
    const parsed = RequestFile.safeParse(JSON.parse(text));
    if (!parsed.success) return undefined;
    const { v: _v, ...req } = parsed.data;
    return req;
  } catch {
    return undefined;
  }
}

function refusal(message: string, details: Record<string, unknown> = {}): GroupAnswer {
  return { ok: false, kind: 'refused', message, details: { reason: 'queued_call_invalid', ...details } };
}

/** Whether `log` holds exactly the bytes hashed `sha` at [start, end); fsyncs it once if so. */
function bytesAre(log: string, start: number, end: number, sha: string, synced: Set<string>): boolean {
  if (end <= start || end - start > 64 * 1024 * 1024) return false;
  let fd: number;
  try {
    fd = openStoreFile(log, 'r');
  } catch {
    return false;
  }
  try {
    const buf = Buffer.alloc(end - start);
    if (fs.readSync(fd, buf, 0, buf.length, start) !== buf.length || sha256(buf) !== sha) return false;
    if (!synced.has(log)) {
      fs.fsyncSync(fd);
      synced.add(log);
    }
    return true;
  } finally {
    fs.closeSync(fd);
  }
}
