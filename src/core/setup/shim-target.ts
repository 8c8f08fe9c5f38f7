/**
 * The target of LoopX's shims: the runtime and the CLI script a shim runs. The `loopx` command's
 * shim (setup/cli-shim.ts) reads them, one a line, from a target file that whoever installed it
 * rewrites when LoopX moves, so PATH entries stay valid across updates. The agent-hook shim
 * (hooks/shim.ts) has them written into its own text instead: a file beside it that named what the
 * hook runs would be one more file an agent could redirect.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { usageError } from '../model';

export interface ShimTarget {
  /** The runtime: a node, or an Electron binary (run with ELECTRON_RUN_AS_NODE=1). */
  node: string;
  /** The CLI script it runs (`bin/loopx.js` or `dist/cli.js`). */
  cli: string;
}

/** Refuses what a shim cannot name: a relative path, or one with a line break. */
export function checkShimTarget(target: ShimTarget): ShimTarget {
  for (const [p, what] of [
    [target.node, 'runtime'],
    [target.cli, 'CLI'],
  ] as const)
    if (/[\r\n]/.test(p) || !path.isAbsolute(p))
      throw usageError(
        `the shim's ${what} must be an absolute path without line breaks, not ${JSON.stringify(p)}`,
      );
  return target;
}

/** The target file's text (checkShimTarget first). */
export function shimTargetText(target: ShimTarget): string {
  checkShimTarget(target);
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

/** Where the shims set NODE_EXTRA_CA_CERTS aside for the CLI's start-up (see SET_CA_CERTS_ASIDE). */
export const CA_CERTS_ASIDE = 'LOOPX_EXTRA_CA_CERTS';

/**
 * The lines of sh both shims run just before the runtime. Node parses every certificate that
 * NODE_EXTRA_CA_CERTS names before it runs any code, 40 ms a call when it names a system bundle
 * (as on machines behind a corporate proxy), and LoopX makes no TLS connection. So the shims set
 * it aside, and the CLI hands it back (`restoreCaCerts`) to the commands it runs.
 */
export const SET_CA_CERTS_ASIDE = `if [ -n "\${NODE_EXTRA_CA_CERTS-}" ]; then
  ${CA_CERTS_ASIDE}=$NODE_EXTRA_CA_CERTS
  export ${CA_CERTS_ASIDE}
  unset NODE_EXTRA_CA_CERTS
fi`;

/** Puts back what a shim set aside, so every command the CLI runs sees the environment it was given. */
export function restoreCaCerts(env: NodeJS.ProcessEnv): void {
  const aside = env[CA_CERTS_ASIDE];
  if (aside === undefined) return;
  if (env.NODE_EXTRA_CA_CERTS === undefined) env.NODE_EXTRA_CA_CERTS = aside;
  delete env[CA_CERTS_ASIDE];
}
