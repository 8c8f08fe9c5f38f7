/**
 * Reads a `loopx` argument list with the CLI's own commander program, without running anything:
 * the program is built with every action replaced by one that records what it was given. The
 * PreToolUse hook uses it, so `loopx todo done ... --summary --contract` means to the hook what it
 * means to the CLI (`--contract` is the summary there; no contract is given).
 */
import type { Command } from 'commander';
import { CommanderError } from 'commander';
import type { LoopxArgs, ParseLoopx } from '../core/index';
import type { Act } from './define';

/** How main.ts builds the whole program (handed in, so that this file need not import it). */
type BuildProgram = (io: { stdout(s: string): void; stderr(s: string): void }, act: Act) => Command;

/** The names from the program down to `cmd` (aliases resolved to the command's own name). */
function pathOf(cmd: Command): string[] {
  const names: string[] = [];
  for (let c: Command | null = cmd; c?.parent; c = c.parent) names.unshift(c.name());
  return names;
}

/** Calls `fn` for every command below `cmd`. */
function eachCommand(cmd: Command, fn: (c: Command) => void) {
  fn(cmd);
  for (const sub of cmd.commands) eachCommand(sub, fn);
}

/** The parser of the program `buildProgram` builds (main.ts makes the CLI's own: `parseLoopx`). */
export const loopxParser =
  (buildProgram: BuildProgram): ParseLoopx =>
  (argv: string[]): LoopxArgs => {
    let result: LoopxArgs | undefined;
    /** The command reached so far, for an error or help raised before any action. */
    let reached: Command | undefined;
    const record: Act =
      () =>
      (...args: unknown[]) => {
        const cmd = args[args.length - 1] as Command;
        result = {
          kind: 'run',
          command: pathOf(cmd),
          options: cmd.optsWithGlobals(),
          operands: args.slice(0, -2),
        };
        return Promise.resolve();
      };
    const quiet = () => undefined;
    const program = buildProgram({ stdout: quiet, stderr: quiet }, record);
    eachCommand(program, (c) => {
      c.hook('preSubcommand', (_parent, sub) => {
        reached = sub;
      });
    });
    try {
      // Actions only record (synchronously), so the synchronous parse is complete when it returns.
      program.parse(argv, { from: 'user' });
    } catch (e) {
      const command = reached ? pathOf(reached) : [];
      if (e instanceof CommanderError) {
        // Help (asked for, or shown because a subcommand is missing) and the version print only.
        if (['commander.helpDisplayed', 'commander.help', 'commander.version'].includes(e.code))
          return { kind: 'help', command };
        return { kind: 'error', command, message: e.message.replace(/^error: /, '') };
      }
      return { kind: 'error', command, message: (e as Error)?.message ?? String(e) };
    }
    return result ?? { kind: 'error', command: reached ? pathOf(reached) : [], message: 'no command' };
  };
