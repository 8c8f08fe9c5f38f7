/** Reading and writing the small JSON files of the store: validated reads, atomic writes. */
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import type { z } from 'zod';
import { corrupt } from '../model';
import { placeOf, syntaxErrorOffset } from './json-locate';
import { openStoreFile, readStoreFile, writeStoreFile } from './safe-path';

export const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

/** `field a.b.0: message; field c: message`, for a person reading an error. */
export function describeIssues(error: z.ZodError, max = 3): string {
  const parts = error.issues.slice(0, max).map((i) => {
    const path = i.path.map(String).join('.');
    return path ? `field ${path}: ${i.message}` : i.message;
  });
  if (error.issues.length > max) parts.push(`and ${error.issues.length - max} more`);
  return parts.join('; ');
}

/** Line number of a JSON.parse error, when the engine says the position. */
function jsonErrorLine(text: string, err: unknown): number | undefined {
  const offset = syntaxErrorOffset(err);
  return offset === undefined ? undefined : placeOf(text, offset).line;
}

/**
 * The field a zod issue is about, as a path. An unknown key's issue sits on the object that
 * holds it: the field is the key itself.
 */
export function issueField(issue: z.core.$ZodIssue): (string | number)[] {
  return [
    ...(issue.path as (string | number)[]),
    ...(issue.code === 'unrecognized_keys' ? issue.keys.slice(0, 1) : []),
  ];
}

/** Parses JSON text and validates it; errors name the file, the line (when known) and the field. */
/**
 * A deep copy of JSON data (plain objects, arrays, strings, numbers, booleans, null; an undefined
 * property is kept): several times faster than structuredClone, which a commit pays on every
 * goal state it keeps.
 */
export function copyJson<T>(value: T): T {
  if (Array.isArray(value)) {
    const out = new Array(value.length);
    for (let i = 0; i < value.length; i++) out[i] = copyJson(value[i]);
    return out as T;
  }
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value)) out[k] = copyJson((value as Record<string, unknown>)[k]);
    return out as T;
  }
  return value;
}

export function parseJsonText<S extends z.ZodType>(text: string, schema: S, file: string): z.infer<S> {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    // A caller that already names the line (one line of a multi-line file) keeps its label.
    const line = /\(line \d+\)$/.test(file) ? undefined : jsonErrorLine(text, e);
    throw corrupt(`${file}${line ? ` (line ${line})` : ''}: not valid JSON: ${(e as Error).message}`, {
      file,
      ...(line ? { line } : {}),
    });
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    const field = first && issueField(first).map(String).join('.');
    throw corrupt(`${file}: ${describeIssues(parsed.error)}`, { file, ...(field ? { field } : {}) });
  }
  return parsed.data;
}

export function readJsonFile<S extends z.ZodType>(file: string, schema: S): z.infer<S> {
  return parseJsonText(readStoreFile(file, 'utf8'), schema, file);
}

/**
 * Writes through a temp file and a rename, so a reader sees the old file or the new one, never
 * half. Under `.loopx` no folder on the way may be a link (store/safe-path.ts); a link in the file's
 * own place is replaced by the rename, never followed. `durable`: the content is on disk (fsync)
 * before the rename, for a file that holds the truth rather than a cache.
 */
export function writeFileAtomic(file: string, content: string | Buffer, mode = 0o644, durable = false): void {
  const tmp = `${file}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    writeStoreFile(tmp, content, { mode, flag: 'wx' });
    if (durable) {
      const fd = openStoreFile(tmp, 'r');
      try {
        fs.fsyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
    }
    fs.renameSync(tmp, file);
  } catch (e) {
    fs.rmSync(tmp, { force: true });
    throw e;
  }
}

/** Whether `file` holds anything but exactly `content` (a missing file does). */
export function fileDiffers(file: string, content: string | Buffer): boolean {
  try {
    return !fs.readFileSync(file).equals(Buffer.from(content));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return true;
    throw e;
  }
}

/**
 * Writes `content` atomically unless `file` holds it already, and gives the file exactly `mode`
 * either way (whatever the umask, and on a file that was there before). Returns whether it wrote.
 */
export function writeIfChanged(file: string, content: string | Buffer, mode: number): boolean {
  const changed = fileDiffers(file, content);
  if (changed) writeFileAtomic(file, content, mode);
  fs.chmodSync(file, mode);
  return changed;
}

export const writeJsonAtomic = (file: string, value: unknown) =>
  writeFileAtomic(file, JSON.stringify(value, null, 1) + '\n');

/**
 * Creates `file` (mode 0600) with `content` unless it exists, atomically: the content is written
 * to a temp file first and hard-linked into place, so a concurrent reader never sees it half-written.
 */
export function createFileOnce(file: string, content: string): void {
  const tmp = `${file}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  writeStoreFile(tmp, content, { mode: 0o600, flag: 'wx' });
  try {
    fs.linkSync(tmp, file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}

/** JSON with sorted keys: the bytes a signature covers do not depend on property order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
