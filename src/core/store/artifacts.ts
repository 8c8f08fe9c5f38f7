/** Evidence files: command output and files kept in a goal's `artifacts/`, named by evidence id. */
import * as path from 'node:path';
import type { Artifact } from '../model';
import { checkId } from '../model';
import { sha256, writeFileAtomic } from './json-file';
import { lstatStore, mkdirStore } from './safe-path';

/** A goal's `artifacts/` folder; refuses when it (or a folder above it in .loopx) is a link. */
export function artifactsDir(goalDir: string): string {
  const dir = path.join(goalDir, 'artifacts');
  lstatStore(dir);
  return dir;
}

/** Stores `content` as the evidence `evidenceId` of the goal in `goalDir`, with its sha256. */
export function writeArtifact(
  goalDir: string,
  evidenceId: string,
  content: Buffer | string,
  ext = 'log',
): Artifact {
  checkId(evidenceId, 'evidence id');
  const dir = artifactsDir(goalDir);
  mkdirStore(dir);
  const name = `${evidenceId}.${ext.replace(/[^a-z0-9]/gi, '') || 'log'}`;
  const buf = Buffer.isBuffer(content) ? content : Buffer.from(content, 'utf8');
  writeFileAtomic(path.join(dir, name), buf);
  return { path: `artifacts/${name}`, sha256: sha256(buf), bytes: buf.length };
}
