/**
 * The files that decide what the PreToolUse hook is, which no agent may write (issue 34): an agent
 * that rewrote one could answer its own tool calls, and an allow skips the host's own prompt too.
 * - each host's settings file that runs the hooks (install.ts HOST_SETTINGS_FILES), in any folder:
 *   the workspace's, the home folder's (Claude Code reads both, and CLAUDE_CONFIG_DIR's), another
 *   checkout's;
 * - the hook shim the workspace's settings call, and `loopx-hook` in each LoopX config folder, with
 *   the target file an older shim read beside it;
 * - the CLI a shim runs (`bin/loopx.js`, the `dist/cli.js` it loads and the lock binding that loads), and the CLI's code cache
 *   (`<cache>/loopx/`, compiled code bin/loopx.js runs);
 * - a folder holding any of these (moving `.claude` away removes the hooks), other than the one
 *   the tool runs in and those above it.
 * Reads are not writes: tools that only read are not asked about them (READ_ONLY_TOOLS).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { HOST_SETTINGS_FILES, installedHooks } from './install';
import { isUnder, realish, segmentName } from './loopx-state';
import { HOOK_SHIM, OLDER_HOOK_SHIM_TARGET, readHookShim } from './shim';

/**
 * Tools that read and write nothing of their own: Claude Code's (a subagent's own tool calls go
 * through the hook again) and VS Code's. Any other tool is taken to write what its input names.
 */
const READ_ONLY_TOOLS = new Set([
  'Read',
  'Glob',
  'Grep',
  'LS',
  'NotebookRead',
  'WebFetch',
  'WebSearch',
  'Task',
  'Agent',
  'read_file',
  'list_dir',
  'file_search',
  'grep_search',
  'semantic_search',
  'get_errors',
  'get_changed_files',
  'fetch_webpage',
  'runSubagent',
]);

/** Whether a tool may write a file its input names. */
export const mayWrite = (tool: string) => !READ_ONLY_TOOLS.has(tool);

export interface HookFileScope {
  /** The folder the tool runs in. */
  cwd: string;
  workspace: string;
  home: string;
  /** The LoopX config folders (the store's, and the environment's if other). */
  configDirs: string[];
  /** For XDG_CACHE_HOME (where the CLI keeps its code cache) and CLAUDE_CONFIG_DIR. */
  env: NodeJS.ProcessEnv;
}

export interface HookFiles {
  /**
   * Whether a write at `abs` (absolute: as the input names it, or where it lands) changes what the
   * hook is. `folders`: also when `abs` is a folder holding such a file.
   */
  protects(abs: string, folders: boolean): boolean;
}

const segments = (p: string) =>
  p
    .split(/[\\/]+/)
    .filter(Boolean)
    .map(segmentName);
const TAILS = HOST_SETTINGS_FILES.map((f) => f.map(segmentName));
const endsWithTail = (segs: string[]) =>
  TAILS.some((t) => t.length <= segs.length && t.every((s, i) => segs[segs.length - t.length + i] === s));
const fold = (p: string) => segments(p).join('/');

/**
 * The files of the list above that have a place (the workspace's, the shims', the CLIs'), and the
 * cache folder; found on first use.
 */
function concreteFiles(scope: HookFileScope) {
  const shims = new Set(scope.configDirs.map((d) => path.join(d, 'bin', HOOK_SHIM)));
  try {
    for (const f of installedHooks(scope.workspace)) for (const s of f.shims) shims.add(s);
  } catch {
    /* an unreadable settings file names no shim; its own name still protects it */
  }
  const files: string[] = [];
  for (const root of [scope.workspace, scope.cwd, scope.home])
    for (const f of HOST_SETTINGS_FILES) files.push(path.join(root, ...f));
  // Claude Code's user settings, where CLAUDE_CONFIG_DIR moves them from ~/.claude.
  const claude = scope.env.CLAUDE_CONFIG_DIR;
  if (claude && path.isAbsolute(claude))
    for (const f of HOST_SETTINGS_FILES) if (f[0] === '.claude') files.push(path.join(claude, ...f.slice(1)));
  for (const shim of shims) {
    files.push(shim, path.join(path.dirname(shim), OLDER_HOOK_SHIM_TARGET));
    const read = readHookShim(shim);
    if (read && 'target' in read) {
      const cli = read.target.cli;
      // bin/loopx.js runs the bundle beside it; a shim may name the bundle itself.
      const dist = path.resolve(path.dirname(cli), '..', 'dist');
      // ... and loads the kernel lock's binding from beside it (store/lock.ts).
      const binding = path.join(
        dist,
        'prebuilds',
        `${process.platform}-${process.arch}`,
        'fs-native-extensions.node',
      );
      files.push(cli, path.join(dist, 'cli.js'), binding);
    }
  }
  const xdg = scope.env.XDG_CACHE_HOME;
  const cache = path.join(xdg && path.isAbsolute(xdg) ? xdg : path.join(scope.home, '.cache'), 'loopx');
  const cacheMap = new Map<string, string | null>();
  const withReal = (p: string) => [p, realish(p, cacheMap)].filter((x): x is string => !!x).map(fold);
  const upFrom = (p: string) =>
    p
      .split('/')
      .map((_, i, a) => a.slice(0, i).join('/'))
      .concat(p);
  return {
    exact: new Set(files.flatMap(withReal)),
    caches: withReal(cache),
    // Moving away a folder that holds none of them yet changes nothing.
    holders: [...files, cache].filter((f) => fs.existsSync(f)).flatMap(withReal),
    cwdAndUp: new Set(withReal(scope.cwd).flatMap(upFrom)),
  };
}

export function hookFiles(scope: HookFileScope): HookFiles {
  let known: ReturnType<typeof concreteFiles> | undefined;
  return {
    protects(abs, folders) {
      const segs = segments(abs);
      if (endsWithTail(segs)) return true;
      known ??= concreteFiles(scope);
      const p = segs.join('/');
      if (known.exact.has(p) || known.caches.some((c) => isUnder(p, c))) return true;
      return folders && !known.cwdAndUp.has(p) && known.holders.some((f) => f !== p && isUnder(f, p));
    },
  };
}
