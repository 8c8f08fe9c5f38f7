/**
 * The hook shim: a POSIX sh script at a stable absolute path that agent hosts call
 * (`'<shim>' pre-tool-use`). It runs `loopx hook <event>` with the node and CLI named in
 * `loopx-hook.target` next to it, which whoever installed it keeps current (the extension on every
 * activation, so hooks survive its updates; `loopx hooks install` for the CLI). When LoopX cannot
 * answer (the target file, node or the CLI missing, the CLI crashed) it exits 2 with the reason
 * on stderr: exit 2 is what makes the host block the tool, where a bare `loopx` missing from PATH
 * exits 127 and the host lets the tool run.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ShimTarget } from '../setup';
import { readShimTarget, SET_CA_CERTS_ASIDE, shimTargetText } from '../setup';
import { ensurePrivateDir, fileDiffers, writeIfChanged } from '../store';
import { shellQuote } from '../shell';

export const HOOK_SHIM = 'loopx-hook';
const HOOK_SHIM_TARGET = 'loopx-hook.target';

export type HookShimTarget = ShimTarget;

/** The script. It never changes with the target, so hosts' settings stay valid across updates. */
function hookShimScript(): string {
  return `#!/bin/sh
# LoopX agent-hook shim, written by LoopX. Agent hosts call it by this absolute path:
#   '<this file>' <event>    (pre-tool-use | session-start | stop; the event JSON on stdin)
# It runs \`loopx hook <event>\` with the runtime and CLI named, one a line, in ${HOOK_SHIM_TARGET}
# next to it. When LoopX cannot answer it exits 2 with the reason on stderr, which makes the host
# block the tool instead of letting it run. (A Stop hook that exits 2 keeps the agent from ending
# its turn, again and again: there a failure is reported with exit 1.)
event=\${1-}
fail() {
  printf 'LoopX: %s; the LoopX hook cannot answer, so it refuses\\n' "$1" >&2
  if [ "$event" = stop ]; then exit 1; fi
  exit 2
}
case $0 in
  */*) here=\${0%/*} ;;
  *) here=. ;;
esac
target="$here/${HOOK_SHIM_TARGET}"
[ -r "$target" ] || fail "$target is missing (open VS Code with LoopX once, or run \\\`loopx hooks install\\\` again)"
node=
cli=
{
  IFS= read -r node
  IFS= read -r cli
} <"$target"
[ -n "$cli" ] || fail "$target names no LoopX CLI"
[ -f "$cli" ] || fail "the LoopX CLI $cli is missing (LoopX was updated or removed: open VS Code with LoopX once, or run \\\`loopx hooks install\\\` again)"
if [ -z "$node" ] || [ ! -x "$node" ]; then
  node=$(command -v node 2>/dev/null) || node=
  [ -n "$node" ] || fail "no runtime for the LoopX CLI (the one LoopX recorded is gone and there is no node on PATH)"
fi
${SET_CA_CERTS_ASIDE}
ELECTRON_RUN_AS_NODE=1 "$node" "$cli" hook "$@"
code=$?
if [ "$code" -eq 0 ]; then exit 0; fi
if [ "$code" -eq 2 ] && [ "$event" != stop ]; then exit 2; fi
fail "\\\`loopx hook $event\\\` failed (exit $code)"
`;
}

/**
 * The command a host's settings run for `event`. For PreToolUse a shim that cannot even start
 * (deleted, not executable: 126/127) still blocks: `|| exit 2`.
 */
export function hookShimCommand(shim: string, event: string): string {
  const cmd = `${shellQuote(shim)} ${event}`;
  return event === 'pre-tool-use' ? `${cmd} || exit 2` : cmd;
}

/** The runtime and CLI the target file next to the shim in `dir` names ('' for a missing line); undefined when it is missing. */
export function readHookShimTarget(dir: string): HookShimTarget | undefined {
  return readShimTarget(path.join(dir, HOOK_SHIM_TARGET));
}

/** Whether `writeHookShim(dir, target)` would change a file (a first install, another CLI). */
export function hookShimChanges(dir: string, target: HookShimTarget): boolean {
  const shim = path.join(dir, HOOK_SHIM);
  let mode = 0;
  try {
    mode = fs.statSync(shim).mode & 0o777;
  } catch {
    /* missing: written */
  }
  return (
    mode !== 0o755 ||
    fileDiffers(shim, hookShimScript()) ||
    fileDiffers(path.join(dir, HOOK_SHIM_TARGET), shimTargetText(target))
  );
}

/**
 * Writes the shim into `dir` (created, private) and points it at `target`; returns the shim's
 * path. Cheap when nothing changed, so it can run on every activation.
 */
export function writeHookShim(dir: string, target: HookShimTarget): string {
  const targetText = shimTargetText(target);
  ensurePrivateDir(dir);
  const shim = path.join(dir, HOOK_SHIM);
  writeIfChanged(shim, hookShimScript(), 0o755);
  writeIfChanged(path.join(dir, HOOK_SHIM_TARGET), targetText, 0o644);
  return shim;
}
