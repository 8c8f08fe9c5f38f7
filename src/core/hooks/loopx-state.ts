/**
 * Does a tool call touch LoopX state? Every string of the tool input (object keys included, at any
 * depth) is read for paths: the whole string, each line, patch headers (`*** Update File: p`,
 * `*** Move to: p`, `--- a/p`, `diff --git a/p b/q`, `rename to p`), `file:` URLs, and every word.
 * A path touches LoopX state when a segment of it is `.loopx` (any case: `.LOOPX/` counts, on a
 * case-insensitive disk it is the same folder), or when it resolves (`..` and `~` resolved against
 * the payload's cwd, symlinks of what exists followed) into a `.loopx` folder or into the user's
 * LoopX config folder. A tool that may write is also asked whether a path is a file that decides
 * what the hook is (hook-files.ts).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { HookFiles } from './hook-files';

export interface StateScope {
  /** What relative paths are relative to: the folder the host runs the tool in. */
  cwd: string;
  /** The user's LoopX config folder (store/config-dir.ts): the store's, and the environment's if other. */
  configDirs: string[];
  /** The user's home folder, for `~`. */
  home: string;
  /** Variables a command may start a path with (`$HOME`, `${XDG_CONFIG_HOME}`, ...). */
  vars?: Record<string, string | undefined>;
  /** The files that decide what the hook is. */
  hookFiles?: HookFiles;
}

export interface StateHit {
  /** The path as the tool input spells it. */
  path: string;
  /** `.loopx/` of a workspace, the user's config folder, or a file that decides what the hook is. */
  where: 'workspace' | 'config' | 'hook';
}

/**
 * How to read: `hooks`, whether a write to a hook file counts (not for tools that only read);
 * `folders`, whether a folder holding one counts for every word, or only for a strong candidate
 * (a word of a shell command is a path far more often than a word of an MCP tool's text).
 */
export interface ScanMode {
  hooks: boolean;
  folders: 'all' | 'strong';
}
/** A shell command: everything counts. */
export const SHELL_SCAN: ScanMode = { hooks: true, folders: 'all' };

/**
 * Fields that are text a known tool writes into (or searches for in) the file its path field
 * names, not places it writes: Claude Code's Write, Edit, MultiEdit and NotebookEdit put their
 * text into `file_path` / `notebook_path`, which is checked. A document that mentions `.loopx/`
 * can be edited. Every other tool has every string read.
 */
const TEXT_FIELDS: Record<string, ReadonlySet<string>> = {
  Write: new Set(['content']),
  Edit: new Set(['old_string', 'new_string']),
  MultiEdit: new Set(['old_string', 'new_string']),
  NotebookEdit: new Set(['new_source']),
  Grep: new Set(['pattern']),
  WebSearch: new Set(['query']),
  TodoWrite: new Set(['content', 'activeForm']),
};

/** The strings of a tool's input that are read for paths (TEXT_FIELDS left out). */
export const toolStrings = (toolName: string, input: unknown) => stringsOf(input, TEXT_FIELDS[toolName]);

/** Every string in `value` (keys too), without recursion (a deep input must not overflow). */
function stringsOf(value: unknown, skip: ReadonlySet<string> | undefined): string[] {
  const out: string[] = [];
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === 'string') out.push(v);
    // One at a time: spreading a 100,000-element array overflows the call stack.
    else if (Array.isArray(v)) for (const x of v as unknown[]) stack.push(x);
    else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
        out.push(k);
        if (!skip?.has(k)) stack.push(x);
      }
    }
  }
  return out;
}

const PATCH_HEADERS: RegExp[] = [
  /^\*\*\*\s*(?:Add|Update|Delete)\s+File:\s*(.+)$/i,
  /^\*\*\*\s*Move\s+to:\s*(.+)$/i,
  /^(?:---|\+\+\+)\s+(?:[ab]\/)?(.+?)(?:\t.*)?$/,
  /^diff\s+--git\s+(?:a\/)?(\S+)\s+(?:b\/)?(\S+)$/,
  /^(?:rename|copy)\s+(?:from|to)\s+(.+)$/,
  /^Index:\s+(.+)$/,
];
/** What separates words in commands and text; a path is read from each word. */
const WORD_BREAK = /[\s'"`<>|;&(),=[\]*?!#]+/;
const URL_SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;

/**
 * The path-like pieces of one string. `strong` ones (a whole value, a patch header, a word with a
 * separator, a file: URL) are also resolved on disk, where a symlink may lead into `.loopx/`.
 */
function candidatesOf(s: string, add: (p: string, strong: boolean) => void) {
  add(s.trim(), true);
  // What a shell makes of quotes and backslashes inside a word: `.lo''opx`, `.lo\opx`.
  const variants = /['"\\]/.test(s) ? [s, s.replace(/['"\\]/g, ''), s.replace(/\\/g, '/')] : [s];
  for (const text of variants) {
    for (const raw of text.split(/\r?\n|\r/)) {
      const line = raw.trim();
      if (line !== s.trim()) add(line, true);
      for (const re of PATCH_HEADERS) {
        const m = re.exec(line);
        if (m) for (const g of m.slice(1)) if (g) add(g.trim(), true);
      }
      for (const word of line.split(WORD_BREAK)) {
        // Nothing of an https://… address is on this disk (file: addresses are read below).
        if (!word || (URL_SCHEME.test(word) && !/^file:/i.test(word))) continue;
        add(word, /[\\/]/.test(word) || /^file:/i.test(word));
        // `--file=.loopx/x`, `PATH=a:b`, `x:.loopx/y`: the part after each `=` or `:` too.
        if (word.includes(':')) for (const part of word.split(':')) if (part) add(part, /[\\/]/.test(part));
      }
    }
  }
}

const lower = (p: string) => p.toLowerCase();
/**
 * A name as Windows reads it (trailing dots and spaces dropped), case-folded, without the brace or
 * bracket a shell word may wrap it in (`{.loopx,x}`).
 */
export const segmentName = (s: string) => lower(s.replace(/^[{(]+/, '').replace(/[. ,)}]+$/, ''));
const hasLoopxSegment = (p: string) => p.split(/[\\/]+/).some((s) => segmentName(s) === '.loopx');
export const isUnder = (p: string, root: string) => {
  const a = lower(p);
  const r = lower(root).replace(/[\\/]+$/, '');
  return a === r || a.startsWith(r + '/') || a.startsWith(r + '\\');
};

/** Whether `p` exists, following links (a dangling one does not); never throws. */
function exists(p: string, cache: Map<string, string | null>): boolean {
  const key = `?${p}`;
  const known = cache.get(key);
  if (known !== undefined) return known !== null;
  let st: fs.Stats | undefined;
  try {
    st = fs.statSync(p, { throwIfNoEntry: false });
  } catch {
    st = undefined; // not a folder on the way, no access, a name too long: nothing is there
  }
  cache.set(key, st ? '' : null);
  return !!st;
}

/**
 * `p` (absolute) with its longest existing ancestor replaced by that ancestor's real path: where a
 * write to `p` lands. A dangling link on the way is followed too (writing through it creates its
 * target). Walked from the root down, so the first missing name ends it: a long path of names that
 * do not exist costs one look-up, where walking up from its end cost two failed calls a name (a
 * 446 KB input of such paths took 11 s, and a host lets the tool run when its hook times out).
 */
export function realish(p: string, cache: Map<string, string | null>, links = 0): string | undefined {
  const { root } = path.parse(p);
  const names = p
    .slice(root.length)
    .split(/[\\/]+/)
    .filter(Boolean);
  let at = root;
  let i = 0;
  for (; i < names.length && exists(path.join(at, names[i]!), cache); i++) at = path.join(at, names[i]!);
  if (i < names.length) {
    const first = path.join(at, names[i]!);
    let st: fs.Stats | undefined;
    try {
      st = fs.lstatSync(first, { throwIfNoEntry: false });
    } catch {
      st = undefined; // below a file, say: nothing is there
    }
    if (st?.isSymbolicLink()) {
      if (links >= 40) return undefined; // a loop of links: nothing can be written through it
      let link: string;
      try {
        link = fs.readlinkSync(first);
      } catch {
        return undefined;
      }
      return realish(path.join(path.resolve(at, link), ...names.slice(i + 1)), cache, links + 1);
    }
  }
  let real = cache.get(at);
  if (real === undefined) {
    try {
      real = fs.realpathSync(at);
    } catch {
      real = null;
    }
    cache.set(at, real);
  }
  if (real === null) return undefined;
  return i < names.length ? path.join(real, ...names.slice(i)) : real;
}

export function loopxStateScanner(scope: StateScope) {
  const cache = new Map<string, string | null>();
  const configRoots = scope.configDirs.flatMap((d) => [d, realish(d, cache)]).filter((x): x is string => !!x);
  const home = scope.home;
  const vars: Record<string, string | undefined> = { ...scope.vars, HOME: home };
  const resolve = (p: string): string | undefined => {
    let q = p;
    if (/^file:/i.test(q)) {
      q = q.replace(/^file:(\/\/[^/]*)?/i, '');
      try {
        q = decodeURIComponent(q);
      } catch {
        /* read as written */
      }
    } else if (URL_SCHEME.test(q)) return undefined; // https://…/.loopx/… is not on this disk
    q = q
      .replace(/^~(?=[\\/]|$)/, home)
      .replace(/^\$(?:\{(\w+)\}|(\w+))(?=[\\/]|$)/, (m, a?: string, b?: string) => vars[(a ?? b)!] ?? m);
    if (!q) return undefined;
    return path.resolve(scope.cwd, q);
  };
  /** Where a candidate path lands, if that is LoopX state. */
  const check = (p: string, strong: boolean, mode: ScanMode): StateHit['where'] | undefined => {
    if (URL_SCHEME.test(p) && !/^file:/i.test(p)) return undefined;
    if (hasLoopxSegment(p)) return 'workspace';
    const abs = resolve(p);
    if (!abs) return undefined;
    const hooks = mode.hooks ? scope.hookFiles : undefined;
    if (hooks?.protects(abs, strong || mode.folders === 'all')) return 'hook';
    if (hasLoopxSegment(abs)) return 'workspace';
    if (configRoots.some((r) => isUnder(abs, r))) return 'config';
    if (!strong) return undefined;
    const real = realish(abs, cache);
    if (!real || real === abs) return undefined;
    if (hooks?.protects(real, true)) return 'hook';
    if (hasLoopxSegment(real)) return 'workspace';
    if (configRoots.some((r) => isUnder(real, r))) return 'config';
    return undefined;
  };

  return {
    /** The first path in these strings (a shell command; a tool's toolStrings) that touches LoopX state. */
    strings(strings: string[], mode: ScanMode = SHELL_SCAN): StateHit | undefined {
      const seen = new Set<string>();
      let hit: StateHit | undefined;
      const add = (p: string, strong: boolean) => {
        if (hit || !p) return;
        // No path the system opens is longer (PATH_MAX): longer text is only read for segments.
        if (p.length > 4096) {
          if (hasLoopxSegment(p)) hit = { path: p.slice(0, 200), where: 'workspace' };
          return;
        }
        const key = (strong ? 's' : 'w') + p;
        if (seen.has(key)) return;
        seen.add(key);
        const where = check(p, strong, mode);
        if (where) hit = { path: p, where };
      };
      for (const s of strings) {
        candidatesOf(s, add);
        if (hit) return hit;
      }
      return undefined;
    },
  };
}
