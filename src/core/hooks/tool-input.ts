/**
 * What the PreToolUse hook reads of a tool call before judging it: the shell command it runs, and
 * whether it is small enough to judge in time. A host lets a tool run when its hook times out
 * (Claude Code: "a timed-out command hook doesn't block the tool call"; VS Code's hooks, as
 * install.ts writes them, time out after 30 s), so an input too large to read in a few seconds is
 * refused at once instead of read.
 */
import { toolStrings } from './loopx-state';

/**
 * The longest shell command judged. Nothing the hook allows comes near it (a contract's command is
 * at most 2000 characters; a loopx command's longest text, a goal's objective, 10,000), and the
 * policy's patterns take time that grows faster than the command (446 KB took 91 s).
 */
export const MAX_COMMAND_CHARS = 64 * 1024;
/**
 * The most text of any other tool's input read for paths (a Write's content is not read). Each
 * path is looked up on disk: 4 MB of short paths (the most the CLI reads from stdin) took 8 s.
 */
export const MAX_INPUT_CHARS = 1024 * 1024;

const PLAIN_WORD = /^[A-Za-z0-9_@%+=:,./-]+$/;

const tooLong = (what: string, n: number, max: number) =>
  `LoopX: ${what} is ${n} characters long, too long for LoopX to check in time (at most ${max}); a hook that times out lets the tool run, so it is refused: split it`;

/**
 * The shell command a tool call runs: `command`, `cmd` or `commandLine` of a shell tool (or of any
 * tool that takes one), or `task.command` with `task.args` of VS Code's task tool
 * (`create_and_run_task`). `unreadable` says why it cannot be judged; undefined: the tool runs no
 * command.
 */
export function toolCommand(input: unknown): { command: string } | { unreadable: string } | undefined {
  if (!input || typeof input !== 'object') return undefined;
  const o = input as Record<string, unknown>;
  let command: string | undefined;
  for (const k of ['command', 'cmd', 'commandLine'])
    if (command === undefined && typeof o[k] === 'string') command = o[k] as string;
  const task = o.task as Record<string, unknown> | undefined;
  if (command === undefined && task && typeof task === 'object' && task.command !== undefined) {
    const args = task.args ?? [];
    // The host quotes each argument its own way, and that decides what the shell runs: only
    // arguments no quoting changes are joined.
    if (
      typeof task.command !== 'string' ||
      !Array.isArray(args) ||
      !args.every((a) => typeof a === 'string' && PLAIN_WORD.test(a))
    )
      return {
        unreadable:
          'LoopX: could not read the command of the task: put the whole command line in `command` (arguments that need quoting are not read)',
      };
    command = [task.command, ...(args as string[])].join(' ');
  }
  if (command === undefined) return undefined;
  if (command.length > MAX_COMMAND_CHARS)
    return { unreadable: tooLong('the command', command.length, MAX_COMMAND_CHARS) };
  return { command };
}

/** The strings of a tool's input that are read for paths, or why they are too long to read in time. */
export function inputStrings(tool: string, input: unknown): { strings: string[] } | { unreadable: string } {
  const strings = toolStrings(tool, input);
  let n = 0;
  for (const s of strings) n += s.length;
  return n > MAX_INPUT_CHARS ? { unreadable: tooLong("the tool's input", n, MAX_INPUT_CHARS) } : { strings };
}
