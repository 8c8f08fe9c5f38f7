/**
 * "LoopX: Install Agent Hooks": VS Code agent hooks (`.github/hooks/loopx.json`) and Claude Code
 * hooks (merged into `.claude/settings.json`, never clobbering what is there). The person sees
 * exactly what will be written before anything is.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LoopxError } from '../core/index';

const HOOK_EVENTS = [
  ['PreToolUse', 'pre-tool-use'],
  ['SessionStart', 'session-start'],
  ['Stop', 'stop'],
] as const;

export function hookCommand(event: string): string {
  return `loopx hook ${event}`;
}

/** `.github/hooks/loopx.json` for VS Code agent hooks. */
export function vscodeHooksFile(): Record<string, unknown> {
  return {
    hooks: Object.fromEntries(
      HOOK_EVENTS.map(([name, ev]) => [name, [{ type: 'command', command: hookCommand(ev), timeout: 30 }]]),
    ),
  };
}

type ClaudeSettings = {
  hooks?: Record<string, { matcher?: string; hooks: { type: string; command: string }[] }[]>;
} & Record<string, unknown>;

/** Claude Code settings with our hooks added (idempotent); other keys and hooks are kept as they are. */
export function mergeClaudeSettings(existing: ClaudeSettings): ClaudeSettings {
  const out: ClaudeSettings = structuredClone(existing);
  const hooks = (out.hooks ??= {});
  if (typeof hooks !== 'object' || Array.isArray(hooks))
    throw new LoopxError(
      'usage',
      '.claude/settings.json has a "hooks" value that is not an object: fix it by hand first',
    );
  for (const [name, ev] of HOOK_EVENTS) {
    const list = (hooks[name] ??= []);
    if (!Array.isArray(list))
      throw new LoopxError(
        'usage',
        `.claude/settings.json: hooks.${name} is not a list: fix it by hand first`,
      );
    const command = hookCommand(ev);
    if (list.some((m) => Array.isArray(m?.hooks) && m.hooks.some((h) => h?.command === command))) continue;
    list.push({ ...(name === 'PreToolUse' ? { matcher: '*' } : {}), hooks: [{ type: 'command', command }] });
  }
  return out;
}

export interface HookPlan {
  files: { path: string; before: string | undefined; after: string }[];
}

/** What installing would write, without writing it. Refuses to touch a settings file it cannot parse. */
export function planHooks(workspace: string): HookPlan {
  const vscodePath = path.join(workspace, '.github', 'hooks', 'loopx.json');
  const claudePath = path.join(workspace, '.claude', 'settings.json');
  const read = (p: string) => (fs.existsSync(p) ? fs.readFileSync(p, 'utf8') : undefined);
  const claudeBefore = read(claudePath);
  let claude: ClaudeSettings = {};
  if (claudeBefore !== undefined && claudeBefore.trim()) {
    try {
      claude = JSON.parse(claudeBefore) as ClaudeSettings;
    } catch (e) {
      throw new LoopxError(
        'corrupt',
        `${claudePath} is not valid JSON (${(e as Error).message}): nothing was written; fix it first`,
      );
    }
    if (!claude || typeof claude !== 'object' || Array.isArray(claude))
      throw new LoopxError('corrupt', `${claudePath} is not a JSON object: nothing was written`);
  }
  return {
    files: [
      {
        path: vscodePath,
        before: read(vscodePath),
        after: JSON.stringify(vscodeHooksFile(), null, 2) + '\n',
      },
      {
        path: claudePath,
        before: claudeBefore,
        after: JSON.stringify(mergeClaudeSettings(claude), null, 2) + '\n',
      },
    ],
  };
}

export function applyHooks(plan: HookPlan): string[] {
  const written: string[] = [];
  for (const f of plan.files) {
    if (f.before === f.after) continue;
    fs.mkdirSync(path.dirname(f.path), { recursive: true });
    const tmp = `${f.path}.tmp-${process.pid}`;
    fs.writeFileSync(tmp, f.after);
    fs.renameSync(tmp, f.path);
    written.push(f.path);
  }
  return written;
}
