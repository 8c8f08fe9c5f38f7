/**
 * What installing the agent hooks writes: VS Code agent hooks (`.github/hooks/loopx.json`) and
 * Claude Code hooks (merged into `.claude/settings.local.json`, this machine's own settings, never
 * clobbering what is there). Each hook command calls the shim by its absolute path (shim.ts), a
 * path on this machine: which is why Claude Code's are in the local settings file, which it keeps
 * out of git. Shared by the extension's "Install Agent Hooks" and `loopx hooks install`.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LoopxError } from '../model';
import { shellWords } from '../shell';
import { writeFileAtomic } from '../store';
import { hookShimCommand } from './shim';

const HOST_EVENTS = [
  ['PreToolUse', 'pre-tool-use'],
  ['SessionStart', 'session-start'],
  ['Stop', 'stop'],
] as const;

/**
 * A hook command LoopX wrote: today's (`'/…/loopx-hook' pre-tool-use || exit 2`) or an older
 * bare `loopx hook pre-tool-use`, which fails open where `loopx` is not on PATH and is replaced.
 */
function isLoopxHookCommand(command: unknown): boolean {
  return (
    typeof command === 'string' &&
    (/^loopx hook (pre-tool-use|session-start|stop)$/.test(command.trim()) ||
      /(^|[\\/])loopx-hook'? (pre-tool-use|session-start|stop)( \|\| exit 2)?$/.test(command.trim()))
  );
}

/** `.github/hooks/loopx.json` for VS Code agent hooks. */
function vscodeHooksFile(shim: string): Record<string, unknown> {
  return {
    hooks: Object.fromEntries(
      HOST_EVENTS.map(([name, ev]) => [
        name,
        [{ type: 'command', command: hookShimCommand(shim, ev), timeout: 30 }],
      ]),
    ),
  };
}

type HookEntry = { matcher?: string; hooks: { type: string; command: string }[] };
type ClaudeSettings = { hooks?: Record<string, HookEntry[]> } & Record<string, unknown>;

function hooksOf(settings: ClaudeSettings, file: string) {
  const hooks = (settings.hooks ??= {});
  if (typeof hooks !== 'object' || Array.isArray(hooks))
    throw new LoopxError('usage', `${file} has a "hooks" value that is not an object: fix it by hand first`);
  return hooks;
}

/** Our hook commands taken out (older installs); entries left empty go too. */
export function withoutLoopxHooks(existing: ClaudeSettings, file = '.claude/settings.json'): ClaudeSettings {
  const out: ClaudeSettings = structuredClone(existing);
  if (out.hooks === undefined) return out;
  const hooks = hooksOf(out, file);
  for (const [name, list] of Object.entries(hooks)) {
    if (!Array.isArray(list)) continue;
    const kept = list
      .map((m) =>
        m && Array.isArray(m.hooks)
          ? { ...m, hooks: m.hooks.filter((h) => !isLoopxHookCommand(h?.command)) }
          : m,
      )
      .filter((m) => !(m && Array.isArray(m.hooks) && m.hooks.length === 0));
    if (kept.length) hooks[name] = kept;
    else delete hooks[name];
  }
  if (Object.keys(hooks).length === 0) delete out.hooks;
  return out;
}

/** Claude Code settings with our hooks (idempotent); other keys and hooks are kept as they are. */
export function mergeClaudeSettings(
  existing: ClaudeSettings,
  shim: string,
  file = '.claude/settings.local.json',
): ClaudeSettings {
  const wanted = new Map<string, string>(HOST_EVENTS.map(([name, ev]) => [name, hookShimCommand(shim, ev)]));
  const present = (existing.hooks ?? {}) as Record<string, unknown>;
  // Already there, and nothing of an older install left: unchanged (not even reordered).
  const current =
    typeof present === 'object' &&
    !Array.isArray(present) &&
    Object.entries(present).every(
      ([name, list]) =>
        Array.isArray(list) &&
        (list as HookEntry[]).every(
          (m) =>
            !Array.isArray(m?.hooks) ||
            m.hooks.every((h) => !isLoopxHookCommand(h?.command) || h.command === wanted.get(name)),
        ),
    ) &&
    [...wanted].every(
      ([name, cmd]) =>
        Array.isArray(present[name]) &&
        (present[name] as HookEntry[]).some(
          (m) => Array.isArray(m?.hooks) && m.hooks.some((h) => h?.command === cmd),
        ),
    );
  if (current) return structuredClone(existing);
  const out = withoutLoopxHooks(existing, file);
  const hooks = hooksOf(out, file);
  for (const [name] of HOST_EVENTS) {
    const list = (hooks[name] ??= []);
    if (!Array.isArray(list))
      throw new LoopxError('usage', `${file}: hooks.${name} is not a list: fix it by hand first`);
    list.push({
      ...(name === 'PreToolUse' ? { matcher: '*' } : {}),
      hooks: [{ type: 'command', command: wanted.get(name)! }],
    });
  }
  return out;
}

export interface HookPlan {
  files: { path: string; before: string | undefined; after: string }[];
}

function readSettings(file: string): { text: string | undefined; json: ClaudeSettings } {
  const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : undefined;
  if (text === undefined || !text.trim()) return { text, json: {} };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new LoopxError(
      'corrupt',
      `${file} is not valid JSON (${(e as Error).message}): nothing was written; fix it first`,
    );
  }
  if (!json || typeof json !== 'object' || Array.isArray(json))
    throw new LoopxError('corrupt', `${file} is not a JSON object: nothing was written`);
  return { text, json: json as ClaudeSettings };
}

/**
 * The hosts' settings files that run the hooks, relative to a folder: VS Code's, Claude Code's
 * local one, and its shared one (older installs; Claude Code reads both in the home folder too).
 * Installing writes them in a workspace; the hook denies agents' writes to them (hook-files.ts).
 */
export const HOST_SETTINGS_FILES = [
  ['.github', 'hooks', 'loopx.json'],
  ['.claude', 'settings.local.json'],
  ['.claude', 'settings.json'],
] as const;

function hostFiles(workspace: string) {
  const [vscodePath, localPath, sharedPath] = HOST_SETTINGS_FILES.map((f) => path.join(workspace, ...f));
  return { vscodePath: vscodePath!, localPath: localPath!, sharedPath: sharedPath! };
}

/** The LoopX hooks one host settings file holds (`loopx doctor`). */
export interface InstalledHooks {
  file: string;
  /** Absent: the file is not there. */
  present: boolean;
  /** Why it could not be read, when it could not. */
  error?: string;
  /** The absolute shim paths its LoopX hook commands call. */
  shims: string[];
  /** Older bare `loopx hook <event>` commands, which fail open where `loopx` is not on PATH. */
  bare: number;
}

/** Every `command` string in a settings file's `hooks` (VS Code's flat entries, Claude Code's nested ones). */
function hookCommandStrings(settings: ClaudeSettings): string[] {
  const out: string[] = [];
  const hooks = (settings as ClaudeSettings | null)?.hooks;
  if (!hooks || typeof hooks !== 'object' || Array.isArray(hooks)) return out;
  for (const list of Object.values(hooks as Record<string, unknown>)) {
    if (!Array.isArray(list)) continue;
    for (const e of list as { command?: unknown; hooks?: unknown }[]) {
      if (typeof e?.command === 'string') out.push(e.command);
      if (Array.isArray(e?.hooks))
        for (const h of e.hooks as { command?: unknown }[])
          if (typeof h?.command === 'string') out.push(h.command);
    }
  }
  return out;
}

/** The LoopX hooks installed in `workspace`, file by file; reads only. */
export function installedHooks(workspace: string): InstalledHooks[] {
  const { vscodePath, localPath, sharedPath } = hostFiles(workspace);
  return [vscodePath, localPath, sharedPath].map((file) => {
    if (!fs.existsSync(file)) return { file, present: false, shims: [], bare: 0 };
    let json: ClaudeSettings;
    try {
      const text = fs.readFileSync(file, 'utf8');
      json = (text.trim() ? JSON.parse(text) : {}) as ClaudeSettings;
    } catch (e) {
      return { file, present: true, error: `not valid JSON (${(e as Error).message})`, shims: [], bare: 0 };
    }
    const ours = hookCommandStrings(json).filter(isLoopxHookCommand);
    const bare = ours.filter((c) => /^loopx hook /.test(c.trim())).length;
    const shims = ours
      .map((c) => shellWords(c.trim().replace(/ \|\| exit 2$/, ''))?.[0])
      .filter((w): w is string => !!w && path.isAbsolute(w));
    return { file, present: true, shims: [...new Set(shims)], bare };
  });
}

/**
 * What installing would write for hooks that call `shim`, without writing it. Refuses to touch a
 * settings file it cannot parse. An older install's bare `loopx hook` commands in the shared
 * `.claude/settings.json` are taken out.
 */
export function planHooks(workspace: string, shim: string): HookPlan {
  if (!path.isAbsolute(shim)) throw new LoopxError('usage', `the hook shim path must be absolute: ${shim}`);
  const { vscodePath, localPath, sharedPath } = hostFiles(workspace);
  const local = readSettings(localPath);
  const files: HookPlan['files'] = [
    {
      path: vscodePath,
      before: fs.existsSync(vscodePath) ? fs.readFileSync(vscodePath, 'utf8') : undefined,
      after: JSON.stringify(vscodeHooksFile(shim), null, 2) + '\n',
    },
    {
      path: localPath,
      before: local.text,
      after: JSON.stringify(mergeClaudeSettings(local.json, shim, localPath), null, 2) + '\n',
    },
  ];
  if (fs.existsSync(sharedPath)) {
    const shared = readSettings(sharedPath);
    const cleaned = withoutLoopxHooks(shared.json, sharedPath);
    if (JSON.stringify(cleaned) !== JSON.stringify(shared.json))
      files.push({ path: sharedPath, before: shared.text, after: JSON.stringify(cleaned, null, 2) + '\n' });
  }
  return { files };
}

export function applyHooks(plan: HookPlan): string[] {
  const written: string[] = [];
  for (const f of plan.files) {
    if (f.before === f.after) continue;
    fs.mkdirSync(path.dirname(f.path), { recursive: true });
    // 0666 as fs.writeFileSync creates files: the umask decides.
    writeFileAtomic(f.path, f.after, 0o666);
    written.push(f.path);
  }
  return written;
}

/** One line per file installing writes: its path in the folder and what happens to it. */
export function describeHookChanges(workspace: string, plan: HookPlan): string[] {
  return plan.files
    .filter((f) => f.before !== f.after)
    .map((f) => {
      const rel = path.relative(workspace, f.path);
      const what =
        f.before === undefined
          ? 'new file'
          : path.basename(f.path) === 'settings.json'
            ? 'older LoopX hooks taken out, the rest kept'
            : 'LoopX hooks merged into the existing file, the rest kept';
      return `${rel} (${what})`;
    });
}

/** The command each installed hook runs (the shim by its absolute path), for the person to read. */
export function hookCommandsFor(shim: string): string[] {
  return HOST_EVENTS.map(([, ev]) => hookShimCommand(shim, ev));
}
