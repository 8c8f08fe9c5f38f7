/**
 * The agent-host hooks: `loopx hook <event>` answers a host's hook (JSON on stdin), and
 * `loopx hooks install` writes the shim and the hosts' settings that call it.
 */
import type { Command } from 'commander';
import * as path from 'node:path';
import type { Actor, HookAnswer, HookEvent, HookPlan, ParseLoopx, Store } from '../../core/index';
import {
  applyHooks,
  deny,
  describeHookChanges,
  forLogLine,
  HOOK_EVENTS,
  HOOK_SHIM,
  hookCommandsFor,
  HookPayload,
  hookShimChanges,
  planHooks,
  preToolUse,
  quote,
  recordDenial,
  refused,
  sessionStart,
  shellQuote,
  stop,
  usageError,
  writeHookShim,
} from '../../core/index';
import type { CliContext } from '../context';
import type { Act } from '../define';
import { example, runningCli } from '../define';
import { askTerminalLine } from '../person';

/** `PreToolUse`, `pre_tool_use` and `pre-tool-use` are one event; undefined when it is none. */
function hookEvent(name: string): HookEvent | undefined {
  const normalized = name
    .replace(/([a-z])([A-Z])/g, '$1-$2')
    .toLowerCase()
    .replace(/_/g, '-');
  return (HOOK_EVENTS as readonly string[]).includes(normalized) ? (normalized as HookEvent) : undefined;
}

async function readPayload(ctx: CliContext): Promise<HookPayload> {
  const raw = await (ctx.io.readStdin?.() ?? Promise.resolve(''));
  if (!raw.trim()) throw new Error('standard input is empty');
  const parsed = HookPayload.safeParse(JSON.parse(raw));
  if (!parsed.success) throw new Error('the hook input is not a JSON object');
  return parsed.data;
}

/** Answers one hook event; returns the exit code the host reads. */
async function answerHook(
  ctx: CliContext,
  event: HookEvent,
  o: { agent?: string; goalId?: string },
  parseLoopx: ParseLoopx,
) {
  const { io } = ctx;
  const answerWith = (answer: HookAnswer) => {
    io.stdout(JSON.stringify(answer.output) + '\n');
    if (answer.reason) io.stderr(answer.reason + '\n');
    return answer.exitCode;
  };
  // A guard that cannot read its input, or find the workspace, must not wave a tool through.
  const refuse = (why: string) =>
    answerWith(deny(`LoopX: ${why}; refusing`, 'unreadable_input', { tool: 'unknown' }));
  let payload: HookPayload;
  try {
    payload = await readPayload(ctx);
  } catch (e) {
    if (event === 'pre-tool-use')
      return refuse(`cannot read the hook input (${(e as Error).message.slice(0, 200)})`);
    throw usageError(`cannot read the hook input: ${(e as Error).message.slice(0, 200)}`);
  }
  const goalId = o.goalId ?? (io.env.LOOPX_GOAL || undefined);
  const sessionId =
    payload.session_id ?? (typeof payload.sessionId === 'string' ? payload.sessionId : undefined);
  let answer: HookAnswer;
  let known: string | undefined;
  let store: Store;
  try {
    // --agent that is not the caller's identity is refused (agent_mismatch): inside the try, so
    // that pre-tool-use answers it with a denial.
    known = ctx.givenAgent(o.agent);
    const agent = known ?? ctx.agentName();
    const actor: Actor = { kind: 'agent', id: agent, channel: 'hook' };
    store = ctx.store();
    if (event === 'pre-tool-use') {
      // The CLI's own parser reads `loopx` commands for the hook.
      answer = preToolUse(store, payload, { parseLoopx, env: io.env, cwd: io.cwd, agent: known });
    } else if (event === 'session-start') answer = sessionStart(store, { goalId, agent: known }, actor);
    else answer = stop(store, { goalId, agent, sessionId, transcriptPath: payload.transcript_path }, actor);
  } catch (e) {
    if (event === 'pre-tool-use') return refuse((e as Error).message);
    throw e;
  }
  if (answer.denied) {
    // The record never changes the answer: a refusal stands, and a failure to record is said.
    try {
      recordDenial(store, answer.denied, { agent: known, goalId });
    } catch (e) {
      io.stderr(`LoopX: the refusal was not recorded: ${forLogLine((e as Error).message, 300)}\n`);
    }
  }
  return answerWith(answer);
}

/** `parseLoopx`: the CLI's own parser (main.ts), which the hook reads `loopx` commands with. */
export function registerHookCommands(program: Command, act: Act, parseLoopx: ParseLoopx) {
  example(
    program
      .command('hook')
      .description('answer an agent host’s hook event (JSON on stdin): pre-tool-use, session-start, stop')
      .argument('<event>', 'pre-tool-use | session-start | stop')
      .option(
        '--agent <name>',
        'the agent name (default: LOOPX_AGENT, else the host session’s, else "agent")',
      )
      .option('--goal-id <id>', 'the goal (default: LOOPX_GOAL, or the only active goal)')
      .action(
        act(async (ctx, name: string, o: { agent?: string; goalId?: string }) => {
          const event = hookEvent(name);
          if (!event) throw usageError(`unknown hook event ${quote(name)}: use ${HOOK_EVENTS.join(', ')}`);
          return answerHook(ctx, event, o, parseLoopx);
        }),
      ),
    'echo \'{"tool_name":"Bash","tool_input":{"command":"rm -rf /"}}\' | loopx hook pre-tool-use',
  );

  const hooks = example(
    program.command('hooks').description('agent-host hooks for this workspace'),
    'loopx hooks install',
  );
  example(
    hooks
      .command('install')
      .description(
        'write the hook shim into the LoopX config folder and the hooks that call it: .github/hooks/loopx.json (VS Code) and .claude/settings.local.json (Claude Code). Shows what it will write and asks on the terminal first; without a terminal, pass --yes to write them without asking',
      )
      .option('--dry-run', 'show what would be written; write nothing')
      .option('-y, --yes', 'write without asking (scripts, CI)')
      .action(act((ctx, o: { dryRun?: boolean; yes?: boolean }) => installHooks(ctx, o))),
    'loopx hooks install',
    'loopx hooks install --dry-run',
    'loopx hooks install --yes',
  );
}

/** What `hooks install` is about to write, for the person to read before they answer. */
function planText(workspace: string, shim: string, cli: string, shimChanges: boolean, plan: HookPlan) {
  return [
    `loopx hooks install will write, in ${workspace}:`,
    ...(shimChanges ? [`  ${shim} (the hook shim, in your LoopX config folder)`] : []),
    ...describeHookChanges(workspace, plan).map((f) => `  ${f}`),
    'Each hook runs:',
    ...hookCommandsFor(shim).map((c) => `  ${c}`),
    `and the shim runs: ${shellQuote(process.execPath)} ${shellQuote(cli)} hook <event>`,
    'Agents in this folder then run their tools through LoopX.',
  ].join('\n');
}

function installHooks(ctx: CliContext, o: { dryRun?: boolean; yes?: boolean }) {
  const store = ctx.store();
  const dir = path.join(ctx.configDir(), 'bin');
  const cli = runningCli();
  const target = { node: process.execPath, cli };
  const shim = path.join(dir, HOOK_SHIM);
  const plan = planHooks(store.workspace, shim);
  const changes = plan.files.filter((f) => f.before !== f.after);
  const shimChanges = hookShimChanges(dir, target);
  const count = changes.length + (shimChanges ? 1 : 0);
  if (!o.dryRun && !o.yes && count > 0) {
    // The plan goes where the person reads it; with --json stdout keeps its one document.
    const show = ctx.json ? ctx.io.stderr : ctx.io.stdout;
    show(planText(store.workspace, shim, cli, shimChanges, { files: changes }) + '\n');
    const answer = (ctx.io.ask ?? askTerminalLine)(
      `Write these ${count} file${count > 1 ? 's' : ''}? [y/N] `,
    );
    if (answer === undefined)
      throw usageError(
        'there is no terminal to ask on: nothing was written; pass --yes to write them without asking (or --dry-run to only see them)',
        { reason: 'confirmation_needed' },
      );
    if (!/^\s*y(es)?\s*$/i.test(answer))
      throw refused('you answered no: nothing was written', { reason: 'not_confirmed' });
  }
  if (!o.dryRun) writeHookShim(dir, target);
  const written = o.dryRun ? [] : applyHooks({ files: changes });
  ctx.print(
    {
      schema: 'loopx.hooks-install/1',
      shim,
      cli,
      dry_run: !!o.dryRun,
      files: changes.map((f) => ({ path: f.path, after: f.after })),
      written,
    },
    () =>
      [
        `${o.dryRun ? 'would write' : 'wrote'} the hook shim ${shim} (runs ${cli})`,
        ...(changes.length
          ? changes.map((f) => `${o.dryRun ? 'would write' : 'wrote'} ${f.path}`)
          : ['the hooks are already installed']),
      ].join('\n'),
  );
}
