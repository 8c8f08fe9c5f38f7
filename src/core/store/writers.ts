/**
 * Who a writer is, for people reading a team's history: `.loopx/writers/<writer id>.json` names the
 * clone (the user and machine it runs on, or LOOPX_WRITER_NAME, e.g. "ci" or "cloud agent"). Each
 * clone writes only its own file, once, with its first event, so git merges these like the logs.
 */
import * as os from 'node:os';
import * as path from 'node:path';
import { z } from 'zod';
import { ID_PATTERN, lazy, plainText } from '../model';
import { createFileOnce, parseJsonText } from './json-file';
import { mkdirStore, readdirStore, readStoreFile, storePathExists } from './safe-path';

const WriterFile = lazy(() => z.object({ v: z.literal(1), writer: z.string(), name: z.string().max(80) }));

export const writersDir = (root: string) => path.join(root, 'writers');

/** The name this clone's writer goes by: LOOPX_WRITER_NAME, else user@host. */
export function defaultWriterName(env: NodeJS.ProcessEnv = process.env): string {
  const given = env.LOOPX_WRITER_NAME?.trim();
  let user = 'someone';
  try {
    user = os.userInfo().username;
  } catch {
    /* no user entry (a container): keep the default */
  }
  return plainText(given || `${user}@${os.hostname()}`, 80) || 'unnamed';
}

/** Writes `writers/<writer>.json` unless it is there (never rewritten: the first name stays). */
export function recordWriter(root: string, writer: string, name: string): void {
  const file = path.join(writersDir(root), `${writer}.json`);
  if (storePathExists(file)) return;
  mkdirStore(writersDir(root));
  createFileOnce(file, JSON.stringify({ v: 1, writer, name }) + '\n');
}

/** Every writer's name, by writer id; a file that does not parse, or names another writer, is left out. */
export function writerNames(root: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const n of readdirStore(writersDir(root))) {
    const id = n.replace(/\.json$/, '');
    if (id === n || !ID_PATTERN.test(id)) continue;
    try {
      const f = parseJsonText(readStoreFile(path.join(writersDir(root), n), 'utf8'), WriterFile, n);
      if (f.writer === id) out.set(id, plainText(f.name, 80));
    } catch {
      /* a hand-broken name file: the id is shown instead */
    }
  }
  return out;
}
