/**
 * A picture of folders on disk, to prove that something wrote nothing: every file, folder and link
 * under each root with its content hash, size, mode and modification time (to the nanosecond), so a
 * file rewritten with the same bytes, a folder created empty, or a temp file made and renamed away
 * (its folder's mtime moves) all show.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

export type TreeSnapshot = Map<string, string>;

/** Each entry under `roots` (the roots themselves included; a missing root is recorded as such). */
export function treeSnapshot(...roots: string[]): TreeSnapshot {
  const out: TreeSnapshot = new Map();
  const visit = (p: string) => {
    let st: fs.BigIntStats;
    try {
      st = fs.lstatSync(p, { bigint: true });
    } catch {
      out.set(p, 'missing');
      return;
    }
    const stamp = `mode ${st.mode.toString(8)} mtime ${st.mtimeNs}`;
    if (st.isDirectory()) {
      out.set(p, `dir, ${stamp}`);
      for (const name of fs.readdirSync(p).sort()) visit(path.join(p, name));
    } else if (st.isSymbolicLink()) {
      out.set(p, `link to ${fs.readlinkSync(p)}, ${stamp}`);
    } else {
      const sha = createHash('sha256').update(fs.readFileSync(p)).digest('hex').slice(0, 16);
      out.set(p, `file ${st.size} bytes sha256 ${sha}, ${stamp}`);
    }
  };
  for (const r of roots) visit(r);
  return out;
}

/** What differs between two snapshots, one line each ("added", "removed", "changed"); none: []. */
export function treeChanges(before: TreeSnapshot, after: TreeSnapshot): string[] {
  const lines: string[] = [];
  for (const [p, was] of before) {
    const now = after.get(p);
    if (now === undefined) lines.push(`removed ${p} (${was})`);
    else if (now !== was) lines.push(`changed ${p}: ${was} -> ${now}`);
  }
  for (const [p, now] of after) if (!before.has(p)) lines.push(`added ${p} (${now})`);
  return lines;
}
