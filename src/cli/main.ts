/**
 * The `loopx` command. Parsing is commander's; every command is a thin call into the core.
 * `run` never exits the process itself: it returns the exit code, so tests can call it in-process.
 */
import { Command, CommanderError, Option } from 'commander';
import type { ParseLoopx } from '../core/index';
import { checkId, errorReport, LoopxError } from '../core/index';
import { registerCapabilityCommands } from './commands/capability';
import { registerCompletionCommand } from './commands/completion';
import { registerContractCommands } from './commands/contract';
import { registerDoctorCommand } from './commands/doctor';
import { registerDriveCommands } from './commands/drive';
import { registerExportCommand } from './commands/export';
import { registerGateCommands } from './commands/gate';
import { registerGoalCommands } from './commands/goal';
import { registerHookCommands } from './commands/hooks';
import { registerInitCommand } from './commands/init';
import { registerInstallCommand } from './commands/install-command';
import { registerIntegrationCommands } from './commands/integrations';
import { registerKeyCommands } from './commands/keys';
import { registerNotifyCommands } from './commands/notify';
import { registerPolicyCommands } from './commands/policy';
import { registerQuotaCommands } from './commands/quota';
import { registerRecordCommands } from './commands/records';
import { registerRunCommands } from './commands/runs';
import { registerStatusCommands } from './commands/status';
import { registerWorkspacesCommands } from './commands/workspaces';
import { registerTodoCommands } from './commands/todo';
import { registerTurnCommand } from './commands/turn';
import type { GlobalOptions, Io } from './context';
import { CliContext, EXIT, exitCodeFor } from './context';
import type { Act } from './define';
import { example, fdNumber, VERSION } from './define';
import { resolveGoalOption } from './goal-option';
import { loopxParser } from './parse-loopx';

/** Options whose values are ids: checked up front, so an error names the flag (`--goal-id`), not a field. */
const ID_OPTIONS = new Set([
  'goalId',
  'todoId',
  'gateId',
  'runId',
  'contract',
  'todo',
  'gate',
  'dependsOn',
  'guards',
  'evidence',
]);
function checkIdOptions(cmd: Command) {
  for (const o of cmd.options) {
    const key = o.attributeName();
    if (!ID_OPTIONS.has(key)) continue;
    const v: unknown = cmd.getOptionValue(key);
    for (const x of Array.isArray(v) ? v : v === undefined ? [] : [v]) checkId(x, o.long ?? key);
  }
}

/**
 * The whole `loopx` program: every command with its options, each action wrapped by `act`. `run`
 * passes the wrapper that runs them; `parseLoopx` (below, parse-loopx.ts) one that only records
 * what was parsed, so the hook reads an argument list exactly as the CLI does.
 */
export function buildProgram(io: Pick<Io, 'stdout' | 'stderr'>, act: Act): Command {
  const program = new Command();
  program
    .name('loopx')
    .description(
      'LoopX: durable goals, signed per-turn contracts and human gates for long-running agent work.',
    )
    .version(VERSION, '--version', 'print the version')
    .addOption(new Option('--format <format>', 'output format').choices(['json', 'text']))
    .option('--json', 'same as --format json')
    .option(
      '--workspace <dir>',
      'the workspace (default: LOOPX_WORKSPACE, or the nearest folder above with .loopx/)',
    )
    .option(
      '--idempotency-key <key>',
      'name this command so running it again appends nothing it wrote the first time (default: LOOPX_IDEMPOTENCY_KEY)',
    )
    .option(
      '--passphrase-fd <n>',
      'read your key passphrase from this file descriptor (for your own scripts; default: ask on the terminal)',
      fdNumber('--passphrase-fd'),
    )
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({
      writeOut: io.stdout,
      writeErr: io.stderr,
      outputError: (s, write) => write(`loopx: ${s.replace(/^error: /, '')}`),
    });
  example(
    program,
    'loopx project_prompt create --title "Refactor Payment Module" --description "Extract retry logic" --json | jq -r .id',
    'loopx --format json quota should-run --goal-id G',
    'loopx status',
  );

  // In this order: `loopx --help` lists the commands as they are added.
  registerInitCommand(program, act);
  registerGoalCommands(program, act);
  registerTodoCommands(program, act);
  registerGateCommands(program, act);
  registerRecordCommands(program, act);
  registerRunCommands(program, act);
  registerQuotaCommands(program, act);
  registerContractCommands(program, act);
  registerTurnCommand(program, act);
  registerDriveCommands(program, act);
  registerNotifyCommands(program, act);
  registerIntegrationCommands(program, act);
  registerHookCommands(program, act, parseLoopx);
  registerStatusCommands(program, act);
  registerWorkspacesCommands(program, act);
  registerCapabilityCommands(program, act);
  registerKeyCommands(program, act);
  registerPolicyCommands(program, act);
  registerDoctorCommand(program, act);
  registerInstallCommand(program, act);
  registerExportCommand(program, act);
  registerCompletionCommand(program, act);
  return program;
}

const HELP_FLAGS = new Set(['--help', '-h']);

/** `loopx reward add`: the command's names from the top, for messages that tell a person what to run. */
function commandLine(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/**
 * Whether the words before any option name a command that does not exist (`loopx key2 create`,
 * `loopx todo frob`). Commander shows the help for `--help` before it looks at the command, so
 * `loopx key2 --help` would print the top-level help and succeed: a typo a script never notices.
 */
function namesUnknownCommand(program: Command, argv: readonly string[]): boolean {
  let cur = program;
  const chain: Command[] = [program];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') return false;
    if (arg.startsWith('-')) {
      // An option's value is not a command name: `--workspace dir todo list`.
      const flag = arg.split('=')[0];
      const takesValue = chain.some((c) =>
        c.options.some((o) => (o.required || o.optional) && (o.long === flag || o.short === flag)),
      );
      if (takesValue && !arg.includes('=')) i++;
      continue;
    }
    if (cur.commands.length === 0) return false;
    const next = cur.commands.find((c) => c.name() === arg || c.aliases().includes(arg));
    if (!next) return arg !== 'help' || cur !== program;
    cur = next;
    chain.push(next);
  }
  return false;
}

/** Reads a `loopx` argument list as this program does, running nothing (the hook's parser). */
export const parseLoopx: ParseLoopx = loopxParser(buildProgram);

export async function run(argv: string[], io: Io): Promise<number> {
  let exitCode: number = EXIT.ok;
  /** Whether the command asked for JSON: its error is then one JSON line on stderr. */
  let jsonErrors = false;
  const ctxOf = (cmd: Command) =>
    new CliContext(io, { ...(cmd.optsWithGlobals() as GlobalOptions), commandLine: commandLine(cmd) });
  /** Wraps an action: the context is built from the global options; errors become exit codes. */
  const act: Act =
    <A extends unknown[]>(fn: (ctx: CliContext, ...args: A) => unknown) =>
    async (...args: unknown[]) => {
      const cmd = args[args.length - 1] as Command;
      const ctx = ctxOf(cmd);
      try {
        jsonErrors = ctx.json;
      } catch {
        // A bad LOOPX_FORMAT: reported as text, after the id checks, as below.
      }
      checkIdOptions(cmd);
      void ctx.json; // a bad LOOPX_FORMAT is a usage error before anything is done, not after
      resolveGoalOption(cmd, ctx);
      const code = await fn(ctx, ...(args.slice(0, -1) as A));
      if (typeof code === 'number') exitCode = code;
    };
  const program = buildProgram(io, act);
  // `--help` after a command that does not exist: parsed without it, commander reports the
  // unknown command (with its "did you mean") and the usage error, instead of the top-level help.
  const args =
    argv.some((a) => HELP_FLAGS.has(a)) && namesUnknownCommand(program, argv)
      ? argv.filter((a) => !HELP_FLAGS.has(a))
      : argv;

  try {
    await program.parseAsync(args, { from: 'user' });
    return exitCode;
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version') return EXIT.ok;
      // `commander.help` is also how a missing subcommand ends (`loopx`, `loopx todo`): help on stderr, a usage error.
      if (e.code === 'commander.help') return e.exitCode === 0 ? EXIT.ok : EXIT.usage;
      return EXIT.usage;
    }
    if (e instanceof LoopxError) {
      const code = exitCodeFor(e);
      // With --json, a program reads the error too: kind, reason code and message, still on stderr
      // (stdout stays empty on an error) and still one line.
      if (jsonErrors) io.stderr(`${JSON.stringify({ error: { ...errorReport(e), exit_code: code } })}\n`);
      else io.stderr(`loopx: ${e.message}\n`);
      return code;
    }
    // A failed system call (a path that is a file, a folder we may not write...) is about the
    // user's files, not a bug in loopx: its message names the call and the path; no stack trace.
    const errno = e as NodeJS.ErrnoException;
    if (errno instanceof Error && typeof errno.code === 'string' && typeof errno.syscall === 'string') {
      io.stderr(`loopx: ${errno.message}\n`);
      return EXIT.error;
    }
    io.stderr(`loopx: unexpected error: ${(e as Error)?.stack ?? String(e)}\n`);
    return EXIT.error;
  }
}
