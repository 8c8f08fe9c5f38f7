/**
 * PreToolUse only narrows what the host allows:
 * - **allow** a shell command only when a live contract lists it (exactly as `loopx exec` would
 *   accept it: the same checks), when a pattern of the policy's `allowCommands` names it
 *   (shell/allow-commands.ts: read-only commands such as `git diff`, by their words), when it is a
 *   read-only `loopx` command, read with the CLI's own parser, or when it is the agent's own
 *   turn: `quota should-run` and `summary_all` in the agent's own name, or
 *   `summary_all --contract C` (a contract's `finish_with`) for its own contract, never another
 *   agent's;
 * - **deny** any other shell command, a person's decision (`gate approve`, ...), any tool
 *   whose input touches LoopX state (`.loopx/` of a workspace, or the user's config folder), and
 *   any tool but a read that names a file deciding what this hook is (hook-files.ts: the hosts'
 *   hook settings, the shim, the CLI it runs);
 * - give **no decision** for every other tool (Write, Edit, WebFetch, mcp__*, apply_patch, ...):
 *   the host's own permission rules and prompts apply, as if LoopX were not installed.
 *
 * Every refusal carries its reason code (`denied`), for the goal's record. In the policy's
 * `observe` mode a refusal under the contract's rule (nothing lists the command) becomes no
 * decision, still recorded; what protects LoopX's own state and a person's decisions is enforced
 * in every mode, or observing would open them to the agent.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { checkJudgment, runOfContract, verifyCommand } from '../contract';
import type { Contract, DenyCode, Policy } from '../model';
import { CONTRACT_DENY_CODES, effectiveStatus } from '../model';
import { allowedCommand, shellWords } from '../shell';
import type { Store } from '../store';
import { configDir } from '../store';
import { DEFAULT_AGENT } from '../trust';
import type { DeniedCall, HookAnswer, HookPayload, ParseLoopx } from './answer';
import { hookFiles, mayWrite } from './hook-files';
import type { StateHit } from './loopx-state';
import { loopxStateScanner } from './loopx-state';
import { openRunsByGoal } from './open-runs';
import { HUMAN_ONLY_LOOPX, ownTurn, readOnly, same } from './loopx-commands';
import { inputStrings, toolCommand } from './tool-input';

export interface PreToolUseOptions {
  /** The CLI's parser for `loopx` argument lists (src/cli/parse-loopx.ts). */
  parseLoopx: ParseLoopx;
  /** For `~` and the config folder (besides the store's); default: this process's. */
  env?: NodeJS.ProcessEnv;
  /** Relative paths are resolved against the payload's cwd, else this (default: the workspace). */
  cwd?: string;
  /**
   * The agent's identity when the hook knows it (LOOPX_AGENT or the hook's --agent, which the
   * agent's shell shares): then only its own contracts authorise, and `quota should-run` and
   * `summary_all` pass only in its name. Undefined: as `loopx` does without LOOPX_AGENT, a
   * contract id is the capability and the agent's name is "agent".
   */
  agent?: string;
}

/** Tools that run a command; VS Code's task tools too (a task run by its label shows none). */
const SHELL_TOOLS =
  /^(bash|shell|sh|terminal|run_in_terminal|runinterminal|run_command|execute_command|local_shell|exec_command|run_task|runtask|create_and_run_task|createandruntask)$/i;

/** A shell tool by name (an MCP server's `mcp__x__bash` too). */
const isShellTool = (tool: string) => SHELL_TOOLS.test(tool) || SHELL_TOOLS.test(tool.split('__').pop()!);

/**
 * The contracts of this clone's open, unexpired runs of active goals (another clone's authorise
 * nothing here), of `agent` when the caller's identity is known.
 */
function activeContracts(store: Store, now: Date, agent: string | undefined): Contract[] {
  return openRunsByGoal(store, agent)
    .filter((g) => effectiveStatus(g.state) === 'active')
    .flatMap((g) => g.runs.map((r) => r.contract))
    .filter((c): c is Contract => !!c && Date.parse(c.expiresAt) > now.getTime());
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
/** What a refusal is about: the command, or the path, of the tool call. */
type Subject = { tool: string; command?: string; path?: string };

/** Blocks the tool (exit 2), `reason` shown to the agent, `code` for the goal's record. */
export const deny = (reason: string, code: DenyCode, subject: Subject): HookAnswer => ({
  output: {
    hookSpecificOutput: {
      hookEventName: 'PreToolUse',
      permissionDecision: 'deny',
      permissionDecisionReason: reason,
    },
  },
  exitCode: 2,
  reason,
  denied: { code, reason, ...subject, enforced: true },
});
/** No opinion: the host decides as it would without LoopX (its rules, its prompt). */
const noDecision = (): HookAnswer => ({ output: {}, exitCode: 0 });

const stateDenial = (hit: StateHit, subject: Subject): HookAnswer => {
  const at = { ...subject, path: hit.path.slice(0, 1000) };
  if (hit.where === 'hook')
    return deny(
      `LoopX: ${hit.path.slice(0, 200)} decides what the LoopX hook is (a host's hook settings, the hook shim or the LoopX CLI it runs); agents do not change it, in any mode`,
      'hook_file',
      at,
    );
  if (hit.where === 'config')
    return deny(
      `LoopX: ${hit.path.slice(0, 200)} is in the LoopX config folder (a person's keys and this machine's LoopX secrets); agents neither read nor change it`,
      'config_folder',
      at,
    );
  return subject.command !== undefined
    ? deny(
        'LoopX: this command touches .loopx/ directly; LoopX state changes only through loopx commands',
        'loopx_state',
        at,
      )
    : deny(
        `LoopX: ${hit.path.slice(0, 200)} is LoopX state; it changes only through loopx commands or tools (loopx_add_todo, loopx_complete_todo, …), never by editing files`,
        'loopx_state',
        at,
      );
};

/**
 * In observe mode a refusal under the contract's rule lets the host decide instead, and stays on
 * record as not enforced; every other answer is as it was.
 */
function underMode(answer: HookAnswer, policy: () => Policy): HookAnswer {
  const d = answer.denied;
  if (!d || !CONTRACT_DENY_CODES.includes(d.code) || policy().enforcement !== 'observe') return answer;
  const denied: DeniedCall = { ...d, enforced: false };
  return { ...noDecision(), denied };
}

/** The answer for a plain `loopx ...` command, or undefined when it is judged like any command. */
function loopxCommand(
  store: Store,
  command: string,
  words: string[],
  parse: ParseLoopx,
  agent: string | undefined,
  subject: Subject,
) {
  const parsed = parse(words.slice(1));
  // Help and the version only print.
  if (parsed.kind === 'help') return allow('a read-only loopx command');
  if (HUMAN_ONLY_LOOPX.some((p) => same(p, parsed.command)))
    return deny(
      `LoopX: \`${command.slice(0, 200)}\` is a person's decision; agents cannot approve or reject gates, record rewards, grant quota, sign the policy, trust keys or change where and about which workspaces the person is told. Ask the person (loopx_request_gate).`,
      'human_only',
      subject,
    );
  if (same(parsed.command, ['exec'])) {
    // Exactly as next_cli_actions gives it: `exec --contract C --todo T -- <command>` (output
    // options aside), and then the same checks `loopx exec` makes, on what the CLI would run.
    const at = words.indexOf('exec');
    const end = words.indexOf('--', at);
    const head = (end === -1 ? [] : words.slice(at + 1, end)).filter(
      (w, i, a) => !(w === '--format' || a[i - 1] === '--format' || w === '--json'),
    );
    const o = parsed.kind === 'run' ? parsed.options : {};
    const operands = parsed.kind === 'run' ? (parsed.operands[0] as string[]) : [];
    if (
      parsed.kind !== 'run' ||
      end === -1 ||
      !same(head, ['--contract', String(o.contract), '--todo', String(o.todo)]) ||
      !operands.length
    )
      return deny(
        "LoopX: run contract actions exactly as next_cli_actions gives them: loopx exec --contract C --todo T -- '<command>'",
        'exec_form',
        subject,
      );
    const contractId = o.contract as string;
    try {
      verifyCommand(store, { contractId, todoId: o.todo as string, command: operands.join(' '), agent });
      return allow(`listed by contract ${contractId}`);
    } catch (e) {
      return deny(`LoopX: ${(e as Error).message}`, 'contract_refused', subject);
    }
  }
  if (parsed.kind !== 'run') return undefined;
  if (readOnly(parsed)) return allow('a read-only loopx command');
  // It only reads, but never ends: the agent's tool call, and so its turn, would hang until
  // killed. Refused as unlisted (observe mode lets it through), with what to run instead.
  if (same(parsed.command, ['log']) && parsed.options.follow === true)
    return deny(
      'LoopX: `loopx log --follow` never ends, so it would hold your turn open; read the history with `loopx log --goal-id G --limit N` instead',
      'not_listed',
      subject,
    );
  if (same(parsed.command, ['summary_all']) && parsed.options.contract !== undefined) {
    // A contract's `finish_with`: ends the run of that contract, the agent's own (as `loopx`
    // checks it: signed, of this goal, and the caller's when the caller's identity is known).
    const { contract, goalId } = parsed.options as Record<string, unknown>;
    if (parsed.options.agent !== undefined || typeof contract !== 'string' || typeof goalId !== 'string')
      return undefined;
    try {
      runOfContract(store, goalId, contract, agent);
      return allow(`ends the run of its contract ${contract} (finish_with)`);
    } catch (e) {
      return deny(`LoopX: ${(e as Error).message}`, 'contract_refused', subject);
    }
  }
  if (ownTurn(parsed, agent ?? DEFAULT_AGENT))
    return allow(`the agent's own turn (${parsed.command.join(' ')} as ${agent ?? DEFAULT_AGENT})`);
  if (same(parsed.command, ['todo', 'done']) && typeof parsed.options.contract === 'string') {
    // What `todo done --contract` checks: the todo is a judgment todo of that live contract.
    const { contract, goalId, todoId } = parsed.options as Record<string, string>;
    try {
      checkJudgment(store, contract!, todoId!, goalId, agent);
      return allow('completes a judgment todo under its contract');
    } catch (e) {
      return deny(`LoopX: ${(e as Error).message}`, 'contract_refused', subject);
    }
  }
  return undefined;
}

export function preToolUse(store: Store, payload: HookPayload, opts: PreToolUseOptions): HookAnswer {
  const tool = payload.tool_name ?? '';
  const env = opts.env ?? process.env;
  const at = { cwd: payload.cwd || opts.cwd || store.workspace, home: env.HOME || os.homedir() };
  const configDirs = [store.configDir, configDir(env)];
  const state = loopxStateScanner({
    ...at,
    configDirs,
    vars: { XDG_CONFIG_HOME: env.XDG_CONFIG_HOME, LOOPX_CONFIG_DIR: env.LOOPX_CONFIG_DIR },
    hookFiles: hookFiles({ ...at, workspace: store.workspace, configDirs, env }),
  });
  const found = toolCommand(payload.tool_input);
  if (found === undefined) {
    if (isShellTool(tool))
      return deny(
        `LoopX: could not read the command of ${tool}; nothing runs that the contract did not list`,
        'unreadable_input',
        { tool },
      );
    const read = inputStrings(tool, payload.tool_input);
    if ('unreadable' in read) return deny(read.unreadable, 'unreadable_input', { tool });
    const hit = state.strings(read.strings, { hooks: mayWrite(tool), folders: 'strong' });
    return hit ? stateDenial(hit, { tool }) : noDecision();
  }
  if ('unreadable' in found) return deny(found.unreadable, 'unreadable_input', { tool });
  const command = found.command;
  // A shell command (any tool that takes one is judged as a shell): it runs only if listed.
  const subject: Subject = { tool, command };
  const hit = state.strings([command]);
  if (hit) return stateDenial(hit, subject);
  // The policy, read once and only when a shell command needs it (one that does not parse
  // refuses each check, as in exec).
  let policy: Policy | undefined;
  const policyNow = () => (policy ??= store.policy());
  // Paths in the command are read from where the host runs it: the payload's cwd.
  const where = { ...opts, cwd: at.cwd };
  return underMode(shellCommand(store, command, subject, where, policyNow), policyNow);
}

/** The answer for a shell command that touches no LoopX state. */
function shellCommand(
  store: Store,
  command: string,
  subject: Subject,
  opts: PreToolUseOptions,
  policy: () => Policy,
): HookAnswer {
  const words = shellWords(command.trim());
  // Only the `loopx` found on PATH: a path (`./loopx`, `/tmp/x/loopx.js`) can name any file the
  // agent wrote, and would run it as "a read-only loopx command".
  if (words && words[0] === 'loopx') {
    const answer = loopxCommand(store, command, words, opts.parseLoopx, opts.agent, subject);
    if (answer) return answer;
  }
  const pattern = allowedCommand(policy(), command, reachOf(store, opts));
  if (pattern !== undefined) return allow(`allowed by the policy's allowCommands (${pattern})`);
  // With the agent's identity known, only its own contracts authorise.
  const contracts = activeContracts(store, new Date(store.now()), opts.agent);
  // Listed is not enough: the same checks as `loopx exec` (signature on the log, the todo still
  // open, its gates, the policy), so nothing runs directly that exec would refuse.
  let refusedWhy: string | undefined;
  for (const c of contracts) {
    for (const a of c.actions.filter((x) => x.command === command)) {
      try {
        verifyCommand(
          store,
          { contractId: c.id, todoId: a.todoId, command, agent: opts.agent },
          undefined,
          policy(),
        );
        return allow(`listed by contract ${c.id}`);
      } catch (e) {
        refusedWhy ??= (e as Error).message;
      }
    }
  }
  if (refusedWhy)
    return deny(
      `LoopX: \`${command.slice(0, 200)}\` is not allowed now: ${refusedWhy}`,
      'contract_refused',
      subject,
    );
  const hint = contracts.length
    ? `the active contract${contracts.length > 1 ? 's' : ''} (${contracts.map((c) => c.id).join(', ')}) do${contracts.length > 1 ? '' : 'es'} not list it; run only next_cli_actions, or add a todo for it (loopx_add_todo) and wait for the next contract`
    : 'there is no active contract: call loopx_get_contract (loopx quota should-run) first';
  return deny(
    `LoopX: \`${command.slice(0, 200)}\` is not allowed: ${hint}`,
    contracts.length ? 'not_listed' : 'no_contract',
    subject,
  );
}

/**
 * Where a command the allow list allows may reach (shell/path-reach.ts): this workspace, from the
 * folder the hook runs in; never its `.loopx/local/`, nor a LoopX config folder (the store's, the
 * environment's).
 */
function reachOf(store: Store, opts: PreToolUseOptions) {
  return {
    root: store.workspace,
    cwd: opts.cwd ?? store.workspace,
    forbidden: [store.localDir],
    secret: [store.configDir, configDir(opts.env ?? process.env)],
    path,
    realpath: (p: string) => fs.realpathSync(p),
  };
}
