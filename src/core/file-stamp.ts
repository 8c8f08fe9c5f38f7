/** What changes whenever a file is rewritten or appended to, for callers that poll for changes. */
import * as fs from 'node:fs';

/** Inode, size and mtime: an atomic rename gives a new inode, an append a new size. */
export function fileStamp(file: string): string {
  try {
    const st = fs.statSync(file);
    return `${st.ino}:${st.size}:${st.mtimeMs}`;
  } catch {
    return 'missing';
  }
}
