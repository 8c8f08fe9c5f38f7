/**
 * The target file of LoopX's shims: two lines, the runtime and the CLI script, read by a shim
 * script that never changes (the agent-hook shim, hooks/shim.ts; the `loopx` command,
 * cli-shim.ts). Whoever installed the shim rewrites the target when LoopX moves, so hosts'
 * settings and PATH entries stay valid across updates.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { usageError } from './errors';

export interface ShimTarget {
  /** The runtime: a node, or an Electron binary (run with ELECTRON_RUN_AS_NODE=1). */
  node: string;
  /** The CLI script it runs (`bin/loopx.js` or `dist/cli.js`). */
  cli: string;
}

/** The file's text; refuses what a line-per-path file cannot hold (a relative path, a line break). */
export function shimTargetText(target: ShimTarget): string {
  for (const [p, what] of [
    [target.node, 'runtime'],
    [target.cli, 'CLI'],
  ] as const)
    if (/[\r\n]/.test(p) || !path.isAbsolute(p))
      throw usageError(
        `the shim's ${what} must be an absolute path without line breaks, not ${JSON.stringify(p)}`,
      );
  return `${target.node}\n${target.cli}\n`;
}

/** What a target file names ('' for a missing line); undefined when it cannot be read. */
export function readShimTarget(file: string): ShimTarget | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  const [node = '', cli = ''] = text.split('\n');
  return { node, cli };
}
