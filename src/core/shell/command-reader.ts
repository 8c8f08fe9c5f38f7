/**
 * What a shell command runs, read the way a shell reads it, for the policy's patterns.
 *
 * Why: a pattern over the raw string is a promise an agent can break by rewording. `git push*`
 * did not match `env git push origin main`, and `rm -rf *` did not match `/bin/rm -rf build`, yet
 * both run the program the pattern names. So a command is read into words (quotes and escapes
 * removed), and every program it runs is found: leading `NAME=value` assignments and wrapper
 * programs (`env`, `command`, `exec`, `nice`, `timeout`, `sudo`, ...) are seen through, the program
 * word is reduced to its name (`/bin/rm` is `rm`), and `sh -c '...'` and `eval ...` are read again,
 * inside. A pattern matches when it matches the command as written, or any of these programs with
 * the words that follow it (`env nice git push` is read as itself, `nice git push` and `git push`,
 * so `git push*` and a pattern naming `nice` both see it). Existing patterns over the exact raw
 * string keep matching.
 *
 * Ask, never assume: what this reader cannot follow (an expansion `$...`, a command or process
 * substitution, a glob, a brace, a comment, an unterminated quote, a heredoc, a subshell, a shell
 * keyword, a builtin that defines aliases, traps or variables other commands obey, a program that
 * runs a command it takes from its arguments such as `xargs`, a variable such as PATH or
 * BASH_ENV that changes what runs, an option of a wrapper it does not know, ...) matches EVERY
 * pattern, gated and denied alike. A shell can make any program out of such text, so no pattern
 * may be assumed not to apply.
 *
 * Text a person would read as something else (an invisible character, a lookalike of a Latin
 * letter: model/text-rules.ts `commandTextProblem`) is unreadable too, in a command and in a
 * pattern alike: `sh dеploy.sh` with a Cyrillic `е` meets the gate of `sh deploy.sh*`, and a
 * pattern with such a letter applies to every command rather than to none.
 *
 * Lists, pipelines and redirections are read, not refused: `npm test && npm run lint` runs two
 * plain commands, and each is matched on its own (as is the whole string). If any list or pipe
 * made a command unreadable, a workspace denying `rm -rf *` would deny every `a && b` and
 * `a | tail` a team writes; and gating them all would put the first gate of the policy (`prod`,
 * say) on a command that publishes a package while the policy meant `release` for it. Read piece
 * by piece, a command matches every pattern one of its pieces matches, and nothing runs that no
 * piece shows: a redirection only opens a file, and one whose target is not plain is unreadable.
 * So a program a pattern names does not run past its gate or its denial, whatever shell syntax
 * wraps it. What stays outside any reader is a program that runs code of its own (an
 * interpreter's `-c` or `-e`, `make`, npm scripts, a script the agent wrote), and a program's own
 * options (`git -C dir push` is not `git push*`): a policy names those in its patterns.
 *
 * The words come from the shell lexer (shell/lexer.ts), the programs' behaviour from a table
 * (shell/program-table.ts). The lexer is conservative for sh, dash, bash and zsh alike (zsh's `=cmd`,
 * `^` and `#` globs too), since the same command text may reach any of them.
 *
 * Pure: no I/O.
 */
import { commandTextProblem } from '../model';
import type { Tok } from './lexer';
import { lex } from './lexer';
import { matchesGlob } from './pattern';
import {
  ASSIGNMENT,
  KEYWORDS,
  MAX_DEPTH,
  OTHER_SHELLS,
  programName,
  RUNNERS,
  SAFE_SET_ARG,
  SAFE_SET_OPTION,
  SHELL_FLAGS,
  SHELL_LONG,
  SHELLS,
  skipOptions,
  STEERING_BUILTINS,
  STEERING_VARS,
  WRAPPERS,
} from './program-table';

// -------------------------------------------------------------------------------------------
// Reading: every program a command runs

/** What a command runs, as far as it can be read. */
export interface CommandReading {
  /** One simple command of plain words (no list, pipe, redirection), readable throughout. */
  plain: boolean;
  /** Its canonical words, when plain: wrappers and assignments dropped, the program's name. */
  words?: string[];
  /** Every text a pattern is matched against: as written, each piece, each program it runs. */
  forms: string[];
  /** Some of it cannot be read as plain words: it matches every pattern. */
  unreadable: boolean;
}

/** `sh -c` inside `sh -c` ... this deep is read as unreadable. */
type Normal =
  { words: string[]; forms: string[] } | { nested: CommandReading; forms: string[] } | 'unreadable';

/** What one simple command (its words, redirections gone) runs, seen through its wrappers. */
function normalise(input: readonly string[], depth: number): Normal {
  const forms: string[] = [];
  let w = [...input];
  /** Env and sudo take any `X=y` before the program as an assignment. */
  let anyAssignment = false;
  for (;;) {
    let i = 0;
    for (; i < w.length; i++) {
      const a = w[i]!;
      const name = anyAssignment && a.includes('=') ? a.slice(0, a.indexOf('=')) : ASSIGNMENT.exec(a)?.[1];
      if (name === undefined) break;
      if (STEERING_VARS.test(name)) return 'unreadable';
    }
    w = w.slice(i);
    anyAssignment = false;
    if (!w.length) return { words: [], forms };
    const prog = programName(w[0]!);
    if (!prog) return 'unreadable';
    const args = w.slice(1);
    const words = [prog, ...args];
    forms.push(words.join(' '));
    const done = () => ({ words, forms });
    if (KEYWORDS.has(prog) || STEERING_BUILTINS.has(prog) || RUNNERS.has(prog) || OTHER_SHELLS.has(prog))
      return 'unreadable';
    if (prog === 'set') {
      for (let k = 0; k < args.length; k++) {
        const a = args[k]!;
        if (!SAFE_SET_ARG.test(a)) return 'unreadable';
        if (a.endsWith('o') && !SAFE_SET_OPTION.has(args[++k] ?? '')) return 'unreadable';
      }
      return done();
    }
    if (prog === 'printf' && args.some((a) => a.startsWith('-v'))) return 'unreadable';
    if (prog === 'test' && args.some((a) => a === '-v' || a === '-R')) return 'unreadable';
    if (prog === 'wait' && args.some((a) => a.startsWith('-') && a.includes('p'))) return 'unreadable';
    if (prog === 'find' && args.some((a) => /^-(?:exec|execdir|ok|okdir)$/.test(a))) return 'unreadable';
    if (prog === 'eval') {
      const inner = read(args.join(' '), depth + 1);
      return { nested: inner, forms };
    }
    if (SHELLS.has(prog)) {
      let k = 0;
      let c = false;
      for (; k < args.length; k++) {
        const a = args[k]!;
        if (a === '--' || a === '-') {
          k++;
          break;
        }
        if (a.startsWith('--')) {
          if (!SHELL_LONG.has(a.slice(2))) return 'unreadable';
          continue;
        }
        if (!/^[-+]./.test(a)) break;
        for (const ch of a.slice(1)) {
          if (ch === 'c' && a[0] === '-') c = true;
          else if (ch === 'o') {
            if (!SAFE_SET_OPTION.has(args[++k] ?? '')) return 'unreadable';
          } else if (!SHELL_FLAGS.includes(ch)) return 'unreadable'; // -s and -i read another input
        }
      }
      if (k > args.length) return 'unreadable';
      // Without -c and without a script it reads commands from its input.
      if (k >= args.length) return 'unreadable';
      if (!c) return done(); // runs a script file
      return { nested: read(args[k]!, depth + 1), forms };
    }
    if (prog === 'command') {
      let k = 0;
      for (; k < args.length && /^-[pvV]+$/.test(args[k]!); k++) {
        // `command -v git` only asks where git is.
        if (/[vV]/.test(args[k]!)) return done();
      }
      if (args[k] === '--') k++;
      if (k >= args.length) return done();
      w = args.slice(k);
      continue;
    }
    if (prog === 'nice' && args[0] && /^-[-+]?\d+$/.test(args[0])) {
      w = args.slice(1);
      continue;
    }
    if ((prog === 'busybox' || prog === 'toybox') && args[0]?.startsWith('-')) return done();
    const opts = WRAPPERS[prog];
    if (!opts) return done();
    // An option not in the table is not guessed at: env's -S (a string split into a command),
    // sudo's -i and -s (a shell), -l, -e, -v (no program runs as written), ...
    let k = skipOptions(args, opts);
    if (k === undefined) return 'unreadable';
    if (prog === 'timeout') k++; // the duration
    if (k >= args.length) {
      if (prog === 'sudo' || prog === 'doas') return 'unreadable';
      return done(); // nothing to run (`env` prints, `nice` tells the niceness)
    }
    w = args.slice(k);
    anyAssignment = prog === 'env' || prog === 'sudo';
  }
}

const unreadable = (raw: string): CommandReading => ({ plain: false, forms: [raw], unreadable: true });

/** Reads a command: its pieces (split at lists and pipes) and every program each runs. */
function read(src: string, depth: number): CommandReading {
  if (depth > MAX_DEPTH || (depth === 0 && commandTextProblem(src))) return unreadable(src);
  const toks = lex(src);
  if (!toks) return unreadable(src);
  const out: CommandReading = { plain: true, forms: [src], unreadable: false };
  let pieces = 0;
  let seg: Tok[] = [];
  const finish = (): boolean => {
    if (!seg.length) return true;
    const words: string[] = [];
    for (let i = 0; i < seg.length; i++) {
      const t = seg[i]!;
      if (t.t === 'word') words.push(t.text);
      else {
        out.plain = false;
        // A redirection opens a file: its target must be a plain word, and nothing else runs.
        if (seg[i + 1]?.t !== 'word') return false;
        i++;
      }
    }
    const raw = src.slice(seg[0]!.start, seg[seg.length - 1]!.end);
    seg = [];
    pieces++;
    if (raw !== src) out.forms.push(raw);
    const n = normalise(words, depth);
    if (n === 'unreadable') return false;
    out.forms.push(...n.forms);
    if ('nested' in n) {
      out.forms.push(...n.nested.forms);
      if (n.nested.unreadable) return false;
      out.plain &&= n.nested.plain;
      out.words = n.nested.words;
    } else out.words = n.words;
    return true;
  };
  const failed = (): CommandReading => ({ plain: false, forms: [...new Set(out.forms)], unreadable: true });
  for (const t of toks) {
    if (t.t === 'op') {
      out.plain = false;
      if (!finish()) return failed();
    } else seg.push(t);
  }
  if (!finish()) return failed();
  out.forms = [...new Set(out.forms)];
  if (pieces > 1) out.plain = false;
  if (!out.plain) delete out.words;
  else out.words ??= [];
  return out;
}

const cache = new Map<string, CommandReading>();

/** What a command runs, as far as it can be read (cached: the rules ask about the same ones). */
export function readCommand(command: string): CommandReading {
  let r = cache.get(command);
  if (!r) {
    r = read(command, 0);
    Object.freeze(r.forms);
    if (r.words) Object.freeze(r.words);
    Object.freeze(r);
    if (cache.size >= 500) cache.clear();
    cache.set(command, r);
  }
  return r;
}

/**
 * The canonical words of a plain command: quotes removed, leading assignments and wrapper programs
 * (with their options) dropped, the program word reduced to its name, `sh -c` and `eval` strings
 * read inside. Undefined when the command is not one plain command (an operator, a redirection,
 * anything a shell would expand, or a form this reader does not follow).
 */
export function commandWords(command: string): string[] | undefined {
  const r = readCommand(command);
  return r.plain && !r.unreadable ? [...r.words!] : undefined;
}

/** `commandWords` joined by one space, or undefined when the command is not plain. */
export function canonicalCommand(command: string): string | undefined {
  return commandWords(command)?.join(' ');
}

/**
 * How a policy pattern (a glob, see shell/pattern.ts) matches a command: `written` when the raw string, a
 * piece of it or a program it runs matches; `unreadable` when none does but part of the command
 * cannot be read, or the pattern reads as something it is not (so it counts as matching);
 * undefined when it does not match.
 */
export function commandMatch(pattern: string, command: string): 'written' | 'unreadable' | undefined {
  if (commandTextProblem(pattern)) return 'unreadable';
  const r = readCommand(command);
  if (r.forms.some((f) => matchesGlob(pattern, f))) return 'written';
  return r.unreadable ? 'unreadable' : undefined;
}

/**
 * Whether a policy pattern applies to a command: it matches the command as written, its canonical
 * form, any piece of a list or pipeline, or any program it runs through wrappers; and always when
 * part of the command cannot be read as plain words (ask, never assume).
 */
export function commandMatches(pattern: string, command: string): boolean {
  return commandMatch(pattern, command) !== undefined;
}
