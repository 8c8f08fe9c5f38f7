/**
 * `loopx hook <event>`: the agent-host hooks (VS Code agent hooks in `.github/hooks/`, Claude
 * Code in `.claude/settings.json`). Both send the event as JSON on stdin and read the same
 * `hookSpecificOutput` answer. PreToolUse lets a shell command through only when the active
 * contract lists it (or it is a harmless `loopx` command), and never lets an agent write into
 * `.loopx/` or make a person's decision.
 */
import { z } from 'zod';
import { verifyCommand } from './exec';
import { shouldRun } from './contract';
import { summaryAll } from './summary';
import { invoke } from './capabilities';
import { effectiveStatus } from './model';
import type { Actor, Contract } from './model';
import type { Store } from './store';

export const HOOK_EVENTS = ['pre-tool-use', 'session-start', 'stop'] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];

export const HookPayload = z.looseObject({
  hook_event_name: z.string().optional(),
  session_id: z.string().optional(),
  cwd: z.string().optional(),
  tool_name: z.string().optional(),
  tool_input: z.unknown().optional(),
});
export type HookPayload = z.infer<typeof HookPayload>;

export interface HookAnswer {
  /** What to print on stdout (JSON the host reads). */
  output: Record<string, unknown>;
  /** 0 lets the tool run; 2 blocks it (hosts show stderr to the agent). */
  exitCode: 0 | 2;
  /** For stderr when blocking. */
  reason?: string;
}

const SHELL_TOOLS =
  /^(bash|shell|sh|terminal|run_in_terminal|runinterminal|run_command|execute_command|local_shell|exec_command)$/i;
const SHELL_META = /[;&|`$<>(){}\n\r\\*?[\]!#~]/;
const READ_ONLY_LOOPX = [
  ['--version'],
  ['--help'],
  ['help'],
  ['status'],
  ['log'],
  ['verify'],
  ['capabilities'],
  ['project_prompt', 'list'],
  ['project-prompt', 'list'],
  ['goal', 'list'],
  ['goal', 'show'],
  ['todo', 'list'],
  ['gate', 'list'],
  ['quota', 'show'],
  ['quota', 'should-run'],
  ['contract', 'verify'],
  ['summary_all'],
  ['summary-all'],
];
const HUMAN_ONLY_LOOPX = [
  ['gate', 'approve'],
  ['gate', 'reject'],
  ['reward', 'add'],
  ['quota', 'grant'],
];

function commandOf(input: unknown): string | undefined {
  if (!input || typeof input !== 'object') return undefined;
  const o = input as Record<string, unknown>;
  for (const k of ['command', 'cmd', 'commandLine']) if (typeof o[k] === 'string') return o[k] as string;
  return undefined;
}

function pathsOf(input: unknown): string[] {
  if (!input || typeof input !== 'object') return [];
  const o = input as Record<string, unknown>;
  const out: string[] = [];
  for (const k of ['file_path', 'filePath', 'path', 'notebook_path'])
    if (typeof o[k] === 'string') out.push(o[k] as string);
  for (const k of ['files', 'paths'])
    if (Array.isArray(o[k]))
      out.push(...(o[k] as unknown[]).filter((x): x is string => typeof x === 'string'));
  return out;
}

/** Splits a command into POSIX words when it is plain (no expansion, no operators); else undefined. */
export function plainWords(command: string): string[] | undefined {
  const words: string[] = [];
  let cur = '';
  let inWord = false;
  for (let i = 0; i < command.length; i++) {
    const c = command[i]!;
    if (c === '\\' && i + 1 < command.length) {
      cur += command[++i];
      inWord = true;
    } else if (c === "'") {
      const end = command.indexOf("'", i + 1);
      if (end === -1) return undefined;
      cur += command.slice(i + 1, end);
      i = end;
      inWord = true;
    } else if (c === '"') {
      // Double quotes are literal only without expansions or escapes inside them.
      const end = command.indexOf('"', i + 1);
      if (end === -1) return undefined;
      const inner = command.slice(i + 1, end);
      if (/[$`\\!]/.test(inner)) return undefined;
      cur += inner;
      i = end;
      inWord = true;
    } else if (c === ' ' || c === '\t') {
      if (inWord) words.push(cur);
      cur = '';
      inWord = false;
    } else if (SHELL_META.test(c)) {
      return undefined;
    } else {
      cur += c;
      inWord = true;
    }
  }
  if (inWord) words.push(cur);
  return words;
}

const startsWith = (words: string[], prefix: string[]) => prefix.every((p, i) => words[i] === p);

/** The contracts of open, unexpired runs of active goals. */
function activeContracts(store: Store, now: Date): Contract[] {
  const out: Contract[] = [];
  for (const g of store.listGoals().goals) {
    if (g.status !== 'active') continue;
    try {
      const state = store.load(g.id).state;
      if (effectiveStatus(state) !== 'active') continue;
      for (const r of state.runs)
        if (!r.endedAt && r.contract && Date.parse(r.contract.expiresAt) > now.getTime())
          out.push(r.contract);
    } catch {
      /* a broken goal authorises nothing */
    }
  }
  return out;
}

const allow = (reason: string): HookAnswer => ({
  output: {
    hookSpecificOutput: {
      hookEventName: 'PreToolUse',
      permissionDecision: 'allow',
      permissionDecisionReason: reason,
    },
  },
  exitCode: 0,
});
const deny = (reason: string): HookAnswer => ({
  output: {
    hookSpecificOutput: {
      hookEventName: 'PreToolUse',
      permissionDecision: 'deny',
      permissionDecisionReason: reason,
    },
  },
  exitCode: 2,
  reason,
});

export function preToolUse(store: Store, payload: HookPayload): HookAnswer {
  const tool = payload.tool_name ?? '';
  const command = commandOf(payload.tool_input);
  const touchesLoopx = (p: string) => /(^|[\\/])\.loopx([\\/]|$)/.test(p);
  if (command === undefined) {
    if (SHELL_TOOLS.test(tool))
      return deny(
        `LoopX: could not read the command of ${tool}; nothing runs that the contract did not list`,
      );
    const bad = pathsOf(payload.tool_input).find(touchesLoopx);
    if (bad)
      return deny(
        `LoopX: ${bad} is LoopX state; it changes only through loopx commands or tools (loopx_add_todo, loopx_complete_todo, …), never by editing files`,
      );
    return allow('not a shell command and not LoopX state');
  }
  const words = plainWords(command.trim());
  // Only the `loopx` found on PATH: a path (`./loopx`, `/tmp/x/loopx.js`) can name any file the
  // agent wrote, and would run it as "a read-only loopx command".
  const isLoopx = !!words && words[0] === 'loopx';
  if (isLoopx) {
    // Output options are dropped before `--` only: what follows it is the command, word for word.
    const dashes = words!.indexOf('--');
    const head = (dashes === -1 ? words!.slice(1) : words!.slice(1, dashes)).filter(
      (w, i, a) => !(w === '--format' || a[i - 1] === '--format' || w === '--json'),
    );
    const args = dashes === -1 ? head : [...head, ...words!.slice(dashes)];
    if (HUMAN_ONLY_LOOPX.some((p) => startsWith(args, p))) {
      return deny(
        `LoopX: \`${command}\` is a person's decision; agents cannot approve or reject gates, record rewards or grant quota. Ask the person (loopx_request_gate).`,
      );
    }
    if (startsWith(args, ['exec'])) {
      const end = args.indexOf('--');
      const m =
        end === -1 ? null : /^exec\s+--contract\s+(\S+)\s+--todo\s+(\S+)$/.exec(args.slice(0, end).join(' '));
      const rest = end === -1 ? [] : args.slice(end + 1);
      if (!m || rest.length === 0)
        return deny(
          "LoopX: run contract actions exactly as next_cli_actions gives them: loopx exec --contract C --todo T -- '<command>'",
        );
      try {
        verifyCommand(store, { contractId: m[1]!, todoId: m[2]!, command: rest.join(' ') });
        return allow(`listed by contract ${m[1]}`);
      } catch (e) {
        return deny(`LoopX: ${(e as Error).message}`);
      }
    }
    if (READ_ONLY_LOOPX.some((p) => startsWith(args, p))) return allow('a read-only loopx command');
    if (startsWith(args, ['todo', 'done']) && args.includes('--contract'))
      return allow('completes a judgment todo under its contract');
  }
  if (/(^|[\s'"=/])\.loopx([\\/]|\s|$)/.test(command)) {
    return deny(
      'LoopX: this command touches .loopx/ directly; LoopX state changes only through loopx commands',
    );
  }
  const contracts = activeContracts(store, new Date(store.now()));
  // Listed is not enough: the same checks as `loopx exec` (signature on the log, the todo still
  // open, its gates, the policy), so nothing runs directly that exec would refuse.
  let refusedWhy: string | undefined;
  for (const c of contracts) {
    for (const a of c.actions.filter((x) => x.command === command)) {
      try {
        verifyCommand(store, { contractId: c.id, todoId: a.todoId, command });
        return allow(`listed by contract ${c.id}`);
      } catch (e) {
        refusedWhy ??= (e as Error).message;
      }
    }
  }
  if (refusedWhy) return deny(`LoopX: \`${command.slice(0, 200)}\` is not allowed now: ${refusedWhy}`);
  const hint = contracts.length
    ? `the active contract${contracts.length > 1 ? 's' : ''} (${contracts.map((c) => c.id).join(', ')}) do${contracts.length > 1 ? '' : 'es'} not list it; run only next_cli_actions, or add a todo for it (loopx_add_todo) and wait for the next contract`
    : 'there is no active contract: call loopx_get_contract (loopx quota should-run) first';
  return deny(`LoopX: \`${command.slice(0, 200)}\` is not allowed: ${hint}`);
}

/** The goal a session works on: LOOPX_GOAL, or the only active goal. */
function sessionGoal(store: Store, goalId: string | undefined): string | undefined {
  if (goalId) return goalId;
  const active = store.listGoals().goals.filter((g) => g.status === 'active');
  return active.length === 1 ? active[0]!.id : undefined;
}

export function sessionStart(
  store: Store,
  opts: { goalId?: string; agent: string },
  actor: Actor,
): HookAnswer {
  const goalId = sessionGoal(store, opts.goalId);
  const context = goalId
    ? `LoopX governs this workspace. Your contract for goal ${goalId} (run only cli_channel.next_cli_actions, exactly as given; finish the turn with agent_channel.finish_with):\n${JSON.stringify(shouldRun(store, { goalId, agent: opts.agent }, actor))}`
    : 'LoopX governs this workspace, but no single active goal is set (set LOOPX_GOAL). Call `loopx status` and `loopx quota should-run --goal-id <id>` before running anything.';
  return {
    output: { hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: context } },
    exitCode: 0,
  };
}

export function stop(
  store: Store,
  opts: { goalId?: string; agent: string; sessionId?: string },
  actor: Actor,
): HookAnswer {
  const goalId = sessionGoal(store, opts.goalId);
  if (!goalId) return { output: {}, exitCode: 0 };
  const state = store.load(goalId).state;
  const open = state.runs.filter((r) => !r.endedAt && r.agent === opts.agent);
  for (const r of open) {
    invoke(
      store,
      'evidence.add',
      {
        goalId,
        runId: r.id,
        kind: 'note',
        summary: `agent session${opts.sessionId ? ` ${opts.sessionId.slice(0, 100)}` : ''} stopped`,
      },
      actor,
    );
  }
  const summary = open.length ? summaryAll(store, goalId, actor, { agent: opts.agent }) : undefined;
  return {
    output: summary
      ? {
          systemMessage: `LoopX: ended ${summary.ended_runs.length} run(s) of goal ${goalId}; ${summary.progress.done}/${summary.progress.total} todos done`,
        }
      : {},
    exitCode: 0,
  };
}
