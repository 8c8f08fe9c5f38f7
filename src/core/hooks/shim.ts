/**
 * The hook shim: a POSIX sh script at a stable absolute path that agent hosts call
 * (`'<shim>' pre-tool-use`). It runs `loopx hook <event>` with the runtime and CLI written into
 * its own text. When LoopX cannot answer (node or the CLI missing, the CLI crashed) it exits 2 with
 * the reason on stderr: exit 2 is what makes the host block the tool, where a bare `loopx` missing
 * from PATH exits 127 and the host lets the tool run.
 *
 * Why the runtime and CLI are in the script and not in a file beside it (as before issue 34):
 * whatever names the program that answers for the hook is as strong as the hook, and a separate
 * target file was one more file an agent could rewrite, pointing it at a script that always
 * answers allow. So there is one file, which the hook denies any agent's write to
 * (hook-files.ts). Whoever installed it (the extension on every activation, `loopx hooks install`
 * for the CLI) rewrites the whole script when LoopX moves, as a new file renamed over the old one:
 * a shell already reading the old one reads it to the end. The hosts' settings name only the
 * shim's path, so they stay valid across updates. (A hash of the target recorded at install would
 * need a place out of an agent's reach too, and a check in sh: no stronger, and not simpler.)
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ShimTarget } from '../setup';
import { checkShimTarget, SET_CA_CERTS_ASIDE } from '../setup';
import { ensurePrivateDir, fileDiffers, writeIfChanged } from '../store';
import { shellQuote, shellWords } from '../shell';

export const HOOK_SHIM = 'loopx-hook';
/** The file an older shim read its runtime and CLI from; removed when the shim is rewritten. */
export const OLDER_HOOK_SHIM_TARGET = 'loopx-hook.target';
/** The second line of every hook shim LoopX writes. */
const MARKER = '# LoopX agent-hook shim, written by LoopX.';

export type HookShimTarget = ShimTarget;

function hookShimScript(target: HookShimTarget): string {
  checkShimTarget(target);
  const reinstall = 'open VS Code with LoopX once, or run \\`loopx hooks install\\` again';
  return `#!/bin/sh
${MARKER} Agent hosts call it by this absolute path:
#   '<this file>' <event>    (pre-tool-use | session-start | stop; the event JSON on stdin)
# It runs \`loopx hook <event>\` with the runtime and CLI below; LoopX rewrites this file when they
# move (written here, not read from a file beside it, so that no other file decides what answers
# for the hook). When LoopX cannot answer it exits 2 with the reason on stderr, which makes the
# host block the tool instead of letting it run. (A Stop hook that exits 2 keeps the agent from
# ending its turn, again and again: there a failure is reported with exit 1.)
node=${shellQuote(target.node)}
cli=${shellQuote(target.cli)}
event=\${1-}
fail() {
  printf 'LoopX: %s; the LoopX hook cannot answer, so it refuses\\n' "$1" >&2
  if [ "$event" = stop ]; then exit 1; fi
  exit 2
}
[ -f "$cli" ] || fail "the LoopX CLI $cli is missing (LoopX was updated or removed: ${reinstall})"
if [ ! -x "$node" ]; then
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

/**
 * What the shim at `shim` runs: `target` for one of today's; `older` for a shim of an older LoopX
 * (it runs what the target file beside it names); undefined when it is missing or not ours.
 */
export function readHookShim(shim: string): { target: HookShimTarget } | { older: true } | undefined {
  let text: string;
  try {
    // A shim is a few hundred bytes; a large file there is not ours.
    if (fs.statSync(shim).size > 64 * 1024) return undefined;
    text = fs.readFileSync(shim, 'utf8');
  } catch {
    return undefined;
  }
  if (!text.split('\n', 2)[1]?.startsWith('# LoopX agent-hook shim')) return undefined;
  const value = (name: string) => {
    const line = new RegExp(`^${name}=(.+)$`, 'm').exec(text)?.[1];
    return line ? shellWords(line)?.[0] : undefined;
  };
  const node = value('node');
  const cli = value('cli');
  if (node && cli) return { target: { node, cli } };
  return text.includes(OLDER_HOOK_SHIM_TARGET) ? { older: true } : undefined;
}

/** Whether `writeHookShim(dir, target)` would change a file (a first install, another CLI, an older shim). */
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
    fileDiffers(shim, hookShimScript(target)) ||
    fs.existsSync(path.join(dir, OLDER_HOOK_SHIM_TARGET))
  );
}

/**
 * Writes the shim into `dir` (created, private), running `target`; returns the shim's path. Cheap
 * when nothing changed, so it can run on every activation. An older shim's target file goes.
 */
export function writeHookShim(dir: string, target: HookShimTarget): string {
  const script = hookShimScript(target);
  ensurePrivateDir(dir);
  const shim = path.join(dir, HOOK_SHIM);
  writeIfChanged(shim, script, 0o755);
  fs.rmSync(path.join(dir, OLDER_HOOK_SHIM_TARGET), { force: true });
  return shim;
}
