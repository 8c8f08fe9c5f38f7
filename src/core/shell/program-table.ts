/**
 * What the programs a command may start do, for reading through them (shell/command-reader.ts): shells
 * whose `-c` is read again, programs that run a command from their arguments, shell keywords and
 * builtins that steer later commands, variables that change what runs, and the wrapper programs
 * (`env`, `sudo`, `nice`, `timeout`, ...) with the options each takes. A table, not a guess: an
 * option a wrapper's entry does not list makes the command unreadable. Pure: no I/O.
 */
export const MAX_DEPTH = 8;

/** Shells whose `-c` string is read like the outer command. */
export const SHELLS = new Set([
  'sh',
  'bash',
  'dash',
  'zsh',
  'ksh',
  'ksh93',
  'mksh',
  'pdksh',
  'ash',
  'posh',
  'yash',
]);
/** Shells of another syntax: whatever they are given is unreadable here. */
export const OTHER_SHELLS = new Set([
  'fish',
  'csh',
  'tcsh',
  'rc',
  'es',
  'nu',
  'elvish',
  'xonsh',
  'pwsh',
  'powershell',
]);
/** Programs that run a command taken from their arguments (or input), in a way not read here. */
export const RUNNERS = new Set([
  'xargs',
  'parallel',
  'su',
  'runuser',
  'pkexec',
  'sg',
  'chroot',
  'watch',
  'flock',
  'unshare',
  'nsenter',
  'chrt',
  'taskset',
  'numactl',
  'prlimit',
  'systemd-run',
  'script',
  'strace',
  'ltrace',
  'unbuffer',
  'firejail',
  'fakeroot',
  'proot',
]);
/** Shell keywords: the start of a compound command, not a program. */
export const KEYWORDS = new Set([
  'if',
  'then',
  'else',
  'elif',
  'fi',
  'do',
  'done',
  'case',
  'esac',
  'while',
  'until',
  'for',
  'in',
  'select',
  'function',
  'repeat',
  'foreach',
  'end',
  'always',
]);
/**
 * Builtins that define aliases, functions, traps, options or variables later commands obey, or
 * evaluate their arguments (an array subscript is evaluated in bash): what follows them is not
 * what it reads as.
 */
export const STEERING_BUILTINS = new Set([
  'alias',
  'unalias',
  'trap',
  'let',
  'declare',
  'typeset',
  'local',
  'export',
  'readonly',
  'unset',
  'shopt',
  'enable',
  'hash',
  'fc',
  'bind',
  'complete',
  'compgen',
  'compopt',
  'mapfile',
  'readarray',
  'read',
  'getopts',
  'setopt',
  'unsetopt',
  'emulate',
  'autoload',
  'zmodload',
  'disable',
  'functions',
]);
/** `set` options that change no program a later command runs. */
export const SAFE_SET_ARG = /^(?:[-+][euxv]+o?|[-+]o)$/;
export const SAFE_SET_OPTION = new Set([
  'errexit',
  'nounset',
  'xtrace',
  'verbose',
  'pipefail',
  'noglob',
  'noclobber',
  'noexec',
  'posix',
  'allexport',
]);
/** Variables that change which program a shell or the loader runs, or what a shell does first. */
export const STEERING_VARS =
  /^(?:PATH|ENV|BASH_ENV|IFS|CDPATH|SHELLOPTS|BASHOPTS|PS4|PROMPT_COMMAND|BASH_FUNC_.*|LD_.*|DYLD_.*)$/;
export const ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_]*)=/;

/** An option table: short flags, short options taking a value, long ones (`value` takes one). */
export interface Opts {
  flags?: string;
  values?: string;
  long?: Record<string, 'flag' | 'value' | 'optional'>;
  /** A lone `-` is an option (env's `-i`), not the first operand. */
  dashIsOption?: boolean;
}

/**
 * The index of the first operand after a wrapper's options, or undefined when an option is not
 * in the table (unknown options are not guessed at) or lacks its value.
 */
export function skipOptions(args: readonly string[], o: Opts): number | undefined {
  let i = 0;
  while (i < args.length) {
    const a = args[i]!;
    if (a === '--') return i + 1;
    if (a === '-') {
      if (!o.dashIsOption) return i;
      i++;
      continue;
    }
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      const name = a.slice(2, eq === -1 ? undefined : eq);
      const kind = o.long?.[name];
      if (!kind) return undefined;
      if (kind === 'flag' && eq !== -1) return undefined;
      if (kind === 'value' && eq === -1) {
        if (i + 1 >= args.length) return undefined;
        i++;
      }
      i++;
      continue;
    }
    if (a.startsWith('-') && a.length > 1) {
      for (let k = 1; k < a.length; k++) {
        const ch = a[k]!;
        if (o.flags?.includes(ch)) continue;
        if (o.values?.includes(ch)) {
          if (k === a.length - 1) {
            if (i + 1 >= args.length) return undefined;
            i++;
          }
          break;
        }
        return undefined;
      }
      i++;
      continue;
    }
    return i;
  }
  return i;
}

const ENV_OPTS: Opts = {
  flags: 'i0v',
  values: 'uC',
  long: {
    'ignore-environment': 'flag',
    null: 'flag',
    debug: 'flag',
    unset: 'value',
    chdir: 'value',
    'block-signal': 'optional',
    'default-signal': 'optional',
    'ignore-signal': 'optional',
  },
  dashIsOption: true,
};
const SUDO_OPTS: Opts = {
  flags: 'AbBEHknPS',
  values: 'ugpCDrtTRU',
  long: {
    askpass: 'flag',
    background: 'flag',
    bell: 'flag',
    'preserve-env': 'optional',
    'set-home': 'flag',
    'non-interactive': 'flag',
    'preserve-groups': 'flag',
    'reset-timestamp': 'flag',
    stdin: 'flag',
    user: 'value',
    group: 'value',
    prompt: 'value',
    'close-from': 'value',
    chdir: 'value',
    chroot: 'value',
    role: 'value',
    type: 'value',
    'command-timeout': 'value',
    'other-user': 'value',
  },
};
/** Wrappers: the program after their options is what runs (with the words after it). */
export const WRAPPERS: Record<string, Opts> = {
  env: ENV_OPTS,
  sudo: SUDO_OPTS,
  doas: { flags: 'n', values: 'u' },
  exec: { flags: 'cl', values: 'a' },
  nice: { values: 'n', long: { adjustment: 'value' } },
  nohup: {},
  time: {
    flags: 'pavq',
    values: 'fo',
    long: {
      format: 'value',
      output: 'value',
      append: 'flag',
      verbose: 'flag',
      quiet: 'flag',
      portability: 'flag',
    },
  },
  stdbuf: { values: 'ioe', long: { input: 'value', output: 'value', error: 'value' } },
  setsid: { flags: 'cfw', long: { ctty: 'flag', fork: 'flag', wait: 'flag' } },
  ionice: { flags: 't', values: 'cn', long: { class: 'value', classdata: 'value', ignore: 'flag' } },
  timeout: {
    flags: 'v',
    values: 'sk',
    long: {
      signal: 'value',
      'kill-after': 'value',
      foreground: 'flag',
      'preserve-status': 'flag',
      verbose: 'flag',
    },
  },
  builtin: {},
  coproc: {},
  noglob: {},
  nocorrect: {},
  '-': {},
  busybox: {},
  toybox: {},
};
/**
 * Shell flags that leave what a `-c` string runs as read here (`-s` and `-i` read other input, and
 * bash's `-k` makes `NAME=value` anywhere an assignment): others are not guessed at.
 */
export const SHELL_FLAGS = 'abefhlmnprtuvxBCEHPT';
export const SHELL_LONG = new Set([
  'norc',
  'noprofile',
  'posix',
  'login',
  'restricted',
  'noediting',
  'verbose',
]);

/** The program's name: its path's last part, lower-cased (`/BIN/RM` runs rm where names fold). */
export const programName = (w: string) =>
  w
    .replace(/^.*\//, '')
    .toLowerCase()
    .replace(/\.(?:exe|com|cmd|bat)$/, '');
