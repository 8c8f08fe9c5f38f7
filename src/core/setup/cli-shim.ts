/**
 * The `loopx` command outside VS Code's terminals: a POSIX sh script the person puts in a folder
 * on their PATH (VS Code's "Install 'loopx' Command in PATH", like its own `code`). The script
 * never changes with the extension's version: it reads the runtime and the CLI, one a line, from
 * a target file at a fixed path, which the extension rewrites on every activation, so the command
 * survives updates (the pattern of the hook shim, hooks/shim.ts). It runs the CLI with the `node`
 * on PATH when there is one, else with the editor's own runtime (ELECTRON_RUN_AS_NODE=1).
 *
 * `loopx install-command` (which scripts/install.sh runs) writes this same shim, worded for
 * itself (a ShimOrigin), so either may replace the other.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { refused, usageError } from '../model';
import { shellWords } from '../shell';
import { writeIfChanged } from '../store';
import { shellQuote } from '../shell';
import type { ShimTarget } from './shim-target';
import { readShimTarget, SET_CA_CERTS_ASIDE, shimTargetText } from './shim-target';

export const CLI_SHIM = 'loopx';
export const CLI_TARGET = 'cli.target';
/** The second line of every shim LoopX writes: how uninstall (and a reinstall) knows it is ours. */
export const CLI_SHIM_MARKER = '# loopx-cli-shim: written by LoopX; safe to delete';

export type CliTarget = ShimTarget;

function checkPath(p: string, what: string): void {
  if (/[\r\n]/.test(p) || !path.isAbsolute(p))
    throw usageError(`the ${what} must be an absolute path without line breaks, not ${JSON.stringify(p)}`);
}

/**
 * Who wrote a shim, in its words: `installedBy` completes "The `loopx` command, installed ...";
 * `reinstall` is what a person does when the target file, or the CLI or runtime it names, is
 * gone; `runtime` names the target's first line in messages.
 */
export interface ShimOrigin {
  installedBy: string;
  reinstall: string;
  runtime?: string;
}

/** VS Code's "Install 'loopx' Command in PATH" (cliInstall.ts). */
export const VSCODE_SHIM_ORIGIN: ShimOrigin = {
  installedBy: `from VS Code ("LoopX: Install 'loopx' Command in PATH")`,
  reinstall: `open VS Code with LoopX once, or run "LoopX: Install 'loopx' Command in PATH" again`,
  runtime: "the editor's runtime",
};

/** The script for a target file at `targetFile` (absolute). */
export function cliShimScript(targetFile: string, origin: ShimOrigin = VSCODE_SHIM_ORIGIN): string {
  checkPath(targetFile, 'CLI target file');
  for (const w of [origin.installedBy, origin.reinstall, origin.runtime ?? ''])
    if (/[\r\n]/.test(w)) throw usageError(`the shim's wording must be one line, not ${JSON.stringify(w)}`);
  // The wording goes in as single-quoted sh words, so no character in it is special.
  return `#!/bin/sh
${CLI_SHIM_MARKER}
# The \`loopx\` command, installed ${origin.installedBy}.
# It runs the LoopX CLI named, with a runtime, in the target file below; installing a new version
# rewrites that file, not this script, so the command survives updates.
target=${shellQuote(targetFile)}
reinstall=${shellQuote(origin.reinstall)}
recorded=${shellQuote(origin.runtime ?? 'the runtime')}
fail() {
  printf 'loopx: %s\\n' "$1" >&2
  exit 1
}
[ -r "$target" ] || fail "$target is missing: $reinstall"
runtime=
cli=
{
  IFS= read -r runtime
  IFS= read -r cli
} <"$target"
[ -n "$cli" ] && [ -f "$cli" ] || fail "the LoopX CLI \${cli:-named in $target} is missing (LoopX was updated or removed): $reinstall"
${SET_CA_CERTS_ASIDE}
if command -v node >/dev/null 2>&1; then
  exec node "$cli" "$@"
fi
[ -n "$runtime" ] && [ -x "$runtime" ] || fail "no node on PATH, and $recorded \${runtime:-named in $target} is gone: install Node.js 20 or later, or $reinstall"
ELECTRON_RUN_AS_NODE=1 exec "$runtime" "$cli" "$@"
`;
}

/** Whether `text` is a shim LoopX wrote (its marker on the second line). */
export function isCliShim(text: string): boolean {
  return text.split('\n', 3)[1] === CLI_SHIM_MARKER;
}

/**
 * The CLI a shim of ours runs: its `target=` line names the target file, whose second line is the
 * CLI. Undefined when `text` is not a shim of ours or its target cannot be read (`loopx doctor`).
 */
export function cliShimTarget(text: string): { targetFile: string; cli?: string } | undefined {
  if (!isCliShim(text)) return undefined;
  const line = /^target=(.+)$/m.exec(text)?.[1];
  const targetFile = line ? shellWords(line)?.[0] : undefined;
  if (!targetFile) return undefined;
  const cli = readShimTarget(targetFile)?.cli;
  return { targetFile, ...(cli ? { cli } : {}) };
}

/** Writes (or refreshes) the target file in `dir`; cheap when nothing changed. Returns its path. */
export function writeCliTarget(dir: string, target: CliTarget): string {
  const text = shimTargetText(target);
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, CLI_TARGET);
  writeIfChanged(file, text, 0o644);
  return file;
}

export type ShimState = 'none' | 'ours' | 'foreign';

/** What is at `<binDir>/loopx` now. */
export function cliShimState(binDir: string): { file: string; state: ShimState } {
  const file = path.join(binDir, CLI_SHIM);
  let st: fs.Stats;
  try {
    st = fs.lstatSync(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { file, state: 'none' };
    throw e;
  }
  // A link (npm's global `loopx`, say) is someone else's even when it points at a shim of ours.
  if (!st.isFile()) return { file, state: 'foreign' };
  return { file, state: isCliShim(fs.readFileSync(file, 'utf8')) ? 'ours' : 'foreign' };
}

export interface ShimInstall {
  file: string;
  /** False when an identical shim was there already. */
  changed: boolean;
  /** Whether `binDir` is on `pathVar` (the PATH the caller runs with). */
  onPath: boolean;
}

/**
 * What is at `<binDir>/loopx`, when a shim of ours may go there: refuses (reason
 * `cli_shim_not_ours`) a `loopx` that LoopX did not write.
 */
export function replaceableCliShim(binDir: string): { file: string; state: 'none' | 'ours' } {
  checkPath(binDir, 'folder');
  const { file, state } = cliShimState(binDir);
  if (state === 'foreign')
    throw refused(
      `${file} exists and is not a LoopX shim: LoopX leaves it alone; choose another folder, or remove that file first`,
      {
        reason: 'cli_shim_not_ours',
        file,
      },
    );
  return { file, state };
}

/**
 * Writes the shim into `binDir` (created) for the target file `targetFile`, worded for `origin`.
 * Refuses (reason `cli_shim_not_ours`) to replace a `loopx` that LoopX did not write.
 */
export function installCliShim(
  binDir: string,
  targetFile: string,
  pathVar = process.env.PATH ?? '',
  origin: ShimOrigin = VSCODE_SHIM_ORIGIN,
): ShimInstall {
  const { file } = replaceableCliShim(binDir);
  const text = cliShimScript(targetFile, origin);
  fs.mkdirSync(binDir, { recursive: true });
  const changed = writeIfChanged(file, text, 0o755);
  return { file, changed, onPath: onPath(binDir, pathVar) };
}

/**
 * Removes our shim from `binDir`. Returns the file removed, or undefined when there was no shim
 * of ours; refuses (reason `cli_shim_not_ours`) a `loopx` LoopX did not write.
 */
export function uninstallCliShim(binDir: string): string | undefined {
  const { file, state } = cliShimState(binDir);
  if (state === 'none') return undefined;
  if (state === 'foreign')
    throw refused(`${file} is not a LoopX shim: LoopX leaves it alone`, {
      reason: 'cli_shim_not_ours',
      file,
    });
  fs.rmSync(file);
  return file;
}

/** Whether `dir` is one of the folders of `pathVar` (compared resolved, trailing slashes aside). */
export function onPath(dir: string, pathVar = process.env.PATH ?? ''): boolean {
  const want = path.resolve(dir);
  return pathVar
    .split(path.delimiter)
    .filter((d) => path.isAbsolute(d))
    .some((d) => path.resolve(d) === want);
}

/** The line a person adds to their shell's startup file to put `dir` on PATH. */
export function pathHint(dir: string): string {
  return `export PATH=${shellQuote(dir)}:"$PATH"`;
}
